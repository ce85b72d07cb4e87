"""The client: one request method over the standard library's HTTP client
that every route goes through (the generated methods of quire.api among
them), and the prompt cache."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Optional

from .api import API
from .errors import QuireError

VERSION = "2.2.0"


class Answer:
    """An answer of the API: status, headers, and data (the decoded JSON
    body, the bytes of any other answer, None for a 204 or a 304)."""

    __slots__ = ("status", "headers", "data")

    def __init__(self, status: int, headers: Any, data: Any):
        self.status, self.headers, self.data = status, headers, data


def error_from(status: int, body: bytes, headers: Any) -> QuireError:
    """Reads an error answer: {error, code, details, request_id}, each when present."""
    text = body.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        doc = {}
    message = doc.get("error") or doc.get("message") or text.strip()[:200] or f"HTTP {status}"
    request_id = doc.get("request_id") or (headers.get("X-Request-Id") if headers is not None else "") or ""
    return QuireError(status, doc.get("code", ""), message, doc.get("details") or {}, request_id)


class Client(API):
    """A quire client: Client("http://127.0.0.1:8080", token=...). Every API
    operation is a method (quire.api, generated from the OpenAPI document);
    prompts() is the prompt cache."""

    def __init__(self, base_url: str, token: str = "", timeout: float = 30.0, user_agent: str = f"quire-sdk-python/{VERSION}"):
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ValueError(f"base_url {base_url!r} is not an http(s) URL")
        self.base = f"{u.scheme}://{u.netloc}{u.path.rstrip('/')}"
        self.token = token
        self.timeout = timeout
        self.user_agent = user_agent

    def __repr__(self) -> str:
        return f"Client({self.base!r})"  # never the token

    def headers(self, extra: Optional[dict[str, str]] = None) -> dict[str, str]:
        h = {"User-Agent": self.user_agent, **(extra or {})}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        return h

    def request(
        self,
        method: str,
        path: str,
        path_params: Optional[dict[str, Any]] = None,
        query: Optional[dict[str, Any]] = None,
        body: Any = None,
        headers: Optional[dict[str, str]] = None,
    ) -> Answer:
        """Calls one route: path as the OpenAPI document writes it, its
        {parameters} filled from path_params. An answer of 400 or more
        raises QuireError, as does a failure to reach the server (status 0)."""
        url = self.base + fill_path(path, path_params or {})
        q = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        if q:
            url += "?" + urllib.parse.urlencode(q)
        h = self.headers({"Accept": "application/json", **(headers or {})})
        data = None
        if body is not None:
            data = json.dumps(body, allow_nan=False).encode()
            h["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, headers=h, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                status, rh, raw = res.status, res.headers, res.read()
        except urllib.error.HTTPError as e:
            status, rh, raw = e.code, e.headers, e.read()
            e.close()
        except (OSError, ValueError) as e:
            raise QuireError(0, "unreachable", f"{method} {path}: {e}") from e
        if status >= 400:
            raise error_from(status, raw, rh)
        decoded: Any = None
        if status not in (204, 304) and raw:
            # JSON answers decoded; others (a diff, a file, an archive) as bytes.
            decoded = json.loads(raw) if "json" in (rh.get("Content-Type") or "") else raw
        return Answer(status, rh, decoded)

    def prompts(
        self,
        ttl: float = 60.0,
        events: bool = False,
        fallbacks: Optional[dict[str, str]] = None,
        on_stale: Optional[Callable[[str, QuireError], None]] = None,
        on_event: Optional[Callable[[str, str], None]] = None,
        now: Optional[Callable[[], float]] = None,
    ) -> "PromptCache":
        """A prompt cache over this client; close() it (or use it as a
        context manager) when done. ttl is in seconds."""
        from .prompts import PromptCache

        return PromptCache(self, ttl=ttl, events=events, fallbacks=fallbacks, on_stale=on_stale, on_event=on_event, now=now)


_PARAM = re.compile(r"\{([^}]+)\}")


def fill_path(path: str, params: dict[str, Any]) -> str:
    def sub(m: re.Match) -> str:
        name = m.group(1)
        if params.get(name) is None:
            raise TypeError(f"path parameter {name} of {path} is not given")
        return urllib.parse.quote(str(params[name]), safe="")

    return _PARAM.sub(sub, path)


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
