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

Only the standard library is used. See sdk/python/README.md.
"""

from .core import (FINAL, RUN_FIELDS, Client, Function, FunctionSpec, Project, Run, Verdict,
                   mount_configmap, mount_pvc, mount_secret)
from .errors import (AuthError, BerthError, BerthWarning, ConflictError, ForbiddenError,
                     InvalidSpecError, NotFoundError, Problem)

__version__ = "0.1.0"
__all__ = [
    "connect", "get_profiles", "get_or_create_project", "code_to_function", "Client", "Project",
    "Function", "FunctionSpec", "Run", "Verdict", "mount_pvc", "mount_configmap", "mount_secret", "BerthError",
    "InvalidSpecError", "NotFoundError", "AuthError", "ForbiddenError", "ConflictError",
    "BerthWarning", "Problem", "RUN_FIELDS", "FINAL",
]

_default = None
_project = None  # the name of the project get_or_create_project returned last


def connect(url=None, token=None, timeout=60):
    """A client of the berth server at url (default $BERTH_SERVER) with token (default
    $BERTH_TOKEN). It becomes the default one that the module's functions use."""
    global _default
    _default = Client(url, token, timeout)
    return _default


def _client():
    return _default if _default is not None else connect()


def get_profiles():
    """The platform's hardware profiles (of the default client)."""
    return _client().get_profiles()


def get_or_create_project(name):
    """A project of the default client; it becomes the project of code_to_function."""
    global _project
    project = _client().get_or_create_project(name)
    _project = project.name
    return project


def code_to_function(filename, name=None, handler=None, kind="job", image=None, project=None,
                     **fields):
    """A function that runs a Python file of this machine, in project (default: the one
    get_or_create_project returned last, else "default") of the default client: see
    Project.code_to_function. As MLRun's: code_to_function("training.py", name="training",
    handler="train", kind="mpijob", image="mlrun/ml-models-gpu")."""
    return _client().project(project or _project or "default").code_to_function(
        filename, name=name, handler=handler, kind=kind, image=image, **fields)
