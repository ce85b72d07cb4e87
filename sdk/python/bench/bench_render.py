"""The cached render benchmark: the two-variable prompt of the Go SDK's
BenchmarkPromptCacheRender, fetched once from a real quire, then rendered
locally from the cache. Prints the median of five rounds in µs per render
and per get; exits 1 over the goal (50 µs a render).

    python3 -m bench.bench_render [--markdown]     (from sdk/python)
"""

import platform
import sys
import time

from quire import Client
from tests.server import Server

GOAL_US = 50
TEMPLATE = "Hello {{name}}, here is a short note about {{topic}}."


def measure(pc, rounds=5, n=20000, cpu=False):
    """µs a call of cached renders and gets: by the wall clock, or with cpu
    by the process's CPU time, which a loaded machine inflates far less."""
    variables = {"name": "Ann", "topic": "caching"}
    clock = time.process_time_ns if cpu else time.perf_counter_ns

    def timed(f):
        per = []
        for _ in range(rounds):
            t0 = clock()
            for _ in range(n):
                f()
            per.append((clock() - t0) / n / 1000)
        return sorted(per)[rounds // 2]

    timed(lambda: pc.render("bench/note", variables))  # warm up
    return {"render": timed(lambda: pc.render("bench/note", variables)), "get": timed(lambda: pc.get("bench/note"))}


def main():
    srv = Server()
    try:
        srv.api("POST", "/v1/projects", {"name": "bench", "slug": "bench"})
        srv.publish("bench", "note", {"template": TEMPLATE})
        with Client(srv.url, token=srv.token).prompts() as pc:
            before = srv.requests()
            m = measure(pc)
            requests = srv.requests() - before
        if "--markdown" in sys.argv:
            print(f"| CPython {platform.python_version()} | {m['render']:.2f} µs | {m['get']:.2f} µs | {GOAL_US} µs | {requests} |")
        else:
            print({**m, "requests": requests})
        return 1 if m["render"] > GOAL_US else 0
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(main())
