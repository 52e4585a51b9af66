"""Projects, functions and runs of a berth server.

A Function is a run spec template registered on the server (its `function`
block and any other run-spec field: resources, volumes, ...). Its modifiers
(with_limits, gpus, apply(mount_pvc(...)), ...) change that template, which is
registered again before the next run. func.run(**fields) sends a run spec
that names the function: the server merges the function layer, the run's
fields and the policy, and reports each value's origin (Run.explain()).
"""

import difflib
import io
import time

from . import _code
from ._http import Transport, env_token, env_url
from .errors import ConflictError, ForbiddenError, InvalidSpecError, Source, call_text, path_steps

# every field of a run spec (runspec.md section 1) that func.run() takes
RUN_FIELDS = (
    "project", "name", "action", "schedule", "profile", "resources", "volumes",
    "node_selector", "affinity", "tolerations", "secrets", "envs", "fs_group", "run_as_user",
    "run_as_group", "priority_class", "preemption_mode", "replicas", "min_replicas",
    "max_replicas", "service", "labels", "args", "inputs", "timeout", "retries", "distributed",
)
FUNCTION_FIELDS = ("image", "command", "args", "image_pull_policy")
FINAL = ("Succeeded", "Failed", "Stopped")


def _check_fields(what, given, known):
    """An unknown keyword is an error that names it (never silently dropped)."""
    for k in given:
        if k not in known:
            close = difflib.get_close_matches(k, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{what}() got an unexpected keyword argument {k!r}{hint}; "
                            f"it takes: {', '.join(known)}")


def _call(_name, *args, **kwargs):
    """"with_limits(mem='32Gb')": a call as the user wrote it, keywords not None."""
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
    return f"{_name}({', '.join(parts)})"


def _plain(v):
    """A value as JSON can carry it; a placeholder `...` is refused by name."""
    if v is Ellipsis:
        raise TypeError("a value is `...` (a placeholder of the documentation): give the real value")
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


class Client:
    """A connection to a berth server: berth.connect(url, token)."""

    def __init__(self, url=None, token=None, timeout=60):
        self._t = Transport(url or env_url(), token if token is not None else env_token(), timeout)

    @property
    def url(self):
        return self._t.url

    def close(self):
        self._t.close()

    def whoami(self):
        return self._t.request("GET", Transport.path("api", "v1", "whoami"))

    def projects(self):
        """The names of the projects the token sees."""
        return [p["name"] for p in self._t.request("GET", Transport.path("api", "v1", "projects"))["items"]]

    def project(self, name="default"):
        """A project (projects are made by their first run or function)."""
        return Project(self, name)

    def create_project(self, name):
        self._t.request("POST", Transport.path("api", "v1", "projects"), {"name": name})
        return Project(self, name)

    def get_or_create_project(self, name):
        """The project; created first when the token may and it does not exist yet."""
        if name not in self.projects():
            try:
                self.create_project(name)
            except (ForbiddenError, ConflictError):
                pass  # only a '*' admin creates projects; else its first run or function does
        return Project(self, name)

    def get_profiles(self):
        """The platform's hardware profiles: each with what it sets."""
        return self._t.request("GET", Transport.path("api", "v1", "profiles"))["profiles"]

    def get_run(self, run_id):
        return Run(self, self._t.request("GET", Transport.path("api", "v1", "runs", run_id)))

    def list_runs(self, project=None, state=None, limit=None):
        return _list_runs(self, Transport.path("api", "v1", "runs"), project=project, state=state,
                          limit=limit)


def _list_runs(client, path, limit=None, **query):
    """Every page of a run list, newest first (at most limit runs)."""
    runs, after = [], None
    while True:
        page = client._t.request("GET", path + Transport.query(after=after, limit=limit, **query))
        runs += [Run(client, r) for r in page["items"]]
        after = page.get("next")
        if not after or (limit and len(runs) >= limit):
            return runs[:limit] if limit else runs


class Verdict:
    """What Project.validate says of a spec: valid (bool), problems (Problems: the
    errors when refused, else the warnings) and runs (each document's effective spec,
    when valid). True when valid."""

    def __init__(self, valid, problems, runs):
        self.valid = valid
        self.problems = list(problems)
        self.runs = runs

    def __bool__(self):
        return self.valid

    @property
    def errors(self):
        return [p for p in self.problems if p.severity != "warning"]

    @property
    def warnings(self):
        return [p for p in self.problems if p.severity == "warning"]

    def __repr__(self):
        return "Verdict(%s, %r)" % ("valid" if self.valid else "refused", self.problems)

    def __str__(self):
        return "\n".join(["valid" if self.valid else "refused"] + ["  " + p.text for p in self.problems])


class Project:
    """A project: its functions, runs and secrets."""

    def __init__(self, client, name):
        self.client = client
        self.name = name

    def __repr__(self):
        return f"Project({self.name!r})"

    def _path(self, *rest, **query):
        return Transport.path("api", "v1", "projects", self.name, *rest, **query)

    def new_function(self, name, image=None, command=None, args=None, **fields):
        """Registers a function: image, command, args, and any run-spec field as the
        function's defaults (resources=..., volumes=...)."""
        _check_fields("new_function", fields, RUN_FIELDS + ("image_pull_policy",))
        fn = Function(self, name, {})
        for k, v in (("image", image), ("command", command), ("args", args),
                     ("image_pull_policy", fields.pop("image_pull_policy", None))):
            if v is not None:
                fn._function[k] = _plain([v] if k == "command" and isinstance(v, str) else v)
        for k, v in fields.items():
            fn._fields[k] = _plain(v)
            fn._set_by[k] = ("new_function", {k: v})
        for k in ("image", "command", "args", "image_pull_policy"):
            if k in fn._function:
                fn._set_by["function." + k] = _call("new_function", **{k: fn._function[k]})
        fn.save()
        return fn

    def code_to_function(self, filename, name=None, handler=None, kind="job", image=None,
                         **fields):
        """A function that runs a Python file of this machine (MLRun's code_to_function):
        the file is read now and carried in the function, and each run calls
        handler(**params) (the run's params= or inputs=), or runs the file as __main__
        when there is no handler. kind "job" (or "") is one process, or spec.replicas
        workers of one run; "mpijob" the same with the workers started as MPI ranks.
        image is what a cluster runs it in (the local backend runs python3 of the host).
        Any run-spec field (resources=, envs=, ...) is a default of the function. It is
        registered by its first run(), or by save()."""
        _check_fields("code_to_function", fields, RUN_FIELDS)
        if fields.get("project") not in (None, self.name):
            raise ValueError(f"code_to_function: project={fields['project']!r}, on project "
                             f"{self.name!r}: call it on that project, or berth.code_to_function")
        fields.pop("project", None)
        kind = _code.kind_of(kind)
        if fields.get("action") not in (None, "job"):
            raise ValueError(f"code_to_function makes a job, not action={fields['action']!r}: "
                             f"register a server with project.new_function(..., "
                             f"action={fields['action']!r})")
        path = _code.find_file(filename)
        source = _code.read_code(path, handler)
        fn = Function(self, name or _code.default_name(path), {})
        fn._function["command"] = ["python3", "-c", _code.BOOTSTRAP]
        if image is not None:
            fn._function["image"] = image
        for k, v in fields.items():
            if v is not None:
                fn._fields[k] = _plain(v)
        envs = fn._fields.get("envs") or []
        if isinstance(envs, dict):
            envs = [{"name": k, "value": str(v)} for k, v in envs.items()]
        clash = [e.get("name") for e in envs
                 if isinstance(e, dict) and _code.is_code_env(str(e.get("name")))]
        if clash:
            raise ValueError(f"code_to_function: envs {', '.join(clash)} are the names that carry "
                             f"the code: name them otherwise")
        fn._fields["envs"] = envs + _code.code_envs(path, source, handler)
        fn._fields["action"] = "job"
        if not isinstance(fn._fields.get("distributed", {}), dict):
            raise TypeError(f"code_to_function: distributed is a dict (launcher, procs_per_worker, "
                            f"port), not {fn._fields['distributed']!r}")
        if kind == "mpijob":
            dist = dict(fn._fields.get("distributed") or {})
            if dist.get("launcher") not in (None, "mpi"):
                raise ValueError(f"code_to_function: kind='mpijob' starts its workers with MPI, "
                                 f"not distributed.launcher={dist['launcher']!r}: for another "
                                 f"launcher, use kind='job' with distributed={{'launcher': 'env'}} "
                                 f"(or 'jax')")
            dist["launcher"] = "mpi"
            fn._fields["distributed"] = dist
        launcher = (fn._fields.get("distributed") or {}).get("launcher")
        if launcher == "torchrun":
            raise ValueError("code_to_function: its handler runs as one process in each worker, "
                             "and torchrun starts processes of a script: use distributed="
                             "{'launcher': 'env'} (torch.distributed's env:// reads WORLD_SIZE, "
                             "RANK, MASTER_ADDR), or new_function(command=['torchrun', "
                             "'training.py'], ...) with the script in the image")
        fn._dirty = True
        return fn

    def get_function(self, name):
        d = self.client._t.request("GET", self._path("functions", name))
        fields = dict(d.get("fields") or {})
        return Function(self, name, fields)

    def list_functions(self):
        return [f["name"] for f in self.client._t.request("GET", self._path("functions"))["items"]]

    def delete_function(self, name):
        self.client._t.request("DELETE", self._path("functions", name))

    def _send(self, route, spec, file, call, source=None):
        """POSTs a spec (a dict, or YAML/JSON text) to runs or validate, with what the
        server's problems are named by: the text's own lines, or the dict's keys (or
        source, a func.run's keywords)."""
        text = isinstance(spec, str)
        name = file or "spec.yaml"
        body = spec if text else _plain(spec)
        if source is not None:
            source.file = name
        elif text:
            source = Source(name, text=True)
        else:
            source = Source(name, call=call, fields=body)
        return self.client._t.request("POST", self._path(route, file=name), body,
                                      content_type="application/yaml" if text
                                      else "application/json", source=source)

    def run(self, spec, file=None, _source=None):
        """Submits a run spec given as a dict, or as YAML/JSON text; returns the Run
        (a list of Runs for several documents). file names the text in problems."""
        d = self._send("runs", spec, file, "project.run", _source)
        if "items" in d:
            return [Run(self.client, r) for r in d["items"]]
        return Run(self.client, d)

    def validate(self, spec, file=None):
        """Checks a run spec (a dict, or YAML/JSON text) as a run of it would be, and
        creates nothing (the server's validate route: berth validate). Returns a
        Verdict: valid, problems (errors and warnings, each in the user's words, as
        InvalidSpecError's) and runs (each document's effective spec)."""
        try:
            d = self._send("validate", spec, file, "project.validate")
        except InvalidSpecError as e:
            return Verdict(False, e.problems, [])
        return Verdict(True, d.get("_problems", []), d.get("runs") or [])

    def explain(self, spec, file=None):
        """The effective spec of each document of a run spec, with each value's origin
        (berth explain -o json); raises InvalidSpecError when it is refused."""
        d = self._send("validate", spec, file, "project.explain")
        runs = d.get("runs") or []
        return runs[0] if len(runs) == 1 else runs

    def list_runs(self, state=None, limit=None):
        """The project's runs, newest first."""
        return _list_runs(self.client, self._path("runs"), state=state, limit=limit)

    def set_secret(self, name, value):
        """Stores a secret (an admin's token); its value is never shown again."""
        self.client._t.request("PUT", self._path("secrets", name), {"value": value})

    def list_secrets(self):
        return [s["name"] for s in self.client._t.request("GET", self._path("secrets"))["items"]]

    def delete_secret(self, name):
        self.client._t.request("DELETE", self._path("secrets", name))


class FunctionSpec:
    """func.spec: replicas, min_replicas and max_replicas as attributes (MLRun's
    spelling); each assignment goes into the function's template."""

    _ATTRS = ("replicas", "min_replicas", "max_replicas")

    def __init__(self, fn):
        object.__setattr__(self, "_fn", fn)

    def __getattr__(self, name):
        if name in FunctionSpec._ATTRS:
            return self._fn._fields.get(name)
        raise AttributeError(f"spec has no attribute {name!r}; it has {', '.join(self._ATTRS)}")

    def __setattr__(self, name, value):
        if name not in FunctionSpec._ATTRS:
            raise AttributeError(f"spec has no attribute {name!r}; it has {', '.join(self._ATTRS)}")
        if value is None:
            self._fn._fields.pop(name, None)
        else:
            self._fn._fields[name] = value
            self._fn._mark(name, f"spec.{name} = {value!r}")
        self._fn._dirty = True


class Function:
    """A registered function: a run spec template, and its modifiers."""

    def __init__(self, project, name, fields):
        self.project = project
        self.name = name
        self._fields = {k: v for k, v in fields.items() if k != "function"}
        fn = fields.get("function")
        self._function = dict(fn) if isinstance(fn, dict) else {}
        self._function["name"] = name
        self._dirty = False
        # field path -> what set it in this session: a modifier's call text
        # ("with_limits(mem='32Gb')") or ("new_function", {keyword: value}), to name it
        # in the server's problems of that field
        self._set_by = {}
        self.spec = FunctionSpec(self)

    def _mark(self, path, by):
        """Records that by (a modifier's call) set the field at path, and what it set
        below it (a value set again is set by the last one)."""
        for k in [k for k in self._set_by if k == path or k.startswith(path + ".")
                  or k.startswith(path + "[")]:
            del self._set_by[k]
        self._set_by[path] = by

    def _set_by_of(self, path):
        """The modifier that set the field at path (or the nearest field above it, or
        one below it, or a sibling of a resource: a request derived from a limit);
        None when none of this session did."""
        steps = path_steps(path)
        keys = {tuple(path_steps(k)): k for k in self._set_by}
        found = None
        for n in range(len(steps), 0, -1):
            if tuple(steps[:n]) in keys:
                found = keys[tuple(steps[:n])]
                break
        if found is None:
            below = [k for t, k in keys.items() if t[:len(steps)] == tuple(steps)]
            if not below and len(steps) >= 3 and steps[0] == "resources":
                below = [k for t, k in keys.items() if t[:2] == tuple(steps[:2])]
            found = below[-1] if below else None
        if found is None:
            return None
        by = self._set_by[found]
        return call_text(by[0], by[1], path) if isinstance(by, tuple) else by

    def __repr__(self):
        return f"Function({self.project.name!r}, {self.name!r})"

    @property
    def image(self):
        return self._function.get("image")

    @property
    def kind(self):
        """MLRun's kind: mpijob (a job whose workers are MPI ranks), else the action."""
        dist = self._fields.get("distributed")
        if isinstance(dist, dict) and dist.get("launcher") == "mpi":
            return "mpijob"
        return self._fields.get("action") or "job"

    @property
    def command(self):
        return self._function.get("command")

    @property
    def args(self):
        return self._function.get("args")

    def to_dict(self):
        """The spec that is registered."""
        return dict(self._fields, function=dict(self._function))

    def save(self):
        """Registers the function (again): what run() does when it was changed."""
        self.project.client._t.request("POST", self.project._path("functions", file="function.yaml"),
                                       self.to_dict(), source=Source("function.yaml", function=self))
        self._dirty = False
        return self

    deploy = save

    # ---- modifiers (MLRun's names) -------------------------------------------------------

    def _resource(self, name, kind, value, by=None):
        if by:
            self._mark(f"resources.{name}.{kind}", by)
        res = self._fields.setdefault("resources", {})
        cur = res.get(name)
        if not isinstance(cur, dict):
            cur = {} if cur is None else {"requests": cur}
        cur[kind] = str(value)
        res[name] = cur
        self._dirty = True

    def with_limits(self, mem=None, cpu=None, gpus=None, gpu_type=None):
        """Limits: memory, CPU, and GPUs (always limits) of an optional type."""
        if mem is not None:
            self._resource("mem", "limits", mem, _call("with_limits", mem=mem))
        if cpu is not None:
            self._resource("cpu", "limits", cpu, _call("with_limits", cpu=cpu))
        if gpus is not None:
            self.gpus(gpus, gpu_type, _by=_call("with_limits", gpus=gpus, gpu_type=gpu_type))
        elif gpu_type is not None:
            self._fields.setdefault("resources", {})["gpu_type"] = gpu_type
            self._mark("resources.gpu_type", _call("with_limits", gpu_type=gpu_type))
        self._dirty = True
        return self

    def with_requests(self, mem=None, cpu=None):
        """Requests: memory and CPU."""
        if mem is not None:
            self._resource("mem", "requests", mem, _call("with_requests", mem=mem))
        if cpu is not None:
            self._resource("cpu", "requests", cpu, _call("with_requests", cpu=cpu))
        return self

    def gpus(self, gpus, gpu_type=None, _by=None):
        """GPUs (a limit, which Kubernetes makes the request too); gpu_type an extended
        resource name (default: the platform's, e.g. nvidia.com/gpu)."""
        by = _by or _call("gpus", gpus, gpu_type=gpu_type)
        res = self._fields.setdefault("resources", {})
        res["gpu"] = str(gpus)
        self._mark("resources.gpu", by)
        if gpu_type is not None:
            res["gpu_type"] = gpu_type
            self._mark("resources.gpu_type", by)
        self._dirty = True
        return self

    def with_node_selection(self, node_name=None, node_selector=None, affinity=None,
                            tolerations=None):
        """Where the pods may go: node_selector (a map), affinity, tolerations."""
        if node_name is not None:
            raise TypeError("node_name is not supported: use node_selector "
                            "{'kubernetes.io/hostname': NAME}")
        for k, v in (("node_selector", node_selector), ("affinity", affinity),
                     ("tolerations", tolerations)):
            if v is not None:
                self._fields[k] = _plain(v)
                self._mark(k, _call("with_node_selection", **{k: v}))
        self._dirty = True
        return self

    def with_preemption_mode(self, mode):
        """allow | constrain | prevent | none (spot and preemptible nodes)."""
        self._fields["preemption_mode"] = getattr(mode, "value", mode)
        self._mark("preemption_mode", _call("with_preemption_mode", mode=self._fields["preemption_mode"]))
        self._dirty = True
        return self

    def with_priority_class(self, name=None):
        """A priority class of the platform's list."""
        if name is None:
            self._fields.pop("priority_class", None)
        else:
            self._fields["priority_class"] = name
            self._mark("priority_class", _call("with_priority_class", name=name))
        self._dirty = True
        return self

    def set_env(self, name, value):
        envs = [e for e in self._fields.get("envs", []) if e.get("name") != name]
        self._fields["envs"] = envs + [{"name": name, "value": str(value)}]
        self._mark(f"envs[{len(envs)}]", _call("set_env", name, value))
        self._dirty = True
        return self

    def apply(self, modifier):
        """Applies a modifier: mount_pvc(...), mount_configmap(...), mount_secret(...)."""
        self._applying = getattr(modifier, "_call", None)
        try:
            modifier(self)
        finally:
            self._applying = None
        self._dirty = True
        return self

    def _add_volume(self, volume):
        vols = [v for v in self._fields.get("volumes", []) if v.get("name") != volume["name"]]
        self._fields["volumes"] = vols + [volume]
        by = getattr(self, "_applying", None)
        if by:
            self._mark(f"volumes[{len(vols)}]", f"apply({by})")
        self._dirty = True

    # ---- run ---------------------------------------------------------------------------------

    def run(self, action=None, wait=False, wait_timeout=None, params=None, **fields):
        """Runs the function: any run-spec field (resources=, volumes=, profile=, secrets=,
        envs=, fs_group=, inputs=, ...), merged over the function's. params= (MLRun's) go
        into the run's inputs: a code_to_function handler gets both as its arguments.
        wait=True waits until the run ends (wait_timeout seconds at most)."""
        _check_fields("run", fields, RUN_FIELDS)
        if params is not None:
            if not isinstance(params, dict):
                raise TypeError(f"run: params must be a dict (the handler's arguments by name), "
                                f"not {type(params).__name__}")
            inputs = fields.get("inputs") or {}
            both = sorted(set(params) & set(inputs))
            if both:
                raise ValueError(f"run: {', '.join(map(repr, both))} is both in params and in "
                                 f"inputs: give each argument once")
            fields["inputs"] = {**inputs, **params}
        if self._dirty:
            self.save()
        spec = {"function": self.name}
        if action is not None:
            spec["action"] = action
        for k, v in fields.items():
            if v is not None:
                spec[k] = _plain(v)
        spec.setdefault("project", self.project.name)
        shown = {k: v for k, v in dict(fields, action=action).items() if v is not None}
        run = self.project.run(spec, _source=Source(None, call="func.run", fields=shown, function=self))
        if wait:
            for r in run if isinstance(run, list) else [run]:
                r.wait(wait_timeout)
        return run


# ---- volume modifiers (MLRun's names) -------------------------------------------------------

def _mount(volume, call):
    """A modifier that adds one volume to a function (func.apply(...)); call is how the
    user wrote it, to name it in a problem of that volume."""
    def modify(fn):
        fn._add_volume(volume)
    modify._call = call
    return modify


def mount_pvc(pvc_name=None, volume_name="pipeline", volume_mount_path="/mnt/pipeline"):
    """Mounts an existing PVC (a shared_volume) into the function's pods."""
    if not pvc_name:
        raise ValueError("mount_pvc: pvc_name is required")
    return _mount({"volume_type": "shared_volume", "name": volume_name,
                   "mount_path": volume_mount_path, "spec": {"claim_name": pvc_name}},
                  _call("mount_pvc", pvc_name=pvc_name, volume_name=volume_name,
                        volume_mount_path=volume_mount_path))


def mount_configmap(configmap_name, mount_path, volume_name="configmap", items=None):
    """Mounts a ConfigMap as files."""
    if items is not None:
        raise TypeError("mount_configmap: items are not supported; the whole ConfigMap is mounted")
    return _mount({"volume_type": "config_map", "name": volume_name, "mount_path": mount_path,
                   "spec": {"name": configmap_name}},
                  _call("mount_configmap", configmap_name, mount_path, volume_name=volume_name))


def mount_secret(secret_name, mount_path, volume_name="secret", items=None):
    """Mounts a secret of the platform (berth secrets set) as a file."""
    if items is not None:
        raise TypeError("mount_secret: items are not supported; the secret is one file")
    return _mount({"volume_type": "secret", "name": volume_name, "mount_path": mount_path,
                   "spec": {"name": secret_name}},
                  _call("mount_secret", secret_name, mount_path, volume_name=volume_name))


# ---- runs ------------------------------------------------------------------------------------

class Run:
    """A run: its record as the server reports it."""

    def __init__(self, client, info):
        self.client = client
        self.info = info

    def __repr__(self):
        return f"Run({self.id!r}, {self.status!r})"

    def __getattr__(self, name):
        info = self.__dict__.get("info") or {}
        if name in info:
            return info[name]
        raise AttributeError(name)

    @property
    def id(self):
        return self.info["id"]

    @property
    def status(self):
        """Pending, Running, Succeeded, Failed or Stopped (as last read: see refresh)."""
        return self.info.get("state")

    state = status

    @property
    def reason(self):
        return self.info.get("reason")

    def _path(self, *rest, **query):
        return Transport.path("api", "v1", "runs", self.id, *rest, **query)

    def refresh(self):
        self.info = self.client._t.request("GET", self._path())
        return self

    def done(self):
        return self.status in FINAL

    def wait(self, timeout=None, interval=0.02):
        """Waits until the run ends; raises TimeoutError after timeout seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.refresh().done():
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"run {self.id} is {self.status} after {timeout} s")
            time.sleep(interval)
            interval = min(interval * 1.5, 2.0)
        return self

    @property
    def workers(self):
        """The run's workers: replicas of a distributed job, else 1."""
        workers = self.info.get("workers")
        return 1 if workers is None else workers

    @property
    def worker_states(self):
        """The state of each worker of a distributed run, by rank, as the server reports
        them; None when it reports none."""
        return self.info.get("worker_states")

    def logs(self, rank=None, follow=False, out=None):
        """The run's log as text (every worker's for a distributed run); rank=N the log of
        worker N only. With follow, streamed (to out, default none) until the run ends,
        and returned whole."""
        if rank is not None:
            if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
                raise ValueError(f"logs: rank must be a worker's index, an int >= 0; "
                                 f"got {rank!r}")
            workers = self.info.get("workers")
            if isinstance(workers, int) and rank >= workers:
                raise ValueError(f"logs: run {self.id} has {workers} worker"
                                 f"{'s' if workers != 1 else ''}: rank is 0 to {workers - 1}, "
                                 f"not {rank}")
        if not follow:
            return self.client._t.request("GET", self._path("logs", rank=rank), raw=True) or ""
        buf = io.StringIO()

        def write(s):
            buf.write(s)
            if out is not None:
                out.write(s)
                out.flush()
        self.client._t.stream(self._path("logs", follow=True, rank=rank), write)
        return buf.getvalue()

    def stop(self, grace=None, wait=False):
        self.info = self.client._t.request("POST", self._path("stop", grace=grace, wait=wait))
        return self

    def delete(self):
        self.client._t.request("DELETE", self._path())

    def explain(self):
        """The effective spec with each value's origin (berth explain -o json)."""
        return self.client._t.request("GET", self._path("spec"))

    def origins(self):
        """{path: (value, origin)} of the effective spec: where each value came from
        ("run spec", "function", "profile", "policy default", "policy rule", ...)."""
        return {f["path"]: (f.get("value"), f.get("origin")) for f in self.explain()["fields"]}

    def manifests(self, format="json"):
        """The Kubernetes objects of the run: a list (json), or YAML text."""
        if format == "yaml":
            return self.client._t.request("GET", self._path("manifests", format="yaml"), raw=True)
        d = self.client._t.request("GET", self._path("manifests"))
        return d.get("items", d) if isinstance(d, dict) else d

    def events(self):
        d = self.client._t.request("GET", self._path("events"))
        return d.get("items", d) if isinstance(d, dict) else d

