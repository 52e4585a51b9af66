#!/usr/bin/env python3
"""A stand-in Kubernetes API server for berth's tests (standard library only).

It speaks enough of the real wire protocol to catch real client mistakes:
HTTPS with client-certificate or bearer-token auth, HTTP/1.1 keep-alive,
server-side apply (and nothing else) for writes, real Status objects for every
error, lists, deletes with garbage collection, chunked watches with replay,
bookmarks and expiry, and pod logs with follow. Toy controllers (Job -> one
Pod, Deployment -> N Pods, and the operators' PyTorchJob, MPIJob and JobSet ->
their pods, labelled as the operators label them) make objects move; tests
steer the rest through the unauthenticated /_test/ endpoints (see README.md
next to this file), which can also take an operator's API away.

  python3 apiserver.py --cert server.pem --key server.key --client-ca ca.pem \
      --token TOKEN --port-file FILE [--port 0] [--log requests.jsonl] \
      [--bookmark-interval 1.0]
"""
import argparse
import base64
import binascii
import collections
import copy
import datetime
import hashlib
import hmac
import itertools
import json
import os
import random
import re
import select
import signal
import ssl
import sys
import threading
import time
import traceback
import uuid
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

# resource -> (group, version, Kind); everything is namespaced
RES = {
    'secrets': ('', 'v1', 'Secret'),
    'persistentvolumeclaims': ('', 'v1', 'PersistentVolumeClaim'),
    'pods': ('', 'v1', 'Pod'),
    'services': ('', 'v1', 'Service'),
    'configmaps': ('', 'v1', 'ConfigMap'),
    'events': ('', 'v1', 'Event'),
    'deployments': ('apps', 'v1', 'Deployment'),
    'replicasets': ('apps', 'v1', 'ReplicaSet'),
    'jobs': ('batch', 'v1', 'Job'),
    'cronjobs': ('batch', 'v1', 'CronJob'),
    'horizontalpodautoscalers': ('autoscaling', 'v2', 'HorizontalPodAutoscaler'),
    # the operators' custom resources (served unless /_test/crds takes them away)
    'pytorchjobs': ('kubeflow.org', 'v1', 'PyTorchJob'),
    'mpijobs': ('kubeflow.org', 'v2beta1', 'MPIJob'),
    'jobsets': ('jobset.x-k8s.io', 'v1alpha2', 'JobSet'),
}
OPERATOR_RES = ('pytorchjobs', 'mpijobs', 'jobsets')
VERSION = {'major': '1', 'minor': '30', 'gitVersion': 'v1.30.0-berth-standin',
           'platform': 'linux/amd64'}
REASONS = {400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound',
           405: 'MethodNotAllowed', 409: 'Conflict', 410: 'Gone', 415: 'UnsupportedMediaType',
           422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError',
           503: 'ServiceUnavailable', 504: 'Timeout'}
ONLY_APPLY = 'the stand-in accepts only server-side apply (application/apply-patch+yaml)'
JOB_ORPHAN_WARNING = ('299 - "child pods are preserved by default when jobs are deleted; set '
                      'propagationPolicy=Background to remove them or set '
                      'propagationPolicy=Orphan to suppress this warning"')
SUFFIX_CHARS = 'bcdfghjklmnpqrstvwxz'          # lowercase consonants, as generateName uses
HASH_CHARS = 'bcdfghjklmnpqrstvwxz2456789'     # pod-template-hash alphabet

# validation patterns and the real API's messages for them
DNS_LABEL = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?')
DNS1035 = re.compile(r'[a-z]([-a-z0-9]*[a-z0-9])?')
DNS_SUB = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
LABEL_VALUE = re.compile(r'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')
LABEL_KEY = re.compile(r'(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/)?'
                       r'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
CONFIG_KEY = re.compile(r'[-._a-zA-Z0-9]+')
MSG_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
             "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
             "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
MSG_1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character (e.g. "
            "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
MSG_SUB = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
           "'-' or '.', and must start and end with an alphanumeric character (e.g. "
           "'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
MSG_LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, "
                   "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                   "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                   "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
MSG_LABEL_KEY = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                 "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
                 "or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
MSG_CONFIG_KEY = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                  "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation "
                  "is '[-._a-zA-Z0-9]+')")
# name rules per resource: (max length, pattern, message); default is a DNS-1123 subdomain
NAME_RULES = {'jobs': (63, DNS_LABEL, MSG_LABEL), 'deployments': (63, DNS_LABEL, MSG_LABEL),
              'pods': (63, DNS_LABEL, MSG_LABEL), 'cronjobs': (52, DNS_LABEL, MSG_LABEL),
              'services': (63, DNS1035, MSG_1035)}


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def group_of(res):
    return RES[res][0]


def api_version(res):
    g, v, _ = RES[res]
    return f'{g}/{v}' if g else v


def qualified(res):
    """'jobs.batch' for grouped resources, 'secrets' for core ones (as in messages)."""
    return f'{res}.{group_of(res)}' if res in RES and group_of(res) else res


def parse_bool(s):
    return s in ('1', 't', 'T', 'true', 'TRUE', 'True')


def dig(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def rand(chars, n):
    return ''.join(random.choice(chars) for _ in range(n))


# ---------------------------------------------------------------- Status errors

def status_body(code, reason, message, details=None):
    """A metav1.Status failure; empty details (and empty detail fields) are omitted."""
    body = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
            'message': message, 'reason': reason}
    details = {k: v for k, v in (details or {}).items() if v not in (None, '', [])}
    if details:
        body['details'] = details
    body['code'] = code
    return body


class ApiError(Exception):
    def __init__(self, code, message, reason=None, details=None, headers=()):
        super().__init__(message)
        self.code, self.headers = code, list(headers)
        self.body = status_body(code, reason or REASONS.get(code, 'Unknown'), message, details)


class Flood(Exception):
    """A fault that answers 200 with a body of `size` bytes ('endless': no end), or ('stall')
    one line and then nothing, for the client's caps on what it reads of one reply and on
    how long it waits for it."""
    def __init__(self, size):
        super().__init__(size)
        self.size = size


def bad_request(message):
    return ApiError(400, message)


def not_found(res, name):
    return ApiError(404, f'{qualified(res)} "{name}" not found',
                    details={'name': name, 'group': group_of(res), 'kind': res})


def gofmt(v):
    """A value the way the Go API server prints it in 'Invalid value: ...'."""
    if isinstance(v, dict):
        return 'map[string]string{' + ', '.join(f'"{k}":{json.dumps(x)}' for k, x in v.items()) + '}'
    return json.dumps(v)


def invalid(res, name, causes):
    """422 Invalid from [(reason, field, detail)], worded like the real API."""
    _, _, kind = RES[res]
    kq = f'{kind}.{group_of(res)}' if group_of(res) else kind
    parts = [f'{f}: {m}' for _, f, m in causes]
    msg = parts[0] if len(parts) == 1 else '[' + ', '.join(parts) + ']'
    return ApiError(422, f'{kq} "{name}" is invalid: {msg}', details={
        'name': name, 'group': group_of(res), 'kind': kind,
        'causes': [{'reason': r, 'message': m, 'field': f} for r, f, m in causes]})


def expired_status(rv, compacted):
    return status_body(410, 'Expired', f'too old resource version: {rv} ({compacted})')


# ---------------------------------------------------------------- selectors

def split_terms(s):
    """Split a selector on commas that are not inside parentheses."""
    terms, depth, cur = [], 0, ''
    for ch in s:
        depth += (ch == '(') - (ch == ')')
        if ch == ',' and depth == 0:
            terms.append(cur)
            cur = ''
        else:
            cur += ch
    return [t.strip() for t in terms + [cur] if t.strip()]


def parse_label_selector(s):
    """-> [(key, op, values)] with op in = != in notin exists !exists."""
    reqs = []
    for t in split_terms(s or ''):
        m = re.fullmatch(r'(\S+)\s+(in|notin)\s+\((.*)\)', t)
        if m:
            reqs.append((m[1], m[2], {v.strip() for v in m[3].split(',') if v.strip()}))
            continue
        m = re.fullmatch(r'([^=!\s]+)\s*(==|=|!=)\s*([^=!\s]*)', t)
        if m:
            reqs.append((m[1], '!=' if m[2] == '!=' else '=', {m[3]}))
        elif re.fullmatch(r'!\s*[^=!\s()]+', t):
            reqs.append((t[1:].strip(), '!exists', set()))
        elif re.fullmatch(r'[^=!\s()]+', t):
            reqs.append((t, 'exists', set()))
        else:
            raise bad_request(f'unable to parse requirement: found \'{t}\', expected: identifier')
    return reqs


def labels_match(reqs, labels):
    for key, op, vals in reqs:
        has, v = key in labels, labels.get(key)
        if (op in ('=', 'in') and v not in vals) or (op == '!=' and has and v in vals) or \
           (op == 'notin' and has and v in vals) or (op == 'exists' and not has) or \
           (op == '!exists' and has):
            return False
    return True


FIELD_SELECTABLE = {'metadata.name', 'metadata.namespace'}
POD_FIELDS = {'status.phase', 'spec.nodeName', 'spec.restartPolicy'}
EVENT_FIELDS = {'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name',
                'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion',
                'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'}


def make_filter(res, q):
    """A predicate over objects from the labelSelector and fieldSelector query parameters."""
    lreqs = parse_label_selector(q.get('labelSelector', ''))
    freqs = []
    for t in split_terms(q.get('fieldSelector', '')):
        m = re.fullmatch(r'([^=!]+)(==|=|!=)(.*)', t)
        if not m:
            raise bad_request(f'invalid selector: \'{t}\'; can\'t understand \'{t}\'')
        if m[1] not in FIELD_SELECTABLE and not (res == 'pods' and m[1] in POD_FIELDS) and \
                not (res == 'events' and m[1] in EVENT_FIELDS):
            raise bad_request(f'field label not supported: {m[1]}')
        freqs.append((m[1].split('.'), m[2] == '!=', m[3]))

    def match(obj):
        if not labels_match(lreqs, dig(obj, 'metadata', 'labels') or {}):
            return False
        return all(((dig(obj, *path) or '') == val) != neg for path, neg, val in freqs)
    return match


# ---------------------------------------------------------------- quantities & validation

QTY = re.compile(r'([+-]?(?:\d+\.?\d*|\.\d+))([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?')
MULT = {'Ki': 2**10, 'Mi': 2**20, 'Gi': 2**30, 'Ti': 2**40, 'Pi': 2**50, 'Ei': 2**60,
        'n': Decimal('1e-9'), 'u': Decimal('1e-6'), 'm': Decimal('1e-3'), None: 1,
        'k': 10**3, 'M': 10**6, 'G': 10**9, 'T': 10**12, 'P': 10**15, 'E': 10**18}


def quantity(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return Decimal(str(v))
    m = QTY.fullmatch(v) if isinstance(v, str) else None
    if not m:
        raise bad_request("quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    try:
        suffix = m[2]
        if suffix and suffix[0] in 'eE' and len(suffix) > 1:
            return Decimal(m[1]) * Decimal(10) ** int(suffix[1:])
        return Decimal(m[1]) * MULT[suffix]
    except InvalidOperation:
        raise bad_request(f'invalid quantity {v!r}') from None


def required(field, detail=''):
    return ('FieldValueRequired', field, 'Required value' + (f': {detail}' if detail else ''))


def invalid_value(field, value, detail):
    return ('FieldValueInvalid', field, f'Invalid value: {gofmt(value)}: {detail}')


def validate_pod_spec(c, p, spec, job):
    spec = spec if isinstance(spec, dict) else {}
    volumes = {v.get('name') for v in spec.get('volumes') or []}
    if not spec.get('containers'):
        c.append(required(f'{p}.containers'))
    for lst in ('initContainers', 'containers'):
        for i, ct in enumerate(spec.get(lst) or []):
            cp = f'{p}.{lst}[{i}]'
            name = ct.get('name')
            if not name:
                c.append(required(f'{cp}.name'))
            elif len(name) > 63 or not DNS_LABEL.fullmatch(name):
                c.append(invalid_value(f'{cp}.name', name, MSG_LABEL))
            if not ct.get('image'):
                c.append(required(f'{cp}.image'))
            for j, vm in enumerate(ct.get('volumeMounts') or []):
                if vm.get('name') not in volumes:
                    c.append(('FieldValueNotFound', f'{cp}.volumeMounts[{j}].name',
                              f'Not found: {gofmt(vm.get("name"))}'))
            limits = dig(ct, 'resources', 'limits') or {}
            for rname, rq in (dig(ct, 'resources', 'requests') or {}).items():
                if rname in limits and quantity(rq) > quantity(limits[rname]):
                    c.append(invalid_value(f'{cp}.resources.requests', rq,
                                           f'must be less than or equal to {rname} limit of '
                                           f'{limits[rname]}'))
    if job:  # the API defaults restartPolicy to Always, which Jobs reject
        rp = spec.get('restartPolicy', 'Always')
        if rp not in ('OnFailure', 'Never'):
            c.append(('FieldValueNotSupported', f'{p}.restartPolicy',
                      f'Unsupported value: {gofmt(rp)}: supported values: "OnFailure", "Never"'))


def validate(res, obj):
    """Field validation of an applied object -> [(reason, field, detail)]."""
    c, md = [], obj.get('metadata') or {}
    name, spec = md.get('name') or '', obj.get('spec') or {}
    limit, pattern, msg = NAME_RULES.get(res, (253, DNS_SUB, MSG_SUB))
    if len(name) > limit:
        c.append(invalid_value('metadata.name', name, f'must be no more than {limit} characters'))
    if not pattern.fullmatch(name):
        c.append(invalid_value('metadata.name', name, msg))
    for k, v in (md.get('labels') or {}).items():
        if not LABEL_KEY.fullmatch(k) or len(k.split('/')[-1]) > 63:
            c.append(invalid_value('metadata.labels', k, MSG_LABEL_KEY))
        if not isinstance(v, str) or not LABEL_VALUE.fullmatch(v):
            c.append(invalid_value('metadata.labels', v, MSG_LABEL_VALUE))
        elif len(v) > 63:
            c.append(invalid_value('metadata.labels', v, 'must be no more than 63 characters'))
    for ref in md.get('ownerReferences') or []:
        for f, what in (('apiVersion', 'version'), ('kind', 'kind'), ('name', 'name'), ('uid', 'uid')):
            if not ref.get(f):
                c.append(invalid_value(f'metadata.ownerReferences.{f}', '', f'{what} must not be empty'))
    if res == 'pods':
        validate_pod_spec(c, 'spec', spec, False)
    elif res in ('jobs', 'deployments', 'replicasets'):
        validate_pod_spec(c, 'spec.template.spec', dig(spec, 'template', 'spec'), res == 'jobs')
    elif res == 'cronjobs':
        if not spec.get('schedule'):
            c.append(required('spec.schedule'))
        validate_pod_spec(c, 'spec.jobTemplate.spec.template.spec',
                          dig(spec, 'jobTemplate', 'spec', 'template', 'spec'), True)
    if res == 'pytorchjobs':   # the Training Operator's webhook
        specs = spec.get('pytorchReplicaSpecs') or {}
        if not specs:
            c.append(required('spec.pytorchReplicaSpecs'))
        for rt, rs in specs.items():
            p = f'spec.pytorchReplicaSpecs[{rt}]'
            if rt not in ('Master', 'Worker'):
                c.append(('FieldValueNotSupported', p, f'Unsupported value: {gofmt(rt)}: supported values: '
                          '"Master", "Worker"'))
            tspec = dig(rs, 'template', 'spec')
            validate_pod_spec(c, f'{p}.template.spec', tspec, False)
            if not any(ct.get('name') == 'pytorch' for ct in (tspec or {}).get('containers') or []):
                c.append(required(f'{p}.template.spec.containers', 'must have a container named pytorch'))
            if rt == 'Master' and rs.get('replicas', 1) != 1:
                c.append(invalid_value(f'{p}.replicas', rs.get('replicas'), 'must be 1'))
    if res == 'mpijobs':       # the MPI Operator's validation
        specs = spec.get('mpiReplicaSpecs') or {}
        if 'Launcher' not in specs:
            c.append(required('spec.mpiReplicaSpecs[Launcher]', 'must have Launcher replica spec'))
        for rt, rs in specs.items():
            p = f'spec.mpiReplicaSpecs[{rt}]'
            validate_pod_spec(c, f'{p}.template.spec', dig(rs, 'template', 'spec'), False)
            if rs.get('restartPolicy') not in ('Never', 'OnFailure'):
                c.append(('FieldValueNotSupported', f'{p}.restartPolicy', f'Unsupported value: '
                          f'{gofmt(rs.get("restartPolicy", ""))}: supported values: "Never", "OnFailure"'))
            if rt == 'Launcher' and rs.get('replicas') != 1:
                c.append(invalid_value(f'{p}.replicas', rs.get('replicas'), 'must be 1'))
    if res == 'jobsets':
        rjs = spec.get('replicatedJobs') or []
        if not rjs:
            c.append(required('spec.replicatedJobs'))
        for i, rj in enumerate(rjs):
            validate_pod_spec(c, f'spec.replicatedJobs[{i}].template.spec.template.spec',
                              dig(rj, 'template', 'spec', 'template', 'spec'), True)
    if res == 'deployments':
        sel, tl = spec.get('selector'), dig(spec, 'template', 'metadata', 'labels') or {}
        if not sel:
            c.append(required('spec.selector'))
        elif any(tl.get(k) != v for k, v in (sel.get('matchLabels') or {}).items()):
            c.append(invalid_value('spec.template.metadata.labels', tl,
                                   '`selector` does not match template `labels`'))
    if res == 'jobs' and spec.get('selector') and not spec.get('manualSelector'):
        c.append(invalid_value('spec.selector', spec['selector'], '`selector` will be auto-generated'))
    if res == 'persistentvolumeclaims':
        if not spec.get('accessModes'):
            c.append(required('spec.accessModes', 'at least 1 access mode is required'))
        if 'storage' not in (dig(spec, 'resources', 'requests') or {}):
            c.append(required('spec.resources[storage]'))
    if res == 'services':
        ports = spec.get('ports') or []
        if not ports and spec.get('clusterIP') != 'None' and spec.get('type') != 'ExternalName':
            c.append(required('spec.ports'))
        for i, pt in enumerate(ports):
            if not isinstance(pt.get('port'), int) or not 1 <= pt['port'] <= 65535:
                c.append(invalid_value(f'spec.ports[{i}].port', pt.get('port', 0),
                                       'must be between 1 and 65535, inclusive'))
            if len(ports) > 1 and not pt.get('name'):
                c.append(required(f'spec.ports[{i}].name'))
    if res in ('secrets', 'configmaps'):
        for fld in ('data', 'binaryData'):
            for k in obj.get(fld) or {}:
                if len(k) > 253 or not CONFIG_KEY.fullmatch(k):
                    c.append(invalid_value(f'{fld}[{k}]', k, MSG_CONFIG_KEY))
    if res == 'horizontalpodautoscalers':
        for f in ('kind', 'name'):
            if not dig(spec, 'scaleTargetRef', f):
                c.append(required(f'spec.scaleTargetRef.{f}'))
        mx = spec.get('maxReplicas', 0)
        if not isinstance(mx, int) or mx < 1:
            c.append(invalid_value('spec.maxReplicas', mx, 'must be greater than 0'))
        elif isinstance(spec.get('minReplicas'), int) and spec['minReplicas'] > mx:
            c.append(invalid_value('spec.minReplicas', spec['minReplicas'],
                                   'must be less than or equal to maxReplicas'))
    return c


def immutable(res, old, new):
    """Causes for changes the real API refuses on update."""
    os_, ns_ = old.get('spec') or {}, new.get('spec') or {}
    if res == 'jobs' and os_.get('template') != ns_.get('template'):
        return [invalid_value('spec.template', 'core.PodTemplateSpec{...}', 'field is immutable')]
    if res == 'deployments' and os_.get('selector') != ns_.get('selector'):
        return [invalid_value('spec.selector', os_.get('selector') or {}, 'field is immutable')]
    if res == 'pods' and os_ != ns_:
        return [('FieldValueForbidden', 'spec', 'Forbidden: pod updates may not change fields '
                 'other than `spec.containers[*].image`,`spec.initContainers[*].image`,'
                 '`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing '
                 'tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 '
                 'if it was previously negative)')]
    if res == 'persistentvolumeclaims':
        strip = lambda s: {k: v for k, v in s.items() if k != 'resources'}
        if strip(os_) != strip(ns_):
            return [('FieldValueForbidden', 'spec', 'Forbidden: spec is immutable after creation '
                     'except resources.requests and volumeAttributesClassName for bound claims')]
    return []


def normalize_secret(obj):
    """Check base64 in data and fold the write-only stringData into data, as the API does."""
    for k, v in (obj.get('data') or {}).items():
        try:
            base64.b64decode(v if isinstance(v, str) else '!', validate=True)
        except (binascii.Error, ValueError):
            bad = next((i for i, ch in enumerate(str(v)) if not re.match(r'[A-Za-z0-9+/=]', ch)),
                       len(str(v)) - len(str(v)) % 4)
            raise bad_request('Secret in version "v1" cannot be handled as a Secret: '
                              f'illegal base64 data at input byte {bad}') from None
    for k, v in (obj.pop('stringData', None) or {}).items():
        obj.setdefault('data', {})[k] = base64.b64encode(str(v).encode()).decode()
    obj.setdefault('type', 'Opaque')


def conflicts(applied, live, path=''):
    """Paths set in `applied` whose live value differs (an approximation of SSA ownership)."""
    if isinstance(applied, dict) and isinstance(live, dict):
        return [p for k, v in applied.items() if k in live
                for p in conflicts(v, live[k], f'{path}.{k}')]
    if isinstance(applied, list) and isinstance(live, list) and len(applied) == len(live):
        return [p for i, (a, b) in enumerate(zip(applied, live)) for p in conflicts(a, b, f'{path}[{i}]')]
    return [] if applied == live else [path]


def owned_fields(obj):
    """A crude fieldsV1 for managedFields: the applied keys as f:key maps."""
    return {f'f:{k}': owned_fields(v) if isinstance(v, dict) else {} for k, v in obj.items()
            if k not in ('apiVersion', 'kind')}


def spec_part(obj):
    """What bumps metadata.generation: everything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ('apiVersion', 'kind', 'metadata', 'status')}


def content(obj):
    """What SSA compares for conflicts: everything but metadata/status, plus labels/annotations."""
    c = spec_part(obj)
    md = obj.get('metadata') or {}
    c['metadata'] = {k: md[k] for k in ('labels', 'annotations') if k in md}
    return c


# ---------------------------------------------------------------- the store

Event = collections.namedtuple('Event', 'rv type res ns obj old')


class Watcher:
    """One open watch: events matching its resource/namespace/filter queue up in `pending`."""

    def __init__(self, res, ns, flt, start_rv):
        self.res, self.ns, self.flt, self.start_rv = res, ns, flt, start_rv
        self.pending, self.closed = [], False

    def offer(self, ev):
        if self.closed or ev.res != self.res or ev.ns != self.ns:
            return
        now_in = self.flt(ev.obj)
        was_in = self.flt(ev.old) if ev.old is not None else now_in
        etype = ev.type
        if etype == 'MODIFIED' and now_in != was_in:   # moved into / out of the selection
            etype = 'ADDED' if now_in else 'DELETED'
        if now_in or was_in:
            self.pending.append((etype, ev.obj))


class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.rv = 0
        self.watchers = set()
        self.reset()

    def reset(self):
        with self.lock:
            self.objects = {}       # (res, ns, name) -> object (with kind/apiVersion)
            self.last = {}          # (res, ns, name) -> copy of the last written state
            self.history = []       # [Event]
            self.compacted_rv = 0
            self.gone_http = False
            self.faults, self.requests, self.logs = [], [], {}
            # (ns, pod) -> [(offset, unix time)]: when each part of its log was written,
            # for timestamps=true and sinceSeconds
            self.log_marks = {}
            self.namespaces = {}    # name -> Namespace (a project's, made by berth; nothing in it)
            # the PriorityClasses `berth cluster setup` makes for the built-in policy (high,
            # medium, low): this is a cluster set up for berth
            self.priority_classes = {
                name: {'apiVersion': 'scheduling.k8s.io/v1', 'kind': 'PriorityClass',
                       'metadata': {'name': name, 'uid': str(uuid.uuid4())}, 'value': value,
                       'preemptionPolicy': 'Never' if value == 1000 else 'PreemptLowerPriority'}
                for name, value in (('berth-high', 100000), ('berth-medium', 10000),
                                    ('berth-low', 1000))}
            self.absent = set()     # operators' resources the API does not serve (/_test/crds)
            # the metrics API (metrics.k8s.io, metrics-server's): not served until /_test/metrics
            # serves it; (ns, pod) -> {"cpu", "memory"} each of the pod's containers uses
            self.metrics_served, self.metrics = False, {}
            for w in self.watchers:
                w.closed = True
            self.watchers = set()
            self.cond.notify_all()

    def get(self, res, ns, name):
        return self.objects.get((res, ns, name))

    def select(self, res, ns, flt):
        return [o for (r, n, _), o in sorted(self.objects.items()) if r == res and n == ns and flt(o)]

    def owned(self, uid, ns):
        return [(r, o) for (r, n, _), o in sorted(self.objects.items()) if n == ns and any(
            ref.get('uid') == uid for ref in o['metadata'].get('ownerReferences') or [])]

    def by_uid(self, uid):
        return next(((r, o) for (r, _, _), o in self.objects.items()
                     if o['metadata'].get('uid') == uid), (None, None))

    def write(self, etype, res, obj):
        """Store (or drop, for DELETED) obj with a fresh resourceVersion and fan out the event."""
        self.rv += 1
        md = obj['metadata']
        md['resourceVersion'] = str(self.rv)
        key = (res, md['namespace'], md['name'])
        snap = copy.deepcopy(obj)
        old = self.last.get(key)
        if etype == 'DELETED':
            self.objects.pop(key, None)
            self.last.pop(key, None)
            if res == 'pods':
                self.logs.pop(key[1:], None)
                self.log_marks.pop(key[1:], None)
        else:
            self.objects[key], self.last[key] = obj, snap
        ev = Event(self.rv, etype, res, key[1], snap, old)
        self.history.append(ev)
        for w in self.watchers:
            w.offer(ev)
        self.cond.notify_all()


S = Store()


# ---------------------------------------------------------------- simulated controllers

def pod_ready(p):
    return dig(p, 'status', 'phase') == 'Running' and any(
        c.get('type') == 'Ready' and c.get('status') == 'True'
        for c in dig(p, 'status', 'conditions') or [])


def create_pod(owner, name, labels, template):
    omd, ns = owner['metadata'], owner['metadata']['namespace']
    while S.get('pods', ns, name):
        name = name[:-5] + rand(SUFFIX_CHARS, 5)
    md = {'name': name, 'generateName': name[:-5], 'namespace': ns, 'uid': str(uuid.uuid4()),
          'generation': 1, 'creationTimestamp': now(), 'labels': labels,
          'ownerReferences': [{'apiVersion': owner['apiVersion'], 'kind': owner['kind'],
                               'name': omd['name'], 'uid': omd['uid'], 'controller': True,
                               'blockOwnerDeletion': True}],
          'managedFields': [{'manager': 'kube-controller-manager', 'operation': 'Update',
                             'apiVersion': 'v1', 'time': now()}]}
    if dig(template, 'metadata', 'annotations'):
        md['annotations'] = copy.deepcopy(template['metadata']['annotations'])
    pod = {'kind': 'Pod', 'apiVersion': 'v1', 'metadata': md,
           'spec': copy.deepcopy(template.get('spec') or {}), 'status': {'phase': 'Pending'}}
    S.write('ADDED', 'pods', pod)
    return pod


def sync_job(job):
    """The job controller: one pod per (unsuspended, unstarted) Job."""
    md, spec = job['metadata'], job.get('spec') or {}
    if spec.get('suspend') or dig(job, 'status', 'startTime'):
        return
    tmpl = spec.get('template') or {}
    labels = {**(dig(tmpl, 'metadata', 'labels') or {}), 'job-name': md['name'],
              'batch.kubernetes.io/job-name': md['name'], 'controller-uid': md['uid'],
              'batch.kubernetes.io/controller-uid': md['uid']}
    create_pod(job, f"{md['name']}-{rand(SUFFIX_CHARS, 5)}", labels, tmpl)
    job['status'] = {**(job.get('status') or {}), 'active': 1, 'startTime': now()}
    S.write('MODIFIED', 'jobs', job)


def job_pod_finished(job, phase):
    st = job.setdefault('status', {})
    if any(c.get('type') in ('Complete', 'Failed') for c in st.get('conditions') or []):
        return
    t = now()
    st.pop('active', None)  # counters are omitted when zero, as the real API does
    if phase == 'Succeeded':
        st.update(succeeded=1, completionTime=t, conditions=[
            {'type': 'Complete', 'status': 'True', 'lastProbeTime': t, 'lastTransitionTime': t}])
    else:
        st.update(failed=1, conditions=[
            {'type': 'Failed', 'status': 'True', 'lastProbeTime': t, 'lastTransitionTime': t,
             'reason': 'BackoffLimitExceeded', 'message': 'Job has reached the specified backoff limit'}])
    S.write('MODIFIED', 'jobs', job)


def sync_deployment(dep):
    """Deployment controller without ReplicaSets: pods owned by the Deployment directly."""
    md, spec = dep['metadata'], dep.get('spec') or {}
    if md.get('deletionTimestamp'):
        return
    tmpl = spec.get('template') or {}
    digest = hashlib.sha256(json.dumps(tmpl, sort_keys=True).encode()).digest()
    h = ''.join(HASH_CHARS[b % len(HASH_CHARS)] for b in digest[:10])
    pods = [o for r, o in S.owned(md['uid'], md['namespace']) if r == 'pods']
    keep = [p for p in pods if dig(p, 'metadata', 'labels', 'pod-template-hash') == h]
    want = spec.get('replicas', 1)
    for p in [p for p in pods if p not in keep] + keep[want:]:
        S.write('DELETED', 'pods', p)
    keep = keep[:want]
    while len(keep) < want:
        labels = {**(dig(tmpl, 'metadata', 'labels') or {}), 'pod-template-hash': h}
        keep.append(create_pod(dep, f"{md['name']}-{h}-{rand(SUFFIX_CHARS, 5)}", labels, tmpl))
    ready = sum(map(pod_ready, keep))
    st = {'observedGeneration': md.get('generation', 1), 'replicas': len(keep),
          'updatedReplicas': len(keep), 'readyReplicas': ready, 'availableReplicas': ready,
          'unavailableReplicas': len(keep) - ready}
    st = {k: v for k, v in st.items() if v}   # omitempty, like the real status
    ok = ready >= want
    st['conditions'] = [{'type': 'Available', 'status': 'True' if ok else 'False',
                         'reason': 'MinimumReplicasAvailable' if ok else 'MinimumReplicasUnavailable',
                         'message': 'Deployment has minimum availability.' if ok else
                         'Deployment does not have minimum availability.'}]
    old = dep.get('status') or {}
    if {k: v for k, v in old.items() if k != 'conditions'} != \
       {k: v for k, v in st.items() if k != 'conditions'} or \
       [c['status'] for c in old.get('conditions', [])] != [c['status'] for c in st['conditions']]:
        dep['status'] = st
        S.write('MODIFIED', 'deployments', dep)


def suspended(res, obj):
    spec = obj.get('spec') or {}
    return bool(dig(spec, 'runPolicy', 'suspend') if res in ('pytorchjobs', 'mpijobs') else spec.get('suspend'))


def operator_pods(res, obj):
    """[(name, labels, annotations, template)] of the pods an operator makes for obj."""
    md, spec = obj['metadata'], obj.get('spec') or {}
    name, out = md['name'], []

    def tmpl_labels(t):
        return dict(dig(t, 'metadata', 'labels') or {})
    if res == 'pytorchjobs':   # the Training Operator: <name>-master-0, <name>-worker-<i>
        for rt, rs in sorted((spec.get('pytorchReplicaSpecs') or {}).items()):
            t = rs.get('template') or {}
            for i in range(rs.get('replicas', 1)):
                lb = {**tmpl_labels(t), 'training.kubeflow.org/job-name': name,
                      'training.kubeflow.org/operator-name': 'pytorchjob-controller',
                      'training.kubeflow.org/replica-type': rt.lower(),
                      'training.kubeflow.org/replica-index': str(i)}
                if rt == 'Master':
                    lb['training.kubeflow.org/job-role'] = 'master'
                out.append((f'{name}-{rt.lower()}-{i}', lb, {}, t))
    elif res == 'mpijobs':     # the MPI Operator: its Launcher's Job's pod, <name>-worker-<i>
        for rt, rs in sorted((spec.get('mpiReplicaSpecs') or {}).items()):
            t = rs.get('template') or {}
            for i in range(rs.get('replicas', 1)):
                lb = {**tmpl_labels(t), 'training.kubeflow.org/job-name': name,
                      'training.kubeflow.org/operator-name': 'mpi-operator',
                      'training.kubeflow.org/job-role': rt.lower()}
                if rt == 'Worker':
                    lb['training.kubeflow.org/replica-index'] = str(i)
                pod = f'{name}-worker-{i}' if rt == 'Worker' else f'{name}-launcher-{rand(SUFFIX_CHARS, 5)}'
                out.append((pod, lb, {}, t))
    elif res == 'jobsets':     # JobSet's Indexed Jobs: <name>-<rjob>-<job>-<index>-xxxxx
        for rj in spec.get('replicatedJobs') or []:
            for j in range(rj.get('replicas', 1)):
                jspec = dig(rj, 'template', 'spec') or {}
                t = jspec.get('template') or {}
                for i in range(jspec.get('completions', 1)):
                    lb = {**tmpl_labels(t), 'jobset.sigs.k8s.io/jobset-name': name,
                          'jobset.sigs.k8s.io/replicatedjob-name': rj.get('name', ''),
                          'jobset.sigs.k8s.io/job-index': str(j),
                          'batch.kubernetes.io/job-completion-index': str(i)}
                    out.append((f"{name}-{rj.get('name')}-{j}-{i}-{rand(SUFFIX_CHARS, 5)}", lb,
                                {'batch.kubernetes.io/job-completion-index': str(i)}, t))
    return out


def sync_operator(res, obj):
    """An operator: once it is not suspended, the pods of obj, and condition Created."""
    if suspended(res, obj) or dig(obj, 'status', 'startTime'):
        return
    for name, labels, ann, t in operator_pods(res, obj):
        t = copy.deepcopy(t)
        if ann:
            t.setdefault('metadata', {}).setdefault('annotations', {}).update(ann)
        create_pod(obj, name, labels, t)
    t = now()
    st = {'startTime': t}
    if res != 'jobsets':
        st['conditions'] = [{'type': 'Created', 'status': 'True', 'reason': f"{RES[res][2]}Created",
                             'message': f"{RES[res][2]} {obj['metadata']['name']} is created.",
                             'lastUpdateTime': t, 'lastTransitionTime': t}]
    obj['status'] = {**(obj.get('status') or {}), **st}
    S.write('MODIFIED', res, obj)


def operator_pod_changed(res, obj):
    """How the operators end their jobs: a PyTorchJob with its Master, or any replica failing; an
    MPIJob with its Launcher; a JobSet when every pod has succeeded, or one has failed."""
    st = obj.setdefault('status', {})
    final = {'Succeeded', 'Completed', 'Failed'}
    if any(c.get('type') in final and c.get('status') == 'True' for c in st.get('conditions') or []):
        return
    pods = [o for r, o in S.owned(obj['metadata']['uid'], obj['metadata']['namespace']) if r == 'pods']
    phase = {p['metadata']['name']: dig(p, 'status', 'phase') for p in pods}
    kind, name, t = RES[res][2], obj['metadata']['name'], now()
    role = lambda p: dig(p, 'metadata', 'labels', 'training.kubeflow.org/job-role')
    failed = [n for n, ph in phase.items() if ph == 'Failed']
    if res == 'jobsets':
        done = pods and all(ph == 'Succeeded' for ph in phase.values())
        ok = ('Completed', 'AllJobsCompleted', 'jobset completed successfully')
        bad = ('Failed', 'FailedJobs', 'jobset failed due to one or more job failures')
    else:
        lead = 'master' if res == 'pytorchjobs' else 'launcher'
        done = any(role(p) == lead and phase[p['metadata']['name']] == 'Succeeded' for p in pods)
        if res == 'mpijobs':   # its workers' sshd does not end: only the Launcher's end counts
            failed = [p['metadata']['name'] for p in pods if role(p) == 'launcher' and
                      phase[p['metadata']['name']] == 'Failed']
        ok = ('Succeeded', f'{kind}Succeeded', f'{kind} {obj["metadata"]["namespace"]}/{name} successfully completed.')
        bad = ('Failed', f'{kind}Failed', f'{kind} {obj["metadata"]["namespace"]}/{name} is failed because '
               f'{len(failed)} replica(s) failed.')
    if done or failed:
        ctype, reason, msg = ok if done else bad
        st.setdefault('conditions', []).append({'type': ctype, 'status': 'True', 'reason': reason,
                                                'message': msg, 'lastTransitionTime': t})
        if done:
            st['completionTime'] = t
        S.write('MODIFIED', res, obj)


def pod_changed(pod):
    """React to a pod's new status: finish its Job (or an operator's), refresh its Deployment."""
    for ref in pod['metadata'].get('ownerReferences') or []:
        res, owner = S.by_uid(ref.get('uid'))
        phase = dig(pod, 'status', 'phase')
        if res == 'jobs' and phase in ('Succeeded', 'Failed'):
            job_pod_finished(owner, phase)
        elif res in OPERATOR_RES:
            operator_pod_changed(res, owner)
        elif res == 'deployments':
            sync_deployment(owner)


def delete_tree(res, obj, policy):
    """Delete obj and handle its dependents per the propagation policy (synchronously)."""
    md = obj['metadata']
    deps = S.owned(md['uid'], md['namespace'])
    if policy == 'Foreground':
        md['deletionTimestamp'] = now()
        md['finalizers'] = (md.get('finalizers') or []) + ['foregroundDeletion']
        S.write('MODIFIED', res, obj)
        for r, d in deps:
            if S.get(r, md['namespace'], d['metadata']['name']) is d:   # not collected already
                delete_tree(r, d, 'Foreground')
        md['finalizers'].remove('foregroundDeletion')
        if not md['finalizers']:
            del md['finalizers']
        S.write('DELETED', res, obj)
    else:
        S.write('DELETED', res, obj)
        for r, d in deps:
            if policy == 'Orphan':   # the garbage collector drops the owner reference
                refs = [x for x in d['metadata']['ownerReferences'] if x.get('uid') != md['uid']]
                d['metadata']['ownerReferences'] = refs
                if not refs:
                    del d['metadata']['ownerReferences']
                S.write('MODIFIED', r, d)
            elif S.get(r, md['namespace'], d['metadata']['name']) is d:
                delete_tree(r, d, 'Background')
    if res == 'pods':   # a Deployment replaces a lost pod
        for ref in md.get('ownerReferences') or []:
            r, owner = S.by_uid(ref.get('uid'))
            if r == 'deployments':
                sync_deployment(owner)


# ---------------------------------------------------------------- HTTP

def parse_path(path):
    """-> (res, ns, name, sub) for a namespaced resource path, else None."""
    m = re.fullmatch(r'/api/v1/namespaces/([^/]+)/([^/]+)(?:/([^/]+)(?:/([^/]+))?)?', path)
    if m:
        g, v, (ns, res, name, sub) = '', 'v1', m.groups()
    else:
        m = re.fullmatch(r'/apis/([^/]+)/([^/]+)/namespaces/([^/]+)/([^/]+)(?:/([^/]+)(?:/([^/]+))?)?',
                         path)
        if not m:
            return None
        g, v, ns, res, name, sub = m.groups()
    if RES.get(res, (None, None))[:2] != (g, v) or (sub and (res, sub) != ('pods', 'log')) or \
            res in S.absent:
        return None
    return res, ns, name, sub


def discovery(path, port):
    if path == '/version':
        return VERSION
    if path == '/api':
        return {'kind': 'APIVersions', 'versions': ['v1'], 'serverAddressByClientCIDRs': [
            {'clientCIDR': '0.0.0.0/0', 'serverAddress': f'127.0.0.1:{port}'}]}
    served = [r for r in RES if r not in S.absent]
    gvs = sorted({api_version(r) for r in served})
    if path == '/apis':
        groups = {}
        for gv in gvs:
            if '/' in gv:
                groups.setdefault(gv.split('/')[0], []).append(gv)
        return {'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': [
            {'name': g, 'versions': [{'groupVersion': gv, 'version': gv.split('/')[1]} for gv in vs],
             'preferredVersion': {'groupVersion': vs[0], 'version': vs[0].split('/')[1]}}
            for g, vs in sorted(groups.items())]}
    gv = path[6:] if path.startswith('/apis/') else path[5:] if path.startswith('/api/') else ''
    if gv in gvs and ('/' in gv) == path.startswith('/apis/'):
        verbs = ['delete', 'deletecollection', 'get', 'list', 'patch', 'watch']
        resources = [{'name': r, 'singularName': k.lower(), 'namespaced': True, 'kind': k,
                      'verbs': verbs} for r, (g, v, k) in RES.items() if api_version(r) == gv and r in served]
        if gv == 'v1':
            resources.append({'name': 'pods/log', 'singularName': '', 'namespaced': True,
                              'kind': 'Pod', 'verbs': ['get']})
        return {'kind': 'APIResourceList', 'apiVersion': 'v1', 'groupVersion': gv,
                'resources': resources}
    return None


def dry_run(q, body=None):
    vals = [q['dryRun']] if 'dryRun' in q else list((body or {}).get('dryRun') or [])
    for v in vals:
        if v != 'All':
            raise bad_request(f'dryRun: Unsupported value: "{v}": supported values: "All"')
    return bool(vals)


def to_json(obj):
    return (json.dumps(obj, separators=(',', ':')) + '\n').encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    disable_nagle_algorithm = True  # replies go out at once, as a real API server's
    conn_ids = itertools.count(1)   # one id per TCP connection, in accept order

    def version_string(self):
        return 'berth-kube-standin'

    # -- connection plumbing

    def setup(self):
        self.conn_id = next(self.conn_ids)
        self.entry = None
        self.request.settimeout(10)
        self.request.do_handshake()        # in this thread; a rogue client cert fails here
        self.request.settimeout(None)
        super().setup()

    def log_message(self, *args):
        pass

    def send_response(self, code, message=None):
        super().send_response(code, message)
        if self.entry is not None and 'code' not in self.entry:
            self.entry['code'] = code
            self.server.log_request_entry(self.entry)

    def send_json(self, code, obj, headers=()):
        data = to_json(obj)
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self, ctype):
        self.send_response(200)
        self.send_header('Content-Type', ctype)
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()

    def chunk(self, data):
        data = data.encode() if isinstance(data, str) else data
        if data:
            self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
            self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b'0\r\n\r\n')
        self.wfile.flush()

    def client_gone(self):
        """During a stream the client sends nothing; readable means EOF or a reset."""
        try:
            return bool(select.select([self.connection], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def read_body(self):
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            data = b''
            while True:
                n = int(self.rfile.readline().split(b';')[0], 16)
                if n == 0:
                    while self.rfile.readline() not in (b'\r\n', b'\n', b''):
                        pass
                    return data
                data += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(n) if n else b''

    def authenticate(self):
        auth = self.headers.get('Authorization', '')
        if auth.startswith('Bearer ') and hmac.compare_digest(
                auth[7:].strip().encode(), self.server.args.token.encode()):
            return 'token'
        return 'cert' if self.connection.getpeercert() else 'none'

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = lambda self: self.dispatch()

    def dispatch(self):
        u = urlsplit(self.path)
        path, q = u.path, dict(parse_qsl(u.query, keep_blank_values=True))
        try:
            raw = self.read_body()
            if path.startswith('/_test/'):
                return self.control(path, raw)
            try:
                body = json.loads(raw) if raw.strip() else None
            except ValueError:
                body = None
            auth = self.authenticate()
            self.entry = {'conn': self.conn_id, 'method': self.command, 'path': path, 'query': q,
                          'content_type': self.headers.get('Content-Type'), 'auth': auth,
                          'body': body}
            with S.lock:
                S.requests.append(self.entry)
            if auth == 'none':
                raise ApiError(401, 'Unauthorized')
            self.route(path, q, raw, body)
        except ApiError as e:
            self.send_json(e.code, e.body, e.headers)
        except Flood as e:
            self.flood(e.size)
        except OSError:      # the client went away
            self.close_connection = True
        except ValueError as e:   # a malformed number in the query or the framing
            self.send_json(400, status_body(400, 'BadRequest', f'bad request: {e}'))
        except Exception as e:  # a bug in the stand-in: say so loudly
            traceback.print_exc()
            self.send_json(500, status_body(500, 'InternalError', f'stand-in bug: {e!r}'))

    # -- the API

    def route(self, path, q, raw, body):
        m = self.command
        if m == 'GET' and path in ('/healthz', '/livez', '/readyz'):
            return self.send_text('ok')
        doc = discovery(path, self.server.server_address[1]) if m == 'GET' else None
        if doc is not None:
            return self.send_json(200, doc)
        pc = re.fullmatch(r'/apis/scheduling\.k8s\.io/v1/priorityclasses/([^/]+)', path)
        if pc:
            self.check_fault(m.lower(), 'priorityclasses', '', pc[1])
            if m != 'GET':
                raise ApiError(405, f'{m} is not supported on priorityclasses by this stand-in')
            with S.lock:
                obj = copy.deepcopy(S.priority_classes.get(pc[1]))
            if obj is None:
                raise ApiError(404, f'priorityclasses.scheduling.k8s.io "{pc[1]}" not found',
                               details={'name': pc[1], 'group': 'scheduling.k8s.io',
                                        'kind': 'priorityclasses'})
            return self.send_json(200, obj)
        pm = re.fullmatch(r'/apis/metrics\.k8s\.io/v1beta1/namespaces/([^/]+)/pods', path)
        if pm and m == 'GET' and S.metrics_served:
            self.check_fault('list', 'pods.metrics.k8s.io', pm[1], None)
            return self.pod_metrics(pm[1], q)
        made = re.fullmatch(r'/api/v1/namespaces(?:/([^/]+)|/([^/]+)/(resourcequotas|limitranges))?', path)
        if made and (made[1] or m == 'POST'):
            return self.project_namespace(m, made, body if isinstance(body, dict) else {})
        parsed = parse_path(path)
        if not parsed:
            raise ApiError(404, 'the server could not find the requested resource')
        res, ns, name, sub = parsed
        watch = m == 'GET' and not name and parse_bool(q.get('watch', ''))
        verb = {'GET': 'get' if name else 'watch' if watch else 'list', 'PATCH': 'patch',
                'DELETE': 'delete' if name else 'deletecollection', 'POST': 'create',
                'PUT': 'update'}.get(m, m.lower())
        self.check_fault(verb, f'{res}/{sub}' if sub else res, ns, name)
        if m == 'GET' and sub:
            return self.pod_log(ns, name, q)
        if m == 'GET' and name:
            with S.lock:
                obj = copy.deepcopy(S.get(res, ns, name))
            if obj is None:
                raise not_found(res, name)
            return self.send_json(200, obj)
        if m == 'GET':
            flt = make_filter(res, q)
            return self.watch(res, ns, q, flt) if watch else self.list(res, ns, q, flt)
        if m == 'PATCH' and name:
            return self.apply(res, ns, name, q, raw)
        if m == 'DELETE' and not name and res == 'services':
            # as the real API: Services have no deletecollection (kubernetes#20581)
            raise ApiError(405, 'the server does not allow this method on the requested resource',
                           reason='MethodNotAllowed')
        if m == 'DELETE':
            return self.delete(res, ns, name, q, body if isinstance(body, dict) else {})
        raise ApiError(405, f'{m} is not supported: {ONLY_APPLY}; use PATCH on the object URL')

    def project_namespace(self, m, made, body):
        """A project's namespace as berth makes it: Namespaces (GET, POST, DELETE with
        preconditions), and a POST of its ResourceQuota or LimitRange (accepted, not kept)."""
        name, ns, res = made[1], made[2], made[3] or 'namespaces'
        verb = {'GET': 'get', 'POST': 'create', 'DELETE': 'delete'}.get(m, m.lower())
        self.check_fault(verb, res, ns or '', name)
        with S.lock:
            if res != 'namespaces':
                if m != 'POST':
                    raise ApiError(405, f'{m} is not supported on {res} by this stand-in')
                obj = copy.deepcopy(body)
                obj.setdefault('metadata', {}).update(namespace=ns, uid=str(uuid.uuid4()))
                return self.send_json(201, obj)
            if m == 'POST':
                name = (body.get('metadata') or {}).get('name', '')
                if name in S.namespaces:
                    raise ApiError(409, f'namespaces "{name}" already exists', 'AlreadyExists',
                                   details={'name': name, 'group': '', 'kind': 'namespaces'})
                obj = copy.deepcopy(body)
                obj['metadata'].update(uid=str(uuid.uuid4()), creationTimestamp=now())
                S.namespaces[name] = obj
                return self.send_json(201, obj)
            obj = S.namespaces.get(name)
            if obj is None:
                raise ApiError(404, f'namespaces "{name}" not found', 'NotFound',
                               details={'name': name, 'group': '', 'kind': 'namespaces'})
            if m == 'GET':
                return self.send_json(200, obj)
            if m == 'DELETE':
                pre = body.get('preconditions') or {}
                if pre.get('uid') and pre['uid'] != obj['metadata']['uid']:
                    raise ApiError(409, f'Precondition failed: UID in precondition: {pre["uid"]}, UID '
                                   f'in object meta: {obj["metadata"]["uid"]}', 'Conflict')
                del S.namespaces[name]
                return self.send_json(200, obj)
        raise ApiError(405, f'{m} is not supported on namespaces by this stand-in')

    def check_fault(self, verb, res, ns, name):
        """Injected failures (POST /_test/fail), consumed in order, after auth."""
        with S.lock:
            for f in S.faults:
                if (f.get('method') or self.command).upper() != self.command or \
                   f.get('verb', verb) != verb or f.get('resource', res) != res or \
                   f.get('name', name) != name or f.get('namespace', ns) != ns:
                    continue
                f['times'] = f.get('times', 1) - 1
                if f['times'] <= 0:
                    S.faults.remove(f)
                if 'flood' in f:
                    raise Flood(f['flood'])
                if f.get('stall'):
                    raise Flood('stall')
                code = int(f.get('code', 500))
                base = res.split('/')[0]
                g = group_of(base) if base in RES else ''
                target = f'{qualified(base)} "{name}"' if name else qualified(base)
                msg = f.get('message') or (
                    f'{target} is forbidden: User "system:serviceaccount:berth:berth" cannot {verb} '
                    f'resource "{res}" in API group "{g}" in the namespace "{ns}"' if code == 403 else
                    f'Operation cannot be fulfilled on {target}: injected conflict' if code == 409 else
                    f'injected fault {code}')
                headers = [('Retry-After', str(f['retryAfter']))] if f.get('retryAfter') else []
                raise ApiError(code, msg, f.get('reason'), headers=headers, details={
                    'name': name, 'group': g, 'kind': base, 'causes': f.get('causes'),
                    'retryAfterSeconds': f.get('retryAfter')})

    def flood(self, size):
        """200 and a body of size bytes (its Content-Length said first), or 'endless' (chunked,
        until the client goes away): no newline, so one line as a watch event; or 'stall': one
        line, then nothing until the client goes away."""
        piece = b'x' * (1 << 20)
        try:
            if size == 'stall':
                self.start_stream('text/plain')
                self.chunk('the first line, and then nothing\n')
                for _ in range(1200):      # 2 minutes at most
                    if self.client_gone():
                        break
                    time.sleep(0.1)
                self.close_connection = True
                return
            if size == 'endless':
                self.start_stream('application/json')
                while True:
                    self.chunk(piece)
            left = int(size)
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(left))
            self.end_headers()
            while left > 0:
                self.wfile.write(piece[:left])
                left -= len(piece)
        except OSError:      # the client stopped reading: what the flood is for
            pass
        self.close_connection = True

    def send_text(self, text, code=200):
        data = text.encode()
        self.send_response(code)
        self.send_header('Content-Type', 'text/plain; charset=utf-8')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def list(self, res, ns, q, flt):
        with S.lock:
            items = [copy.deepcopy(o) for o in S.select(res, ns, flt)]
            rv = str(S.rv)
        for o in items:          # typed lists carry no kind/apiVersion on their items
            o.pop('kind', None)
            o.pop('apiVersion', None)
        meta = {'resourceVersion': rv}
        if q.get('continue'):
            try:
                after = json.loads(base64.urlsafe_b64decode(q['continue']))['start']
            except (ValueError, KeyError, TypeError):
                raise bad_request('continue key is not valid') from None
            items = [o for o in items if o['metadata']['name'] > after]
        limit = int(q.get('limit') or 0)
        if 0 < limit < len(items):
            meta['continue'] = base64.urlsafe_b64encode(json.dumps(
                {'start': items[limit - 1]['metadata']['name']}).encode()).decode()
            meta['remainingItemCount'] = len(items) - limit
            items = items[:limit]
        self.send_json(200, {'kind': RES[res][2] + 'List', 'apiVersion': api_version(res),
                             'metadata': meta, 'items': items})

    def pod_metrics(self, ns, q):
        """A PodMetricsList, as metrics-server answers: the Running pods it has usage for, with
        their labels (not their annotations), each container's usage, over a window."""
        with S.lock:
            pods = [p for p in S.select('pods', ns, make_filter('pods', q))
                    if dig(p, 'status', 'phase') == 'Running' and (ns, p['metadata']['name']) in S.metrics]
            items = [{'metadata': {'name': p['metadata']['name'], 'namespace': ns,
                                   'labels': copy.deepcopy(p['metadata'].get('labels') or {})},
                      'timestamp': now(), 'window': '15s',
                      'containers': [{'name': c.get('name', 'main'),
                                      'usage': dict(S.metrics[(ns, p['metadata']['name'])])}
                                     for c in (dig(p, 'spec', 'containers') or [{}])]}
                     for p in pods]
        self.send_json(200, {'kind': 'PodMetricsList', 'apiVersion': 'metrics.k8s.io/v1beta1',
                             'metadata': {}, 'items': items})

    def apply(self, res, ns, name, q, raw):
        ct = (self.headers.get('Content-Type') or '').split(';')[0].strip().lower()
        if ct != 'application/apply-patch+yaml':
            raise ApiError(415, ONLY_APPLY)
        fm = q.get('fieldManager', '')
        if not fm:
            raise bad_request('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required '
                              'value: is required for apply patch')
        force, dry = parse_bool(q.get('force', '')), dry_run(q)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise bad_request('only JSON bodies are understood by this stand-in')
        av, kind = api_version(res), RES[res][2]
        md = body.get('metadata')
        if body.get('apiVersion') != av:
            raise bad_request(f'the API version in the data ({body.get("apiVersion")}) does not '
                              f'match the expected API version ({av})')
        if body.get('kind') != kind:
            raise bad_request(f'the kind in the data ({body.get("kind")}) does not match the '
                              f'expected kind ({kind}) for {qualified(res)}')
        if not isinstance(md, dict) or md.get('name') != name:
            raise bad_request(f'the name of the object ({dig(body, "metadata", "name") or ""}) '
                              f'does not match the name on the URL ({name})')
        if md.get('namespace') not in (None, ns):
            raise bad_request('the namespace of the provided object does not match the namespace '
                              f'sent on the request ({md["namespace"]} != {ns})')
        obj = copy.deepcopy(body)
        obj.pop('status', None)               # apply never changes status
        if res == 'secrets':
            normalize_secret(obj)
        md = obj['metadata']
        md['namespace'] = ns
        for k in ('uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields',
                  'deletionTimestamp', 'selfLink'):
            md.pop(k, None)
        with S.lock:
            old = S.get(res, ns, name)
            om = (old or {}).get('metadata', {})
            if dig(body, 'metadata', 'resourceVersion') and old and \
               body['metadata']['resourceVersion'] != om['resourceVersion']:
                raise ApiError(409, f'Operation cannot be fulfilled on {qualified(res)} "{name}": '
                               'the object has been modified; please apply your changes to the '
                               'latest version and try again',
                               details={'name': name, 'group': group_of(res), 'kind': res})
            others = [e for e in om.get('managedFields') or [] if e['manager'] != fm]
            if old and others and not force:
                paths = conflicts(content(body), content(old))
                if paths:
                    mgr = others[-1]['manager']
                    n = len(paths)
                    msg = (f'Apply failed with 1 conflict: conflict with "{mgr}" using {av}: {paths[0]}'
                           if n == 1 else f'Apply failed with {n} conflicts: conflicts with "{mgr}" '
                           f'using {av}:\n' + '\n'.join(f'- {p}' for p in paths))
                    raise ApiError(409, msg, details={'name': name, 'group': group_of(res), 'kind': res,
                                   'causes': [{'reason': 'FieldManagerConflict', 'field': p,
                                               'message': f'conflict with "{mgr}" using {av}'}
                                              for p in paths]})
            causes = validate(res, obj) + (immutable(res, old, obj) if old else [])
            if causes:
                raise invalid(res, name, causes)
            if old:
                md['uid'], md['creationTimestamp'] = om['uid'], om['creationTimestamp']
                md['generation'] = om.get('generation', 1) + (spec_part(obj) != spec_part(old))
                if 'status' in old:
                    obj['status'] = copy.deepcopy(old['status'])
            else:
                md.update(uid=str(uuid.uuid4()), creationTimestamp=now(), generation=1)
                if res in ('pods', 'persistentvolumeclaims'):
                    obj['status'] = {'phase': 'Pending'}
            mine = {'manager': fm, 'operation': 'Apply', 'apiVersion': av, 'time': now(),
                    'fieldsType': 'FieldsV1', 'fieldsV1': owned_fields(content(body))}
            md['managedFields'] = ([] if force else others) + [mine]
            if old:
                same = {k: v for k, v in obj.items() if k != 'metadata'} == \
                       {k: v for k, v in old.items() if k != 'metadata'} and \
                       {k: v for k, v in md.items() if k != 'managedFields'} == \
                       {k: v for k, v in om.items() if k not in ('managedFields', 'resourceVersion')} \
                       and [e['manager'] for e in md['managedFields']] == \
                       [e['manager'] for e in om['managedFields']]
                md['resourceVersion'] = om['resourceVersion']
            if old and same:     # a no-op apply writes nothing and emits no event
                result = copy.deepcopy(old)
            elif dry:
                result = obj
            else:
                S.write('MODIFIED' if old else 'ADDED', res, obj)
                result = copy.deepcopy(obj)    # the reply shows the object before controllers act
                if res == 'jobs':
                    sync_job(obj)
                elif res in OPERATOR_RES:
                    sync_operator(res, obj)
                elif res == 'deployments':
                    sync_deployment(obj)
        self.send_json(200 if old else 201, result)

    def delete(self, res, ns, name, q, body):
        policy = q.get('propagationPolicy') or body.get('propagationPolicy')
        if not policy and (parse_bool(q.get('orphanDependents', '')) or body.get('orphanDependents')):
            policy = 'Orphan'
        headers = []
        if not policy:   # batch/v1 Jobs orphan their pods by default, everything else: Background
            policy = 'Orphan' if res == 'jobs' else 'Background'
            if res == 'jobs':
                headers.append(('Warning', JOB_ORPHAN_WARNING))
        if policy not in ('Foreground', 'Background', 'Orphan'):
            raise ApiError(422, f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: '
                           f'Unsupported value: "{policy}": supported values: "Foreground", '
                           '"Background", "Orphan"')
        self.entry['propagation'] = policy
        dry = dry_run(q, body)
        g = group_of(res)
        with S.lock:
            if name:
                obj = S.get(res, ns, name)
                if obj is None:
                    raise not_found(res, name)
                pre, md = body.get('preconditions') or {}, obj['metadata']
                for field, key in (('uid', 'UID'), ('resourceVersion', 'ResourceVersion')):
                    if pre.get(field) and pre[field] != md[field]:
                        raise ApiError(409, f'Precondition failed: {key} in precondition: '
                                       f'{pre[field]}, {key} in object meta: {md[field]}',
                                       details={'name': name, 'group': g, 'kind': res})
                if not dry:
                    delete_tree(res, obj, policy)
                out = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success',
                       'details': {k: v for k, v in (('name', name), ('group', g), ('kind', res),
                                                     ('uid', md['uid'])) if v}}
            else:
                victims = S.select(res, ns, make_filter(res, q))
                for o in victims if not dry else ():
                    if S.get(res, ns, o['metadata']['name']) is o:   # not already collected
                        delete_tree(res, o, policy)
                out = {'kind': RES[res][2] + 'List', 'apiVersion': api_version(res),
                       'metadata': {'resourceVersion': str(S.rv)}, 'items': copy.deepcopy(victims)}
        self.send_json(200, out, headers)

    def watch(self, res, ns, q, flt):
        rvq = q.get('resourceVersion', '')
        timeout = float(q.get('timeoutSeconds') or 0) or 300.0   # 0 means the default
        bookmarks = parse_bool(q.get('allowWatchBookmarks', ''))
        interval = self.server.args.bookmark_interval
        with S.lock:
            w = Watcher(res, ns, flt, rvq)
            if rvq in ('', '0'):      # "now": synthetic ADDED for what exists, then live
                w.pending = [('ADDED', copy.deepcopy(o)) for o in S.select(res, ns, flt)]
            else:
                if not rvq.isdigit():
                    raise bad_request(f'resourceVersion: Invalid value: "{rvq}": invalid value')
                if int(rvq) < S.compacted_rv:
                    if S.gone_http:
                        raise ApiError(410, f'too old resource version: {rvq} ({S.compacted_rv})', 'Gone')
                    w.pending, w.closed = [('ERROR', expired_status(rvq, S.compacted_rv))], True
                for ev in S.history if not w.closed else ():
                    if ev.rv > int(rvq):
                        w.offer(ev)
            if not w.closed:
                S.watchers.add(w)
        self.start_stream('application/json')
        start = time.monotonic()
        deadline, next_bm = start + timeout, start + interval
        try:
            while True:
                with S.cond:
                    if not w.pending and not w.closed:
                        wake = min(deadline, next_bm) if bookmarks else deadline
                        S.cond.wait(max(0.0, min(1.0, wake - time.monotonic())))
                    events, w.pending = w.pending, []
                    closed, rv_now = w.closed, S.rv
                for etype, obj in events:
                    self.chunk(to_json({'type': etype, 'object': obj}))
                if closed or time.monotonic() >= deadline:
                    break
                if bookmarks and time.monotonic() >= next_bm:
                    self.chunk(to_json({'type': 'BOOKMARK', 'object': {
                        'kind': RES[res][2], 'apiVersion': api_version(res),
                        'metadata': {'resourceVersion': str(rv_now)}}}))
                    next_bm = time.monotonic() + interval
                if not events and self.client_gone():
                    self.close_connection = True
                    return
            self.end_stream()
        finally:
            with S.lock:
                S.watchers.discard(w)

    def pod_log(self, ns, name, q):
        with S.lock:
            pod = S.get('pods', ns, name)
            if pod is None:
                raise not_found('pods', name)
            names = [c.get('name') for c in dig(pod, 'spec', 'containers') or []]
            c = q.get('container')
            if c and c not in names:
                raise bad_request(f'container {c} is not valid for pod {name}')
            if not c and len(names) > 1:
                raise bad_request(f'a container name must be specified for pod {name}, '
                                  f'choose one of: [{" ".join(names)}]')
            text, uid = S.logs.get((ns, name)), pod['metadata']['uid']
            marks = list(S.log_marks.get((ns, name), []))
            if dig(pod, 'status', 'phase') in (None, 'Pending') and text is None:
                raise bad_request(f'container "{c or (names or [""])[0]}" in pod "{name}" is '
                                  'waiting to start: ContainerCreating')
        text = text or ''
        pos = len(text)
        stamps = parse_bool(q.get('timestamps', ''))

        def time_at(off):  # when the byte at off was written (the kubelet's time of its line)
            t = marks[0][1] if marks else time.time()
            for o, at in marks:
                if o <= off:
                    t = at
            return t

        def stamp(t):  # RFC 3339 with nanoseconds, as the kubelet writes it
            d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
            return d.strftime('%Y-%m-%dT%H:%M:%S.') + '%06d000Z ' % d.microsecond

        lines, off = [], 0
        for ln in text.splitlines(keepends=True):
            lines.append((time_at(off), ln))
            off += len(ln)
        if q.get('sinceSeconds'):
            lines = [x for x in lines if x[0] >= time.time() - int(q['sinceSeconds'])]
        if q.get('tailLines'):
            lines = lines[-int(q['tailLines']):] if int(q['tailLines']) else []
        text = ''.join((stamp(t) if stamps else '') + ln for t, ln in lines)
        at_start = not lines or lines[-1][1].endswith('\n')
        self.start_stream('text/plain')
        self.chunk(text)
        follow = parse_bool(q.get('follow', ''))

        def state():   # (pod or None if gone/replaced, its log text)
            p = S.get('pods', ns, name)
            p = p if p and p['metadata']['uid'] == uid else None
            return p, S.logs.get((ns, name), '')
        while follow:
            with S.cond:
                p, cur = state()
                if p and len(cur) <= pos and dig(p, 'status', 'phase') not in ('Succeeded', 'Failed'):
                    S.cond.wait(1.0)
                    p, cur = state()
                new, pos = cur[pos:], max(pos, len(cur))
                done = p is None or dig(p, 'status', 'phase') in ('Succeeded', 'Failed')
            if stamps and new:
                out, t = [], stamp(time.time())
                for ln in new.splitlines(keepends=True):
                    out.append((t if at_start else '') + ln)
                    at_start = ln.endswith('\n')
                new = ''.join(out)
            self.chunk(new)
            if done:
                break
            if not new and self.client_gone():
                self.close_connection = True
                return
        self.end_stream()

    # -- test controls (no auth)

    def control(self, path, raw):
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise bad_request('control bodies must be JSON') from None
        with S.lock:
            out = self.control_op(self.command, path, body if isinstance(body, dict) else {})
            data = copy.deepcopy(out)
        self.send_json(200, data)

    def targets(self, res, b):
        if res not in RES:
            raise bad_request(f'unknown resource {res!r}')
        ns = b.get('namespace', 'default')
        if b.get('name'):
            obj = S.get(res, ns, b['name'])
            if obj is None:
                raise not_found(res, b['name'])
            return [obj]
        return S.select(res, ns, make_filter(res, {'labelSelector': b.get('labelSelector', '')}))

    def control_op(self, m, path, b):
        if (m, path) == ('GET', '/_test/requests'):
            return S.requests
        if (m, path) == ('DELETE', '/_test/requests'):
            S.requests.clear()
            return {}
        if (m, path) == ('GET', '/_test/objects'):
            return [o for _, o in sorted(S.objects.items())]
        if (m, path) == ('POST', '/_test/reset'):
            S.reset()
            return {}
        if (m, path) == ('POST', '/_test/metrics'):
            # serves the metrics API (or takes it away: "served": false), and sets what each
            # container of the pods named uses
            S.metrics_served = bool(b.get('served', True))
            pods = self.targets('pods', b) if b.get('name') or b.get('labelSelector') else []
            for p in pods:
                S.metrics[(p['metadata']['namespace'], p['metadata']['name'])] = {
                    'cpu': str(b.get('cpu', '0')), 'memory': str(b.get('memory', '0'))}
            return {'served': S.metrics_served, 'pods': [p['metadata']['name'] for p in pods]}
        if (m, path) == ('POST', '/_test/compact'):
            S.history.clear()
            S.compacted_rv = S.rv
            return {'compactedResourceVersion': str(S.rv)}
        if (m, path) == ('POST', '/_test/expire-watches'):
            for w in S.watchers:
                w.pending.append(('ERROR', expired_status(w.start_rv or S.rv, S.rv)))
                w.closed = True
            n, S.watchers = len(S.watchers), set()
            S.cond.notify_all()
            return {'expired': n}
        if (m, path) == ('POST', '/_test/gone-mode'):
            S.gone_http = bool(b.get('http', True))
            return {'http': S.gone_http}
        if (m, path) == ('POST', '/_test/crds'):
            absent = set(b.get('absent') or [])
            if not absent <= set(OPERATOR_RES):
                raise bad_request(f'only the operators\' resources can be absent: {", ".join(OPERATOR_RES)}')
            S.absent = absent
            return {'absent': sorted(absent)}
        if (m, path) == ('POST', '/_test/fail'):
            S.faults.append(dict(b, times=int(b.get('times', 1))))
            return {'faults': len(S.faults)}
        if (m, path) == ('DELETE', '/_test/fail'):
            S.faults.clear()
            return {}
        if (m, path) == ('POST', '/_test/status'):
            res, out = b.get('resource'), []
            for o in self.targets(res, b):
                st = copy.deepcopy(b.get('status') or {})
                o['status'] = {**(o.get('status') or {}), **st} if b.get('merge') else st
                S.write('MODIFIED', res, o)
                out.append(copy.deepcopy(o))
                if res == 'pods':
                    pod_changed(o)
            return out
        if (m, path) == ('POST', '/_test/log'):
            pods = self.targets('pods', b)
            # "time": the Unix time the text was written (default: now)
            at = float(b.get('time', time.time()))
            for p in pods:
                key = (p['metadata']['namespace'], p['metadata']['name'])
                old = S.logs.get(key, '') if b.get('append', True) else ''
                marks = S.log_marks.get(key, []) if old else []
                S.log_marks[key] = marks + [(len(old), at)]
                S.logs[key] = old + b.get('text', '')
            S.cond.notify_all()
            return {'pods': [p['metadata']['name'] for p in pods]}
        raise ApiError(404, f'no control endpoint {m} {path}')


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, args, ctx):
        self.args, self.ctx = args, ctx
        self.log_lock = threading.Lock()
        self.log_file = open(args.log, 'a', encoding='utf-8') if args.log else None
        super().__init__(('127.0.0.1', args.port), Handler)

    def get_request(self):
        sock, addr = self.socket.accept()   # the TLS handshake happens in the handler thread
        return self.ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], OSError):   # TLS refusals and resets are routine
            super().handle_error(request, client_address)

    def log_request_entry(self, entry):
        if self.log_file:
            with self.log_lock:
                self.log_file.write(json.dumps(entry) + '\n')
                self.log_file.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--cert', required=True)
    ap.add_argument('--key', required=True)
    ap.add_argument('--client-ca', required=True)
    ap.add_argument('--token', required=True)
    ap.add_argument('--port-file', required=True)
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--log')
    ap.add_argument('--bookmark-interval', type=float, default=1.0)
    args = ap.parse_args()

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(args.cert, args.key)
    ctx.load_verify_locations(args.client_ca)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(['http/1.1'])

    srv = Server(args, ctx)
    tmp = f'{args.port_file}.tmp{os.getpid()}'
    with open(tmp, 'w') as f:
        f.write(f'{srv.server_address[1]}\n')
    os.replace(tmp, args.port_file)

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        srv.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
