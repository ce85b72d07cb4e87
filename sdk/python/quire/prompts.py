"""The prompt cache, as the Go SDK's (client/prompts.go) has it.

A prompt is fetched once, then served from memory. Past its TTL a get
still answers at once with what it holds and revalidates in a background
thread (If-None-Match: a 304 costs no body). When the server cannot be
reached or answers 5xx the last good version keeps being served
(stale-if-error, told to on_stale); a prompt never fetched can come from a
fallback template. With events on, each project's event stream
revalidates a prompt at once when it is published, promoted, archived,
deleted or a label moves. render() renders locally with the server's
engine (quire.render), partials from the same cache.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from typing import Any, Callable, Optional

from .errors import QuireError
from .render import Compiled, Template, compile_prompt, render_compiled

# The events that can change a prompt's live, pinned or labelled read.
REFRESH_TYPES = ["version.published", "version.promoted", "version.archived", "version.deleted", "label.moved", "label.deleted", "asset.deleted"]

Key = tuple[str, int, str]  # "project/slug", version, label


def _unreachable(e: BaseException) -> bool:
    return isinstance(e, QuireError) and e.unreachable


def split_key(key: str) -> tuple[str, str]:
    project, _, slug = key.partition("/")
    if not project or not slug or "/" in slug:
        raise ValueError(f'prompt key {key!r} must be "project/slug"')
    return project, slug


class _Entry:
    __slots__ = ("pv", "compiled", "fetched_at", "fallback")

    def __init__(self, pv: dict, compiled: Compiled, fetched_at: float, fallback: bool = False):
        self.pv, self.compiled, self.fetched_at, self.fallback = pv, compiled, fetched_at, fallback


class _Flight:
    """A first read in progress: the others wait for its answer."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.entry: Optional[_Entry] = None
        self.err: Optional[BaseException] = None


class PromptCache:
    """An in-memory cache of prompts; see the module doc. Safe for use by
    many threads."""

    def __init__(
        self,
        client: Any,
        ttl: float = 60.0,
        events: bool = False,
        fallbacks: Optional[dict[str, str]] = None,
        on_stale: Optional[Callable[[str, QuireError], None]] = None,
        on_event: Optional[Callable[[str, str], None]] = None,
        now: Optional[Callable[[], float]] = None,
    ):
        self.client = client
        self.ttl = ttl
        self.events = events
        self.fallbacks = dict(fallbacks or {})
        self.on_stale = on_stale
        self.on_event = on_event
        self.now = now or time.monotonic
        self._mu = threading.Lock()
        self._entries: dict[Key, _Entry] = {}
        self._flights: dict[Key, _Flight] = {}
        self._refreshing: set[Key] = set()
        self._again: set[Key] = set()
        self._threads: set[threading.Thread] = set()
        self._streams: dict[str, "_Stream"] = {}
        self._closed = threading.Event()
        # Revalidations run on threads of their own, at most eight at once
        # (an event stream's reconnect revalidates every entry of a project).
        self._slots = threading.BoundedSemaphore(8)

    def __enter__(self) -> "PromptCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stops background revalidations and event streams, and waits for them."""
        self._closed.set()
        with self._mu:
            streams = list(self._streams.values())
        for s in streams:
            s.stop()
        self.wait()

    def wait(self) -> None:
        """Waits for the background revalidations running now."""
        while True:
            with self._mu:
                threads = [t for t in self._threads if t is not threading.current_thread()]
            if not threads:
                return
            for t in threads:
                t.join()

    def _event(self, key: str, ev: str) -> None:
        if self.on_event is not None:
            self.on_event(key, ev)

    def _stale(self, key: str, err: QuireError) -> None:
        if self.on_stale is not None:
            self.on_stale(key, err)

    def get(self, key: str, version: int = 0, label: str = "") -> dict:
        """The prompt version key ("project/slug") at the version asked
        (a published version, a label, or live), as the API's PromptVersion.
        Shared with the cache: read it, never change it."""
        return self._entry((key, version, label)).pv

    def _entry(self, k: Key) -> _Entry:
        e = self._entries.get(k)
        if e is not None and not e.fallback:
            if self.now() - e.fetched_at < self.ttl:
                self._event(k[0], "hit")
            else:
                self._event(k[0], "stale_served")
                self._revalidate(k, e)
            return e
        self._event(k[0], "miss")
        # Concurrent first reads of one prompt make one request.
        with self._mu:
            f = self._flights.get(k)
            lead = f is None
            if lead:
                f = self._flights[k] = _Flight()
        if lead:
            try:
                f.entry = self._fetch(k, None)
            except BaseException as err:  # noqa: BLE001 - handed to every waiter
                f.err = err
            finally:
                with self._mu:
                    del self._flights[k]
                f.done.set()
        else:
            f.done.wait()
        if f.err is None:
            return f.entry
        err = f.err
        if not _unreachable(err):
            raise err
        if e is not None:  # a fallback served before
            self._stale(k[0], err)
            self._event(k[0], "fallback")
            return e
        fb = self.fallbacks.get(k[0])
        if fb is not None and k[1] == 0 and k[2] == "":
            pv = {"prompt_id": "", "version": 0, "commit": "", "template": fb, "model": "", "model_params": {}}
            fe = _Entry(pv, compile_prompt(pv), 0.0, True)
            with self._mu:
                self._entries[k] = fe
            self._stale(k[0], err)
            self._event(k[0], "fallback")
            return fe
        raise err

    def _revalidate(self, k: Key, old: _Entry) -> None:
        with self._mu:
            if k in self._refreshing:
                # One at a time; an event arriving meanwhile asks for
                # another once this one is done, since it may have read
                # too early.
                self._again.add(k)
                return
            if self._closed.is_set():
                return
            self._refreshing.add(k)
            t = threading.Thread(target=self._revalidation, args=(k, old), name="quire-revalidate", daemon=True)
            self._threads.add(t)
            t.start()  # under the lock, so that wait() never joins it unstarted

    def _revalidation(self, k: Key, old: _Entry) -> None:
        try:
            err: Optional[BaseException] = None
            try:
                with self._slots:
                    self._fetch(k, old)
            except BaseException as e:  # noqa: BLE001
                err = e
            with self._mu:
                self._refreshing.discard(k)
                again = k in self._again
                self._again.discard(k)
                cur = self._entries.get(k)
            if self._closed.is_set():
                return
            if err is None:
                if again and cur is not None:
                    self._revalidate(k, cur)
            elif _unreachable(err):
                # Keep serving the last good version; try again after
                # another TTL rather than on every get.
                with self._mu:
                    if self._entries.get(k) is old:
                        self._entries[k] = _Entry(old.pv, old.compiled, self.now())
                self._stale(k[0], err)  # type: ignore[arg-type]
                self._event(k[0], "error")
            else:
                # The server answered: the prompt (or version, or access)
                # is gone. Drop it; the next get reports the error.
                with self._mu:
                    if self._entries.get(k) is old:
                        del self._entries[k]
                self._event(k[0], "evicted")
        finally:
            with self._mu:
                self._threads.discard(threading.current_thread())

    def _fetch(self, k: Key, old: Optional[_Entry]) -> _Entry:
        key, version, label = k
        project, slug = split_key(key)
        c = self.client
        inm = f'"{old.pv["commit"]}"' if old is not None else None
        if version > 0:
            ans = c.get_v1_projects_project_prompts_slug_versions_version(project, slug, version, if_none_match=inm)
        elif label not in ("", "live"):
            # No read by label: the label list names the version, whose
            # content (immutable) revalidates like any version's.
            labels = c.get_v1_projects_project_prompts_slug_labels(project, slug).data.get("labels") or []
            n = next((lb["version"] for lb in labels if lb["name"] == label), 0)
            if n == 0:
                raise QuireError(404, "not_found", f"label {label} not found")
            ans = c.get_v1_projects_project_prompts_slug_versions_version(project, slug, n, if_none_match=inm)
        else:
            ans = c.get_v1_projects_project_prompts_slug_live(project, slug, if_none_match=inm)
        if ans.status == 304 and old is not None:
            e = _Entry(old.pv, old.compiled, self.now())
            self._event(key, "not_modified")
        else:
            pv = (ans.data or {}).get("version")
            if not pv:
                raise QuireError(ans.status, "", f"{key}: the answer has no version")
            e = _Entry(pv, compile_prompt(pv), self.now())
            if old is not None:
                self._event(key, "updated")
        with self._mu:
            self._entries[k] = e
        if self.events and old is None:
            self._subscribe(project)
        return e

    def render(self, key: str, variables: Optional[dict] = None, version: int = 0, label: str = "") -> dict:
        """Renders the prompt key at the version asked, locally: the answer
        the server's render gives for the same variables ({prompt_id,
        version, commit, rendered | messages, model, model_params,
        partials}). Partials {{> slug}} and {{> slug@N}} come from the same
        project through this cache. Errors are QuireErrors worded as the
        server's (missing variables: code "unprocessable",
        details["missing"]; typed variables that fail the version's
        variables_schema: details["errors"]). A schema with keywords the SDK
        does not check (quire/schema.py) is rendered by the server instead."""
        e = self._entry((key, version, label))
        project, slug = split_key(key)
        skip_schema = False
        if not e.compiled.checkable:
            # A variables_schema the SDK cannot check exactly: the server
            # renders (the same version), or, when it cannot be reached, a
            # local render without the check.
            try:
                body = {"variables": variables or {}, "version": e.pv.get("version")}
                return self.client.post_v1_projects_project_prompts_slug_render(project, slug, body=body).data
            except QuireError as err:
                if not err.unreachable:
                    raise
                self._stale(key, err)
                skip_schema = True
        used: dict[str, dict] = {}

        def partial(name: str) -> Optional[Template]:
            return self._partial(project, name, used)

        out = render_compiled(e.compiled, e.pv, variables, partial, slug, skip_schema)
        pv = e.pv
        answer: dict[str, Any] = {"prompt_id": pv.get("prompt_id", ""), "version": pv.get("version", 0), "commit": pv.get("commit", "")}
        if "text" in out:
            answer["rendered"] = out["text"]
        else:
            answer["messages"] = out["messages"]
        answer["model"] = pv.get("model") or ""
        answer["model_params"] = pv.get("model_params") if pv.get("model_params") is not None else {}
        answer["partials"] = [used[n] for n in out["partials"] if n in used]
        return answer

    def _partial(self, project: str, name: str, used: dict[str, dict]) -> Optional[Template]:
        slug, at, ver = name.partition("@")
        version = 0
        if at:
            if not ver.isascii() or not ver.isdigit() or ver.startswith("0"):
                return None
            version = int(ver)
        if not slug or "/" in slug:
            return None
        try:
            e = self._entry((f"{project}/{slug}", version, ""))
        except QuireError as err:
            if err.status == 404:
                return None
            raise
        if e.compiled.text is None:
            return None  # only text prompts are partials
        used[name] = {"slug": name, "prompt_id": e.pv.get("prompt_id", ""), "version": e.pv.get("version", 0), "commit": e.pv.get("commit", "")}
        return e.compiled.text

    def _subscribe(self, project: str) -> None:
        with self._mu:
            if project in self._streams or self._closed.is_set():
                return
            s = self._streams[project] = _Stream(self, project)
        s.start()

    def _notify(self, project: str, prompt_id: str) -> None:
        """Revalidates now the entries of prompt_id in project ("": every
        entry of the project)."""
        with self._mu:
            due = [(k, e) for k, e in self._entries.items() if not e.fallback and k[0].partition("/")[0] == project and (not prompt_id or e.pv.get("prompt_id") == prompt_id)]
        for k, e in due:
            if prompt_id:
                self._event(k[0], "notified")
            self._revalidate(k, e)


class _Stream:
    """One project's event stream (GET /v1/projects/{p}/events), read by a
    thread until the cache closes, reconnecting with a backoff (1 s
    doubling to 30 s) and resuming with Last-Event-ID. A 4xx answer (no
    events capability, no access) ends it: the TTL alone applies then."""

    def __init__(self, pc: PromptCache, project: str):
        self.pc = pc
        self.project = project
        self.last = ""
        # The connection's socket, kept apart: http.client lets go of it
        # when the answer says the connection will close.
        self.sock: Optional[socket.socket] = None
        self.thread = threading.Thread(target=self.run, name=f"quire-events-{project}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        # The cache is closed: shut the connection down (again, should it
        # have been connecting) until the thread sees it.
        deadline = time.monotonic() + 5
        while self.thread.is_alive() and time.monotonic() < deadline:
            sock = self.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.thread.join(timeout=0.05)

    def run(self) -> None:
        wait = 1.0
        closed = self.pc._closed
        while not closed.is_set():
            try:
                connected = self.read()
            except QuireError as e:
                if 400 <= e.status < 500:
                    return
                connected = False
            except (OSError, http.client.HTTPException):
                connected = False
            if connected:
                wait = 1.0
            if closed.wait(wait):
                return
            wait = min(2 * wait, 30.0)

    def read(self) -> bool:
        c = self.pc.client
        u = urllib.parse.urlsplit(c.base)
        conn_cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        # Heartbeats come every 15 s: a minute of silence is a dead link.
        conn = conn_cls(u.netloc, timeout=60)
        try:
            conn.connect()
            self.sock = conn.sock
            path = f"{u.path}/v1/projects/{urllib.parse.quote(self.project, safe='')}/events?" + urllib.parse.urlencode({"types": ",".join(REFRESH_TYPES)})
            headers = c.headers({"Accept": "text/event-stream"})
            if self.last:
                headers["Last-Event-ID"] = self.last
            if self.pc._closed.is_set():
                return False
            conn.request("GET", path, headers=headers)
            res = conn.getresponse()
            if res.status != 200:
                raise QuireError(res.status, "", res.reason)
            # Events may have been missed between the entries' fetch (or
            # the last connection) and now: revalidate them once.
            self.pc._notify(self.project, "")
            data = ""
            while not self.pc._closed.is_set():
                raw = res.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line == "":
                    if data:
                        try:
                            ev = json.loads(data)
                        except ValueError:
                            ev = None
                        asset = ev.get("asset") if isinstance(ev, dict) else None
                        if isinstance(asset, dict) and asset.get("kind") == "prompt":
                            self.pc._notify(self.project, asset.get("id", ""))
                        data = ""
                elif line.startswith("id:"):
                    self.last = line[3:].strip()
                elif line.startswith("data:"):
                    data += line[5:].removeprefix(" ")
            return True
        finally:
            self.sock = None
            conn.close()
