"""Errors of the berth server as exceptions, with every problem it reported."""

import json


class BerthWarning(UserWarning):
    """A warning of the server (Berth-Warning header): the image is not pulled, ..."""


class Problem:
    """One problem of a spec: where (file, line, column, path) and what."""

    __slots__ = ("code", "severity", "file", "line", "column", "path", "message", "text")

    def __init__(self, d):
        for k in self.__slots__:
            setattr(self, k, d.get(k))
        if not self.text:
            self.text = self.message

    def __repr__(self):
        return f"Problem({self.text!r})"

    def __str__(self):
        return self.text or ""


class BerthError(Exception):
    """The server refused a request: status, code, message and problems."""

    def __init__(self, status, code, message, problems=()):
        self.status = status
        self.code = code
        self.message = message
        self.problems = [p if isinstance(p, Problem) else Problem(p) for p in problems]
        lines = [message] + ["  " + p.text for p in self.problems
                             if p.text and message not in (p.text, p.message)]
        super().__init__("\n".join(lines))


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


def error_from_reply(status, payload):
    """The exception for an HTTP status >= 400 and its body."""
    try:
        err = json.loads(payload.decode("utf-8", "replace"))["error"]
        code, message, problems = err.get("code"), err.get("message"), err.get("problems") or ()
    except (ValueError, KeyError, TypeError, AttributeError):
        code, message, problems = None, payload.decode("utf-8", "replace")[:300] or f"HTTP {status}", ()
    return _BY_STATUS.get(status, BerthError)(status, code, message or f"HTTP {status}", problems)
