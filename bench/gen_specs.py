#!/usr/bin/env python3
"""Writes N varied berth run specs as one YAML stream ("---" between documents).

    bench/gen_specs.py N SEED [--jsonl FILE] > specs.yaml
    bench/gen_specs.py N SEED --split MAX_BYTES --prefix DIR/specs   (prints the files)
    bench/gen_specs.py N SEED --split MAX_BYTES --prefix DIR/specs --json   (JSON files)
    bench/gen_specs.py --secrets-list                 (the names for --secrets)

The same N and SEED always give the same bytes (random.Random(SEED), no clock, no
hash ordering). Standard library only, so any python3 runs it.

Every document is valid for examples/policy/config.yaml and renders with

    build/berth render - --config examples/policy/config.yaml --secrets SECRETS

where SECRETS is the comma-separated SECRETS list below (printed by --secrets-list).
berth reads at most 4 MiB per input (BERTH_YAML_MAX_BYTES) and 10,000 specs are about
9 MB, so --split cuts the stream into files of whole documents under a size.
The documents cover:
  - every action: job, serve (with a Service), deploy, cronjob (with a schedule)
  - no profile or one of the example policy's: cpu-small, 1xa100, 4xh100, spot-a10
  - resources in every spelling: "8", 8, 0.5, 500m, {requests, limits}, gpu as a
    number or {limits: N}, gpu_type, disk
  - volumes of every type: persistent_volume_claim, empty_dir, config_map, secret,
    shared_volume
  - envs (a list of {name, value} or a map), secrets, node_selector (a map or a list of
    {key, value}), tolerations, affinity (node affinity, pod anti-affinity),
    priority_class (berth's and MLRun's spellings), preemption_mode, replicas or
    min_replicas/max_replicas (serve/deploy), labels, inputs, args, timeout, retries,
    fs_group/run_as_user/run_as_group (as numbers or strings), image_pull_policy
  - block and flow YAML styles

Sizes stay within the example policy's per-run limits and per-project quotas (8 GPUs,
192 cores, 2Ti for all replicas of a run), so every run is allowed.

--jsonl FILE also writes the same specs as JSON lines (one spec per line), for a reader
without a YAML parser. --json with --split writes the files as JSON lines instead of YAML
(PREFIX-001.json, ...): the same specs, one JSON value a line, which berth reads as a
stream of JSON values.
"""

import argparse
import json
import random
import re
import sys

# Secret names the specs may name; pass them to `berth render --secrets`.
SECRETS = ["hf-token", "wandb-key", "s3-creds", "db-password", "gcp-creds"]

PROJECTS = ["vision", "nlp", "speech", "recsys", "default"]
BASES = ["train", "finetune", "eval", "embed", "serve", "etl", "sweep", "infer"]
IMAGES = ["python:3.11", "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime",
          "nvcr.io/nvidia/pytorch:24.05-py3", "ghcr.io/acme/trainer:1.4.2",
          "registry.example.com/ml/serve@sha256:" + "ab" * 32]
PROFILES = [None, None, "cpu-small", "1xa100", "4xh100", "spot-a10"]
# GPUs per replica each profile gives (the profile's resources win over the spec's)
PROFILE_GPUS = {None: 0, "cpu-small": 0, "1xa100": 1, "4xh100": 4, "spot-a10": 1}
PRIORITIES = [None, "high", "medium", "low", "High", "Medium", "Low", "default-priority"]
PREEMPTION = [None, "prevent", "constrain", "allow", "none"]
SCHEDULES = ["0 3 * * *", "*/15 * * * *", "@daily", "@hourly", "30 2 * * 1-5", "0 0 1 * *"]
ZONES = ["eu-west-1a", "eu-west-1b", "us-east-1a", "us-east-1c"]

# YAML scalars a plain (unquoted) string may not be: they would read as another type
# in YAML 1.1 (PyYAML) or 1.2 (libfyaml).
_SPECIAL = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ""}
_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./-]*$")


def scalar(v):
    """A YAML scalar: plain when unambiguous, else a JSON (= YAML) double-quoted string."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if _PLAIN.match(v) and v.lower() not in _SPECIAL:
        return v
    return json.dumps(v)


def flow(v):
    """A value in YAML flow style ({a: 1, b: [x, y]})."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{scalar(k)}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)


def block(v, indent, out, flowkeys):
    """Appends v in block style at `indent` spaces to out. Keys in flowkeys get their
    value on one line in flow style."""
    pad = " " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x and k not in flowkeys:
                out.append(f"{pad}{scalar(k)}:")
                block(x, indent + 2, out, flowkeys)
            else:
                out.append(f"{pad}{scalar(k)}: {flow(x)}")
    else:
        for x in v:
            if isinstance(x, dict) and x:
                sub = []
                block(x, indent + 2, sub, flowkeys)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out.extend(sub)
            else:
                out.append(f"{pad}- {flow(x)}")


def pick(r, seq):
    return seq[r.randrange(len(seq))]


def quantity_cpu(r):
    return pick(r, ["100m", "250m", "500m", "1", 1, 2, "2", 0.5, "4", 4, "1500m"])


def quantity_mem(r):
    return pick(r, ["256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "8Gi", "16Gi", "1.5Gi", "3000Mi"])


def volumes(r, i, secrets):
    """0 to 5 volumes, one of each type at most, unique names and mount paths."""
    kinds = ["persistent_volume_claim", "empty_dir", "config_map", "secret", "shared_volume"]
    r.shuffle(kinds)
    out = []
    for kind in kinds[:r.choice([0, 1, 1, 2, 3, 5])]:
        v = {"volume_type": kind}
        if kind == "persistent_volume_claim":
            v["name"] = "data"
            v["mount_path"] = pick(r, ["/data", "/mnt/data", "/workspace/data"])
            spec = {"size": pick(r, ["10Gi", "50Gi", "100Gi", "1Ti"])}
            if r.random() < 0.5:
                spec["storage_class"] = pick(r, ["fast", "standard", "premium-rwo"])
            if r.random() < 0.5:
                spec["access_mode"] = pick(r, ["ReadWriteOnce", "ReadWriteMany"])
            v["spec"] = spec
        elif kind == "empty_dir":
            v["name"] = "scratch"
            v["mount_path"] = pick(r, ["/scratch", "/dev/shm", "/tmp/work"])
            spec = {}
            if r.random() < 0.5:
                spec["medium"] = "Memory"
            if r.random() < 0.7:
                spec["size"] = pick(r, ["1Gi", "8Gi", "64Gi"])
            if spec:
                v["spec"] = spec
        elif kind == "config_map":
            v["name"] = "conf"
            v["mount_path"] = "/etc/app"
            v["spec"] = {"name": f"app-config-{i % 7}"}
        elif kind == "secret":
            v["name"] = "creds"
            v["mount_path"] = "/var/run/creds"
            v["spec"] = {"name": pick(r, secrets)}
        else:
            v["name"] = "datasets"
            v["mount_path"] = "/datasets"
            v["spec"] = {"claim_name": pick(r, ["team-datasets", "imagenet", "common-crawl"])}
        out.append(v)
    return out


def spec(r, i):
    """One run spec (a dict, in the key order it is written)."""
    action = pick(r, ["job", "job", "job", "serve", "deploy", "cronjob"])
    profile = pick(r, PROFILES)
    base = pick(r, BASES)
    fn = {"name": base, "image": pick(r, IMAGES)}
    if action == "serve":
        port = pick(r, [8080, 8000, 5000])
        fn["command"] = ["python", "-m", "http.server", str(port)]
    else:
        fn["command"] = ["python", f"{base}.py"]
    if r.random() < 0.3:
        fn["image_pull_policy"] = pick(r, ["IfNotPresent", "Always"])
    s = {}
    if r.random() < 0.8:
        s["project"] = pick(r, PROJECTS)
    s["name"] = f"{base}-{i}"
    s["function"] = fn
    s["action"] = action
    if action == "cronjob":
        s["schedule"] = pick(r, SCHEDULES)
    if profile:
        s["profile"] = profile

    # replicas: the quota counts every replica (8 GPUs, 192 cores, 2Ti per project)
    gpus = PROFILE_GPUS[profile]
    res = {}
    if r.random() < 0.85:
        # a profile's requests win over the spec's, so with a profile the spec gives
        # only short forms (requests): a limit of its own could be under the profile's
        if profile or r.random() < 0.5:
            res["cpu"] = quantity_cpu(r)
        else:
            res["cpu"] = {"requests": pick(r, ["500m", "1", "2"]), "limits": pick(r, ["2", "4"])}
        if profile or r.random() < 0.5:
            res["mem"] = quantity_mem(r)
        else:
            res["mem"] = {"requests": pick(r, ["1Gi", "2Gi"]), "limits": pick(r, ["4Gi", "8Gi"])}
        if not profile and r.random() < 0.3:
            n = pick(r, [1, 2])
            res["gpu"] = pick(r, [n, str(n), {"limits": str(n)}])
            if r.random() < 0.5:
                res["gpu_type"] = pick(r, ["nvidia.com/gpu", "amd.com/gpu"])
            gpus = n
        if r.random() < 0.3:
            res["disk"] = pick(r, ["10Gi", "50Gi", "100Gi"])
    if res:
        s["resources"] = res
    if action in ("serve", "deploy"):
        most = max(1, min(4, 8 // gpus if gpus else 4))
        if r.random() < 0.5:
            s["replicas"] = r.randint(1, most)
        else:
            s["min_replicas"] = 1
            s["max_replicas"] = r.randint(1, most)
    if action == "serve":
        port = int(fn["command"][-1])
        s["service"] = {"type": pick(r, ["ClusterIP", "ClusterIP", "NodePort"]),
                        "ports": [{"port": 80, "target_port": port}]}

    vols = volumes(r, i, SECRETS)
    if vols:
        s["volumes"] = vols
    if r.random() < 0.5:
        if r.random() < 0.5:
            s["node_selector"] = {"topology.kubernetes.io/zone": pick(r, ZONES)}
        else:
            s["node_selector"] = [{"key": "pool", "value": pick(r, ["batch", "interactive"])}]
    if r.random() < 0.4:
        s["tolerations"] = [pick(r, [
            {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 300},
        ])]
    if r.random() < 0.3:
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In",
                 "values": r.sample(ZONES, 2)}]}]}}}
        if r.random() < 0.5:
            aff["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": r.randint(1, 100), "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app": base}},
                    "topologyKey": "kubernetes.io/hostname"}}]}
        s["affinity"] = aff
    if r.random() < 0.5:
        s["secrets"] = r.sample(SECRETS, r.randint(1, 3))
    if r.random() < 0.7:
        envs = {"LOG_LEVEL": pick(r, ["info", "debug", "warning"]),
                "HF_HOME": "/data/hf", "OMP_NUM_THREADS": pick(r, [1, 4, "8"]),
                "RUN_INDEX": str(i)}
        keys = r.sample(sorted(envs), r.randint(1, 4))
        if r.random() < 0.5:
            s["envs"] = [{"name": k, "value": envs[k]} for k in keys]
        else:
            s["envs"] = {k: envs[k] for k in keys}
    if r.random() < 0.4:
        uid = pick(r, [1000, "1000", 65534])
        s["run_as_user"] = uid
        s["run_as_group"] = uid
        s["fs_group"] = pick(r, [1000, "8877"])
    if r.random() < 0.5 and (p := pick(r, PRIORITIES)):
        s["priority_class"] = p
    if r.random() < 0.4 and (m := pick(r, PREEMPTION)):
        s["preemption_mode"] = m
    if r.random() < 0.6:
        s["labels"] = {"team": pick(r, PROJECTS), "cost-center": f"cc-{r.randint(100, 999)}"}
    if action != "serve" and r.random() < 0.6:
        s["args"] = ["--epochs", str(r.randint(1, 50)), "--lr", pick(r, ["3e-4", "0.001"])]
    if r.random() < 0.5:
        s["inputs"] = {"dataset": f"s3://bucket/data-{i % 97}.parquet",
                       "model": pick(r, ["resnet50", "bert-base", "llama-7b"])}
    if action in ("job", "cronjob"):
        if r.random() < 0.5:
            s["timeout"] = pick(r, [600, 3600, "86400"])
        if r.random() < 0.5:
            s["retries"] = r.randint(0, 3)
    return s


def main(argv):
    ap = argparse.ArgumentParser(
        description="Writes N varied berth run specs as a YAML stream (stdout).")
    ap.add_argument("n", type=int, metavar="N", nargs="?", help="how many specs")
    ap.add_argument("seed", type=int, metavar="SEED", nargs="?", help="random seed")
    ap.add_argument("--jsonl", metavar="FILE", help="also write the specs as JSON lines")
    ap.add_argument("--split", metavar="MAX_BYTES", type=int,
                    help="write PREFIX-001.yaml, PREFIX-002.yaml, ... of at most MAX_BYTES "
                         "each (berth reads at most 4 MiB per input) and print their names")
    ap.add_argument("--prefix", default="specs", help="file name prefix for --split")
    ap.add_argument("--json", action="store_true",
                    help="with --split: write the files as JSON lines (PREFIX-001.json, ...)")
    ap.add_argument("--secrets-list", action="store_true",
                    help="print the secret names the specs use (for --secrets) and exit")
    a = ap.parse_args(argv[1:])
    if a.secrets_list:
        print(",".join(SECRETS))
        return 0
    if a.n is None or a.seed is None:
        ap.error("N and SEED are required")
    r = random.Random(a.seed)
    specs = [spec(r, i) for i in range(a.n)]
    docs = []
    if a.json and a.split is None:
        ap.error("--json needs --split")
    for i, s in enumerate(specs):
        if a.json:
            docs.append(json.dumps(s, separators=(",", ":")) + "\n")
            continue
        lines = [f"# spec {i} of {a.n} (seed {a.seed})"]
        # every other document writes short lists and maps in flow style
        flowkeys = {"command", "args", "ports", "resources", "spec"} if i % 2 else set()
        block(s, 0, lines, flowkeys)
        docs.append("\n".join(lines) + "\n")
    if a.split is None:
        sys.stdout.write("---\n".join(docs))
    else:
        # greedy: as many whole documents per file as fit in MAX_BYTES
        chunks, cur, size = [], [], 0
        sep = "" if a.json else "---\n"
        for d in docs:
            add = len(d.encode()) + (len(sep) if cur else 0)
            if cur and size + add > a.split:
                chunks.append(cur)
                cur, size, add = [], 0, len(d.encode())
            cur.append(d)
            size += add
        if cur:
            chunks.append(cur)
        for k, chunk in enumerate(chunks, 1):
            path = f"{a.prefix}-{k:03d}.{'json' if a.json else 'yaml'}"
            with open(path, "w", encoding="utf-8") as f:
                f.write(sep.join(chunk))
            print(path)
    if a.jsonl:
        with open(a.jsonl, "w", encoding="utf-8") as f:
            for s in specs:
                f.write(json.dumps(s, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
