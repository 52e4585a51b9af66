"""code_to_function: a Python file (and a handler in it) carried in a function.

The file is read here, on the client, compressed and carried base64 in the
function's environment (FUNCTION_CODE_0, FUNCTION_CODE_1, ...: each at most 64 KiB, as
one environment string may hold 128 KiB on Linux). The function's command is
`python3 -c BOOTSTRAP`: it joins the parts, loads the code as a module and
calls handler(**inputs), inputs being the run's (BERTH_INPUTS, JSON); with no
handler the file runs as __main__, with the run's args as sys.argv[1:]. The
worker needs only python3: no file is copied anywhere.
"""

import ast
import base64
import os
import re
import zlib

SOURCE_CAP = 256 * 1024  # bytes of source a function carries
PART = 64 * 1024          # characters of one FUNCTION_CODE_N variable

# the kinds berth runs from code: job (one process, or spec.replicas workers of one
# run) and mpijob (workers started as MPI ranks); "" is MLRun's default, a job
KINDS = {"": "job", "job": "job", "mpijob": "mpijob"}

# what berth offers instead of MLRun's other kinds
_INSTEAD = {
    "serving": "a model server is a function run with action='serve' "
               "(project.new_function(name, image=..., command=[...], action='serve'))",
    "nuclio": "a long-running service is a function run with action='serve' or 'deploy' "
              "(project.new_function(..., action='serve'))",
    "remote": "a long-running service is a function run with action='serve' or 'deploy' "
              "(project.new_function(..., action='serve'))",
    "application": "a long-running service is a function run with action='serve' or 'deploy' "
                   "(project.new_function(..., action='serve'))",
    "dask": "berth starts no Dask cluster: run the workers as one job with spec.replicas = N "
            "(kind='job'), or start Dask inside it",
    "spark": "berth starts no Spark cluster: run the workers as one job with spec.replicas = N "
             "(kind='job'), or run Spark inside it",
    "local": "kind='job' runs it on the server's backend, and fn.run(local=True) on this "
             "machine's berth (its local backend)",
    "handler": "berth runs the code as a run of the server's backend: kind='job'",
    "databricks": "berth does not submit to Databricks: kind='job' runs the code on berth's backend",
}

BOOTSTRAP = """\
# berth: runs the code that code_to_function carried in FUNCTION_CODE_0, FUNCTION_CODE_1, ...
import base64, json, linecache, os, sys, traceback, types, zlib
sys.excepthook = traceback.print_exception  # shows the lines of the code (from linecache)
sys.stdout.reconfigure(line_buffering=True)  # the log follows what the code prints
env, parts = os.environ, []
while "FUNCTION_CODE_%d" % len(parts) in env:
    parts.append(env["FUNCTION_CODE_%d" % len(parts)])
source = zlib.decompress(base64.b64decode("".join(parts))).decode("utf-8")
path, handler = env["FUNCTION_FILE"], env.get("FUNCTION_HANDLER")
linecache.cache[path] = (len(source), None, source.splitlines(True), path)
sys.argv[0] = path
name = os.path.splitext(os.path.basename(path))[0]
module = types.ModuleType("__main__" if not handler else name if name.isidentifier() else "code")
module.__file__ = path
sys.modules[module.__name__] = module
exec(compile(source, path, "exec"), module.__dict__)
if handler:
    result = getattr(module, handler)(**json.loads(env.get("BERTH_INPUTS") or "{}"))
    if result is not None:
        print("%s() returned %s" % (handler, json.dumps(result, default=repr)), flush=True)
"""


def kind_of(kind):
    """job or mpijob for MLRun's kind (None and "" are a job); any other kind is a
    ValueError that says what berth offers instead."""
    k = "" if kind is None else kind
    if not isinstance(k, str) or k.lower() not in KINDS:
        instead = _INSTEAD.get(k.lower() if isinstance(k, str) else None,
                               "a job (kind='job') or MPI workers (kind='mpijob')")
        raise ValueError(f"code_to_function: kind {kind!r} is not one berth runs from code "
                         f"(it runs 'job' and 'mpijob'); {instead}")
    return KINDS[k.lower()]


def find_file(filename):
    """The path of the file: as given, or with .py added (MLRun's
    code_to_function('training', ...) for training.py)."""
    if not isinstance(filename, (str, os.PathLike)) or not os.fspath(filename):
        raise TypeError(f"code_to_function: filename must be the path of a Python file, "
                        f"not {filename!r}")
    path = os.fspath(filename)
    if os.path.isfile(path):
        return path
    if not path.endswith(".py") and os.path.isfile(path + ".py"):
        return path + ".py"
    where = "" if os.path.isabs(path) else f" (relative to {os.getcwd()})"
    tried = f" nor {path + '.py'!r}" if not path.endswith(".py") else ""
    raise FileNotFoundError(f"code_to_function: there is no file {path!r}{tried}{where}: "
                            f"give the path of the Python file that holds the code")


def _top_level_names(tree):
    """The names a module binds at its top level; None when `import *` makes that
    unknowable."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    return None
                names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
        else:
            # if/try/with blocks may bind names too: count what they assign or define
            for n in ast.walk(node):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(n.name)
                elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    names.add(n.id)
                elif isinstance(n, ast.alias):
                    names.add(n.asname or n.name.split(".")[0])
    return names


def read_code(path, handler):
    """The file's source, checked: UTF-8, at most SOURCE_CAP bytes, valid Python, and
    defining handler when one is given."""
    size = os.path.getsize(path)
    if size > SOURCE_CAP:
        raise ValueError(f"code_to_function: {path} is {size} bytes; a function carries at most "
                         f"{SOURCE_CAP} ({SOURCE_CAP // 1024} KiB) of code: keep the entry point "
                         f"small and put the rest in the image or a volume")
    with open(path, "rb") as f:
        data = f.read(SOURCE_CAP + 1)
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"code_to_function: {path} is not UTF-8 text ({e}): "
                         f"give a Python source file") from None
    check_handler(source, path, handler)
    return source


def check_handler(source, path, handler, what="code_to_function"):
    """A SyntaxError for code that is not Python, a ValueError for a handler that is
    not a function the code defines (None: no handler, the file runs as __main__)."""
    tree = ast.parse(source, path)  # a SyntaxError is told here, not in the run
    if handler is None:
        return
    if not isinstance(handler, str) or not handler.isidentifier():
        raise ValueError(f"{what}: handler {handler!r} is not a function's name "
                         f"(a Python identifier of {path})")
    names = _top_level_names(tree)
    if names is not None and handler not in names:
        funcs = sorted(n.name for n in tree.body
                       if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
        has = f"its functions: {', '.join(funcs)}" if funcs else "it defines no function"
        raise ValueError(f"{what}: {path} has no {handler!r} ({has})")


def carried(envs):
    """(file, source, handler) of the code a function's envs carry; None when they
    carry none (a function that runs a command)."""
    env = {e.get("name"): e.get("value") for e in envs or () if isinstance(e, dict)}
    parts = []
    while f"FUNCTION_CODE_{len(parts)}" in env:
        parts.append(env[f"FUNCTION_CODE_{len(parts)}"])
    if not parts or "FUNCTION_FILE" not in env:
        return None
    source = zlib.decompress(base64.b64decode("".join(parts))).decode("utf-8")
    return env["FUNCTION_FILE"], source, env.get("FUNCTION_HANDLER")


def code_envs(path, source, handler):
    """The environment that carries the code: [{"name", "value"}]."""
    packed = base64.b64encode(zlib.compress(source.encode("utf-8"), 9)).decode("ascii")
    envs = [{"name": f"FUNCTION_CODE_{i // PART}", "value": packed[i:i + PART]}
            for i in range(0, len(packed), PART)]
    envs.append({"name": "FUNCTION_FILE", "value": os.path.basename(path)})
    if handler is not None:
        envs.append({"name": "FUNCTION_HANDLER", "value": handler})
    return envs


def is_code_env(name):
    return name in ("FUNCTION_FILE", "FUNCTION_HANDLER") or \
        bool(re.fullmatch(r"FUNCTION_CODE_\d+", name))


def default_name(path):
    """A function name from the file's: training.py -> training, My_Train.py -> my-train."""
    stem = os.path.splitext(os.path.basename(path))[0].lower()
    name = re.sub(r"[^a-z0-9-]+", "-", stem).strip("-")
    return name or "code"
