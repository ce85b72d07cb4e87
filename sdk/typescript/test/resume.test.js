// The event stream's resume: after a dropped connection the cache
// reconnects with Last-Event-ID, the id of the last event it saw. A tiny
// 127.0.0.1 server plays the two connections, since a real quire cannot
// be made to drop a stream at a chosen event.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Client } from "../src/index.js";

test("a dropped event stream resumes with Last-Event-ID", async () => {
  const streams = [];
  let version = 1;
  const server = createServer((req, res) => {
    if (req.url.startsWith("/v1/projects/p/prompts/s/live")) {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ version: { prompt_id: "id-1", version, commit: `c${version}`, template: `v${version}`, model: "", model_params: {} } }));
      return;
    }
    if (req.url.startsWith("/v1/projects/p/events")) {
      streams.push({ lastEventId: req.headers["last-event-id"] ?? "", types: new URL(req.url, "http://x").searchParams.get("types") });
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      if (streams.length === 1) {
        version = 2;
        res.end(`: heartbeat\n\nid: 41\nevent: version.published\ndata: {"id":"41","type":"version.published","asset":{"kind":"prompt","id":"id-1","slug":"s"}}\n\n`);
      }
      return; // the second connection stays open
    }
    res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const pc = new Client(`http://127.0.0.1:${server.address().port}`).prompts({ ttl: 3600000, events: true });
  try {
    assert.equal((await pc.get("p/s")).version, 1);
    const t0 = Date.now();
    while (streams.length < 2 || (await pc.get("p/s")).version !== 2) {
      assert.ok(Date.now() - t0 < 5000, `streams ${JSON.stringify(streams)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(streams[0].lastEventId, "");
    assert.equal(streams[1].lastEventId, "41");
    assert.equal(streams[0].types, "version.published,version.promoted,version.archived,version.deleted,label.moved,label.deleted,asset.deleted");
  } finally {
    await pc.close();
    server.closeAllConnections();
    server.close();
  }
});
