#!/usr/bin/python3
"""The Python way of rendering berth's run specs: Kubernetes client model objects.

    /usr/bin/python3 bench/k8s_models.py SPECS... > /dev/null

Run it with Debian's /usr/bin/python3: python3-kubernetes (scripts/deps-bench.sh)
installs the client into Debian's dist-packages, which another python3 on PATH (pyenv,
a venv) does not see.

For each run spec of the YAML streams SPECS (bench/gen_specs.py; a file ending in
.json or .jsonl is read as one JSON spec per line instead, with the json module) it
does what a Python ML platform does per run:
  1. reads the spec (yaml.load_all with PyYAML's C loader when it has one; json.loads
     for JSON lines);
  2. builds the objects berth renders for it, as kubernetes.client models: a V1Secret
     (when the run names secrets or mounts one), a V1PersistentVolumeClaim per per-run
     volume, and a V1Job, V1CronJob, or V1Deployment (+ V1Service for serve,
     + HorizontalPodAutoscaler for min/max replicas), each with a V1PodSpec, a
     V1Container, V1ResourceRequirements, volumes and mounts, env and envFrom,
     tolerations, affinity (deserialised from the spec's camelCase map, as platforms
     do), node selector, security contexts, labels and owner references;
  3. serialises each object with ApiClient().sanitize_for_serialization() and writes
     them all as one multi-document YAML stream (yaml.dump_all, C dumper) to stdout.

It does not apply berth's policy merge and checks nothing: it applies the example
policy's profiles (a table below, copied from examples/policy) and defaults just
enough that the objects have the size and shape of berth's. The client 22.6 in Debian
12 has no model for a Job's podFailurePolicy (Kubernetes 1.26), so that one field of
berth's Job is missing; the HorizontalPodAutoscaler is the V2beta2 model (same schema
as autoscaling/v2) with apiVersion autoscaling/v2.

Timing: on stderr, one JSON line: specs, seconds (reading + building + serialising +
writing: the interpreter's start and `import kubernetes` are left out, which favours
Python), cpu_seconds (the CPU time of the same span, user and system: what a shared
machine's other work does not lengthen), the three parts, the objects per kind and the
bytes written.
"""

import json
import sys
import time

T_START = time.perf_counter()
from kubernetes import client  # noqa: E402  (timed: import cost is reported apart)
import yaml  # noqa: E402

T_IMPORTED = time.perf_counter()
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

NAMESPACE = "ml-jobs"
RUN_ID = "b1"
# examples/policy: profiles (config.yaml and profiles.d/gpu.yaml), priority classes, spot
PROFILES = {
    "cpu-small": {"cpu": "2", "mem": "4Gi"},
    "1xa100": {"cpu": "8", "mem": "64Gi", "gpu": "1",
               "node_selector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
               "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                "effect": "NoSchedule"}],
               "envs": {"NCCL_DEBUG": "WARN"}},
    "4xh100": {"cpu": "32", "mem": "512Gi", "gpu": "4",
               "node_selector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
               "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                "effect": "NoSchedule"}],
               "envs": {"NCCL_DEBUG": "WARN"}},
    "spot-a10": {"cpu": "4", "mem": "16Gi", "gpu": "1",
                 "node_selector": {"nvidia.com/gpu.product": "NVIDIA-A10"},
                 "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                  "effect": "NoSchedule"}],
                 "preemption_mode": "allow", "priority_class": "low"},
}
PRIORITY = {"high": "berth-high", "medium": "berth-medium", "low": "berth-low",
            "High": "berth-high", "Medium": "berth-medium", "Low": "berth-low",
            "default-priority": "berth-medium"}
SPOT_TOLERATION = {"key": "node-lifecycle", "operator": "Equal", "value": "spot",
                   "effect": "NoSchedule"}

API = client.ApiClient()  # one for the whole run (favours Python)


def deserialize(data, klass):
    """A camelCase dict -> a model, the way platforms turn user YAML into models."""
    return API._ApiClient__deserialize(data, klass)  # pylint: disable=protected-access


def as_map(v, key="key", value="value"):
    """node_selector / envs: a map, or a list of {key, value} / {name, value}."""
    if isinstance(v, list):
        return {str(x[key]): str(x[value]) for x in v}
    return {str(k): str(x) for k, x in (v or {}).items()}


def split_resource(v):
    """A resource value: short form (the request) or {requests, limits}."""
    if isinstance(v, dict):
        r, lim = v.get("requests"), v.get("limits")
        return (None if r is None else str(r)), (None if lim is None else str(lim))
    return (None if v is None else str(v)), None


def build(spec, idx):
    """The model objects of one run spec."""
    fn = spec["function"]
    profile = PROFILES.get(spec.get("profile"), {})
    action = spec.get("action", "job")
    run_id = RUN_ID if idx == 0 else f"{RUN_ID}-{idx + 1}"
    base = spec.get("name", fn["name"])
    name = f"{base}-{run_id}"
    labels = {"app.kubernetes.io/name": base, "app.kubernetes.io/instance": name,
              "app.kubernetes.io/component": action,
              "app.kubernetes.io/managed-by": "berth",
              "berth.dev/project": spec.get("project", "default"), "berth.dev/run": run_id}
    if spec.get("profile"):
        labels["berth.dev/profile"] = spec["profile"]
    labels.update({k: str(v) for k, v in (spec.get("labels") or {}).items()})
    owner_kind = {"job": "Job", "cronjob": "CronJob"}.get(action, "Deployment")
    owner_api = "apps/v1" if owner_kind == "Deployment" else "batch/v1"

    def meta(obj_name, owned):
        refs = None
        if owned:
            refs = [client.V1OwnerReference(api_version=owner_api, kind=owner_kind,
                                            name=name, uid="", block_owner_deletion=True)]
        return client.V1ObjectMeta(name=obj_name, namespace=NAMESPACE, labels=dict(labels),
                                   owner_references=refs)

    objs = []
    # the run's Secret: the secrets it names, and those it mounts
    vols = spec.get("volumes") or []
    keys = list(spec.get("secrets") or [])
    keys += [v["spec"]["name"] for v in vols
             if v["volume_type"] == "secret" and v["spec"]["name"] not in keys]
    if keys:
        m = meta(name, True)
        m.annotations = {"berth.dev/secret-keys": ",".join(keys),
                         "berth.dev/secret-values": "set by berth at submission, never rendered"}
        objs.append(client.V1Secret(api_version="v1", kind="Secret", metadata=m, type="Opaque"))

    # volumes and mounts; a PVC per persistent_volume_claim
    volumes, mounts = [], []
    for v in vols:
        t, vs, vname = v["volume_type"], v.get("spec") or {}, v["name"]
        ro = None
        if t == "persistent_volume_claim":
            pvc = f"{name}-{vname}"
            objs.append(client.V1PersistentVolumeClaim(
                api_version="v1", kind="PersistentVolumeClaim", metadata=meta(pvc, True),
                spec=client.V1PersistentVolumeClaimSpec(
                    access_modes=[vs.get("access_mode", "ReadWriteOnce")],
                    storage_class_name=vs.get("storage_class", "standard"),
                    resources=client.V1ResourceRequirements(
                        requests={"storage": str(vs["size"])}))))
            vol = client.V1Volume(name=vname, persistent_volume_claim=(
                client.V1PersistentVolumeClaimVolumeSource(claim_name=pvc)))
        elif t == "empty_dir":
            vol = client.V1Volume(name=vname, empty_dir=client.V1EmptyDirVolumeSource(
                medium=vs.get("medium"), size_limit=vs.get("size")))
        elif t == "config_map":
            vol = client.V1Volume(name=vname, config_map=client.V1ConfigMapVolumeSource(
                name=vs["name"]))
        elif t == "secret":
            ro = True
            vol = client.V1Volume(name=vname, secret=client.V1SecretVolumeSource(
                secret_name=name, items=[client.V1KeyToPath(key=vs["name"], path=vs["name"])]))
        else:  # shared_volume: an existing claim
            vol = client.V1Volume(name=vname, persistent_volume_claim=(
                client.V1PersistentVolumeClaimVolumeSource(claim_name=vs["claim_name"])))
        volumes.append(vol)
        mounts.append(client.V1VolumeMount(name=vname, mount_path=v["mount_path"], read_only=ro))

    # resources: profile > spec > defaults; a GPU is a limit; memory limit = request x 1.1
    res = spec.get("resources") or {}
    cpu_req, cpu_lim = split_resource(res.get("cpu"))
    mem_req, mem_lim = split_resource(res.get("mem"))
    cpu_req = profile.get("cpu", cpu_req or "100m")
    mem_req = profile.get("mem", mem_req or "256Mi")
    requests = {"cpu": cpu_req, "memory": mem_req}
    limits = {"memory": mem_lim or mem_req}
    if cpu_lim:
        limits["cpu"] = cpu_lim
    if res.get("disk"):
        requests["ephemeral-storage"] = str(res["disk"])
    gpu = profile.get("gpu", res.get("gpu"))
    if isinstance(gpu, dict):
        gpu = gpu.get("limits")
    if gpu is not None:
        limits[res.get("gpu_type", "nvidia.com/gpu")] = str(gpu)

    env = {str(k): str(v) for k, v in as_map(spec.get("envs"), "name").items()}
    env.update(profile.get("envs", {}))
    env["BERTH_RUN_ID"] = run_id
    if spec.get("inputs"):
        env["BERTH_INPUTS"] = json.dumps(spec["inputs"], separators=(",", ":"))
    container = client.V1Container(
        name=fn["name"], image=fn["image"], image_pull_policy=fn.get("image_pull_policy"),
        command=[str(c) for c in fn.get("command", [])] or None,
        args=[str(a) for a in spec.get("args", [])] or None,
        env=[client.V1EnvVar(name=k, value=v) for k, v in env.items()],
        env_from=[client.V1EnvFromSource(secret_ref=client.V1SecretEnvSource(name=name))]
        if spec.get("secrets") else None,
        ports=[client.V1ContainerPort(container_port=int(fn["command"][-1]))]
        if action == "serve" else None,
        resources=client.V1ResourceRequirements(requests=requests, limits=limits),
        volume_mounts=mounts or None,
        security_context=client.V1SecurityContext(
            allow_privilege_escalation=False, privileged=False,
            capabilities=client.V1Capabilities(drop=["ALL"])))

    # scheduling: node selector, tolerations, affinity, preemption (spot nodes)
    node_selector = as_map(spec.get("node_selector"))
    node_selector.update(profile.get("node_selector", {}))
    tolerations = list(spec.get("tolerations") or []) + profile.get("tolerations", [])
    preempt = profile.get("preemption_mode", spec.get("preemption_mode", "prevent"))
    affinity = json.loads(json.dumps(spec.get("affinity") or {}))
    if preempt == "prevent":
        na = affinity.setdefault("nodeAffinity", {})
        req = na.setdefault("requiredDuringSchedulingIgnoredDuringExecution",
                            {"nodeSelectorTerms": [{"matchExpressions": []}]})
        for term in req["nodeSelectorTerms"]:
            term.setdefault("matchExpressions", []).append(
                {"key": "node-lifecycle", "operator": "NotIn", "values": ["spot"]})
    elif preempt == "constrain":
        node_selector["node-lifecycle"] = "spot"
        tolerations.append(SPOT_TOLERATION)
    elif preempt == "allow":
        tolerations.append(SPOT_TOLERATION)
    uid = spec.get("run_as_user")
    pod = client.V1PodSpec(
        restart_policy="Never" if action in ("job", "cronjob") else None,
        priority_class_name=PRIORITY[profile.get("priority_class",
                                                 spec.get("priority_class", "medium"))],
        security_context=client.V1PodSecurityContext(
            run_as_user=None if uid is None else int(uid),
            run_as_group=None if spec.get("run_as_group") is None else int(spec["run_as_group"]),
            fs_group=None if spec.get("fs_group") is None else int(spec["fs_group"]),
            run_as_non_root=True, seccomp_profile=client.V1SeccompProfile(type="RuntimeDefault")),
        node_selector=node_selector or None,
        affinity=deserialize(affinity, "V1Affinity") if affinity else None,
        tolerations=[client.V1Toleration(key=t.get("key"), operator=t.get("operator"),
                                         value=t.get("value"), effect=t.get("effect"),
                                         toleration_seconds=t.get("tolerationSeconds"))
                     for t in tolerations] or None,
        containers=[container], volumes=volumes or None)
    template = client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=dict(labels)),
                                        spec=pod)

    def job_spec():
        t = spec.get("timeout", 259200)
        return client.V1JobSpec(backoff_limit=int(spec.get("retries", 0)),
                                active_deadline_seconds=int(t), template=template)

    if action == "job":
        objs.append(client.V1Job(api_version="batch/v1", kind="Job", metadata=meta(name, False),
                                 spec=job_spec()))
    elif action == "cronjob":
        objs.append(client.V1CronJob(
            api_version="batch/v1", kind="CronJob", metadata=meta(name, False),
            spec=client.V1CronJobSpec(
                schedule=spec["schedule"], concurrency_policy="Forbid",
                job_template=client.V1JobTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=dict(labels)), spec=job_spec()))))
    else:
        replicas = spec.get("replicas", spec.get("min_replicas", 1))
        objs.append(client.V1Deployment(
            api_version="apps/v1", kind="Deployment", metadata=meta(name, False),
            spec=client.V1DeploymentSpec(
                replicas=int(replicas), template=template,
                selector=client.V1LabelSelector(match_labels={"berth.dev/run": run_id}))))
        if action == "serve" and spec.get("service"):
            svc = spec["service"]
            objs.append(client.V1Service(
                api_version="v1", kind="Service", metadata=meta(name, True),
                spec=client.V1ServiceSpec(
                    type=svc.get("type", "ClusterIP"), selector={"berth.dev/run": run_id},
                    ports=[client.V1ServicePort(port=p["port"], target_port=p.get("target_port"))
                           for p in svc.get("ports", [])])))
        if "max_replicas" in spec:
            objs.append(client.V2beta2HorizontalPodAutoscaler(
                api_version="autoscaling/v2", kind="HorizontalPodAutoscaler",
                metadata=meta(name, True),
                spec=client.V2beta2HorizontalPodAutoscalerSpec(
                    scale_target_ref=client.V2beta2CrossVersionObjectReference(
                        api_version="apps/v1", kind="Deployment", name=name),
                    min_replicas=int(spec["min_replicas"]), max_replicas=int(spec["max_replicas"]),
                    metrics=[client.V2beta2MetricSpec(
                        type="Resource", resource=client.V2beta2ResourceMetricSource(
                            name="cpu", target=client.V2beta2MetricTarget(
                                type="Utilization", average_utilization=80)))])))
    return objs


def read_specs(paths):
    specs = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            if p.endswith((".json", ".jsonl")):
                specs += [json.loads(line) for line in f if line.strip()]
            else:
                specs += [d for d in yaml.load_all(f, Loader=LOADER) if d is not None]
    return specs


def main(paths):
    if not paths:
        print("usage: k8s_models.py SPECS.yaml|SPECS.json|SPECS.jsonl... > out.yaml",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    c0 = time.process_time()
    specs = read_specs(paths)
    t1 = time.perf_counter()
    objs = [build(s, i) for i, s in enumerate(specs)]
    t2 = time.perf_counter()
    kinds, nbytes = {}, 0
    out = sys.stdout
    for run in objs:
        docs = [API.sanitize_for_serialization(o) for o in run]
        for d in docs:
            kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
        text = yaml.dump_all(docs, Dumper=DUMPER, default_flow_style=False, sort_keys=False,
                             explicit_start=True)
        nbytes += len(text)
        out.write(text)
    out.flush()
    t3 = time.perf_counter()
    c3 = time.process_time()
    print(json.dumps({"specs": len(specs), "seconds": t3 - t0, "cpu_seconds": c3 - c0,
                      "read": t1 - t0,
                      "build": t2 - t1, "serialise": t3 - t2, "import": T_IMPORTED - T_START,
                      "objects": dict(sorted(kinds.items())), "bytes": nbytes,
                      "yaml_c": LOADER.__name__.startswith("C")}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
