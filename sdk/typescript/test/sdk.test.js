// The SDK against a real quire (test/server.js): what an application
// sees through the prompt cache and the client.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, QuireError, toOpenAIMessages } from "../src/index.js";
import { startServer } from "./server.js";

let srv;
let client;

before(async () => {
  srv = await startServer();
  client = new Client(srv.url, { token: srv.token });
  await srv.api("POST", "/v1/projects", { name: "Demo", slug: "demo" });
  await srv.publish("demo", "greeting", { template: "Hello {{name}}, {{day}}!", model: "gpt-4o", model_params: { temperature: 0.2 } });
  await srv.publish("demo", "style", { template: "Be brief, {{name}}." });
  await srv.publish("demo", "chat", {
    messages: [
      { role: "system", content: "You are {{persona}}. {{> style}}" },
      { type: "placeholder", name: "history" },
      { role: "user", content: "{{question}}" },
    ],
    model: "gpt-4o-mini",
    model_params: { max_tokens: 200 },
  });
});

after(async () => {
  await srv?.stop();
});

const serverRender = (slug, variables) => srv.api("POST", `/v1/projects/demo/prompts/${slug}/render`, { variables });

test("render gives exactly the server's answer, text and chat", async () => {
  const pc = client.prompts();
  try {
    const vars = { name: "Ann", day: "Monday" };
    const local = await pc.render("demo/greeting", vars);
    assert.equal(local.rendered, "Hello Ann, Monday!");
    assert.deepEqual(local, await serverRender("greeting", vars));

    const chatVars = { persona: "terse", question: "why?", name: "Ann", history: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] };
    const chat = await pc.render("demo/chat", chatVars);
    assert.deepEqual(chat, await serverRender("chat", chatVars));
    assert.deepEqual(chat.messages.map((m) => m.role), ["system", "user", "assistant", "user"]);
    assert.equal(chat.messages[0].content, "You are terse. Be brief, Ann.");
    assert.deepEqual(chat.partials.map((p) => p.slug), ["style"]);

    assert.deepEqual(toOpenAIMessages(chat), { model: "gpt-4o-mini", max_tokens: 200, messages: chat.messages });
    assert.deepEqual(toOpenAIMessages(local), { model: "gpt-4o", temperature: 0.2, messages: [{ role: "user", content: "Hello Ann, Monday!" }] });
  } finally {
    await pc.close();
  }
});

test("a missing variable is the server's error, naming every one", async () => {
  const pc = client.prompts();
  try {
    const local = await pc.render("demo/chat", { question: "q" }).catch((e) => e);
    const remote = await client.POST("/v1/projects/{project}/prompts/{slug}/render", { params: { path: { project: "demo", slug: "chat" } }, body: { variables: { question: "q" } } }).catch((e) => e);
    assert.ok(local instanceof QuireError && remote instanceof QuireError);
    assert.equal(remote.status, 422);
    assert.equal(local.code, "unprocessable");
    assert.equal(local.message, remote.message);
    assert.deepEqual(local.details, remote.details);
    assert.deepEqual(local.details.missing, ["persona", "name", "history"]);
  } finally {
    await pc.close();
  }
});

test("cached reads within the TTL make no request at the server", async () => {
  const pc = client.prompts({ ttl: 60000 });
  try {
    await pc.render("demo/chat", { persona: "p", question: "q", name: "n", history: [] });
    const n = await srv.requests();
    for (let i = 0; i < 200; i++) {
      await pc.get("demo/greeting").catch(() => {}); // first one fetches
    }
    const afterFirst = await srv.requests();
    assert.equal(afterFirst - n, 1, "one fetch for greeting");
    for (let i = 0; i < 500; i++) {
      await pc.render("demo/greeting", { name: "Ann", day: "Friday" });
      await pc.render("demo/chat", { persona: "p", question: "q", name: "n", history: [] });
    }
    assert.equal(await srv.requests(), afterFirst);
  } finally {
    await pc.close();
  }
});

test("concurrent first reads of one prompt make one request", async () => {
  const pc = client.prompts();
  try {
    const n = await srv.requests();
    const got = await Promise.all(Array.from({ length: 25 }, () => pc.get("demo/style")));
    assert.ok(got.every((v) => v === got[0]));
    assert.equal(await srv.requests(), n + 1);
  } finally {
    await pc.close();
  }
});

test("past the TTL a get answers at once and revalidates with If-None-Match (304)", async () => {
  let now = 0;
  const events = [];
  const pc = client.prompts({ ttl: 1000, now: () => now, onEvent: (key, ev) => events.push(ev) });
  try {
    const first = await pc.get("demo/greeting");
    now = 5000;
    assert.equal(await pc.get("demo/greeting"), first); // stale, served at once
    await Promise.allSettled([...pc.pending]);
    assert.deepEqual(events, ["miss", "stale_served", "not_modified"]);
    assert.equal(await pc.get("demo/greeting"), first);
    assert.equal(events.at(-1), "hit");
  } finally {
    await pc.close();
  }
});

test("a publish and a label move are seen through the event stream within 1 s", async () => {
  await srv.publish("demo", "news", { template: "v1 {{x}}" });
  await srv.api("PUT", "/v1/projects/demo/prompts/news/labels/staging", { version: 1 });
  const pc = client.prompts({ ttl: 3600000, events: true });
  try {
    assert.equal((await pc.get("demo/news")).version, 1);
    assert.equal((await pc.get("demo/news", { label: "staging" })).version, 1);
    await new Promise((r) => setTimeout(r, 300)); // the stream connects
    let t0 = Date.now();
    await srv.publish("demo", "news", { template: "v2 {{x}}" });
    while ((await pc.get("demo/news")).version !== 2) {
      assert.ok(Date.now() - t0 < 1000, "publish not seen within 1 s");
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal((await pc.render("demo/news", { x: "!" })).rendered, "v2 !");
    t0 = Date.now();
    await srv.api("PUT", "/v1/projects/demo/prompts/news/labels/staging", { version: 2 });
    while ((await pc.get("demo/news", { label: "staging" })).version !== 2) {
      assert.ok(Date.now() - t0 < 1000, "label move not seen within 1 s");
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal((await pc.get("demo/news", { version: 1 })).template, "v1 {{x}}");
  } finally {
    await pc.close();
  }
});

test("typed errors carry the API's status, code, details and request id", async () => {
  const pc = client.prompts();
  try {
    const e = await pc.get("demo/nope").catch((e) => e);
    assert.ok(e instanceof QuireError);
    assert.equal(e.status, 404);
    assert.equal(e.code, "not_found");
    assert.notEqual(e.requestId, "");
    const bad = new Client(srv.url, { token: "ak_not-a-key" });
    const u = await bad.GET("/v1/projects").catch((e) => e);
    assert.equal(u.status, 401);
    assert.equal(u.code, "unauthorized");
    assert.ok(!u.message.includes("ak_not-a-key"), "the token is not echoed");
    const { inspect } = await import("node:util");
    assert.ok(!inspect(bad, { depth: 5 }).includes("ak_not-a-key") && !JSON.stringify(bad).includes("ak_not-a-key"), "a logged client hides its token");
    const { data } = await client.GET("/v1/projects/{project}/prompts", { params: { path: { project: "demo" }, query: { limit: 2 } } });
    assert.equal(data.prompts.length, 2);
  } finally {
    await pc.close();
  }
});

test("when the server dies: stale-if-error, then fallbacks for a cold start", async () => {
  const own = await startServer();
  const c = new Client(own.url, { token: own.token });
  await own.api("POST", "/v1/projects", { name: "Ops", slug: "ops" });
  await own.publish("ops", "hello", { template: "Hi {{name}}" });
  let now = 0;
  const stale = [];
  const pc = c.prompts({ ttl: 1000, now: () => now, onStale: (key, err) => stale.push([key, err.status]) });
  try {
    assert.equal((await pc.render("ops/hello", { name: "Ann" })).rendered, "Hi Ann");
    await own.kill();
    now = 5000;
    assert.equal((await pc.render("ops/hello", { name: "Bo" })).rendered, "Hi Bo"); // stale, revalidating
    await Promise.allSettled([...pc.pending]);
    assert.deepEqual(stale, [["ops/hello", 0]]);
    assert.equal((await pc.render("ops/hello", { name: "Cy" })).rendered, "Hi Cy");

    // A cold start with the server down: the fallback renders.
    const cold = c.prompts({ fallbacks: { "ops/hello": "Hello (fallback) {{name}}" }, onStale: (key) => stale.push([key, "cold"]) });
    const out = await cold.render("ops/hello", { name: "Di" });
    assert.equal(out.rendered, "Hello (fallback) Di");
    assert.equal(out.version, 0);
    assert.deepEqual(stale.at(-1), ["ops/hello", "cold"]);
    const e = await cold.get("ops/other").catch((e) => e);
    assert.ok(e instanceof QuireError && e.status === 0 && e.unreachable);
    await cold.close();
  } finally {
    await pc.close();
    await own.stop();
  }
});

test("a cached render of the two-variable prompt takes under 20 µs", async () => {
  const { measure, GOAL_US } = await import("../bench/render.bench.js");
  await srv.publish("demo", "note", { template: "Hello {{name}}, here is a short note about {{topic}}." });
  const pc = client.prompts();
  try {
    await pc.get("demo/note");
    const n = await srv.requests();
    // CPU time: the shared machine's load must not fail it.
    const m = await measure({ render: (k, v) => pc.render("demo/note", v), get: () => pc.get("demo/note") }, 3, 5000, { cpu: true });
    assert.ok(m.render < GOAL_US, `${m.render.toFixed(2)} µs a render`);
    assert.equal(await srv.requests(), n, "no request for cached reads");
  } finally {
    await pc.close();
  }
});

test("typed variables: the server's 422 locally, or the server's render for a schema the SDK cannot check", async () => {
  const schema = { type: "object", required: ["name", "age"], properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 } } };
  await srv.publish("demo", "typed", { template: "{{name}} is {{age}}", variables_schema: schema });
  await srv.publish("demo", "patterned", { template: "code {{code}}", variables_schema: { properties: { code: { type: "string", pattern: "^[A-Z]{3}$" } } } });
  const pc = client.prompts();
  try {
    assert.equal((await pc.render("demo/typed", { name: "Ann", age: 7 })).rendered, "Ann is 7");
    const n = await srv.requests();
    const local = await pc.render("demo/typed", { name: "A", age: -1 }).catch((e) => e);
    assert.equal(await srv.requests(), n, "checked locally");
    const remote = await client.POST("/v1/projects/{project}/prompts/{slug}/render", { params: { path: { project: "demo", slug: "typed" } }, body: { variables: { name: "A", age: -1 } } }).catch((e) => e);
    assert.equal(remote.status, 422);
    assert.equal(local.code, remote.code);
    assert.equal(local.message, remote.message);
    assert.deepEqual(local.details, remote.details);
    assert.deepEqual(local.details.errors, [{ path: "/age", message: "minimum: got -1, want 0" }]);

    assert.equal((await pc.render("demo/patterned", { code: "ABC" })).rendered, "code ABC");
    const bad = await pc.render("demo/patterned", { code: "abc" }).catch((e) => e);
    assert.ok(bad instanceof QuireError && bad.status === 422 && bad.details.errors[0].path === "/code", String(bad));
  } finally {
    await pc.close();
  }
});

test("the package's version is the API's", async () => {
  const { readFileSync } = await import("node:fs");
  const api = JSON.parse(readFileSync(new URL("../../../internal/apiclient/openapi.json", import.meta.url), "utf8")).info.version;
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
  const { VERSION } = await import("../src/index.js");
  assert.equal(pkg, api);
  assert.equal(VERSION, api);
});

test("a non-JSON answer comes as bytes", async () => {
  await srv.publish("demo", "diffed", { template: "one" });
  await srv.publish("demo", "diffed", { template: "two" });
  const { data } = await client.GET("/v1/projects/{project}/prompts/{slug}/diff", {
    params: { path: { project: "demo", slug: "diffed" }, query: { from: 1, to: 2 } },
    headers: { Accept: "text/x-diff" },
  });
  assert.ok(data instanceof Uint8Array);
  assert.match(new TextDecoder().decode(data), /^-one$[\s\S]*^\+two$/m);
});

test("a partial served from its fallback while the server is down", async () => {
  const pc = new Client("http://127.0.0.1:9", {}).prompts({ fallbacks: { "x/main": "Main: {{> part}}", "x/part": "part {{v}}" } });
  try {
    const out = await pc.render("x/main", { v: 1 });
    assert.equal(out.rendered, "Main: part 1");
    assert.deepEqual(out.partials.map((p) => p.slug), ["part"]);
  } finally {
    await pc.close();
  }
});

test("a partial pinned to a version and the live one, as the server includes them", async () => {
  await srv.publish("demo", "sig", { template: "v1 {{name}}" });
  await srv.publish("demo", "sig", { template: "v2 {{name}}" });
  await srv.publish("demo", "signed", { template: "{{> sig@1}} / {{> sig}} / {{> sig@1}}" });
  const pc = client.prompts();
  try {
    const local = await pc.render("demo/signed", { name: "Ann" });
    assert.equal(local.rendered, "v1 Ann / v2 Ann / v1 Ann");
    assert.deepEqual(local.partials.map((p) => [p.slug, p.version]), [["sig@1", 1], ["sig", 2]]);
    assert.deepEqual(local, await serverRender("signed", { name: "Ann" }));
  } finally {
    await pc.close();
  }
});
