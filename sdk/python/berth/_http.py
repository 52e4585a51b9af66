"""HTTP to a berth server: one kept-alive connection, JSON bodies, the
server's error body turned into exceptions (standard library only)."""

import http.client
import json
import os
import ssl
import sys
import urllib.parse
import warnings

from .errors import BerthWarning, Problem, error_from_reply

USER_AGENT = "berth-python/0.1"


class Transport:
    """One connection to the server, opened again when it was closed."""

    def __init__(self, url, token=None, timeout=60, cacert=None, insecure_skip_tls_verify=False):
        if not url:
            raise ValueError("no berth server given: pass url= or set BERTH_SERVER")
        if "://" not in url:
            url = "http://" + url
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        self.url = url.rstrip("/")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._base = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._conn = None
        self._tls = None
        if self._scheme == "https":
            # the system's CAs, else those of cacert (kubectl's certificate-authority);
            # no check at all only when asked by name
            cacert = cacert or os.environ.get("BERTH_CACERT") or None
            self._tls = ssl.create_default_context(cafile=cacert)
            if insecure_skip_tls_verify:
                self._tls.check_hostname = False
                self._tls.verify_mode = ssl.CERT_NONE

    def _connect(self, timeout=None):
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout or self.timeout,
                                               context=self._tls)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout or self.timeout)

    def _headers(self, content_type=None):
        h = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if content_type:
            h["Content-Type"] = content_type
        return h

    @staticmethod
    def query(**query):
        """"?k=v&..." of the values that are not None or False; "" when none is."""
        q = {k: ("true" if v is True else v) for k, v in query.items() if v is not None and v is not False}
        return "?" + urllib.parse.urlencode(q) if q else ""

    @staticmethod
    def path(*segments, **query):
        """/api/v1/a/b?k=v with each segment escaped."""
        return "/" + "/".join(urllib.parse.quote(str(s), safe="") for s in segments) + \
            Transport.query(**query)

    def request(self, method, path, body=None, content_type="application/json", raw=False,
                source=None):
        """Sends one request; returns the decoded JSON (or text when raw), None for 204.
        Raises a BerthError for any status >= 400. source (errors.Source) is what a spec
        sent is: the problems and warnings of the answer are named in the user's words,
        and an answer's structured warnings (or validate's problems) are also in its
        "_problems"."""
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            if isinstance(data, str):
                data = data.encode()
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = self._connect()
            try:
                self._conn.request(method, self._base + path, body=data,
                                   headers=self._headers(content_type if data is not None else None))
                resp = self._conn.getresponse()
                payload = resp.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # the server closed a kept-alive connection: once more on a new one
                self._conn.close()
                self._conn = None
                if attempt:
                    raise
            except ssl.SSLCertVerificationError as e:
                self._conn.close()
                self._conn = None
                raise ConnectionError(f"the certificate of the berth server at {self.url} is refused: "
                                      f"{e.verify_message} (a private CA: cacert= or $BERTH_CACERT)") from None
            except OSError as e:
                self._conn.close()
                self._conn = None
                raise ConnectionError(f"cannot reach the berth server at {self.url}: {e}") from None
        if resp.status >= 400:
            raise error_from_reply(resp.status, payload, source)
        d = None
        if payload and not raw:
            d = json.loads(payload.decode("utf-8", "replace"))
        found = None
        if source is not None and isinstance(d, dict):
            found = d.get("warnings") if isinstance(d.get("warnings"), list) else d.get("problems")
            if isinstance(found, list) and all(isinstance(w, dict) for w in found):
                d["_problems"] = [Problem(w, source) for w in found]
            else:
                found = None
        if found is not None:
            for p in d["_problems"]:
                warnings.warn(p.text, BerthWarning, stacklevel=_caller_level())
        else:
            for w in resp.headers.get_all("Berth-Warning") or ():
                warnings.warn(w, BerthWarning, stacklevel=_caller_level())
        if resp.status == 204 or not payload:
            return None
        return payload.decode("utf-8", "replace") if raw else d

    def stream(self, path, write):
        """A GET whose text body goes to write(str) as it arrives (a followed log)."""
        conn = self._connect(timeout=None)
        try:
            conn.request("GET", self._base + path, headers=self._headers())
            resp = conn.getresponse()
            if resp.status >= 400:
                raise error_from_reply(resp.status, resp.read())
            while True:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
                if not chunk:
                    break
                write(chunk.decode("utf-8", "replace"))
        finally:
            conn.close()

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _caller_level():
    """The stacklevel of warnings.warn that names the user's line: the first frame
    outside this package."""
    here = os.path.dirname(os.path.abspath(__file__))
    f, level = sys._getframe(1), 1
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f, level = f.f_back, level + 1
    return level


def env_url():
    return os.environ.get("BERTH_SERVER") or None


def env_token():
    return os.environ.get("BERTH_TOKEN") or None
