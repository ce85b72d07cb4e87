"""The event stream's resume: after a dropped connection the cache
reconnects with Last-Event-ID, the id of the last event it saw. A tiny
127.0.0.1 server plays the two connections, since a real quire cannot be
made to drop a stream at a chosen event."""

import http.server
import json
import threading
import time
import unittest
import urllib.parse

from quire import Client


class Resume(unittest.TestCase):
    def test_dropped_stream_resumes_with_last_event_id(self):
        streams = []
        state = {"version": 1}
        release = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.startswith("/v1/projects/p/prompts/s/live"):
                    v = state["version"]
                    body = json.dumps({"version": {"prompt_id": "id-1", "version": v, "commit": f"c{v}", "template": f"v{v}", "model": "", "model_params": {}}}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if self.path.startswith("/v1/projects/p/events"):
                    q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                    streams.append({"last": self.headers.get("Last-Event-ID", ""), "types": q["types"][0]})
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    if len(streams) == 1:
                        state["version"] = 2
                        self.wfile.write(b': heartbeat\n\nid: 41\nevent: version.published\ndata: {"id":"41","asset":{"kind":"prompt","id":"id-1","slug":"s"}}\n\n')
                        return
                    self.wfile.flush()
                    release.wait(10)  # the second connection stays open
                    return
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with Client(f"http://127.0.0.1:{server.server_address[1]}").prompts(ttl=3600, events=True) as pc:
                self.assertEqual(pc.get("p/s")["version"], 1)
                t0 = time.monotonic()
                while len(streams) < 2 or pc.get("p/s")["version"] != 2:
                    self.assertLess(time.monotonic() - t0, 5, streams)
                    time.sleep(0.02)
                self.assertEqual([s["last"] for s in streams[:2]], ["", "41"])
                self.assertEqual(streams[0]["types"], "version.published,version.promoted,version.archived,version.deleted,label.moved,label.deleted,asset.deleted")
        finally:
            release.set()
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    unittest.main()
