"""MLRun's and DigitalHub's code as their users write it, against a real `berth serve`
(docs/migrating.md): a typical MLRun notebook cell with `import mlrun` (berth, under
that name), MLRun's entry points and semantics (with_limits keeps the default request,
High/Medium/Low priority classes, "Prevent", a failed run raises, a template run as a
server), DigitalHub's get_or_create_project / new_function(kind=..., code_src=...,
handler=...), and what has no counterpart (Iguazio's v3io, the function hub) refused
with what to use instead. Two servers: one with the example policy on a machine that
declares 8 GPUs, and one with the built-in policy; local=True runs on a third store.
"""

import contextlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest
import warnings

from test_sdk import (BIN, SEEDS, TRAINING, example_policy, field, home_env, make_token, serve,
                      stop_serving)

import berth

warnings.simplefilter("ignore", berth.BerthWarning)  # "the image is not pulled": true, and noisy

M = {}  # the module's servers: "example" and "builtin", each {proc, url, admin, log}


def setUpModule():
    M["tmp"] = tempfile.mkdtemp(prefix="berth-migrating-")
    for name, cfg in (("example", example_policy(M["tmp"])), ("builtin", None)):
        home = os.path.join(M["tmp"], name)
        env = home_env(home)
        admin = make_token(env, "--project", "*", "--role", "admin")
        proc, url, log = serve(os.path.join(M["tmp"], name + ".log"), env, cfg)
        M[name] = dict(proc=proc, url=url, admin=admin, log=log, env=env)
    # the notebook's directory: its trainer.py
    M["work"] = os.path.join(M["tmp"], "notebook")
    os.makedirs(M["work"])
    with open(os.path.join(M["work"], "trainer.py"), "w") as f:
        f.write(TRAINING)


def tearDownModule():
    try:
        berth.close_local()
        for name in ("example", "builtin"):
            if name in M:
                s = M[name]
                stop_serving(s["proc"], s["url"], s["admin"], s["log"])
    finally:
        shutil.rmtree(M["tmp"], ignore_errors=True)


def connect(name="example"):
    """The module's default client (berth.connect) on that server, as a notebook has."""
    return berth.connect(M[name]["url"], M[name]["admin"])


@contextlib.contextmanager
def notebook():
    """A notebook's session: its directory, `import mlrun` being berth, the current
    project restored after; yields what the cells print."""
    out, cwd = io.StringIO(), os.getcwd()
    saved = (sys.modules.get("mlrun"), berth._project, berth._context)
    sys.modules["mlrun"] = berth
    os.chdir(M["work"])
    try:
        with contextlib.redirect_stdout(out):
            yield out
    finally:
        os.chdir(cwd)
        if saved[0] is None:
            sys.modules.pop("mlrun", None)
        else:
            sys.modules["mlrun"] = saved[0]
        berth._project, berth._context = saved[1], saved[2]


# A typical MLRun notebook cell (mlrun.code_to_function, with_limits, gpus, preemption
# and priority as MLRun's docs write them, run with params), then a run that fails.
CELL = """
import mlrun

project = mlrun.get_or_create_project("mlrun-notebook", context="./")
trainer = mlrun.code_to_function(name="trainer", filename="trainer.py", kind="job",
                                 image="mlrun/mlrun", handler="train")
trainer.with_limits(mem="2Gi", cpu="1")
trainer.gpus(1)
trainer.with_preemption_mode("Prevent")
trainer.with_priority_class("High")
run = trainer.run(params={"epochs": 3, "lr": 0.01})
print("state:", run.state(), run.status.state)
"""
FAILING_CELL = """
trainer.run(handler="fail", params={"code": 7})
"""


class MLRunNotebook(unittest.TestCase):
    """The cell as written, on the example policy's server (its machine declares GPUs)."""

    def test_cell_as_written(self):
        connect()
        env = {}
        with notebook() as out:
            exec(textwrap.dedent(CELL), env)
            with self.assertRaises(berth.RunError) as cm:
                exec(textwrap.dedent(FAILING_CELL), env)
        run = env["run"]
        # run() waited (MLRun's watch=True) and showed the log
        self.assertIn("train epochs=3 lr=0.01 more=[]\n", out.getvalue())
        self.assertIn("state: Succeeded Succeeded\n", out.getvalue())
        self.assertEqual(run.project, "mlrun-notebook")
        o = run.origins()
        for path, want in {
            "resources.mem.limits": ("2Gi", "function"),
            "resources.cpu.limits": ("1", "function"),
            # MLRun keeps the default request under with_limits: the policy's default
            "resources.mem.requests": ("256Mi", "policy default"),
            "resources.cpu.requests": ("100m", "policy default"),
            "resources.gpu.limits": ("1", "function"),
            "preemption_mode": ("prevent", "function"),
            "priority_class": ("High", "function"),
            "inputs": (json.dumps({"epochs": 3, "lr": 0.01}, separators=(",", ":")), "run spec"),
        }.items():
            self.assertEqual(o.get(path), want, path)
        self.assertEqual(run.priority_class, "berth-high")
        # the failing run raised, with its state, reason and the tail of its log
        e = cm.exception
        self.assertEqual((e.state, e.exit_code), ("Failed", 1))
        self.assertIn("exit code 1", e.reason)
        self.assertIn("RuntimeError: failed with 7", e.log_tail)
        self.assertIn("RuntimeError: failed with 7", str(e))
        self.assertEqual(e.run.status, "Failed")
        self.assertEqual(field(e.run, "function.name")[0], "trainer")


class SeedHubAndVolumeLines(unittest.TestCase):
    """Seed 002's other code lines, as written: the function hub and Iguazio's V3IO
    are refused with what to use instead; mount_pvc is a modifier."""

    def test_lines_as_written(self):
        with open(os.path.join(SEEDS, [f for f in os.listdir(SEEDS) if f.startswith("002_")][0])) as f:
            lines = [ln.strip() for ln in f if re.search(r"\b(import_function|mount_v3io|mount_pvc)\(", ln)
                     and not ln.strip().startswith("#")]
        self.assertEqual(len(lines), 5, lines)
        env = {"mlrun": berth, "mount_v3io": berth.mount_v3io, "mount_pvc": berth.mount_pvc,
               # the seed's open_archive_function comes from the hub: one of berth's here
               "open_archive_function": connect().project("seeds").new_function(
                   "open-archive", image="python:3.11", command=["true"])}
        refused = []
        for line in lines:
            with self.subTest(line=line):
                try:
                    out = eval(line, env) if "=" not in line.split("(")[0] else exec(line, env)
                except berth.NotSupportedError as e:
                    refused.append(str(e))
                    continue
                self.assertTrue(callable(out), line)  # mount_pvc(...): a modifier to apply
        self.assertEqual(len(refused), 4, refused)
        self.assertEqual(sum("no function hub" in e for e in refused), 2, refused)
        self.assertEqual(sum("mount_pvc(pvc_name=" in e for e in refused), 2, refused)


class BuiltinPolicy(unittest.TestCase):
    """MLRun's names with no policy file at all: the built-in policy's High/Medium/Low
    classes, "Prevent", and seed 002's autoscaled template run as a server."""

    def setUp(self):
        self.project = berth.Client(M["builtin"]["url"], M["builtin"]["admin"]).project("builtin")
        self.path = os.path.join(M["work"], "trainer.py")

    def test_priority_classes_and_modes(self):
        fn = self.project.code_to_function(self.path, name="prio", handler="train")
        fn.with_priority_class("High").with_preemption_mode("Prevent").with_limits(mem="512Mi")
        with contextlib.redirect_stdout(io.StringIO()):
            run = fn.run(params={"epochs": 2})
        self.assertEqual(run.status, "Succeeded", run.reason)
        self.assertEqual(field(run, "priority_class"), ("High", "function"))
        self.assertEqual(run.priority_class, "berth-high")
        self.assertEqual(field(run, "preemption_mode"), ("prevent", "function"))
        # no default request in the built-in policy: the limit is the request
        self.assertEqual(field(run, "resources.mem.requests"), ("512Mi", "policy rule"))
        # a run that names no class gets Medium, the default
        plain = self.project.new_function("plain", image="python:3.11", command=["true"])
        self.assertEqual(field(plain.run(wait=True), "priority_class"), ("medium", "policy default"))
        for name, want in (("low", "berth-low"), ("MEDIUM", "berth-medium")):
            self.assertEqual(plain.with_priority_class(name).run(wait=True).priority_class, want)

    def test_template_run_as_a_server(self):
        """seed 002: spec.min_replicas = 1, spec.max_replicas = 4, run as a server."""
        fn = self.project.new_function("srv", image="python:3.11", command=["sleep", "30"])
        fn.spec.min_replicas = 1
        fn.spec.max_replicas = 4
        run = fn.run(action="serve")
        try:
            self.assertEqual(field(run, "min_replicas"), ("1", "function"))
            self.assertEqual(field(run, "max_replicas"), ("4", "function"))
            self.assertIn("HorizontalPodAutoscaler", [m["kind"] for m in run.manifests()])
        finally:
            run.stop(grace=0, wait=True)
        # the same template run as a job: refused, naming the assignment that set it
        with self.assertRaises(berth.InvalidSpecError) as cm:
            fn.run()
        self.assertIn("function srv: spec.min_replicas = 1: min_replicas: min_replicas applies "
                      "to action serve or deploy, not job", str(cm.exception))


class MLRunShapes(unittest.TestCase):
    """MLRun's entry points, each as MLRun's signature takes it."""

    def setUp(self):
        self.client = connect()
        self.project = self.client.project("shapes")
        self.path = os.path.join(M["work"], "trainer.py")

    def test_code_to_function_signatures(self):
        with notebook():
            berth.get_or_create_project("shapes")
            by_keywords = berth.code_to_function(name="kw", filename="trainer.py", handler="train")
            positional = berth.code_to_function("pos", "shapes", "", "trainer.py", "train", "job")
            seed_form = berth.code_to_function("trainer.py", name="seed", handler="train")
            by_file = berth.code_to_function("trainer", kind="job", handler="train")
            with self.assertRaises(ValueError) as cm:
                berth.code_to_function("notebook-code", handler="train")
            self.assertIn("with no filename takes the notebook's code", str(cm.exception))
            with self.assertRaises(berth.NotSupportedError) as cm:
                berth.code_to_function(name="t", filename="trainer.py", requirements=["numpy"])
            self.assertIn("builds no image", str(cm.exception))
            with self.assertRaises(berth.NotSupportedError):
                berth.code_to_function(name="t", filename="trainer.py", tag="v2")
            described = berth.code_to_function(name="d", filename="trainer.py", description="mine")
        self.assertEqual([f.name for f in (by_keywords, positional, seed_form, by_file)],
                         ["kw", "pos", "seed", "trainer"])
        for fn in (by_keywords, positional, seed_form, by_file):
            self.assertEqual(fn.project.name, "shapes")
            self.assertIn({"name": "FUNCTION_HANDLER", "value": "train"}, fn.to_dict()["envs"])
        self.assertEqual(described.description, "mine")

    def test_set_import_and_run_function(self):
        fn = self.project.set_function(self.path, name="set-fn", handler="train")
        self.assertIn("set-fn", self.project.list_functions())  # registered now
        copy = self.project.set_function(fn, name="set-copy")
        self.assertEqual((copy.name, copy.to_dict()["envs"]), ("set-copy", fn.to_dict()["envs"]))
        imported = berth.import_function("db://shapes/set-fn")
        self.assertEqual((imported.project.name, imported.name), ("shapes", "set-fn"))
        with contextlib.redirect_stdout(io.StringIO()) as out:
            run = self.project.run_function("set-fn", params={"epochs": 5})
            again = imported.run(handler="my_training_function", inputs={"dataset": "d.csv"})
        self.assertEqual((run.status, again.status), ("Succeeded", "Succeeded"))
        self.assertIn("train epochs=5", out.getvalue())
        self.assertIn("my_training_function dataset=d.csv", again.logs())
        for url, what in (("hub://sklearn_classifier", "no function hub"),
                          ("hub://open_archive", "code_to_function")):
            with self.subTest(url=url), self.assertRaises(berth.NotSupportedError) as cm:
                berth.import_function(url)
            self.assertIn(what, str(cm.exception))
        with self.assertRaises(berth.NotSupportedError):
            self.project.set_function("hub://open_archive")
        with self.assertRaises(berth.NotSupportedError) as cm:
            self.project.set_function("notebook.ipynb")
        self.assertIn("nbconvert", str(cm.exception))
        with self.assertRaises(berth.NotFoundError):
            berth.import_function("db://shapes/no-such-function")

    def test_run_keywords(self):
        fn = self.project.code_to_function(self.path, name="kw-run", handler="train")
        # watch=False returns at once: a failing handler raises nothing until waited for
        run = fn.run(handler="fail", params={"code": 3}, watch=False)
        self.assertEqual(run.wait(60).status, "Failed")
        with self.assertRaises(berth.RunError):
            run.wait_for_completion()
        self.assertEqual(run.wait_for_completion(raise_on_failure=False).uid(), run.id)
        with self.assertRaises(ValueError):
            fn.run(handler="nowhere")
        with self.assertRaises(ValueError):
            fn.run(wait=True, watch=False)
        with self.assertRaises(TypeError) as cm:
            fn.run(hyperparams={"lr": [0.1, 0.2]})
        self.assertIn("one run per call", str(cm.exception))
        with self.assertRaises(TypeError):
            fn.run(params={"epochs": 1}, parameters={"epochs": 2})
        cmd = self.project.new_function("cmd", image="python:3.11", command=["false"])
        with self.assertRaises(TypeError) as cm:
            cmd.run(handler="train")
        self.assertIn("runs a command", str(cm.exception))
        with self.assertRaises(berth.RunError) as cm:
            cmd.run(wait=True)
        self.assertEqual((cm.exception.state, cm.exception.exit_code), ("Failed", 1))
        # schedule= runs it as a cronjob (MLRun's run(schedule=...)): which this server's
        # local backend has no scheduler for
        verdict = fn.validate(schedule="0 3 * * *")
        self.assertEqual([(p.path, 'action "cronjob" needs a scheduler' in p.message)
                          for p in verdict.errors], [("action", True)], verdict)

    def test_modifiers(self):
        fn = self.project.new_function("mods", image="python:3.11", command=["env"])
        env_file = os.path.join(M["tmp"], "run.env")
        with open(env_file, "w") as f:
            f.write("# settings\nexport A=1\nB='two words'\n\n")
        fn.set_envs({"C": 3}).set_envs(file_path=env_file)
        host = socket.gethostname()
        fn.with_node_selection(node_name=host)
        fn.with_security_context({"runAsUser": 1500, "run_as_group": 1500})
        fn.set_label("team", "vision")
        eff = {f["path"]: (f.get("value"), f.get("origin")) for f in fn.explain()["fields"]}
        self.assertEqual(eff["envs.B"], ("two words", "function"))
        self.assertEqual(eff["envs.C"], ("3", "function"))
        self.assertEqual(eff["node_selector.kubernetes.io/hostname"], (host, "function"))
        self.assertEqual((eff["run_as_user"], eff["run_as_group"]), (("1500", "function"),) * 2)
        self.assertEqual(eff["labels.team"], ("vision", "function"))
        run = fn.run(wait=True)
        self.assertIn("B=two words\n", run.logs())
        with self.assertRaises(berth.NotSupportedError) as cm:
            fn.with_security_context({"privileged": True})
        self.assertIn("privileged", str(cm.exception))
        with self.assertRaises(berth.NotSupportedError):
            fn.with_annotations({"sidecar.istio.io/inject": "false"})
        for call in (lambda: berth.mount_v3io(name="data", access_key="XYZ123",
                                              volume_mounts=[berth.VolumeMount("/data", "projects/p")]),
                     lambda: berth.auto_mount(pvc_name="data")):
            with self.assertRaises(berth.NotSupportedError) as cm:
                fn.apply(call())
            self.assertIn("mount_pvc", str(cm.exception))
        vm = berth.VolumeMount("/data", "projects/proj1/data")
        self.assertEqual((vm.path, vm.sub_path), ("/data", "projects/proj1/data"))

    def test_with_limits_keeps_the_default_request(self):
        fn = self.project.new_function("limits", image="python:3.11", command=["true"])
        fn.with_limits(mem="64Gi", cpu="8")
        self.assertEqual(fn.to_dict()["resources"]["mem"], {"limits": "64Gi", "requests": "default"})
        eff = {f["path"]: (f.get("value"), f.get("origin")) for f in fn.explain()["fields"]}
        self.assertEqual(eff["resources.mem.requests"], ("256Mi", "policy default"))
        self.assertEqual(eff["resources.cpu.requests"], ("100m", "policy default"))
        # a request of the user's is one
        fn.with_requests(mem="1Gi")
        eff = {f["path"]: (f.get("value"), f.get("origin")) for f in fn.explain()["fields"]}
        self.assertEqual(eff["resources.mem.requests"], ("1Gi", "function"))

    def test_validate_and_explain(self):
        fn = self.project.code_to_function(self.path, name="checked", handler="train")
        verdict = fn.validate(params={"epochs": 2}, resources={"cpu": "2"})
        self.assertTrue(verdict.valid, verdict)
        origins = {f["path"]: f.get("origin") for f in verdict.runs[0]["fields"]}
        self.assertEqual(origins["resources.cpu.requests"], "run spec")
        self.assertEqual(origins["function.name"], "function")
        verdict = fn.validate(resources={"mem": "32Gb"})
        self.assertFalse(verdict)
        self.assertTrue(verdict.errors[0].text.startswith(
            "func.validate(resources={'mem': '32Gb'}): resources.mem: \"32Gb\" is not a quantity"),
            verdict.errors[0].text)
        self.assertEqual(fn.explain(action="job", priority_class="low")["run"]["priorityClassName"],
                         "berth-low")
        with self.assertRaises(berth.InvalidSpecError) as cm:
            fn.explain(profile="nope")
        self.assertIn("func.explain(profile='nope'): profile: unknown profile", str(cm.exception))
        # a template the server refuses: a refused Verdict, the modifier named
        fn.with_limits(mem="12Gb")
        verdict = fn.validate()
        self.assertFalse(verdict)
        self.assertIn("with_limits(mem='12Gb')", verdict.errors[0].text)
        self.assertEqual(self.client.project("shapes").get_function("checked").to_dict()
                         .get("resources"), None, "the refused template was not registered")


class DigitalHubShapes(unittest.TestCase):
    """DigitalHub's SDK: get_or_create_project, new_function(kind=..., code_src=...,
    handler=...), run(action=..., parameters=...), which returns at once."""

    def setUp(self):
        connect()
        self.path = os.path.join(M["work"], "trainer.py")

    def test_python_function(self):
        project = berth.get_or_create_project("digitalhub")
        func = project.new_function(name="dh-train", kind="python", python_version="PYTHON3_10",
                                    code_src=self.path, handler="train")
        self.assertIn("dh-train", project.list_functions())  # registered at once
        self.assertEqual(func.image, "python:3.10")
        run = func.run(action="job", parameters={"epochs": 4}, wait=True)
        self.assertEqual(run.status.state, "Succeeded")
        self.assertIn("train epochs=4", run.logs())
        # DigitalHub's run() returns at once: a failure is seen when waited for
        failing = func.run(action="job", handler="fail", parameters={"code": 2})
        self.assertEqual(failing.wait(60).status, "Failed")
        # handler "module:function" of code_src's own module
        named = project.new_function(name="dh-mod", kind="python", code_src=self.path,
                                     handler="trainer:my_training_function")
        self.assertEqual(named.run(action="job", inputs={"dataset": "x"}, wait=True).status,
                         "Succeeded")
        with self.assertRaises(ValueError):
            project.new_function(name="dh-other", kind="python", code_src=self.path,
                                 handler="elsewhere:train")
        with self.assertRaises(berth.NotSupportedError):
            project.new_function(name="dh-git", kind="python", handler="f",
                                 code_src="git+https://github.com/example/repo")
        with self.assertRaises(berth.NotSupportedError):
            project.new_function(name="dh-req", kind="python", code_src=self.path, handler="train",
                                 requirements=["torch==2.5.0"])

    def test_container_function(self):
        project = berth.get_or_create_project("digitalhub")
        func = project.new_function(name="dh-box", kind="container", image="python:3.11",
                                    command="sh", args=["-c", "echo from a container"])
        run = func.run(action="job", wait=True)
        self.assertEqual(run.logs(), "from a container\n")
        with self.assertRaises(ValueError) as cm:
            project.new_function(name="dh-x", kind="sklearnserve", image="i")
        self.assertIn("action='serve'", str(cm.exception))


class LocalRuns(unittest.TestCase):
    """local=True: the run is this machine's berth's (its own store, policy and local
    backend), not the server's."""

    def test_local_run(self):
        home = os.path.join(M["tmp"], "local-home")
        berth.close_local()
        berth.local_client(home=home)
        self.addCleanup(berth.close_local)
        fn = connect().project("local").code_to_function(
            os.path.join(M["work"], "trainer.py"), name="here", handler="train")
        with contextlib.redirect_stdout(io.StringIO()) as out:
            run = fn.run(params={"epochs": 6}, local=True)
        self.assertEqual(run.status, "Succeeded", run.reason)
        self.assertIn("train epochs=6", out.getvalue())
        self.assertNotEqual(run.client.url, M["example"]["url"])
        with self.assertRaises(berth.NotFoundError):
            connect().get_run(run.id)  # not the server's
        got = subprocess.run([BIN, "get", "run", run.id, "-o", "json"], env=home_env(home),
                             capture_output=True, text=True)
        self.assertEqual(got.returncode, 0, got.stderr)
        self.assertEqual(json.loads(got.stdout)["state"], "Succeeded")
        # DigitalHub's local_execution is the same
        run = fn.run(params={"epochs": 1}, local_execution=True, watch=False)
        self.assertEqual(run.wait(60).status, "Succeeded")
        # the session's token is revoked when it ends
        berth.close_local()
        tokens = subprocess.run([BIN, "token", "list", "-o", "json"], env=home_env(home),
                                capture_output=True, text=True, check=True).stdout
        mine = [t for t in json.loads(tokens) if "python sdk local=True runs" in t.get("description", "")]
        self.assertTrue(mine and all(t.get("revoked") for t in mine), tokens)
        with self.assertRaises(FileNotFoundError) as cm:
            berth.local_client(binary="/nonexistent/berth")
        self.assertIn("BERTH_BIN", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
