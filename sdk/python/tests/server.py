"""A real quire for the tests: `quire serve` on a spare 127.0.0.1 port with
a temporary data root and the embedded Redis. The binary is $QUIRE_BIN, or
built from this repository once per process."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from typing import Any, Optional

REPO = pathlib.Path(__file__).resolve().parents[3]
ADMIN = {"email": "sdk-admin@example.com", "password": "sdk-test-password-1"}
_built = ""


def binary() -> str:
    global _built
    if os.environ.get("QUIRE_BIN"):
        return os.environ["QUIRE_BIN"]
    if not _built:
        _built = os.path.join(tempfile.mkdtemp(prefix="quire-sdk-bin-"), "quire")
        subprocess.run(["go", "build", "-o", _built, "./cmd/quire"], cwd=REPO, check=True)
    return _built


def spare_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running quire; token is the admin's session."""

    def __init__(self) -> None:
        self.data = tempfile.mkdtemp(prefix="quire-sdk-data-")
        self.metrics_port = spare_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_")}
        env.update(QUIRE_ADMIN_EMAIL=ADMIN["email"], QUIRE_ADMIN_PASSWORD=ADMIN["password"])
        self.proc = subprocess.Popen(
            [binary(), "serve", "--addr", "127.0.0.1:0", "--data", self.data, "--metrics-addr", f"127.0.0.1:{self.metrics_port}"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        self.log: list[str] = []
        ready = threading.Event()
        addr: list[str] = []

        def read() -> None:
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace")
                self.log.append(line)
                if not addr and '"quire started"' in line:
                    addr.append(json.loads(line)["addr"])
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(60) or not addr:
            self.stop()
            raise RuntimeError("quire did not listen:\n" + "".join(self.log[-40:]))
        self.url = f"http://{addr[0]}"
        self.token = ""
        self.token = self.api("POST", "/v1/auth/login", ADMIN)["token"]

    def api(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                raw = res.read()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{method} {path}: {e.code} {e.read().decode()}") from None
        return json.loads(raw) if raw else None

    def requests(self) -> int:
        """How many API requests the server has answered, from its
        Prometheus counter (scraped on its own listener, not counted)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10) as res:
            text = res.read().decode()
        return int(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("quire_http_requests_total{")))

    def publish(self, project: str, slug: str, content: dict) -> dict:
        """Writes a version of a text or chat prompt and publishes it,
        creating the prompt when it is new."""
        try:
            self.api("GET", f"/v1/projects/{project}/prompts/{slug}")
        except RuntimeError:
            self.api("POST", f"/v1/projects/{project}/prompts", {"name": slug, "slug": slug})
        v = self.api("POST", f"/v1/projects/{project}/prompts/{slug}/versions", {"from": "empty", **content})["version"]
        return self.api("POST", f"/v1/projects/{project}/prompts/{slug}/versions/{v['version']}/publish")["version"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        self.kill()
        self.reader.join(timeout=5)
        self.proc.stderr.close()
        shutil.rmtree(self.data, ignore_errors=True)
