#!/usr/bin/env node
// Validate rendered Kubernetes manifests against the Kubernetes OpenAPI
// schemas shipped (pre-compiled) in the `kubernetes-models` npm package.
//
//   node tests/schema/validate.js [-v] FILE...
//
// Each FILE is multi-document YAML (`---` separated) or a JSON object: one
// Kubernetes object, or a `v1` `List` whose `items` are validated one by one.
// Every object is looked up by apiVersion + kind (an unknown pair is an error),
// constructed as its kubernetes-models class and validate()d.  Only GA
// versions (v1, v2, ...) are accepted: alpha/beta ones count as unknown,
// except the operators' resources berth renders (PyTorchJob kubeflow.org/v1,
// MPIJob kubeflow.org/v2beta1, JobSet jobset.x-k8s.io/v1alpha2): those are
// checked against crds/*.json and their embedded core types (see below).
//
// Strict mode (always on): the package's schemas do not set
// additionalProperties:false, so a misspelled field would pass.  We run the
// package's validate() on a Proxy of the object that records which keys the
// compiled schema reads.  A validator reads every property its schema
// declares (present or not), and enumerates the keys of map-typed objects
// (labels, resources.limits, ...).  So in any object the validator read from,
// a key it never read is not in the schema: it is reported as unknown.
// Objects the validator never looked inside (free-form `type: object`) are not
// judged.
//
// YAML is read with YAML 1.1 rules, as Kubernetes (sigs.k8s.io/yaml, go-yaml
// v2) reads it: unquoted yes/no/on/off/y/n are booleans, 0777 is octal, `<<`
// merges.  Timestamps stay strings, as they do there.  Duplicate keys are a
// parse error.
//
// Output: nothing when all objects are valid (unless -v); one line per problem
// on stderr, `FILE: doc N (Kind name): message`.  List items read
// `FILE: doc N items[I] (Kind name): message`.
// Exit: 0 all valid, 1 some object invalid, 2 usage / read / parse error.
'use strict';

const fs = require('fs');
const path = require('path');

let YAML;
try {
  YAML = require('yaml');
  require('kubernetes-models/package.json');
} catch (e) {
  process.stderr.write(
    `validate.js: npm dependencies missing (${e.message.split('\n')[0]}); run scripts/deps-npm.sh\n`);
  process.exit(2);
}

const USAGE = 'usage: node tests/schema/validate.js [-v] FILE...\n';

// ---- model lookup ----------------------------------------------------------

const RE_APIVERSION = /^(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+$/;
const RE_KIND = /^[A-Z][A-Za-z0-9]*$/;
const RE_BETA = /^(?:[^/]*\/)?v[0-9]+(?:alpha|beta)[0-9]+$/;
const modelCache = new Map();

// Returns the model class for apiVersion/kind, or a string saying why not.
function modelFor(apiVersion, kind) {
  if (typeof apiVersion !== 'string' || apiVersion === '') return 'missing apiVersion';
  if (typeof kind !== 'string' || kind === '') return 'missing kind';
  const key = apiVersion + ' ' + kind;
  if (modelCache.has(key)) return modelCache.get(key);
  let res = `unknown apiVersion/kind ${apiVersion} ${kind}`;
  if (RE_BETA.test(apiVersion)) {
    // The package keeps schemas of long-removed versions (extensions/v1beta1,
    // batch/v1beta1 CronJob, autoscaling/v2beta2, ...); treat any non-GA
    // version as unknown, as a current cluster would.
    res = `${res}: not a GA API version (alpha/beta versions are removed or off by default)`;
  } else if (RE_APIVERSION.test(apiVersion) && RE_KIND.test(kind)) {
    let mod = null;
    try {
      mod = require(`kubernetes-models/${apiVersion}/${kind}`);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND' && e.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw e;
    }
    const cls = mod && mod[kind];
    // Only top-level resources carry static apiVersion/kind; helper types
    // (PodSpec, DeploymentSpec, ...) have the same module layout but do not.
    if (typeof cls === 'function' && cls.apiVersion === apiVersion && cls.kind === kind &&
        typeof cls.prototype.validate === 'function') {
      res = cls;
    }
  }
  modelCache.set(key, res);
  return res;
}

// ---- custom resources of operators ------------------------------------------
//
// kubernetes-models has no types for the operators' resources berth renders
// (PyTorchJob, MPIJob, JobSet), and no npm package has them. Each has a JSON
// schema of its own fields in crds/KIND.json, written by hand from the
// operator's API reference (cited in its $comment), checked with ajv; the
// objects it embeds that are core Kubernetes types (metadata, pod templates,
// a JobSet's Job templates) are named in its "models" by JSON pointer (*: every
// key of a map, every item of a list) and checked with kubernetes-models'
// model of that type, strictly, as every other object.

const CRD_DIR = path.join(__dirname, 'crds');
let crds = null;

function loadCrds() {
  if (crds) return crds;
  crds = new Map();
  let Ajv;
  try {
    Ajv = require('ajv');
  } catch (e) {
    process.stderr.write(`validate.js: npm dependencies missing (${e.message.split('\n')[0]}); run scripts/deps-npm.sh\n`);
    process.exit(2);
  }
  const ajv = new Ajv({ allErrors: true, strict: true });
  for (const f of fs.readdirSync(CRD_DIR).filter((n) => n.endsWith('.json')).sort()) {
    try {
      addCrd(ajv, f);
    } catch (e) {
      process.stderr.write(`validate.js: crds/${f}: ${e.message.split('\n')[0]}\n`);
      process.exit(2);
    }
  }
  return crds;
}

function addCrd(ajv, f) {
  const def = JSON.parse(fs.readFileSync(path.join(CRD_DIR, f), 'utf8'));
  const models = Object.entries(def.models || {}).map(([ptr, ref]) => {
    const [mod, name] = ref.split('#');
    const cls = require(mod)[name];
    if (typeof cls !== 'function' || typeof cls.prototype.validate !== 'function') {
      throw new Error(`${ref} is not a kubernetes-models model`);
    }
    return { ptr, cls };
  });
  crds.set(`${def.apiVersion} ${def.kind}`, { validate: ajv.compile(def.schema), models });
}

// The values at JSON pointer ptr ("*": any key or index) of obj, with their paths.
function atPointer(obj, ptr) {
  let found = [{ at: '', v: obj }];
  for (const part of ptr.split('/').slice(1)) {
    const next = [];
    for (const { at, v } of found) {
      if (!isObj(v)) continue;
      const keys = part === '*' ? Object.keys(v) : Object.prototype.hasOwnProperty.call(v, part) ? [part] : [];
      for (const k of keys) next.push({ at: `${at}/${escapePtr(k)}`, v: v[k] });
    }
    found = next;
  }
  return found;
}

// A core type embedded at path `at`: the model's own checks and the strict
// unknown-field check, each problem's path from the object's root.
function validateModel(cls, value, at) {
  if (!isObj(value) || Array.isArray(value)) return [`data${at} must be object`];
  const model = new cls(value);
  const t = tracker(model);
  const problems = [];
  try {
    model.validate.call(t.proxy);
  } catch (e) {
    if (Array.isArray(e.errors) && e.errors.length) problems.push(...formatErrors(e.errors));
    else problems.push(e.message || String(e));
  }
  return problems.concat(unknownFields(t.records)).map((p) => p.replace(/^data/, `data${at}`));
}

function validateCrd(crd, obj) {
  const problems = [];
  if (!crd.validate(obj)) problems.push(...formatErrors(crd.validate.errors));
  for (const { ptr, cls } of crd.models) {
    for (const { at, v } of atPointer(obj, ptr)) problems.push(...validateModel(cls, v, at));
  }
  return problems;
}

// ---- strict (unknown field) tracking ---------------------------------------

function isObj(v) {
  return v !== null && typeof v === 'object';
}

// Wrap `root` so that every object/array reachable through property reads is
// also wrapped; `records` gets one entry per wrapped object: the keys read
// from it and whether its keys were enumerated (map-typed).
function tracker(root) {
  const records = [];
  const proxies = new WeakMap();
  function wrap(target, where) {
    let p = proxies.get(target);
    if (p) return p;
    const rec = { target, where, read: new Set(), enumerated: false, array: Array.isArray(target) };
    records.push(rec);
    p = new Proxy(target, {
      get(t, prop, recv) {
        const v = Reflect.get(t, prop, recv);
        if (typeof prop !== 'string') return v;
        rec.read.add(prop);
        if (isObj(v) && Object.prototype.hasOwnProperty.call(t, prop)) {
          return wrap(v, rec.array ? `${where}/${prop}` : `${where}/${escapePtr(prop)}`);
        }
        return v;
      },
      has(t, prop) {
        if (typeof prop === 'string') rec.read.add(prop);
        return Reflect.has(t, prop);
      },
      ownKeys(t) {
        rec.enumerated = true;
        return Reflect.ownKeys(t);
      },
    });
    proxies.set(target, p);
    return p;
  }
  return { proxy: wrap(root, ''), records };
}

function escapePtr(s) {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unknownFields(records) {
  const out = [];
  for (const rec of records) {
    if (rec.array || rec.enumerated || rec.read.size === 0) continue;
    for (const k of Object.keys(rec.target)) {
      if (!rec.read.has(k)) out.push(`data${rec.where} has unknown field ${JSON.stringify(k)}`);
    }
  }
  return out;
}

// ---- validation of one object ----------------------------------------------

function validateObject(obj) {
  if (!isObj(obj) || Array.isArray(obj)) return [`not an object (${Array.isArray(obj) ? 'array' : obj === null ? 'null' : typeof obj})`];
  const crd = loadCrds().get(`${obj.apiVersion} ${obj.kind}`);
  if (crd) return validateCrd(crd, obj);
  const cls = modelFor(obj.apiVersion, obj.kind);
  if (typeof cls === 'string') return [cls];
  const model = new cls(obj);
  const t = tracker(model);
  const problems = [];
  try {
    // The package's own validate(), run with `this` = the tracking proxy.
    model.validate.call(t.proxy);
  } catch (e) {
    if (Array.isArray(e.errors) && e.errors.length) {
      problems.push(...formatErrors(e.errors));
    } else {
      problems.push(e.message || String(e));
    }
  }
  return problems.concat(unknownFields(t.records));
}

function errText(er) {
  if (er.keyword === 'additionalProperties' && er.params && er.params.additionalProperty !== undefined) {
    return `has unknown field ${JSON.stringify(er.params.additionalProperty)}`;
  }
  if (er.keyword === 'required' && er.params && er.params.missingProperty) {
    return `must have required property ${JSON.stringify(er.params.missingProperty)}`;
  }
  if (er.keyword === 'enum' && er.params && Array.isArray(er.params.allowedValues)) {
    return `${er.message}: ${er.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return er.message;
}

// One line per error; the alternatives of a failed oneOf (int-or-string,
// quantity = string|number) are folded into the oneOf line.
function formatErrors(errors) {
  const used = new Array(errors.length).fill(false);
  const lines = [];
  errors.forEach((er, i) => {
    if (er.keyword !== 'oneOf') return;
    const alts = [];
    for (let j = 0; j < i; j++) {
      if (!used[j] && errors[j].instancePath === er.instancePath) {
        used[j] = true;
        alts.push(errText(errors[j]));
      }
    }
    used[i] = true;
    lines[i] = `data${er.instancePath} matches no allowed form${alts.length ? ' (' + alts.join('; ') + ')' : ''}`;
  });
  errors.forEach((er, i) => {
    if (!used[i]) lines[i] = `data${er.instancePath} ${errText(er)}`;
  });
  return lines.filter((l) => l !== undefined);
}

// ---- files ------------------------------------------------------------------

const YAML_OPTS = {
  version: '1.1',
  merge: true,
  uniqueKeys: true,
  // go-yaml v2 keeps plain timestamps as strings when decoding to interface{}.
  customTags: (tags) => tags.filter((t) => t.tag !== 'tag:yaml.org,2002:timestamp'),
};

// Returns { docs: [{label, obj}], error: string|null }
function readFile(file) {
  let src;
  try {
    src = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return { docs: [], error: `cannot read: ${e.message}` };
  }
  const trimmed = src.replace(/^\uFEFF/, '').trimStart();
  const raw = [];
  if (path.extname(file).toLowerCase() === '.json' || trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      raw.push(JSON.parse(trimmed));
    } catch (e) {
      return { docs: [], error: `JSON parse error: ${e.message}` };
    }
  } else {
    let parsed;
    try {
      parsed = YAML.parseAllDocuments(src, YAML_OPTS);
    } catch (e) {
      return { docs: [], error: `YAML parse error: ${e.message}` };
    }
    if (!Array.isArray(parsed)) parsed = parsed ? [parsed] : []; // EmptyStream
    for (let i = 0; i < parsed.length; i++) {
      const d = parsed[i];
      if (d.errors && d.errors.length) {
        return { docs: [], error: `YAML parse error in doc ${i + 1}: ${d.errors[0].message.trim().split('\n')[0]}` };
      }
      raw.push(d.contents === null ? undefined : d.toJS({ maxAliasCount: 1000 }));
    }
  }
  const docs = [];
  raw.forEach((obj, i) => {
    if (obj === undefined || obj === null) return; // empty document (e.g. trailing ---)
    const label = `doc ${i + 1}`;
    if (isObj(obj) && obj.apiVersion === 'v1' && obj.kind === 'List') {
      docs.push({ label, obj, list: true });
      if (Array.isArray(obj.items)) {
        obj.items.forEach((it, j) => docs.push({ label: `${label} items[${j}]`, obj: it }));
      }
    } else {
      docs.push({ label, obj });
    }
  });
  return { docs, error: null };
}

// A v1 List envelope: apiVersion, kind, metadata (ListMeta), items.
function validateList(obj) {
  const problems = [];
  for (const k of Object.keys(obj)) {
    if (!['apiVersion', 'kind', 'metadata', 'items'].includes(k)) problems.push(`data has unknown field ${JSON.stringify(k)}`);
  }
  if (!Array.isArray(obj.items)) problems.push('data/items must be array');
  else if (obj.items.length === 0) problems.push('data/items is empty');
  else obj.items.forEach((it, j) => {
    if (isObj(it) && it.apiVersion === 'v1' && it.kind === 'List') problems.push(`data/items/${j} nested List is not supported`);
  });
  if (obj.metadata !== undefined && obj.metadata !== null) {
    if (!isObj(obj.metadata) || Array.isArray(obj.metadata)) problems.push('data/metadata must be object');
    else for (const k of Object.keys(obj.metadata)) {
      if (!['continue', 'remainingItemCount', 'resourceVersion', 'selfLink'].includes(k)) {
        problems.push(`data/metadata has unknown field ${JSON.stringify(k)}`);
      }
    }
  }
  return problems;
}

function describe(obj) {
  if (!isObj(obj)) return '?';
  const kind = typeof obj.kind === 'string' && obj.kind ? obj.kind : '?';
  const md = isObj(obj.metadata) ? obj.metadata : {};
  const name = typeof md.name === 'string' && md.name ? md.name
    : typeof md.generateName === 'string' && md.generateName ? md.generateName + '*' : '?';
  return `${kind} ${name}`;
}

function main(argv) {
  let verbose = false;
  const files = [];
  let opts = true;
  for (const a of argv) {
    if (opts && a === '--') opts = false;
    else if (opts && a === '-v') verbose = true;
    else if (opts && (a === '-h' || a === '--help')) { process.stdout.write(USAGE); return 0; }
    else if (opts && a.startsWith('-') && a !== '-') { process.stderr.write(`validate.js: unknown option ${a}\n${USAGE}`); return 2; }
    else files.push(a);
  }
  if (files.length === 0) { process.stderr.write(USAGE); return 2; }

  let rc = 0;
  let nobj = 0;
  let nbad = 0;
  for (const file of files) {
    const { docs, error } = readFile(file === '-' ? '/dev/stdin' : file);
    if (error) {
      process.stderr.write(`${file}: ${error}\n`);
      rc = 2;
      continue;
    }
    if (docs.length === 0) {
      process.stderr.write(`${file}: no Kubernetes objects\n`);
      rc = Math.max(rc, 1);
      continue;
    }
    for (const d of docs) {
      const problems = d.list ? validateList(d.obj) : validateObject(d.obj);
      const where = `${file}: ${d.label} (${d.list ? 'List' : describe(d.obj)})`;
      if (!d.list) nobj++;
      if (problems.length) {
        if (!d.list) nbad++;
        rc = Math.max(rc, 1);
        for (const p of problems) process.stderr.write(`${where}: ${p}\n`);
      } else if (verbose) {
        process.stdout.write(`${where}: ok\n`);
      }
    }
  }
  if (verbose) process.stdout.write(`${nobj} objects, ${nbad} invalid\n`);
  return rc;
}

process.exitCode = main(process.argv.slice(2));
