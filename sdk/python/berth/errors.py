"""Errors of the berth server as exceptions, with every problem it reported."""

import json
import re


class BerthWarning(UserWarning):
    """A warning of the server (Berth-Warning header): the image is not pulled, ..."""


class Problem:
    """One problem of a spec: where (path, and where the user wrote it) and what.

    text names what the user wrote: the call and its keyword path
    (`func.run(resources={'mem': '32Gb'}): resources.mem: ...`), the modifier that set
    a function's field (`function train: with_limits(mem='32Gb'): ...`), or a line of
    the user's own YAML text. file, line and column are kept only where they are a
    real text's: the user's YAML, or the policy file (in_policy, shown as "policy file
    line L:C" after the message). server is the problem as the server sent it."""

    __slots__ = ("code", "severity", "file", "line", "column", "path", "message", "text",
                 "where", "in_policy", "server")

    def __init__(self, d, source=None):
        for k in self.__slots__:
            setattr(self, k, d.get(k))
        self.server = dict(d)
        self.in_policy = False
        if source is not None:
            source.locate(self)
        if not self.text:
            self.text = self.message

    def __repr__(self):
        return f"Problem({self.text!r})"

    def __str__(self):
        return self.text or ""


class BerthError(Exception):
    """The server refused a request: status, code, message and problems."""

    def __init__(self, status, code, message, problems=(), source=None):
        self.status = status
        self.code = code
        self.problems = [p if isinstance(p, Problem) else Problem(p, source) for p in problems]
        if source is not None and len(self.problems) == 1:
            message = self.problems[0].text  # the server's text names its invented file
        self.message = message
        lines = [message] + ["  " + p.text for p in self.problems
                             if p.text and message not in (p.text, p.message)]
        super().__init__("\n".join(lines))


class RunError(BerthError):
    """A run that was waited for (func.run(wait=True) or watch=True, as MLRun's run()
    raises) and did not succeed: run (the Run), state (Failed or Stopped), reason,
    exit_code, and log_tail (the last lines of its log)."""

    TAIL = 20  # lines of the log the message shows

    def __init__(self, run, log=""):
        self.run = run
        self.state = run.info.get("state")
        self.reason = run.info.get("reason")
        self.exit_code = run.info.get("exit_code")
        lines = (log or "").splitlines()
        self.log_tail = "\n".join(lines[-self.TAIL:])
        why = f": {self.reason}" if self.reason else ""
        text = f"run {run.id} ({run.info.get('name') or '?'}) {self.state}{why}"
        if self.log_tail:
            shown = "last %d lines" % self.TAIL if len(lines) > self.TAIL else "its log"
            text += f"\n--- {shown} ---\n{self.log_tail}"
        BerthError.__init__(self, None, "run_" + str(self.state).lower(), text)


class NotSupportedError(BerthError, NotImplementedError):
    """A call of MLRun's or DigitalHub's that berth has no counterpart for (Iguazio's
    v3io mounts, the function hub, image builds): the message says what to use."""

    def __init__(self, what, instead):
        BerthError.__init__(self, None, "not_supported", f"{what}: {instead}")


class InvalidSpecError(BerthError, ValueError):
    """422: the spec is invalid, or the platform policy refuses it."""


class NotFoundError(BerthError, LookupError):
    """404: no such run, function, secret or route."""


class AuthError(BerthError, PermissionError):
    """401: no token, or an unknown one."""


class ForbiddenError(BerthError, PermissionError):
    """403: the token does not allow it."""


class ConflictError(BerthError):
    """409: the object exists, or its state forbids it."""


_BY_STATUS = {401: AuthError, 403: ForbiddenError, 404: NotFoundError, 409: ConflictError,
              422: InvalidSpecError}


def error_from_reply(status, payload, source=None):
    """The exception for an HTTP status >= 400 and its body; source (a Source) says
    what the SDK sent, to name each problem in the user's words."""
    try:
        err = json.loads(payload.decode("utf-8", "replace"))["error"]
        code, message, problems = err.get("code"), err.get("message"), err.get("problems") or ()
    except (ValueError, KeyError, TypeError, AttributeError):
        code, message, problems = None, payload.decode("utf-8", "replace")[:300] or f"HTTP {status}", ()
    return _BY_STATUS.get(status, BerthError)(status, code, message or f"HTTP {status}", problems,
                                              source)


# ---- problems in the user's words ------------------------------------------------------------

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def path_steps(path):
    """"volumes[0].mount_path" -> ["volumes", 0, "mount_path"]."""
    return [int(i) if i else k for k, i in _STEP.findall(path or "")]


def render_along(value, steps):
    """value shown along steps only: {'mem': '32Gb'} of a dict with more keys, the item
    of a list at its index ([..., x] past the first); the rest of the path (where the
    user's value stops, the server's spelling goes on) is not shown."""
    if not steps:
        return repr(value)
    k = steps[0]
    if isinstance(value, dict) and isinstance(k, str) and k in value:
        return "{%r: %s}" % (k, render_along(value[k], steps[1:]))
    if isinstance(value, (list, tuple)) and isinstance(k, int) and 0 <= k < len(value):
        return "[%s%s]" % ("..., " if k else "", render_along(value[k], steps[1:]))
    return repr(value)


def call_text(call, fields, path):
    """`func.run(resources={'mem': '32Gb'})`: the call with the keyword the path is in,
    shown along the path; `func.run()` when the path is in no keyword of it."""
    steps = path_steps(path)
    if steps and isinstance(steps[0], str) and steps[0] in (fields or {}):
        return "%s(%s=%s)" % (call, steps[0], render_along(fields[steps[0]], steps[1:]))
    return call + "()"


class Source:
    """What the SDK sent in one request, to say where a problem is in the user's words.

    file: the name the SDK sent its text under (the server's positions in it are in a
    text the user never saw); call and fields: the call that made the spec and its
    keywords (func.run, {resources: ...}); function: the Function whose stored layer
    the spec names (its problems come in the file "function NAME", or in `file` when
    the function itself is sent); text: True when the user gave the text (YAML), whose
    positions are theirs."""

    def __init__(self, file, call=None, fields=None, function=None, text=False):
        self.file = file
        self.call = call
        self.fields = fields or {}
        self.function = function
        self.text = text

    def _function_where(self, path):
        fn = self.function
        by = fn._set_by_of(path) if fn is not None else None
        return "function %s%s" % (fn.name, ": " + by if by else "")

    def locate(self, p):
        d = p.server
        file, path = d.get("file"), d.get("path")
        where = None
        if file is None:
            pass  # the server gave no position: the path alone says it
        elif file == self.file and self.text:
            where = "%s:%s:%s" % (file, d.get("line"), d.get("column"))
        elif file == self.file or (self.function is not None
                                   and file == "function " + self.function.name):
            if self.function is not None and (file != self.file or self.call is None):
                where = self._function_where(path)
            elif self.call:
                where = call_text(self.call, self.fields, path)
            p.file = p.line = p.column = None
        else:
            # neither the user's text nor one the SDK sent: the policy file's
            p.in_policy = True
            if self.function is not None and self.call is None:
                where = self._function_where(path)
            elif self.call:
                where = call_text(self.call, self.fields, path)
        p.where = where
        sev = "warning: " if d.get("severity") == "warning" else ""
        text = "%s%s%s" % (where + ": " if where else "", sev, path + ": " if path else "")
        text += d.get("message") or ""
        if p.in_policy and d.get("line"):
            text += " (policy file line %s:%s)" % (d["line"], d.get("column") or 0)
        p.text = text

