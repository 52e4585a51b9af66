"""berth: run AI workloads with the hardware they declare, from Python.

    import berth
    client = berth.connect()                       # $BERTH_SERVER, $BERTH_TOKEN
    project = client.project("vision")
    func = project.new_function("train", image="python:3.11", command=["python", "train.py"])
    func.with_limits(mem="32Gi", cpu="6").gpus(1)
    run = func.run(action="job", resources={"mem": "32Gi"}, wait=True)
    print(run.status, run.logs())

    # MLRun's code_to_function: a file of this machine, its handler called with params
    fn = berth.code_to_function("training.py", name="training", handler="train", kind="mpijob")
    fn.spec.replicas = 2                           # two workers of one run
    fn.with_requests(cpu=2).gpus(1)                # each with 2 CPUs and a GPU

MLRun's and DigitalHub's calls work where berth has the concept (docs/migrating.md):
`import berth as mlrun` runs most notebook cells as written. Only the standard library
is used. See sdk/python/README.md.
"""

import getpass
import os

from ._local import close_local, local_client
from .core import (FINAL, RUN_FIELDS, Client, Function, FunctionSpec, Project, Run, State,
                   Verdict, VolumeMount, _import, auto_mount, mount_configmap, mount_pvc,
                   mount_secret, mount_v3io)
from .errors import (AuthError, BerthError, BerthWarning, ConflictError, ForbiddenError,
                     InvalidSpecError, NotFoundError, NotSupportedError, Problem, RunError)

__version__ = "0.1.0"
__all__ = [
    "connect", "get_profiles", "get_or_create_project", "code_to_function", "new_function",
    "import_function", "local_client", "close_local", "Client", "Project", "Function",
    "FunctionSpec", "Run", "State", "Verdict", "VolumeMount", "mount_pvc", "mount_configmap",
    "mount_secret", "mount_v3io", "auto_mount", "BerthError", "InvalidSpecError", "NotFoundError",
    "AuthError", "ForbiddenError", "ConflictError", "RunError", "NotSupportedError",
    "BerthWarning", "Problem", "RUN_FIELDS", "FINAL",
]

_default = None
_project = None  # the name of the project get_or_create_project returned last
_context = None  # its context= (MLRun's): the directory relative files are in


def connect(url=None, token=None, timeout=60, cacert=None, insecure_skip_tls_verify=False):
    """A client of the berth server at url (default $BERTH_SERVER) with token (default
    $BERTH_TOKEN); an https:// server's certificate is checked with the CAs of cacert
    (default $BERTH_CACERT, else the system's). It becomes the default one that the
    module's functions use."""
    global _default
    _default = Client(url, token, timeout, cacert, insecure_skip_tls_verify)
    return _default


def _client():
    return _default if _default is not None else connect()


def get_profiles(project=None):
    """The platform's hardware profiles (of the default client); with project, those
    that project's runs may use (its overlay of the policy with the rest)."""
    return _client().get_profiles(project=project)


def get_or_create_project(name, context=None, user_project=False, **kwargs):
    """A project of the default client; it becomes the project of code_to_function and
    new_function. MLRun's context= is the directory that the relative file names of
    code_to_function are in; user_project=True appends the user's name (MLRun's). Any
    other keyword of MLRun's or DigitalHub's (url=, secrets=, setup_kwargs=, ...) is a
    TypeError: berth's projects have no settings."""
    global _project, _context
    if kwargs:
        raise TypeError(f"get_or_create_project: berth's projects have only a name; "
                        f"{', '.join(sorted(kwargs))} has no counterpart (the server is "
                        f"berth.connect(url, token))")
    if user_project:
        name = f"{name}-{getpass.getuser()}".lower()
    project = _client().get_or_create_project(name)
    _project = project.name
    _context = os.fspath(context) if context is not None else None
    return project


def _in_context(path):
    if _context and isinstance(path, (str, os.PathLike)) and not os.path.isabs(os.fspath(path)):
        return os.path.join(_context, os.fspath(path))
    return path


def code_to_function(name_or_file=None, project=None, tag=None, filename=None, handler=None,
                     kind=None, image=None, *, name=None, **kwargs):
    """A function that runs a Python file of this machine, in project (default: the one
    get_or_create_project returned last, else "default") of the default client: see
    Project.code_to_function.

    MLRun's order of arguments (name, project, tag, filename, handler, kind, image), and
    the seed's calls as written: code_to_function("training.py", name="training", ...)
    (the first argument is the file when name= is given too), code_to_function(
    "training", kind="job", handler=...) (a first argument that names a file is the
    file: training.py). berth reads a file: a call without one (MLRun would take the
    notebook's own code) is a ValueError."""
    first = name_or_file
    if filename is not None:
        if name is not None and first is not None and name != first:
            raise TypeError(f"code_to_function: name {first!r} and name={name!r}: give one")
        file, name = filename, name or first
    elif first is not None:
        file = first
        if name is None and not _is_file(_in_context(first)):
            raise ValueError(f"code_to_function: no file {first!r} (nor {first!r}.py): berth "
                             f"runs a Python file of this machine; MLRun's code_to_function("
                             f"name) with no filename takes the notebook's code, which berth "
                             f"does not: give filename='code.py' (jupyter nbconvert --to script "
                             f"makes one of a notebook)")
    else:
        raise ValueError("code_to_function: give the Python file to run (filename=...)")
    return _client().project(project or _project or "default").code_to_function(
        _in_context(file), name=name or None, handler=handler or None, kind=kind or "job",
        image=image, tag=tag, **kwargs)


def _is_file(path):
    p = os.fspath(path)
    return os.path.isfile(p) or (not p.endswith(".py") and os.path.isfile(p + ".py"))


def new_function(name=None, project=None, tag=None, kind=None, command=None, image=None,
                 args=None, handler=None, requirements=None, **kwargs):
    """A function registered in project (as code_to_function's), Project.new_function's:
    a command in an image (kind "job" or "container"), or DigitalHub's kind="python"
    with code_src= and handler=. MLRun's command="file.py" is the command
    ["python", "file.py"] run in the image."""
    if tag not in (None, "", "latest"):
        raise NotSupportedError(f"new_function(tag={tag!r})", "berth keeps one version of a "
                                "function per name: registering it again replaces it")
    if not name:
        raise ValueError("new_function: give the function's name")
    if isinstance(command, str) and command.endswith(".py") and " " not in command:
        command = ["python", command]
    return _client().project(project or _project or "default").new_function(
        name, image=image, command=command, args=args, kind=kind, handler=handler,
        requirements=requirements, **kwargs)


def import_function(url, project=None, new_name=None):
    """MLRun's import_function: "db://PROJECT/NAME" is a function registered on the
    server (as project.get_function; its run() waits, as MLRun's does); new_name=
    registers a copy of it under that name in project (default: the current one).
    "hub://NAME" (MLRun's function hub) is NotSupportedError: copy its code here and
    use code_to_function."""
    if not isinstance(url, str):
        raise TypeError(f"import_function: url is 'db://PROJECT/NAME', not {url!r}")
    fn = _import(_client(), url, "import_function", project=_project)
    if new_name or project:
        fn = _client().project(project or _project or fn.project.name).set_function(
            fn, name=new_name or fn.name)
    return fn
