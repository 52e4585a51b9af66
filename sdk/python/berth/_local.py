"""local=True: runs on this machine's berth, its local backend.

MLRun's fn.run(local=True) runs the code on the notebook's machine rather than on the
cluster. berth's counterpart is its local backend (a process with cgroup limits, GPUs
by index, the queue): this module starts one `berth serve` on loopback for the Python
session, over this machine's data ($BERTH_HOME, default ~/.berth) and policy
($BERTH_CONFIG, /etc/berth/config.yaml, else the built-in one), exactly as `berth run`
on this machine would see them, with an admin token of that store made for the
session. A function run with local=True is registered there and run there, by the
same library that checks every run: its problems and its origins are this machine's.
The server stops, and the token is revoked, when the session ends (close_local);
runs go on, as they do after `berth serve` stops, and `berth get runs` shows them.
"""

import atexit
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

_local = None  # the session's: {"client", "proc", "token_id", "binary", "env", "log"}


def _binary(binary=None):
    found = binary or os.environ.get("BERTH_BIN") or shutil.which("berth")
    if not found or not os.access(found, os.X_OK):
        raise FileNotFoundError(
            "local=True runs the function on this machine's berth (its local backend), and "
            "there is no berth program here: put berth on PATH, or set BERTH_BIN "
            f"(looked for {found or 'berth on PATH'})")
    return found


def local_client(binary=None, home=None, config=None, timeout=60):
    """The client of this machine's berth, started on first use (a `berth serve` on
    127.0.0.1 and a free port). binary: the berth program (default $BERTH_BIN, else
    berth on PATH); home: its data ($BERTH_HOME, default ~/.berth); config: its policy
    (default as `berth run` finds it). Once started, asking for another binary, home or
    config is an error: close_local() first."""
    global _local
    from .core import Client  # the module that imports this one
    want = (binary, home, config)
    if _local is not None:
        if _local["proc"].poll() is None:
            if any(w is not None and w != h for w, h in zip(want, _local["asked"])):
                raise ValueError(f"this session's local berth runs with {_local['asked']}: "
                                 f"call berth.close_local() before asking for {want}")
            return _local["client"]
        close_local()
    exe = _binary(binary)
    env = dict(os.environ)
    for k in ("BERTH_SERVER", "BERTH_TOKEN"):  # this machine, never a server
        env.pop(k, None)
    if home is not None:
        env["BERTH_HOME"] = os.fspath(home)
    made = subprocess.run([exe, "token", "create", "--project", "*", "--role", "admin",
                           "--description", f"python sdk local=True runs (pid {os.getpid()})"],
                          env=env, capture_output=True, text=True, timeout=timeout)
    m = re.search(r"token (\S+):", made.stderr)
    if made.returncode != 0 or not made.stdout.strip() or not m:
        raise RuntimeError(f"local=True: berth token create failed: {made.stderr.strip()}")
    token, token_id = made.stdout.strip().splitlines()[-1], m.group(1)
    log = tempfile.TemporaryFile(mode="w+")
    args = [exe, "serve", "--listen", "127.0.0.1:0"]
    if config is not None:
        args += ["--config", os.fspath(config)]
    proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            start_new_session=True)  # a notebook's ^C is not the server's
    deadline = time.monotonic() + timeout
    port = None
    while port is None:
        log.seek(0)
        text = log.read()
        m = re.search(r"\(port (\d+)\)", text)
        if m:
            port = m.group(1)
        elif proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            subprocess.run([exe, "token", "revoke", token_id], env=env, capture_output=True)
            raise RuntimeError(f"local=True: berth serve did not start: {text.strip()[-2000:]}")
        else:
            time.sleep(0.02)
    _local = {"client": Client(f"http://127.0.0.1:{port}", token), "proc": proc, "log": log,
              "token_id": token_id, "binary": exe, "env": env, "asked": want}
    return _local["client"]


def close_local():
    """Stops this session's local berth server (its runs go on) and revokes its token."""
    global _local
    lo, _local = _local, None
    if lo is None:
        return
    lo["client"].close()
    if lo["proc"].poll() is None:
        lo["proc"].send_signal(signal.SIGTERM)
        try:
            lo["proc"].wait(10)
        except subprocess.TimeoutExpired:
            lo["proc"].kill()
            lo["proc"].wait()
    subprocess.run([lo["binary"], "token", "revoke", lo["token_id"]], env=lo["env"],
                   capture_output=True)
    lo["log"].close()


atexit.register(close_local)
