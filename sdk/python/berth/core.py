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
import os
import re
import sys
import time

from . import _code
from ._http import Transport, env_token, env_url
from .errors import (BerthError, ConflictError, ForbiddenError, InvalidSpecError, NotSupportedError, RunError,
                     Source, call_text, path_steps)

# every field of a run spec (runspec.md section 1) that func.run() takes
RUN_FIELDS = (
    "project", "name", "action", "schedule", "profile", "resources", "volumes", "volume_mode",
    "node_selector", "affinity", "tolerations", "secrets", "envs", "fs_group", "run_as_user",
    "run_as_group", "priority_class", "preemption_mode", "replicas", "min_replicas",
    "max_replicas", "service", "labels", "args", "inputs", "timeout", "retries", "distributed",
)
FUNCTION_FIELDS = ("image", "command", "args", "image_pull_policy")
FINAL = ("Succeeded", "Failed", "Stopped")


# keywords of MLRun's and DigitalHub's run() that berth has no counterpart for: what to
# do instead (an unknown keyword is never silently dropped)
FOREIGN_KEYWORDS = {
    "hyperparams": "berth runs one run per call: call run() for each set of values",
    "hyper_param_options": "berth runs one run per call: call run() for each set of values",
    "out_path": "berth keeps no artifacts: write them to a volume (volumes=[...])",
    "artifact_path": "berth keeps no artifacts: write them to a volume (volumes=[...])",
    "workdir": "the code runs in its image's working directory (or a volume's mount_path)",
    "returns": "berth records no results: the handler's return value is printed to the log",
    "notifications": "berth sends no notifications: wait for the run (wait=True) or poll it",
    "auto_build": "berth builds no image: give image= one that has what the code needs",
    "runspec": "give the run's fields as keywords (params=, inputs=, resources=, ...)",
}


def _check_fields(what, given, known):
    """An unknown keyword is an error that names it (never silently dropped)."""
    for k in given:
        if k in FOREIGN_KEYWORDS:
            raise TypeError(f"{what}() takes no {k!r}: {FOREIGN_KEYWORDS[k]}")
        if k not in known:
            close = difflib.get_close_matches(k, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{what}() got an unexpected keyword argument {k!r}{hint}; "
                            f"it takes: {', '.join(known)}")


def _not_building(what, requirements=None, requirements_file=None, tag=None, with_repo=None):
    """MLRun's and DigitalHub's image builds, versions and repositories: berth has none."""
    if requirements or requirements_file:
        raise NotSupportedError(f"{what}(requirements=...)",
                                "berth builds no image: give image= one that has the packages "
                                "(the local backend runs the host's python3: install them there)")
    if tag not in (None, "", "latest"):
        raise NotSupportedError(f"{what}(tag={tag!r})",
                                "berth keeps one version of a function per name: registering it "
                                "again replaces it; give another name to keep both")
    if with_repo:
        raise NotSupportedError(f"{what}(with_repo=True)",
                                "berth carries one file of this machine (code_to_function): put "
                                "the rest of the repository in the image or a volume")


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


def _python_image(version):
    """DigitalHub's python_version ("PYTHON3_10") as the image it names (python:3.10)."""
    m = re.fullmatch(r"PYTHON(\d)_(\d+)", str(version).upper())
    if not m:
        raise ValueError(f"new_function: python_version {version!r} is not one of DigitalHub's "
                         f"(PYTHON3_9, PYTHON3_10, PYTHON3_11, ...)")
    return f"python:{m.group(1)}.{m.group(2)}"


def _code_src(code_src):
    """DigitalHub's code_src: berth reads a Python file of this machine."""
    if not isinstance(code_src, (str, os.PathLike)) or not os.fspath(code_src):
        raise TypeError(f"new_function(kind='python') needs code_src=, the path of a Python "
                        f"file of this machine, not {code_src!r}")
    src = os.fspath(code_src)
    if "://" in src or src.startswith(("git+", "zip+")):
        raise NotSupportedError(f"new_function(code_src={src!r})",
                                "berth reads a Python file of this machine: fetch it first, or "
                                "put the code in the image (kind='container')")
    return src


def _handler_of(code_src, handler):
    """DigitalHub's handler ("func", or "module:func" of code_src's own module)."""
    if not isinstance(handler, str) or ":" not in handler:
        return handler
    module, func = handler.rsplit(":", 1)
    stem = os.path.splitext(os.path.basename(os.fspath(code_src)))[0]
    if module.replace("/", ".").split(".")[-1] != stem:
        raise ValueError(f"new_function: handler {handler!r} is in module {module!r}, and berth "
                         f"carries one file, {os.fspath(code_src)!r}: give the handler of that file")
    return func


def _import(client, url, what, project=None):
    """MLRun's function URLs: "db://PROJECT/NAME[:TAG]" is a function registered on the
    server; "hub://" (MLRun's function hub) has no counterpart."""
    if url.startswith("hub://"):
        raise NotSupportedError(f"{what}({url!r})",
                                "berth has no function hub: copy the function's code here and "
                                "use code_to_function('file.py', handler=...), or register it "
                                "with new_function")
    if url.startswith("db://"):
        rest = url[len("db://"):]
        proj, _, name = rest.rpartition("/")
        name, _, tag = name.partition(":")
        if tag not in ("", "latest"):
            raise NotSupportedError(f"{what}({url!r})", "berth keeps one version of a function "
                                    "per name: db://PROJECT/NAME")
        fn = client.project(proj or project or "default").get_function(name)
        fn._wait_default = True  # MLRun's run() waits (watch=True)
        return fn
    raise ValueError(f"{what}: {url!r} is not a function berth can import: 'db://PROJECT/NAME' is "
                     f"one registered on the server; a file is code_to_function's")


class Client:
    """A connection to a berth server: berth.connect(url, token). An https:// server's
    certificate is checked with the system's CAs, or with those of the file cacert
    (default $BERTH_CACERT); insecure_skip_tls_verify=True checks nothing."""

    def __init__(self, url=None, token=None, timeout=60, cacert=None, insecure_skip_tls_verify=False):
        self._t = Transport(url or env_url(), token if token is not None else env_token(), timeout,
                            cacert=cacert, insecure_skip_tls_verify=insecure_skip_tls_verify)

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

    def create_token(self, role, projects, description=None, expires_in=None, expires=None):
        """A new token (this client's must be an admin of its projects; an admin or "*"
        token needs an admin of every project): {"id", "token", "role", "projects",
        "description", "expires"}. The token is in this answer only. expires_in: "30d",
        "12h"; expires: an RFC 3339 time; neither: it never expires."""
        if isinstance(projects, str):
            projects = [projects]
        body = {"role": role, "projects": list(projects)}
        for k, v in (("description", description), ("expires_in", expires_in), ("expires", expires)):
            if v is not None:
                body[k] = v
        return self._t.request("POST", Transport.path("api", "v1", "tokens"), body)

    def list_tokens(self):
        """The tokens this admin sees (never the tokens themselves): each with its id, role,
        projects, description, created, and expires, revoked, last_used when there are."""
        return self._t.request("GET", Transport.path("api", "v1", "tokens"))["items"]

    def revoke_token(self, token_id):
        """Revokes a token of this admin's projects: refused from now on ("token ID revoked
        at ...")."""
        self._t.request("DELETE", Transport.path("api", "v1", "tokens", token_id))

    def get_profiles(self, project=None):
        """The platform's hardware profiles: each with what it sets. With project, those
        its runs may use: the policy's overlay for it (projects.NAME.profiles) with the
        rest; without, the token's project's when it has one project."""
        return self._t.request("GET", Transport.path("api", "v1", "profiles",
                                                     project=project))["profiles"]

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

    def get_profiles(self):
        """The hardware profiles this project's runs may use (its overlay of the policy,
        projects.NAME, with the rest): another project's own are not among them."""
        return self.client.get_profiles(project=self.name)

    def new_function(self, name, image=None, command=None, args=None, kind=None, code_src=None,
                     handler=None, python_version=None, requirements=None, **fields):
        """Registers a function: image, command, args, and any run-spec field as the
        function's defaults (resources=..., volumes=...).

        DigitalHub's shapes too: kind="container" is this (image, command, args);
        kind="python" with code_src (a Python file of this machine) and handler is
        code_to_function's (python_version="PYTHON3_10" is the image python:3.10 when
        image= is not given). kind="job" is the default; "mpijob" starts the workers of
        a distributed job (spec.replicas) as MPI ranks."""
        _not_building("new_function", requirements=requirements)
        if code_src is not None and kind in (None, ""):
            kind = "python"
        if kind == "python":
            _check_fields("new_function", fields, RUN_FIELDS)
            if image is None and python_version:
                image = _python_image(python_version)
            if command is not None or args is not None:
                raise TypeError("new_function(kind='python') runs code_src's handler: it takes "
                                "no command= or args= (kind='container' does)")
            fn = self.code_to_function(_code_src(code_src), name=name,
                                       handler=_handler_of(code_src, handler), image=image,
                                       **fields)
            fn._wait_default = False  # DigitalHub's run() returns at once (wait=False)
            return fn.save()
        if kind not in (None, "", "job", "container", "mpijob"):
            raise ValueError(f"new_function: kind {kind!r} is not one berth has: 'job' or "
                             f"'container' (image, command, args), 'python' (code_src, handler), "
                             f"'mpijob' (MPI workers); a model server is action='serve'")
        if handler is not None or python_version is not None:
            raise TypeError(f"new_function(kind={kind!r}) runs a command: handler= and "
                            f"python_version= go with kind='python' and code_src=")
        _check_fields("new_function", fields, RUN_FIELDS + ("image_pull_policy",))
        fn = Function(self, name, {})
        for k, v in (("image", image), ("command", command), ("args", args),
                     ("image_pull_policy", fields.pop("image_pull_policy", None))):
            if v is not None:
                fn._function[k] = _plain([v] if k == "command" and isinstance(v, str) else v)
        if kind == "mpijob":
            fields["distributed"] = dict(fields.get("distributed") or {}, launcher="mpi")
        for k, v in fields.items():
            fn._fields[k] = _plain(v)
            fn._set_by[k] = ("new_function", {k: v})
        for k in ("image", "command", "args", "image_pull_policy"):
            if k in fn._function:
                fn._set_by["function." + k] = _call("new_function", **{k: fn._function[k]})
        fn.save()
        return fn

    def code_to_function(self, filename, name=None, handler=None, kind="job", image=None, *,
                         tag=None, description=None, categories=None, with_doc=True,
                         embed_code=True, code_output=None, requirements=None,
                         requirements_file=None, ignored_files=None, **fields):
        """A function that runs a Python file of this machine (MLRun's code_to_function):
        the file is read now and carried in the function, and each run calls
        handler(**params) (the run's params= or inputs=), or runs the file as __main__
        when there is no handler. kind "job" (or "") is one process, or spec.replicas
        workers of one run; "mpijob" the same with the workers started as MPI ranks.
        image is what a cluster runs it in (the local backend runs python3 of the host).
        Any run-spec field (resources=, envs=, labels=, ...) is a default of the function.
        It is registered by its first run(), or by save(); its run() waits for the run
        and shows its log, as MLRun's does (watch=False returns at once).

        MLRun's other keywords: description is kept on this object (fn.description; the
        server has no description of a function), categories and with_doc shape MLRun's
        hub and docs only; tag, requirements, requirements_file, code_output,
        embed_code=False and ignored_files are NotSupportedError (berth keeps one version
        per name and builds no image)."""
        _check_fields("code_to_function", fields, RUN_FIELDS)
        _not_building("code_to_function", requirements, requirements_file, tag)
        if not embed_code or code_output or ignored_files:
            raise NotSupportedError(
                "code_to_function(embed_code=False, code_output=..., ignored_files=...)",
                "berth carries the file's code in the function; with the code in the image, "
                "use new_function(name, image=..., command=['python', 'file.py'])")
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
        fn.description = description
        fn._wait_default = True  # MLRun's run() waits (watch=True)
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

    def set_function(self, func=None, name="", kind="", image=None, handler=None, with_repo=None,
                     tag=None, requirements=None, requirements_file=""):
        """MLRun's project.set_function: func is a Python file of this machine (as
        code_to_function), a Function (registered here, as name when given), or
        "db://PROJECT/NAME" (import_function). The function is registered now; returns it.
        "hub://..." (MLRun's function hub), notebooks and MLRun's YAML are
        NotSupportedError."""
        _not_building("set_function", requirements, requirements_file, tag, with_repo)
        if isinstance(func, Function):
            fn = func
            if (name and name != fn.name) or fn.project.name != self.name or \
                    fn.project.client is not self.client:
                fn = Function(self, name or func.name, func.to_dict())
                fn._set_by, fn._wait_default = dict(func._set_by), func._wait_default
            return fn.save()
        if not isinstance(func, (str, os.PathLike)) or not os.fspath(func):
            raise TypeError(f"set_function: func is a Python file, a Function or "
                            f"'db://PROJECT/NAME', not {func!r}")
        where = os.fspath(func)
        if "://" in where:
            fn = _import(self.client, where, "set_function", project=self.name)
            return self.set_function(fn, name=name or fn.name) if name or \
                fn.project.name != self.name else fn
        if where.endswith((".ipynb", ".yaml", ".yml")):
            raise NotSupportedError(f"set_function({where!r})",
                                    "berth runs a Python file (code_to_function) or a command "
                                    "in an image (new_function): export a notebook with "
                                    "`jupyter nbconvert --to script`")
        fn = self.code_to_function(where, name=name or None, handler=handler or None,
                                   kind=kind or "job", image=image)
        return fn.save()

    def run_function(self, function, handler=None, name=None, params=None, inputs=None,
                     watch=None, local=None, **fields):
        """MLRun's project.run_function: runs a function of the project (its name, or a
        Function) as fn.run(...) does; by name, it waits as MLRun's does (watch=True)."""
        fn = function
        if isinstance(function, str):
            fn = self.get_function(function)
            fn._wait_default = True
        elif not isinstance(function, Function):
            raise TypeError(f"run_function: function is a name or a Function, not {function!r}")
        return fn.run(handler=handler, name=name, params=params, inputs=inputs, watch=watch,
                      local=local, **fields)

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

    def validate(self, spec, file=None, _source=None):
        """Checks a run spec (a dict, or YAML/JSON text) as a run of it would be, and
        creates nothing (the server's validate route: berth validate). Returns a
        Verdict: valid, problems (errors and warnings, each in the user's words, as
        InvalidSpecError's) and runs (each document's effective spec)."""
        try:
            d = self._send("validate", spec, file, "project.validate", _source)
        except InvalidSpecError as e:
            return Verdict(False, e.problems, [])
        return Verdict(True, d.get("_problems", []), d.get("runs") or [])

    def explain(self, spec, file=None, _source=None):
        """The effective spec of each document of a run spec, with each value's origin
        (berth explain -o json); raises InvalidSpecError when it is refused."""
        d = self._send("validate", spec, file, "project.explain", _source)
        runs = d.get("runs") or []
        return runs[0] if len(runs) == 1 else runs

    def list_runs(self, state=None, limit=None):
        """The project's runs, newest first."""
        return _list_runs(self.client, self._path("runs"), state=state, limit=limit)

    def watch(self, rv=None, timeout=30):
        """Yields ("changed", Run) and ("deleted", run_id) as the project's runs change,
        oldest change first, until the caller stops: the server's watch (it answers at
        the first change; nothing is asked while nothing changes). From version rv (a
        watch goes on where an earlier one stopped), else from now. When rv is too old
        for the server (410), the runs are listed again and each is yielded as changed."""
        path = self._path("runs")
        # a connection of its own: a watch may go on in a thread while the client is used
        t = Transport(self.client._t.url, self.client._t.token, max(self.client._t.timeout, timeout + 30))
        try:
            if rv is None:
                rv = t.request("GET", path + Transport.query(limit=1))["rv"]
            while True:
                try:
                    page = t.request("GET", path + Transport.query(watch="true", rv=rv, timeout=timeout))
                except BerthError as e:
                    if e.status != 410:
                        raise
                    page = t.request("GET", path + Transport.query(limit=1000))
                    page["deleted"] = []
                for r in page["items"]:
                    yield "changed", Run(self.client, r)
                for run_id in page.get("deleted", []):
                    yield "deleted", run_id
                rv = page["rv"]
        finally:
            t.close()

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
        # whether run() waits when neither wait= nor watch= is given: MLRun's functions
        # (code_to_function, set_function, import_function) do, as MLRun's run() does
        self._wait_default = False
        self.description = None  # code_to_function's (MLRun's), kept here only

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
        if kind == "limits" and "requests" not in cur:
            # as MLRun keeps its service's default request under with_limits: the
            # policy's default request (requests: default), not the limit
            cur["requests"] = "default"
            if by:
                self._set_by[f"resources.{name}.requests"] = by
        res[name] = cur
        self._dirty = True

    def with_limits(self, mem=None, cpu=None, gpus=None, gpu_type=None):
        """Limits: memory, CPU, and GPUs (always limits) of an optional type. A memory or
        CPU limit keeps the request the platform gives by default (requests: default,
        docs/runspec.md), as MLRun's does; with_requests sets one."""
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
        """Where the pods may go: node_selector (a map), affinity, tolerations. node_name
        is the node whose kubernetes.io/hostname label is that name (a node selector, so
        the scheduler, quotas and priorities still apply, where Kubernetes' nodeName skips
        them; the local backend's machine has the label too)."""
        if node_name is not None:
            if not isinstance(node_name, str) or not node_name:
                raise TypeError(f"with_node_selection: node_name is a node's name, not {node_name!r}")
            node_selector = dict(node_selector or {}, **{"kubernetes.io/hostname": node_name})
        by = {k: v for k, v in (("node_name", node_name), ("node_selector", node_selector),
                                 ("affinity", affinity), ("tolerations", tolerations)) if v is not None}
        for k, v in (("node_selector", node_selector), ("affinity", affinity),
                     ("tolerations", tolerations)):
            if v is not None:
                self._fields[k] = _plain(v)
                shown = {"node_name": node_name} if k == "node_selector" and node_name is not None \
                    else {k: by[k]}
                self._mark(k, _call("with_node_selection", **shown))
        self._dirty = True
        return self

    def with_volume_mode(self, mode):
        """auto | manual | none, in any case (MLRun's UI: "Auto (using auto-mount), Manual
        or None"): auto mounts the volumes the platform's policy mounts on every run
        (defaults.volumes) besides the function's; manual only the function's; none no
        volume."""
        self._fields["volume_mode"] = getattr(mode, "value", mode)
        self._mark("volume_mode", _call("with_volume_mode", mode=self._fields["volume_mode"]))
        self._dirty = True
        return self

    def with_preemption_mode(self, mode):
        """allow | constrain | prevent | none (spot and preemptible nodes), in any case
        (MLRun writes "Prevent")."""
        self._fields["preemption_mode"] = getattr(mode, "value", mode)
        self._mark("preemption_mode", _call("with_preemption_mode", mode=self._fields["preemption_mode"]))
        self._dirty = True
        return self

    def with_priority_class(self, name=None):
        """A priority class of the platform's list, in any case (MLRun's High, Medium, Low
        are the built-in policy's)."""
        if name is None:
            self._fields.pop("priority_class", None)
        else:
            self._fields["priority_class"] = name
            self._mark("priority_class", _call("with_priority_class", name=name))
        self._dirty = True
        return self

    def with_security_context(self, security_context):
        """MLRun's: the ids the container runs as. A dict, or a Kubernetes client's
        V1SecurityContext (or V1PodSecurityContext): run_as_user, run_as_group and
        fs_group (runAsUser, ... spelled either way). The rest (privileged,
        capabilities, run_as_non_root, ...) is the platform's policy (security:
        non-root, no privilege escalation, capabilities dropped): NotSupportedError."""
        sc = security_context
        if hasattr(sc, "to_dict"):
            sc = sc.to_dict()
        if not isinstance(sc, dict):
            raise TypeError(f"with_security_context: a dict or a V1SecurityContext, not {sc!r}")
        camel = {"runAsUser": "run_as_user", "runAsGroup": "run_as_group", "fsGroup": "fs_group"}
        given = {camel.get(k, k): v for k, v in sc.items() if v is not None}
        other = sorted(k for k in given if k not in ("run_as_user", "run_as_group", "fs_group"))
        if other:
            raise NotSupportedError(f"with_security_context({', '.join(other)})",
                                    "the platform's policy decides them (security: runAsNonRoot, "
                                    "no privilege escalation, capabilities dropped, seccomp): "
                                    "berth takes run_as_user, run_as_group and fs_group")
        for k, v in given.items():
            self._fields[k] = v
            self._mark(k, _call("with_security_context", {k: v}))
        self._dirty = True
        return self

    def with_annotations(self, annotations):
        """MLRun's: berth sets no annotations of the user's on pods."""
        raise NotSupportedError("with_annotations(...)",
                                "a berth run spec has no annotations: its pods carry the run's "
                                "labels (labels={...}, set_label) and what the platform's policy "
                                "sets; ask the platform's admin for what an annotation would "
                                "configure (a profile can set tolerations, node selectors, envs)")

    def set_env(self, name, value):
        envs = [e for e in self._fields.get("envs", []) if e.get("name") != name]
        self._fields["envs"] = envs + [{"name": name, "value": str(value)}]
        self._mark(f"envs[{len(envs)}]", _call("set_env", name, value))
        self._dirty = True
        return self

    def set_envs(self, env_vars=None, file_path=None):
        """MLRun's: each NAME: value of env_vars, and each NAME=value line of file_path
        (a .env file: # comments and blank lines skipped) as set_env."""
        pairs = []
        if file_path is not None:
            with open(file_path) as f:
                for n, line in enumerate(f, 1):
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    if line.startswith("export "):
                        line = line[len("export "):].lstrip()
                    key, eq, value = line.partition("=")
                    if not eq or not key.strip():
                        raise ValueError(f"set_envs: {file_path}:{n}: not NAME=value: {line!r}")
                    value = value.strip()
                    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                        value = value[1:-1]
                    pairs.append((key.strip(), value))
        if env_vars is not None:
            if not isinstance(env_vars, dict):
                raise TypeError(f"set_envs: env_vars is a dict of NAME: value, not {env_vars!r}")
            pairs += list(env_vars.items())
        for k, v in pairs:
            self.set_env(k, v)
        return self

    def set_label(self, key, value):
        """A label of the run's objects (labels: {key: value})."""
        self._fields.setdefault("labels", {})[key] = str(value)
        self._mark(f"labels.{key}", _call("set_label", key, value))
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

    def _run_spec(self, what, action, params, handler, fields):
        """The run spec that names this function, from run()'s (or validate()'s)
        keywords, and the keywords as the user gave them (to name problems)."""
        _check_fields(what, fields, RUN_FIELDS)
        shown = {k: v for k, v in dict(fields, action=action, params=params, handler=handler).items()
                 if v is not None}
        if params is not None:
            if not isinstance(params, dict):
                raise TypeError(f"{what}: params must be a dict (the handler's arguments by name), "
                                f"not {type(params).__name__}")
            inputs = fields.get("inputs") or {}
            both = sorted(set(params) & set(inputs))
            if both:
                raise ValueError(f"{what}: {', '.join(map(repr, both))} is both in params and in "
                                 f"inputs: give each argument once")
            fields["inputs"] = {**inputs, **params}
        if handler is not None:
            fields["envs"] = self._handler_envs(what, handler, fields.get("envs"))
        if fields.get("schedule") is not None and action is None:
            action = "cronjob"  # MLRun's run(schedule=...): the function runs on a schedule
        spec = {"function": self.name}
        if action is not None:
            spec["action"] = action
        for k, v in fields.items():
            if v is not None:
                spec[k] = _plain(v)
        spec.setdefault("project", self.project.name)
        return spec, shown

    def _handler_envs(self, what, handler, envs):
        """The run's envs with the handler this run calls (MLRun's run(handler=...)): the
        function must carry code (code_to_function), which must define it."""
        code = _code.carried(self._fields.get("envs"))
        if code is None:
            raise TypeError(f"{what}: handler={handler!r}: function {self.name!r} runs a command "
                            f"({self.command!r}), not a handler of code: make it with "
                            f"code_to_function to call a handler")
        _code.check_handler(code[1], code[0], handler, what)
        envs = envs or []
        if isinstance(envs, dict):
            envs = [{"name": k, "value": str(v)} for k, v in envs.items()]
        return [e for e in envs if not (isinstance(e, dict) and e.get("name") == "FUNCTION_HANDLER")] \
            + [{"name": "FUNCTION_HANDLER", "value": handler}]

    def _waits(self, action, fields, wait, watch):
        """Whether run() waits, and shows the log while it does (MLRun's watch)."""
        if wait is not None and watch is not None and bool(wait) != bool(watch):
            raise ValueError(f"run: wait={wait!r} and watch={watch!r}: give one of them")
        if wait is not None or watch is not None:
            return bool(wait or watch), bool(watch)
        job = (action or self._fields.get("action") or "job") == "job" and \
            fields.get("schedule") is None
        return self._wait_default and job, self._wait_default and job

    def run(self, action=None, wait=None, wait_timeout=None, params=None, handler=None,
            watch=None, local=None, *, parameters=None, local_execution=None, **fields):
        """Runs the function: any run-spec field (resources=, volumes=, profile=, secrets=,
        envs=, fs_group=, inputs=, ...), merged over the function's.

        params= (MLRun's; parameters=, DigitalHub's) go into the run's inputs: a
        code_to_function handler gets both as its arguments; handler= calls another
        function of its code. schedule= with no action runs it as a cronjob.

        wait=True waits until the run ends (wait_timeout seconds at most) and raises
        RunError (state, reason, log tail) when it did not succeed; watch=True also shows
        its log as it runs. A function made by code_to_function, set_function or
        import_function waits and shows the log by default for a job, as MLRun's run()
        does (watch=False returns at once); others return at once, as DigitalHub's.

        local=True (local_execution=True) runs it on this machine's berth instead of the
        server: its local backend, data and policy (berth.local_client())."""
        if parameters is not None:
            if params is not None:
                raise TypeError("run: params= and parameters= are the same: give one of them")
            params = parameters
        if local_execution is not None:
            if local is not None and bool(local) != bool(local_execution):
                raise TypeError("run: local= and local_execution= are the same: give one of them")
            local = local_execution
        if local:
            return self._local_copy().run(action=action, wait=wait, wait_timeout=wait_timeout,
                                          params=params, handler=handler, watch=watch, **fields)
        waits, shows = self._waits(action, fields, wait, watch)
        spec, shown = self._run_spec("run", action, params, handler, fields)
        if self._dirty:
            self.save()
        run = self.project.run(spec, _source=Source(None, call="func.run", fields=shown, function=self))
        if waits:
            for r in run if isinstance(run, list) else [run]:
                if shows and wait_timeout is None:
                    r.logs(follow=True, out=sys.stdout)
                    r.wait()
                else:
                    r.wait(wait_timeout)
                    if shows:
                        sys.stdout.write(r.logs())
                if r.status != "Succeeded":
                    raise RunError(r, r.logs())
        return run

    def _local_copy(self):
        """This function on this machine's berth (local=True), to be registered there."""
        from ._local import local_client
        fn = Function(local_client().project(self.project.name), self.name, self.to_dict())
        fn._set_by, fn._wait_default, fn._dirty = dict(self._set_by), self._wait_default, True
        return fn

    def validate(self, action=None, params=None, handler=None, **fields):
        """What the server says of a run of this function with these keywords (as run()
        takes them), creating no run: a Verdict (valid, problems in the words of this
        call, runs: the effective spec with each value's origin). A function changed in
        this session is registered first, as run() would; a template the server refuses
        is a refused Verdict."""
        spec, shown = self._run_spec("validate", action, params, handler, fields)
        source = Source(None, call="func.validate", fields=shown, function=self)
        if self._dirty:
            try:
                self.save()
            except InvalidSpecError as e:
                return Verdict(False, e.problems, [])
        return self.project.validate(spec, _source=source)

    def explain(self, action=None, params=None, handler=None, **fields):
        """The effective spec of a run of this function with these keywords, each
        value's origin (berth explain -o json: {"run": {...}, "fields": [...]}), creating
        no run; InvalidSpecError when the server refuses it."""
        spec, shown = self._run_spec("explain", action, params, handler, fields)
        source = Source(None, call="func.explain", fields=shown, function=self)
        if self._dirty:
            self.save()
        return self.project.explain(spec, _source=source)


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


def mount_v3io(*args, **kwargs):
    """MLRun's Iguazio (V3IO) mount: berth has no V3IO."""
    raise NotSupportedError("mount_v3io(...)",
                            "V3IO is Iguazio's data layer, which berth does not have: mount a PVC "
                            "(mount_pvc(pvc_name=..., volume_name=..., volume_mount_path=...)), or "
                            "ask for a new one per run (volumes=[{'volume_type': "
                            "'persistent_volume_claim', ...}])")


def auto_mount(*args, **kwargs):
    """MLRun's auto_mount: "the most commonly used type of volume" on every pod. berth's
    are the policy's (defaults.volumes, or the project's): with no argument, a modifier
    that asks for them (volume_mode auto, as a run gets unless it says manual or none).
    MLRun's arguments (V3IO, or a PVC by name) are not: mount_pvc(...) mounts a PVC."""
    if args or kwargs:
        raise NotSupportedError("auto_mount(...)",
                                "berth's auto-mounted volumes are the platform policy's "
                                "(defaults.volumes), taken with auto_mount(); a PVC of your own "
                                "is apply(mount_pvc(pvc_name=..., volume_mount_path=...))")

    def modify(fn):
        fn.with_volume_mode("auto")
    modify._call = _call("auto_mount")
    return modify


class VolumeMount(tuple):
    """MLRun's VolumeMount(path, sub_path), for mount_v3io's volume_mounts: kept so code
    that builds them reads; mount_v3io itself is NotSupportedError."""

    def __new__(cls, path, sub_path):
        return tuple.__new__(cls, (path, sub_path))

    path = property(lambda self: self[0])
    sub_path = property(lambda self: self[1])

    def __repr__(self):
        return f"VolumeMount(path={self.path!r}, sub_path={self.sub_path!r})"


# ---- runs ------------------------------------------------------------------------------------


class State(str):
    """A run's state, "Succeeded": a str, also readable as MLRun's run.state() and
    DigitalHub's (and MLRun's) run.status.state."""

    @property
    def state(self):
        return str(self)

    def __call__(self):
        return str(self)

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
        """Pending, Running, Succeeded, Failed or Stopped (as last read: see refresh): a
        str, which run.status.state and run.state() read too (MLRun's, DigitalHub's)."""
        state = self.info.get("state")
        return None if state is None else State(state)

    state = status

    def uid(self):
        """The run's id (MLRun's run.uid())."""
        return self.id

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

    def wait_for_completion(self, timeout=None, raise_on_failure=True, show_logs=None):
        """MLRun's: waits until the run ends (TimeoutError after timeout seconds); a run
        that did not succeed raises RunError unless raise_on_failure is False; show_logs
        prints its log."""
        if show_logs and timeout is None:
            self.logs(follow=True, out=sys.stdout)
        self.wait(timeout)
        if show_logs and timeout is not None:
            sys.stdout.write(self.logs())
        if raise_on_failure and self.status != "Succeeded":
            raise RunError(self, self.logs())
        return self

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

    def logs(self, rank=None, follow=False, out=None, watch=None):
        """The run's log as text (every worker's for a distributed run); rank=N the log of
        worker N only. With follow, streamed (to out, default none) until the run ends,
        and returned whole; watch=True (MLRun's) is follow=True, out=sys.stdout."""
        if watch:
            follow, out = True, out or sys.stdout
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

