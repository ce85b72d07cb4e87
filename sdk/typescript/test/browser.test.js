// @quire/sdk in a browser: Debian's headless Chromium loads src/ as ES
// modules from a 127.0.0.1 page whose origin also proxies /v1 to a real
// quire (the API sends no CORS headers), renders a prompt through the
// cache, and sees a publish through the event stream. Skipped, saying so,
// without chromium.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "./server.js";

const chromium = [process.env.QUIRE_TEST_CHROMIUM, "/usr/bin/chromium"].find((p) => p && existsSync(p));

const page = (token) => `<!doctype html><meta charset="utf-8"><script type="module">
import { Client, parseTemplate } from "/src/index.js";
const report = (body) => fetch("/result", { method: "POST", body: JSON.stringify(body) });
try {
  const pc = new Client(location.origin, { token: ${JSON.stringify(token)} }).prompts({ events: true, ttl: 3600000 });
  const first = await pc.render("web/hello", { name: "Ann", list: [1, 2] });
  await new Promise((r) => setTimeout(r, 300)); // the stream connects
  await report({ stage: "ready", first });
  const t0 = Date.now();
  while ((await pc.get("web/hello")).version !== 2 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
  const seenAt = Date.now();
  const second = await pc.render("web/hello", { name: "Bo", list: [] });
  const local = parseTemplate("{{#l}}{{.}}{{/l}} {{o}}").render({ l: ["a", "b"], o: { z: 1, a: [true, null] } });
  await pc.close();
  await report({ stage: "done", second, local, seenAt });
} catch (e) {
  await report({ stage: "error", error: String(e && e.stack || e) });
}
</script>`;

test("in a browser: render through the cache and a publish seen through the event stream", { skip: chromium ? false : "chromium is not installed (apt-get install chromium, or set QUIRE_TEST_CHROMIUM)" }, async () => {
  const srv = await startServer();
  const quire = new URL(srv.url);
  const results = [];
  let notify = () => {};
  const web = createServer((req, res) => {
    if (req.url.startsWith("/v1/")) {
      const up = request({ host: quire.hostname, port: quire.port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
        res.writeHead(ur.statusCode, ur.headers);
        ur.pipe(res);
      });
      up.on("error", () => res.destroy());
      req.pipe(up);
      return;
    }
    if (req.url === "/result") {
      let body = "";
      req.on("data", (b) => (body += b));
      req.on("end", () => {
        results.push(JSON.parse(body));
        res.end();
        notify();
      });
      return;
    }
    if (req.url.startsWith("/src/") && /^\/src\/[a-z]+\.js$/.test(req.url)) {
      res.writeHead(200, { "Content-Type": "text/javascript" });
      res.end(readFileSync(new URL(".." + req.url, import.meta.url)));
      return;
    }
    if (req.url === "/") {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(page(srv.token));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((r) => web.listen(0, "127.0.0.1", r));
  const profile = mkdtempSync(join(tmpdir(), "quire-sdk-chromium-"));
  let browser;
  const next = (stage) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${stage} from the page: ${JSON.stringify(results)}`)), 30000);
      notify = () => {
        const r = results.find((x) => x.stage === stage || x.stage === "error");
        if (r) {
          clearTimeout(t);
          resolve(r);
        }
      };
      notify();
    });
  try {
    await srv.api("POST", "/v1/projects", { name: "Web", slug: "web" });
    await srv.publish("web", "hello", { template: "Hello {{name}}{{#list}} {{.}}{{/list}}!" });
    browser = spawn(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", `--user-data-dir=${profile}`, `http://127.0.0.1:${web.address().port}/`], {
      stdio: "ignore",
      detached: true, // its own process group, so that its helpers end with it
    });
    const ready = await next("ready");
    assert.equal(ready.error, undefined, ready.error);
    assert.equal(ready.first.rendered, "Hello Ann 1 2!");
    assert.equal(ready.first.version, 1);
    await srv.publish("web", "hello", { template: "Hi {{name}}{{^list}} (none){{/list}}" });
    const published = Date.now();
    const done = await next("done");
    assert.equal(done.error, undefined, done.error);
    assert.equal(done.second.version, 2, "the publish reached the browser's cache");
    assert.equal(done.second.rendered, "Hi Bo (none)");
    assert.ok(done.seenAt - published < 1000, `seen ${done.seenAt - published} ms after the publish`);
    assert.deepEqual(done.local, { text: 'ab {"a":[true,null],"z":1}', partials: [] });
  } finally {
    if (browser && browser.exitCode === null && browser.signalCode === null) {
      const exited = new Promise((r) => browser.once("exit", r));
      process.kill(-browser.pid, "SIGKILL");
      await exited;
    }
    web.closeAllConnections();
    web.close();
    await srv.stop();
    rmSync(profile, { recursive: true, force: true });
  }
});
