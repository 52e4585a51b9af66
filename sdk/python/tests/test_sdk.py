"""The Python SDK against a real `berth serve` on loopback (the local backend).

Every func.run(...) example of the user documentation (seeds 001 and 002) is read
from the seed files at test time and run as written, with the documentation's
placeholders given values: `[...]` in a list, a line `..`, and the names the
examples leave undefined (`value`, `my_data`, `{value}`). Each run is checked
against the effective spec (each value's origin) and the manifests the server
reports.

Environment: BERTH_BIN (default build/test/berth), BERTH_SEEDS (default
../shared/seeds beside the repository, else the copy in tests/seeds/).
"""

import base64
import contextlib
import http.server
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "sdk", "python"))

import berth  # noqa: E402

BIN = os.path.abspath(os.environ.get("BERTH_BIN") or os.path.join(ROOT, "build", "test", "berth"))
# the user documentation the examples come from: ../shared/seeds beside the repository,
# and a copy of seeds 001 and 002 kept here for a clone that has only the repository
SHARED_SEEDS = os.path.join(ROOT, "..", "shared", "seeds")
KEPT_SEEDS = os.path.join(HERE, "seeds")
SEEDS = os.environ.get("BERTH_SEEDS") or (SHARED_SEEDS if os.path.isdir(SHARED_SEEDS) else KEPT_SEEDS)
warnings.simplefilter("ignore", berth.BerthWarning)  # "the image is not pulled": true, and noisy

S = {}  # the server of the module: url, tokens, home


def example_policy(tmp):
    """The example policy, on a machine big enough for every seed example, with the
    labels the seeds' node selectors ask for: its config.yaml, under tmp."""
    policy = os.path.join(tmp, "policy")
    shutil.copytree(os.path.join(ROOT, "examples", "policy"), policy)
    cfg = os.path.join(policy, "config.yaml")
    with open(cfg) as f:
        text = f.read().replace("  disable_root: true", "  disable_root: false")
    text += ("\nlocal:\n  capacity: {cpu: \"96\", mem: 2Ti, gpu: \"8\", disk: 10Ti}\n"
             "  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB,"
             " app.iguazio.com/lifecycle: non-preemptible}\n  grace_period: 1\n"
             # a team's overlay (ProjectView): its own profile, and a volume on its runs
             "projects:\n  sdk-team:\n    profiles: [{id: team-only, resources: {cpu: \"1\"}}]\n"
             "    defaults:\n      volumes: [{volume_type: empty_dir, name: team-scratch,"
             " mount_path: /team-scratch}]\n")
    with open(cfg, "w") as f:
        f.write(text)
    return cfg


def home_env(home):
    """The environment of berth commands over the data in home (and no server)."""
    env = dict(os.environ, BERTH_HOME=home)
    for k in ("BERTH_CONFIG", "BERTH_SERVER", "BERTH_TOKEN"):
        env.pop(k, None)
    return env


def make_token(env, *args):
    out = subprocess.run([BIN, "token", "create", *args], env=env, check=True,
                         capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def setUpModule():
    tmp = tempfile.mkdtemp(prefix="berth-sdk-")
    home = os.path.join(tmp, "home")
    os.makedirs(os.path.join(home, "configmaps", "app-config"))
    with open(os.path.join(home, "configmaps", "app-config", "setting"), "w") as f:
        f.write("on\n")
    cfg = example_policy(tmp)
    env = home_env(home)
    S.update(tmp=tmp, home=home, env=env,
             admin=make_token(env, "--project", "*", "--role", "admin"),
             other=make_token(env, "--project", "elsewhere", "--role", "user"))
    S["proc"], S["url"], S["log"] = serve(os.path.join(tmp, "serve.log"), env, cfg)
    client = berth.connect(S["url"], S["admin"])
    project = client.project("seeds")
    # the secrets the seeds name
    for name in ("CDSETOOL_ESA_USER", "CDSETOOL_ESA_PASSWORD", "gcp-creds"):
        project.set_secret(name, "value-of-" + name)


def serve(logname, env, cfg=None):
    """A berth serve on loopback, with the policy cfg (None: the built-in one): its
    process, URL and log file."""
    log = open(logname, "w+")
    proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0"] +
                            (["--config", cfg] if cfg else []), env=env, stderr=log)
    for _ in range(200):
        log.seek(0)
        m = re.search(r"\(port (\d+)\)", log.read())
        if m:
            return proc, f"http://127.0.0.1:{m.group(1)}", log
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("berth serve did not start")


def stop_serving(proc, url, token, log):
    """Stops what runs on the server, then the server; a sanitizer report in its log
    fails the module."""
    try:
        for r in berth.Client(url, token).list_runs(state="Running"):
            r.stop(grace=0, wait=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
    log.seek(0)
    text = log.read()
    log.close()
    if "AddressSanitizer" in text or "runtime error:" in text:
        raise AssertionError("the server's log has a sanitizer report:\n" + text[-3000:])


def tearDownModule():
    try:
        if S.get("proc"):
            stop_serving(S["proc"], S["url"], S["admin"], S["log"])
    finally:
        shutil.rmtree(S["tmp"], ignore_errors=True)


def client(token=None):
    return berth.connect(S["url"], token or S["admin"])


# ---- the seeds' examples ------------------------------------------------------------------------

def calls(text, name):
    """Every `NAME(...)` call of a seed's text, with balanced parentheses."""
    out, i = [], 0
    while True:
        i = text.find(name + "(", i)
        if i < 0:
            return out
        depth, j = 0, i + len(name)
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        out.append(text[i:j])
        i = j


def as_python(example):
    """The documentation's placeholders given values: `[...]` a list, a line `..` or
    `...` dropped (with the comma it may need before it)."""
    example = example.replace("[...]", '["--epochs", "1"]')
    lines = [ln for ln in example.splitlines() if ln.strip() not in ("..", "...", "..,", "...,")]
    text = "\n".join(lines)
    return re.sub(r",(\s*)\)$", r"\1)", text)  # a trailing comma left before ')' is fine too


def field(run, path):
    return run.origins().get(path, (None, None))


def container(manifests):
    for o in manifests:
        if o["kind"] in ("Job", "Deployment"):
            return o["spec"]["template"]["spec"]
    raise AssertionError("no workload in the manifests")


# the training.py of seed 002's code_to_function examples: its handlers print what they got
TRAINING = '''"""training.py: what each handler was given is printed."""
import sys


def train(epochs=1, lr=0.1, **more):
    print(f"train epochs={epochs!r} lr={lr!r} more={sorted(more.items())!r}")
    return {"loss": round(1.0 / epochs, 3), "epochs": epochs}


def my_training_function(dataset):
    print(f"my_training_function dataset={dataset}")


def fail(code):
    raise RuntimeError(f"failed with {code}")


if __name__ == "__main__":
    print("main argv=" + " ".join(sys.argv))
'''


class SeedExamples(unittest.TestCase):
    """seed 001 (DigitalHub): each func.run(...) as written."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(SEEDS, [f for f in os.listdir(SEEDS) if f.startswith("001_")][0])) as f:
            cls.examples = calls(f.read(), "func.run")
        cls.project = client().project("seeds")
        cls.func = cls.project.new_function("func", image="python:3.11",
                                            command=["sh", "-c", "echo ran $BERTH_RUN_ID"])

    def test_every_example_runs(self):
        self.assertEqual(len(self.examples), 12, "the seed's func.run examples")
        value = "s3://bucket/input1.csv"  # `inputs={"input1": value}` leaves value to the reader
        for example in self.examples:
            with self.subTest(example=example.splitlines()[0:3]):
                run = eval(as_python(example), {"func": self.func, "value": value})
                self.assertIsInstance(run, berth.Run)
                run.wait(60)
                self.assertEqual(run.status, "Succeeded", run.reason)
                self.assertIn("ran " + run.id, run.logs())
                self.check_fields(example, run)

    def check_fields(self, example, run):
        """Every keyword of the call is in the effective spec, from the run spec (or its
        profile, which wins over the user), and in the manifests."""
        origins = run.origins()
        kwargs = eval("dict" + as_python(example)[len("func.run"):], {"value": "v"})
        pod = container(run.manifests())
        c = pod["containers"][0]
        for key, want in kwargs.items():
            paths = [p for p in origins if p == key or p.startswith((key + ".", key + "["))]
            self.assertTrue(paths, f"{key} is not in the effective spec")
            if key != "resources" or "profile" not in kwargs:
                self.assertTrue(any(origins[p][1] == "run spec" for p in paths),
                                f"{key}: {[(p, origins[p]) for p in paths]}")
        if "resources" in kwargs:
            reqs = c["resources"].get("requests", {})
            for k, v in kwargs["resources"].items():
                name = {"mem": "memory", "disk": "ephemeral-storage", "cpu": "cpu"}.get(k)
                if name and "profile" not in kwargs:
                    self.assertEqual(reqs.get(name), v, f"requests.{name}")
                if k == "gpu":
                    self.assertEqual(c["resources"]["limits"]["nvidia.com/gpu"], v)
        if "profile" in kwargs:
            self.assertEqual(field(run, "resources.gpu.limits"), ("1", "profile"))
            self.assertEqual(pod["nodeSelector"]["nvidia.com/gpu.product"], "NVIDIA-A100-SXM4-80GB")
            self.assertEqual(field(run, "resources.mem.requests")[1], "profile",
                             "the profile's mem wins over the user's 6Gi")
        if "fs_group" in kwargs:
            self.assertEqual(pod["securityContext"]["fsGroup"], int(kwargs["fs_group"]))
        for k in ("run_as_user", "run_as_group"):
            if k in kwargs:
                key = {"run_as_user": "runAsUser", "run_as_group": "runAsGroup"}[k]
                self.assertEqual(pod["securityContext"][key], kwargs[k])
        for v in kwargs.get("volumes", []):
            self.assertIn(v["mount_path"], [m["mountPath"] for m in c["volumeMounts"]])
        for e in kwargs.get("envs", []):
            self.assertIn({"name": e["name"], "value": e["value"]}, c["env"])
        for name in kwargs.get("secrets", []):
            # each secret as the variable its name makes (docs/runspec.md, Secrets)
            var = name.upper().replace("-", "_").replace(".", "_")
            self.assertIn({"name": var, "valueFrom": {"secretKeyRef": {"name": run.name, "key": name}}},
                          c["env"])
        if "args" in kwargs:
            self.assertEqual(c["args"], kwargs["args"])


class KeptSeeds(unittest.TestCase):
    def test_copy_is_current(self):
        """The kept copy of seeds 001 and 002 is the documentation as it is now."""
        if not os.path.isdir(SHARED_SEEDS):
            self.skipTest("no ../shared/seeds beside this clone")
        for name in os.listdir(KEPT_SEEDS):
            with open(os.path.join(KEPT_SEEDS, name)) as a, open(os.path.join(SHARED_SEEDS, name)) as b:
                self.assertEqual(a.read(), b.read(), f"{name}: copy it again from ../shared/seeds")


class ProjectView(unittest.TestCase):
    """Issue 27: a project's overlay of the policy (projects.sdk-team): the profiles its
    runs may use, the volumes they get unless they say manual or none (MLRun's volume
    mount type "Auto (using auto-mount), Manual or None")."""

    def setUp(self):
        self.client = berth.Client(S["url"], S["admin"])

    def test_profiles_of_a_project(self):
        team = [p["id"] for p in self.client.get_profiles(project="sdk-team")]
        everyone = [p["id"] for p in self.client.get_profiles()]
        seeds = [p["id"] for p in self.client.project("seeds").get_profiles()]
        self.assertEqual(team[0], "team-only")
        self.assertIn("1xa100", team)
        self.assertNotIn("team-only", everyone)
        self.assertNotIn("team-only", seeds)
        self.assertEqual([p["id"] for p in self.client.project("sdk-team").get_profiles()], team)
        with self.assertRaises(berth.ForbiddenError):
            berth.Client(S["url"], S["other"]).get_profiles(project="sdk-team")
        # another project's profile is unknown to this one, never applied
        fn = self.client.project("seeds").new_function("other-profile", image="python:3.11",
                                                       command=["true"])
        with self.assertRaises(berth.InvalidSpecError) as cm:
            fn.explain(profile="team-only")
        self.assertIn('unknown profile "team-only"', str(cm.exception))

    def test_auto_mounted_volume_and_its_modes(self):
        fn = self.client.project("sdk-team").new_function("vols", image="python:3.11",
                                                          command=["true"])
        def volumes(d):
            return {f["path"]: f.get("origin") for f in d["fields"] if f["path"].startswith("volumes.")}
        self.assertEqual(volumes(fn.explain()), {"volumes.team-scratch": "projects.sdk-team.defaults"})
        self.assertEqual(volumes(fn.explain(volume_mode="None")), {})
        fn.with_volume_mode("manual")
        self.assertEqual(volumes(fn.explain()), {})
        fn.apply(berth.auto_mount())
        self.assertEqual(volumes(fn.explain()), {"volumes.team-scratch": "projects.sdk-team.defaults"})
        with self.assertRaises(berth.InvalidSpecError) as cm:
            fn.explain(volumes=[{"volume_type": "empty_dir", "name": "team-scratch", "mount_path": "/x"}])
        self.assertIn("the platform mounts on every run", str(cm.exception))


class MLRunModifiers(unittest.TestCase):
    """seed 002 (MLRun): the function modifiers, and its examples as written."""

    def setUp(self):
        self.project = client().project("mlrun")

    def test_seed002_lines(self):
        """The seed's code_to_function, modifier and run lines, in the seed's order, as
        written (mlrun is berth): a training.py with the seed's two handlers is the code."""
        with open(os.path.join(SEEDS, [f for f in os.listdir(SEEDS) if f.startswith("002_")][0])) as f:
            text = f.read()
        statements = []  # (offset in the seed, python)
        for m in re.finditer(r"(\w+)\s*=\s*mlrun\.code_to_function\(", text):
            call = calls(text[m.end(0) - len("mlrun.code_to_function("):], "mlrun.code_to_function")[0]
            statements.append((m.start(0), m.group(1) + " = " + call))
        self.assertEqual(len(statements), 4, "the seed's code_to_function calls")
        lines = [(m.start(0), m.group(1)) for m in re.finditer(
            r"^\s*((?:training_function|train_fn|fn)\.(?:spec\.|with_|gpus|run|apply).*)$", text, re.M)]
        self.assertEqual(len(lines), 11, "the seed's modifier lines")
        statements = sorted(statements + lines)
        work = tempfile.mkdtemp(prefix="berth-seed002-")
        with open(os.path.join(work, "training.py"), "w") as f:
            f.write(TRAINING)
        cwd = os.getcwd()
        os.chdir(work)  # the seed's "training.py" and 'training' are files of the notebook's directory
        berth.connect(S["url"], S["admin"])
        self.addCleanup(setattr, berth, "_project", berth._project)
        berth.get_or_create_project("mlrun")
        # fn is the seed's name for a function it does not make: a registered one
        env = {"mlrun": berth, "my_data": "s3://bucket/data.csv", "mount_pvc": berth.mount_pvc,
               "fn": self.project.new_function("fn", image="python:3.11", command=["sh", "-c", "echo ok"])}
        runs = []
        shown = io.StringIO()  # MLRun's run() waits and shows the log: so does berth's
        try:
            for _, line in statements:
                # `{value}` is the documentation's placeholder for a class name
                line = line.replace("name={value}", 'name="High"')
                # (the subtest's own "ok" line is printed when it ends, not into shown)
                with self.subTest(line=line.splitlines()[0]), contextlib.redirect_stdout(shown):
                    if re.match(r"[\w.]+\s*=\s", line):
                        exec(line, env)
                        continue
                    out = eval(line, env)
                    if isinstance(out, berth.Run):
                        runs.append(out)
        finally:
            os.chdir(cwd)
            shutil.rmtree(work, ignore_errors=True)
        self.assertEqual(shown.getvalue().count("my_training_function dataset=s3://bucket/data.csv\n"),
                         3, shown.getvalue())
        # the first example: two MPI workers of one run, each with 2 CPUs and a GPU
        training = env["training_function"]
        self.assertEqual((training.name, training.kind, training.image),
                         ("training", "mpijob", "mlrun/ml-models-gpu"))
        self.assertEqual(training.spec.replicas, 2)
        spec = training.to_dict()
        self.assertEqual((spec["action"], spec["replicas"], spec["distributed"]),
                         ("job", 2, {"launcher": "mpi"}))
        self.assertEqual(spec["resources"], {"cpu": {"requests": "2"}, "gpu": "1"})
        self.assertEqual(spec["function"]["command"][:2], ["python3", "-c"])
        envs = {e["name"]: e["value"] for e in spec["envs"]}
        self.assertEqual((envs["FUNCTION_FILE"], envs["FUNCTION_HANDLER"]), ("training.py", "train"))
        # it runs on the local backend (this server's machine declares 96 CPUs and 8 GPUs):
        # mpirun on worker 0 calls train() in a rank of each worker, each worker with its GPU
        if shutil.which("mpirun"):
            run = training.run(wait=True, wait_timeout=60)
            self.assertEqual(run.status, "Succeeded", run.reason)
            self.assertEqual((run.workers, run.worker_states, run.gpu_ids),
                             (2, ["Succeeded", "Succeeded"], "0,1"))
            self.assertEqual(run.logs(rank=0).count("train epochs=1 lr=0.1"), 2, run.logs())
        # the three train_fn runs: my_training_function(dataset=my_data), on the local backend
        self.assertEqual(len(runs), 3, "the seed's three train_fn.run lines")
        for i, run in enumerate(runs):
            run.wait(60)
            self.assertEqual(run.status, "Succeeded", run.reason)
            self.assertIn("my_training_function dataset=s3://bucket/data.csv", run.logs())
            inputs, origin = field(run, "inputs")
            self.assertEqual((json.loads(inputs), origin), ({"dataset": "s3://bucket/data.csv"}, "run spec"))
            if i < 2:  # the third train_fn is a new function, without with_preemption_mode
                self.assertEqual(field(run, "preemption_mode"), ("prevent", "function"))
        # the last train_fn run: with_priority_class(name={value}), High
        self.assertEqual(field(runs[-1], "priority_class"), ("High", "function"))
        # (the seed gives train_fn no image: it runs on the local backend, and renders no objects)
        self.assertEqual(runs[-1].priority_class, "berth-high")

    def test_modifiers(self):
        fn = self.project.new_function("mods", image="python:3.11", command=["sh", "-c", "ls /etc/app"],
                                       action="deploy")
        fn.with_limits(mem="4Gi", cpu="3", gpus=1, gpu_type="nvidia.com/gpu")
        fn.with_requests(mem="2Gi", cpu="1")
        fn.with_node_selection(node_selector={"app.iguazio.com/lifecycle": "non-preemptible"},
                               tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}])
        fn.with_preemption_mode("allow")
        fn.with_priority_class("low")
        fn.spec.min_replicas = 1
        fn.spec.max_replicas = 4
        fn.apply(berth.mount_pvc(pvc_name="data-claim", volume_name="data", volume_mount_path="/data"))
        fn.apply(berth.mount_configmap(configmap_name="app-config", mount_path="/etc/app"))
        fn.apply(berth.mount_secret(secret_name="gcp-creds", mount_path="/var/creds"))
        project = client().project("mlrun")
        project.set_secret("gcp-creds", "xyz")
        run = fn.run()
        try:
            o = run.origins()
            want = {
                "resources.mem.limits": ("4Gi", "function"), "resources.mem.requests": ("2Gi", "function"),
                "resources.cpu.limits": ("3", "function"), "resources.cpu.requests": ("1", "function"),
                "resources.gpu.limits": ("1", "function"), "preemption_mode": ("allow", "function"),
                "priority_class": ("low", "function"), "min_replicas": ("1", "function"),
                "max_replicas": ("4", "function"),
                "node_selector.app.iguazio.com/lifecycle": ("non-preemptible", "function"),
            }
            for path, v in want.items():
                self.assertEqual(o.get(path), v, path)
            for name in ("data", "configmap", "secret"):
                self.assertEqual(o["volumes." + name][1], "function")
            m = run.manifests()
            kinds = [x["kind"] for x in m]
            self.assertIn("HorizontalPodAutoscaler", kinds)
            pod = container(m)
            self.assertEqual(pod["priorityClassName"], "berth-low")
            self.assertEqual(pod["containers"][0]["resources"]["limits"]["memory"], "4Gi")
            claims = [v.get("persistentVolumeClaim", {}).get("claimName") for v in pod["volumes"]]
            self.assertIn("data-claim", claims)
            self.assertIn("app-config", [v.get("configMap", {}).get("name") for v in pod["volumes"]])
            # a run's own field wins over the function's, and says so
            run2 = fn.run(resources={"mem": "3Gi"})
            self.assertEqual(field(run2, "resources.mem.requests"), ("3Gi", "run spec"))
            run2.stop(grace=0, wait=True)
        finally:
            run.stop(grace=0, wait=True)
        self.assertEqual(run.status, "Stopped")

    def test_get_function(self):
        fn = self.project.new_function("kept", image="python:3.11", command=["true"])
        fn.gpus(2, gpu_type="nvidia.com/gpu").with_priority_class("high").save()
        again = self.project.get_function("kept")
        self.assertEqual(again.image, "python:3.11")
        self.assertEqual(again.command, ["true"])
        self.assertEqual(again.to_dict()["resources"], {"gpu": "2", "gpu_type": "nvidia.com/gpu"})
        again.with_priority_class("low")
        self.assertTrue(again._dirty)
        run = again.run(wait=True)
        self.assertEqual(field(run, "priority_class"), ("low", "function"))
        self.assertIn("kept", self.project.list_functions())


class CodeToFunction(unittest.TestCase):
    """code_to_function: a file of the client's machine, run by the server's backend."""

    def setUp(self):
        self.project = client().project("code")
        self.dir = tempfile.mkdtemp(prefix="berth-code-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.path = self.write("training.py", TRAINING)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w" if isinstance(text, str) else "wb") as f:
            f.write(text)
        return path

    def test_handler_gets_params(self):
        fn = self.project.code_to_function(self.path, name="params", handler="train")
        self.assertIsNone(fn.image)  # the local backend runs the host's python3
        self.assertEqual(fn.kind, "job")
        self.assertEqual(fn.to_dict()["action"], "job")
        run = fn.run(params={"epochs": 4, "lr": 0.5}, inputs={"tag": "a b", "sizes": [1, 2]}, wait=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        log = run.logs()
        self.assertIn("train epochs=4 lr=0.5 more=[('sizes', [1, 2]), ('tag', 'a b')]\n", log)
        self.assertIn('train() returned {"loss": 0.25, "epochs": 4}\n', log)
        self.assertNotIn("main argv", log)  # a handler's module is imported, not run as __main__
        inputs, origin = field(run, "inputs")
        self.assertEqual((json.loads(inputs), origin),
                         ({"epochs": 4, "lr": 0.5, "tag": "a b", "sizes": [1, 2]}, "run spec"))

    def test_main_without_handler(self):
        fn = self.project.code_to_function(self.path, name="main", args=["--epochs", "2"])
        run = fn.run(wait=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        self.assertEqual(run.logs(), "main argv=training.py --epochs 2\n")

    def test_module_level_project(self):
        berth.connect(S["url"], S["admin"])
        self.addCleanup(setattr, berth, "_project", berth._project)
        berth._project = None
        self.assertEqual(berth.code_to_function(self.path).project.name, "default")
        berth.get_or_create_project("code-current")
        fn = berth.code_to_function(self.path, handler="train")
        self.assertEqual((fn.project.name, fn.name), ("code-current", "training"))
        self.assertEqual(berth.code_to_function(self.path, project="other").project.name, "other")
        run = fn.run(params={"epochs": 2}, wait=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        self.assertEqual(run.project, "code-current")
        self.assertIn("train epochs=2 lr=0.1 more=[]\n", run.logs())

    def test_file_as_the_seed_names_it(self):
        """code_to_function('training', ...) is training.py of the working directory."""
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            fn = self.project.code_to_function("training", kind="job", handler="my_training_function")
        finally:
            os.chdir(cwd)
        self.assertEqual(fn.name, "training")
        self.assertIn({"name": "FUNCTION_FILE", "value": "training.py"}, fn.to_dict()["envs"])
        self.assertEqual(self.project.code_to_function(self.write("My_Train.py", TRAINING)).name,
                         "my-train")

    def test_failure_shows_the_line(self):
        with self.assertRaises(berth.RunError) as cm:
            self.project.code_to_function(self.path, name="fails", handler="fail").run(
                params={"code": 7}, wait=True)
        run = cm.exception.run
        self.assertIn("RuntimeError: failed with 7", cm.exception.log_tail)
        self.assertEqual(run.status, "Failed")
        self.assertEqual(run.exit_code, 1)
        log = run.logs()
        self.assertIn('File "training.py", line 15, in fail\n', log)
        self.assertIn('raise RuntimeError(f"failed with {code}")\n', log)
        self.assertIn("RuntimeError: failed with 7\n", log)

    def test_large_code_in_parts(self):
        """Code that does not compress goes in several variables of 64 KiB (one holds 128 KiB
        at most on Linux), and runs whole."""
        blob = base64.b64encode(os.urandom(135000)).decode()
        path = self.write("big.py", f"BLOB = {blob!r}\n\n\ndef size():\n    print(len(BLOB))\n")
        fn = self.project.code_to_function(path, handler="size")
        parts = [e for e in fn.to_dict()["envs"] if e["name"].startswith("FUNCTION_CODE_")]
        self.assertGreaterEqual(len(parts), 2)
        self.assertTrue(all(len(e["value"]) <= 65536 for e in parts))
        run = fn.run(wait=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        self.assertEqual(run.logs(), f"{len(blob)}\n")

    def test_job_replicas(self):
        fn = self.project.code_to_function(self.path, name="workers", handler="train", kind="job")
        fn.spec.replicas = 2
        fn.with_requests(cpu=1)
        spec = fn.to_dict()
        self.assertEqual((spec["action"], spec["replicas"], spec["resources"]),
                         ("job", 2, {"cpu": {"requests": "1"}}))
        self.assertNotIn("distributed", spec)
        # two workers on the local backend, each calling the handler; each one's log apart
        run = fn.run(params={"epochs": 2}, wait=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        self.assertEqual((run.workers, run.worker_states), (2, ["Succeeded", "Succeeded"]))
        for rank in (0, 1):
            self.assertIn("train epochs=2 lr=0.1", run.logs(rank=rank))
        both = run.logs()
        self.assertIn("[rank 0] train epochs=2", both)
        self.assertIn("[rank 1] train epochs=2", both)
        with self.assertRaises(ValueError):
            run.logs(rank=2)

    @unittest.skipUnless(shutil.which("mpirun"), "no mpirun: apt install openmpi-bin")
    def test_mpijob_runs_its_ranks(self):
        """kind mpijob: mpirun on worker 0 calls the handler in every rank of every worker."""
        fn = self.project.code_to_function(self.path, name="mpi-workers", handler="train",
                                           kind="mpijob")
        fn.spec.replicas = 2
        fn.with_requests(cpu="100m")
        run = fn.run(params={"epochs": 3}, wait=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        # mpirun forwards every rank's output to worker 0's log
        self.assertEqual(run.logs(rank=0).count("train epochs=3 lr=0.1"), 2, run.logs())

    def test_refused_before_any_request(self):
        """What is wrong is said on the client: the server here does not exist."""
        offline = berth.Client("http://127.0.0.1:1", "t").project("p")
        ctf = offline.code_to_function
        with self.assertRaises(FileNotFoundError) as cm:
            ctf(os.path.join(self.dir, "nope"))
        self.assertIn("there is no file", str(cm.exception))
        self.assertIn("nope.py", str(cm.exception))
        for kind, instead in (("serving", "action='serve'"), ("nuclio", "action='serve'"),
                              ("dask", "spec.replicas"), ("spark", "spec.replicas"),
                              ("remote", "action='serve'"), ("horovod", "kind='mpijob'")):
            with self.subTest(kind=kind), self.assertRaises(ValueError) as cm:
                ctf(self.path, kind=kind)
            self.assertIn(f"kind {kind!r} is not one berth runs from code", str(cm.exception))
            self.assertIn(instead, str(cm.exception))
        for kind in ("", None, "job"):
            fn = ctf(self.path, kind=kind)
            self.assertEqual((fn.kind, fn.to_dict().get("distributed")), ("job", None))
        self.assertEqual(ctf(self.path, kind="mpijob").to_dict()["distributed"], {"launcher": "mpi"})
        with self.assertRaises(ValueError) as cm:
            ctf(self.path, handler="nothere")
        self.assertIn("has no 'nothere' (its functions: fail, my_training_function, train)",
                      str(cm.exception))
        with self.assertRaises(ValueError):
            ctf(self.path, handler="training.train")
        with self.assertRaises(SyntaxError):
            ctf(self.write("broken.py", "def f(:\n"))
        with self.assertRaises(ValueError) as cm:
            ctf(self.write("huge.py", "#" * (256 * 1024) + "\n"))
        self.assertIn("at most 262144 (256 KiB) of code", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            ctf(self.write("latin1.py", b"# caf\xe9\n"))
        self.assertIn("is not UTF-8", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            ctf(self.path, envs=[{"name": "FUNCTION_FILE", "value": "x"}])
        self.assertIn("FUNCTION_FILE", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            ctf(self.path, action="serve")
        self.assertIn("new_function", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            ctf(self.path, kind="mpijob", distributed={"launcher": "torchrun"})
        self.assertIn("use kind='job' with distributed={'launcher': 'env'}", str(cm.exception))
        with self.assertRaises(TypeError):
            ctf(self.path, distributed="mpi")
        with self.assertRaises(ValueError) as cm:
            ctf(self.path, distributed={"launcher": "torchrun"})
        self.assertIn("{'launcher': 'env'}", str(cm.exception))
        self.assertEqual(ctf(self.path, distributed={"launcher": "env"}).to_dict()["distributed"],
                         {"launcher": "env"})
        with self.assertRaises(ValueError):
            ctf(self.path, project="elsewhere")
        with self.assertRaises(TypeError) as cm:
            ctf(self.path, replica=2)
        self.assertIn("did you mean 'replicas'", str(cm.exception))
        fn = ctf(self.path, handler="train")
        with self.assertRaises(TypeError):
            fn.run(params=[4])
        with self.assertRaises(ValueError) as cm:
            fn.run(params={"epochs": 4}, inputs={"epochs": 5})
        self.assertIn("'epochs' is both in params and in inputs", str(cm.exception))


class Errors(unittest.TestCase):
    def setUp(self):
        self.project = client().project("errors")
        self.fn = self.project.new_function("e", image="python:3.11", command=["true"])

    def test_unknown_keyword_is_named(self):
        with self.assertRaises(TypeError) as cm:
            self.fn.run(action="job", resource={"cpu": "1"})
        self.assertIn("'resource'", str(cm.exception))
        self.assertIn("did you mean 'resources'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            self.project.new_function("x", image="i", gpu="1")
        self.assertIn("'gpu'", str(cm.exception))
        with self.assertRaises(AttributeError):
            self.fn.spec.replica = 2

    def test_placeholder_refused(self):
        with self.assertRaises(TypeError) as cm:
            self.fn.run(args=[...])
        self.assertIn("placeholder", str(cm.exception))

    def test_problems_with_positions(self):
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.fn.run(resources={"mem": "32Gb", "cpu": "x"})
        e = cm.exception
        self.assertEqual(e.status, 422)
        self.assertEqual(len(e.problems), 2, e.problems)
        paths = sorted(p.path for p in e.problems)
        self.assertEqual(paths, ["resources.cpu", "resources.mem"])
        for p in e.problems:
            # no position in the JSON the SDK sent: the user never wrote that text
            self.assertIsNone(p.line)
            self.assertIsNone(p.column)
            self.assertIn("is not a quantity", p.message)
        self.assertIn("32Gb", str(e))


class UserWords(unittest.TestCase):
    """Errors name what the user wrote (issue 23, finding 5): the call and its keyword
    path, the modifier that set a function's field, the user's own YAML lines; a
    position in the policy file is the policy's, never the user's."""

    def setUp(self):
        self.project = client().project("words")
        self.fn = self.project.new_function("w", image="python:3.11", command=["true"])

    def assertNoInventedFile(self, text):
        for name in ("spec.yaml", "function.yaml", "function w:1", ":1:"):
            self.assertNotIn(name, text)

    def test_run_keyword_path(self):
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.fn.run(resources={"mem": "32Gb", "cpu": "1"})
        e = cm.exception
        self.assertTrue(str(e).startswith("func.run(resources={'mem': '32Gb'}): resources.mem: "
                                          "\"32Gb\" is not a quantity"), str(e))
        self.assertEqual(e.problems[0].where, "func.run(resources={'mem': '32Gb'})")
        self.assertNoInventedFile(str(e))

    def test_list_item_keyword_path(self):
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.fn.run(volumes=[{"volume_type": "empty_dir", "name": "a", "mount_path": "/a"},
                                 {"volume_type": "empty_dir", "name": "b", "mount_path": "rel"}])
        self.assertIn("func.run(volumes=[..., {'mount_path': 'rel'}]): volumes[1].mount_path: ",
                      str(cm.exception))
        self.assertNoInventedFile(str(cm.exception))

    def test_modifier_named(self):
        fn = self.project.new_function("mod", image="python:3.11", command=["true"])
        with self.assertRaises(berth.InvalidSpecError) as cm:
            fn.with_requests(cpu="1").with_limits(mem="32Gb").run()
        e = cm.exception
        self.assertTrue(str(e).startswith("function mod: with_limits(mem='32Gb'): "
                                          "resources.mem.limits: \"32Gb\" is not a quantity"), str(e))
        self.assertNoInventedFile(str(e))
        # the function's stored layer, checked at the run: the modifier still named
        fn = self.project.new_function("big", image="python:3.11", command=["true"])
        with self.assertRaises(berth.InvalidSpecError) as cm:
            fn.with_limits(mem="2Ti").run()
        self.assertIn("function big: with_limits(mem='2Ti'): resources.mem.limits: 2Ti from the "
                      "function is over the platform's limit of 1Ti", str(cm.exception))
        self.assertNoInventedFile(str(cm.exception))
        # new_function's own keywords
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.project.new_function("nf", image="python:3.11", command=["true"],
                                      resources={"cpu": "zz"})
        self.assertIn("function nf: new_function(resources={'cpu': 'zz'}): resources.cpu: ",
                      str(cm.exception))

    def test_function_without_modifier(self):
        self.project.client._t.request(
            "POST", self.project._path("functions"),
            {"function": {"name": "stored", "image": "python:3.11", "command": ["true"]},
             "node_selector": {"zone": "mars"}})
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.project.get_function("stored").run()
        self.assertIn("function stored: node_selector: ", str(cm.exception))
        self.assertNoInventedFile(str(cm.exception))

    def test_policy_position_is_the_policy_s(self):
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.fn.run(profile="spot-a10")
        probs = [p for p in cm.exception.problems if p.path == "node_selector"]
        self.assertTrue(probs, cm.exception.problems)
        p = probs[0]
        self.assertTrue(p.in_policy)
        self.assertRegex(p.text, r"^func\.run\(\): node_selector: .*\(policy file line \d+:\d+\)$")
        self.assertNoInventedFile(str(cm.exception))

    def test_warnings_in_user_words(self):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", berth.BerthWarning)
            self.fn.run(profile="cpu-small", resources={"mem": "1Gi"}, wait=True)
        texts = [str(w.message) for w in seen if issubclass(w.category, berth.BerthWarning)]
        self.assertTrue(any(t.startswith("func.run(resources={'mem': '1Gi'}): warning: "
                                         "resources.mem.requests: 1Gi from the run spec is "
                                         "overridden") for t in texts), texts)
        for t in texts:
            self.assertNoInventedFile(t)
        # the warning names the user's line
        self.assertTrue(all(w.filename == __file__ for w in seen
                            if issubclass(w.category, berth.BerthWarning)))

    def test_yaml_text_keeps_its_lines(self):
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.project.run("function: {name: y, image: a, command: [x]}\nresources: {mem: 1Gb}\n",
                             file="mine.yaml")
        self.assertTrue(str(cm.exception).startswith("mine.yaml:2:18: resources.mem: "), str(cm.exception))

    def test_policy_refusal(self):
        with self.assertRaises(berth.InvalidSpecError) as cm:
            self.fn.run(profile="no-such-profile")
        self.assertIn("profile", cm.exception.problems[0].path)

    def test_unreachable_server(self):
        with self.assertRaises(ConnectionError) as cm:
            berth.connect("http://127.0.0.1:1", S["admin"]).projects()
        self.assertIn("cannot reach the berth server at http://127.0.0.1:1", str(cm.exception))
        with self.assertRaises(ValueError):
            berth.connect("ftp://example.org")

    def test_get_or_create_project(self):
        self.assertIn("fresh", [p.name for p in [client().get_or_create_project("fresh")]])
        self.assertIn("fresh", client().projects())
        # a token that may not create projects gets the project object all the same
        self.assertEqual(client(S["other"]).get_or_create_project("elsewhere").name, "elsewhere")
        with self.assertRaises(berth.ForbiddenError):
            client(S["other"]).create_project("not-mine")

    def test_auth(self):
        with self.assertRaises(berth.AuthError):
            client("berth_not-a-token").project("x").list_runs()
        with self.assertRaises(berth.ForbiddenError):
            client(S["other"]).project("errors").list_runs()
        with self.assertRaises(berth.NotFoundError):
            client().get_run("nosuchrun")


class ValidateAsTheCLI(unittest.TestCase):
    """project.validate(spec) says what `berth validate --backend local` says of the
    same spec with the same policy and store: the verdict and each problem (one check,
    everywhere: issue 23); project.explain gives the effective spec."""

    SPECS = {
        "valid.yaml": "project: same\nfunction: {name: v, image: python:3.11, command: [\"true\"]}\n"
                      "resources: {cpu: \"1\", mem: 1Gi}\n",
        "invalid.yaml": "project: same\nfunction: {name: v, image: python:3.11, command: [\"true\"]}\n"
                        "resources: {mem: 32Gb}\nvolumes: [{volume_type: empty_dir, name: a, "
                        "mount_path: rel}]\n",
        "never-fits.yaml": "project: same\nfunction: {name: v, image: python:3.11, command: [\"true\"]}\n"
                           "profile: spot-a10\n",
        "over-quota.yaml": "project: same\nfunction: {name: v, image: python:3.11, command: [\"true\"]}\n"
                           "resources: {gpu: \"12\"}\n",
    }

    def cli(self, name, text):
        path = os.path.join(S["tmp"], name)
        with open(path, "w") as f:
            f.write(text)
        cfg = os.path.join(S["tmp"], "policy", "config.yaml")
        p = subprocess.run([BIN, "validate", name, "--backend", "local", "--config", cfg],
                           cwd=S["tmp"], env=S["env"], capture_output=True, text=True, timeout=60)
        errors = [l for l in p.stderr.splitlines()
                  if l and ": warning: " not in l and not l.startswith("berth: ")]
        return {0: True, 2: False}.get(p.returncode, p.returncode), errors

    def test_same_verdict_and_problems(self):
        project = client().project("same")
        for name, text in self.SPECS.items():
            with self.subTest(spec=name):
                valid, errors = self.cli(name, text)
                verdict = project.validate(text, file=name)
                self.assertEqual(verdict.valid, valid, (verdict, errors))
                self.assertEqual(sorted("%s:%s:%s: %s: %s" % (p.file, p.line, p.column, p.path, p.message)
                                        for p in verdict.errors), sorted(errors))
                for p in verdict.errors:  # the user's lines as theirs, the policy's as the policy's
                    self.assertEqual(p.text.startswith(name + ":"), not p.in_policy, p.text)
                if name != "valid.yaml":
                    self.assertTrue(errors)
                # the same spec as a dict: the same paths and messages, named by its keys
                doc = project.client._t.request("POST", Transport_path("parse"), text,
                                                content_type="application/yaml")[0]
                verdict = project.validate(doc)
                self.assertEqual(verdict.valid, valid)
                self.assertEqual(sorted(p.message for p in verdict.errors),
                                 sorted(l.split(": ", 2)[2] for l in errors))
                for p in verdict.errors:
                    self.assertNotIn("spec.yaml", p.text)
                    if not p.in_policy:
                        self.assertTrue(p.text.startswith("project.validate("), p.text)
        # explain: the effective spec, each value's origin
        eff = project.explain(self.SPECS["valid.yaml"])
        origins = {f["path"]: f.get("origin") for f in eff["fields"]}
        self.assertEqual(origins["resources.cpu.requests"], "run spec")
        with self.assertRaises(berth.InvalidSpecError):
            project.explain(self.SPECS["invalid.yaml"])


def Transport_path(*rest):
    return "/api/v1/" + "/".join(rest)


class Runs(unittest.TestCase):
    def setUp(self):
        self.project = client().project("runs")

    def test_lifecycle(self):
        fn = self.project.new_function("tick", image="python:3.11",
                                       command=["sh", "-c", "for i in 1 2 3; do echo tick $i; sleep 0.3; done"])
        run = fn.run()
        self.assertIn(run.status, ("Pending", "Running"))
        text = run.logs(follow=True)
        self.assertEqual(text, "tick 1\ntick 2\ntick 3\n")
        self.assertEqual(run.wait(30).status, "Succeeded")
        self.assertEqual(run.refresh().exit_code, 0)
        self.assertEqual(run.logs(), text)
        kinds = [e["kind"] for e in run.events()]
        self.assertEqual(kinds[0], "Submitted")
        self.assertIn(run.id, [r.id for r in self.project.list_runs()])
        self.assertIn(run.id, [r.id for r in self.project.list_runs(state="Succeeded")])
        self.assertEqual(len(self.project.list_runs(limit=1)), 1)
        self.assertIn("kind: Job", run.manifests(format="yaml"))

    def test_wait_timeout_and_stop(self):
        fn = self.project.new_function("long", image="python:3.11", command=["sleep", "3600.25"])
        run = fn.run()
        with self.assertRaises(TimeoutError):
            run.wait(timeout=0.5)
        run.stop(grace=0, wait=True)
        self.assertEqual(run.status, "Stopped")

    def test_wait_argument_of_run(self):
        fn = self.project.new_function("quick", image="python:3.11", command=["true"])
        run = fn.run(wait=True)
        self.assertEqual(run.status, "Succeeded")

    def test_profile_overrides_are_warned(self):
        """A profile decides the resources it sets whole: each value of the user's it
        overrides comes back as a BerthWarning naming it (issue 23), and the run runs."""
        fn = self.project.new_function("small", image="python:3.11", command=["true"])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", berth.BerthWarning)
            run = fn.run(profile="cpu-small", resources={"mem": {"requests": "1Gi", "limits": "2Gi"}},
                         wait=True)
        texts = [str(w.message) for w in seen if issubclass(w.category, berth.BerthWarning)]
        for part in ("requests: 1Gi", "limits: 2Gi"):
            self.assertTrue(any("resources.mem." + part + " from the run spec is overridden by profile "
                                "\"cpu-small\"" in t for t in texts), texts)
        self.assertEqual(run.status, "Succeeded", run.reason)
        self.assertEqual(field(run, "resources.mem.requests"), ("4Gi", "profile"))

    def test_profiles_and_secrets(self):
        berth.connect(S["url"], S["admin"])
        ids = [p["id"] for p in berth.get_profiles()]
        self.assertIn("1xa100", ids)
        self.project.set_secret("api-key", "s3cr3t")
        self.assertIn("api-key", self.project.list_secrets())
        fn = self.project.new_function("sec", image="python:3.11",
                                       command=["sh", "-c", "test \"$api-key\" != x; echo done"])
        run = fn.run(secrets=["api-key"], wait=True)
        for text in (json.dumps(run.info), json.dumps(run.explain()), json.dumps(run.manifests()),
                     json.dumps(self.project.list_secrets())):
            self.assertNotIn("s3cr3t", text)

    def test_connect_from_environment(self):
        old = {k: os.environ.get(k) for k in ("BERTH_SERVER", "BERTH_TOKEN")}
        os.environ["BERTH_SERVER"], os.environ["BERTH_TOKEN"] = S["url"], S["admin"]
        try:
            c = berth.connect()
            self.assertEqual(c.url, S["url"])
            self.assertEqual(c.whoami()["role"], "admin")
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        saved = os.environ.pop("BERTH_SERVER", None)
        try:
            with self.assertRaises(ValueError) as cm:
                berth.Client()
            self.assertIn("BERTH_SERVER", str(cm.exception))
        finally:
            if saved is not None:
                os.environ["BERTH_SERVER"] = saved


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A stand-in server for what the server of this base does not do yet: it records
    each request's path and answers a log."""

    paths = []

    def do_GET(self):
        _Recorder.paths.append(self.path)
        body = f"log of {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Workers(unittest.TestCase):
    """A distributed run's workers: run.workers, run.worker_states, run.logs(rank=N)."""

    def setUp(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        _Recorder.paths = []
        self.client = berth.Client(f"http://127.0.0.1:{self.server.server_port}", "t")

    def test_logs_of_one_rank(self):
        states = [{"rank": 0, "state": "Running"}, {"rank": 1, "state": "Pending"}]
        run = berth.Run(self.client, {"id": "r1", "state": "Running", "workers": 2,
                                      "worker_states": states})
        self.assertEqual((run.workers, run.worker_states), (2, states))
        self.assertEqual(run.logs(), "log of /api/v1/runs/r1/logs\n")
        self.assertEqual(run.logs(rank=1), "log of /api/v1/runs/r1/logs?rank=1\n")
        self.assertEqual(run.logs(rank=0), "log of /api/v1/runs/r1/logs?rank=0\n")
        out = io.StringIO()
        self.assertEqual(run.logs(rank=1, follow=True, out=out),
                         "log of /api/v1/runs/r1/logs?follow=true&rank=1\n")
        self.assertEqual(out.getvalue(), "log of /api/v1/runs/r1/logs?follow=true&rank=1\n")
        self.assertEqual(run.logs(follow=True), "log of /api/v1/runs/r1/logs?follow=true\n")
        self.assertEqual(len(_Recorder.paths), 5)

    def test_bad_rank_is_refused_before_any_request(self):
        run = berth.Run(self.client, {"id": "r1", "state": "Running", "workers": 2})
        for rank in (-1, "1", 1.0, True, [0]):
            with self.subTest(rank=rank), self.assertRaises(ValueError) as cm:
                run.logs(rank=rank)
            self.assertIn(f"rank must be a worker's index, an int >= 0; got {rank!r}", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            run.logs(rank=2, follow=True)
        self.assertIn("run r1 has 2 workers: rank is 0 to 1, not 2", str(cm.exception))
        self.assertEqual(_Recorder.paths, [])

    def test_single_run(self):
        """A record without workers is one worker; without worker_states, None."""
        run = berth.Run(self.client, {"id": "r2", "state": "Succeeded"})
        self.assertEqual((run.workers, run.worker_states), (1, None))
        # on the real server: a run of one worker, whose rank 0 is all of its log
        fn = client().project("runs").new_function("one", image="python:3.11", command=["echo", "one"])
        real = fn.run(wait=True)
        self.assertEqual(real.status, "Succeeded", real.reason)
        self.assertEqual(real.workers, 1)
        self.assertEqual(real.logs(rank=0), "one\n")
        self.assertEqual(real.logs(rank=0), real.logs())


class Watch(unittest.TestCase):
    """Project.watch: the server's watch of a project's runs, change by change."""

    def test_changes_then_delete(self):
        project = client().project("watched")
        seen = []
        stop = threading.Event()

        def follow():
            for kind, what in project.watch(timeout=2):
                seen.append((kind, what.id if kind == "changed" else what,
                             what.status if kind == "changed" else None))
                if kind == "deleted" or stop.is_set():
                    return

        t = threading.Thread(target=follow, daemon=True)
        t.start()
        time.sleep(0.3)  # the watch has its version
        fn = project.new_function("w", image="python:3.11", command=["echo", "w"])
        run = fn.run(wait=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        # a watch tells runs as they are when it answers (a run created, finished and
        # deleted between two of its looks is told as deleted): one look first
        time.sleep(0.6)
        run.delete()
        t.join(10)
        stop.set()
        self.assertFalse(t.is_alive(), f"the watch did not end: {seen}")
        mine = [x for x in seen if x[1] == run.id]
        self.assertEqual(mine[-1], ("deleted", run.id, None), seen)
        self.assertIn(("changed", run.id, "Succeeded"), mine, seen)
        self.assertEqual([x for x in seen if x[1] != run.id], [], "another project's run")


class ReadmeExamples(unittest.TestCase):
    """The README's notebook example runs as written (a wrong call there would not)."""

    def test_readme_example(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            text = f.read()
        section = text[text.index("### From Python"):]
        code = section[section.index("```python") + len("```python"):]
        code = code[:code.index("```")]
        old = {k: os.environ.get(k) for k in ("BERTH_SERVER", "BERTH_TOKEN")}
        os.environ["BERTH_SERVER"], os.environ["BERTH_TOKEN"] = S["url"], S["admin"]
        env = {}
        try:
            with open(os.devnull, "w") as null:
                saved, sys.stdout = sys.stdout, null
                try:
                    exec(code, env)
                    run = env["run"]
                    self.assertEqual(run.status, "Succeeded")
                except berth.RunError as e:
                    # wait=True raises for a run that fails: here, for want of a train.py
                    run = e.run
                    self.assertEqual((e.state, run.status), ("Failed", "Failed"))
                    self.assertIn(run.id, str(e))
                finally:
                    sys.stdout = saved
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.assertEqual(field(run, "resources.mem.requests"), ("32Gi", "run spec"))
        self.assertEqual(field(run, "resources.mem.limits"), ("64Gi", "function"))


class Install(unittest.TestCase):
    def test_pip_install_offline(self):
        """python3 -m pip install ./sdk/python with no index: nothing is fetched."""
        target = tempfile.mkdtemp(prefix="berth-pip-")
        try:
            r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-cache-dir",
                                "--target", target, os.path.join(ROOT, "sdk", "python")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            r = subprocess.run([sys.executable, "-c", "import berth; print(berth.__version__, berth.__file__)"],
                               capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=target),
                               cwd=target)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.split()[1].startswith(target), r.stdout)
        finally:
            shutil.rmtree(target, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
