// The official TypeScript SDK v2 client, pinned to protocol 2026-07-28,
// against quire: run by mcp/interop2_test.go as `node interop2.mjs URL
// TOKEN`. It lists and gets prompts, reads every skill file (verified
// against its digest) and directory, calls a tool, then listens for
// change notifications: it prints "listening" and waits for a
// notifications/prompts/list_changed and a notifications/resources/updated
// of the skill's SKILL.md (the test publishes a prompt and the skill), then
// prints one JSON object of what it saw, or exits non-zero with the error.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

// `node interop2.mjs URL TOKEN` speaks to /mcp; `node interop2.mjs URL
// TOKEN QUIRE` runs `QUIRE mcp --server <URL's origin>` and speaks to it
// on stdio.
const [url, token, quire] = process.argv.slice(2);
const transport = quire
  ? new StdioClientTransport({
      command: quire,
      args: ["mcp", "--server", new URL(url).origin],
      env: { ...process.env, QUIRE_TOKEN: token },
      stderr: "inherit",
    })
  : new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
const client = new Client({ name: "quire-interop2", version: "1" });
client.setVersionNegotiation({ mode: { pin: "2026-07-28" } });
await client.connect(transport);

const out = {
  protocolVersion: client.getNegotiatedProtocolVersion(),
  era: client.getProtocolEra(),
  capabilities: client.getServerCapabilities(),
};
out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
out.get = await client.getPrompt({ name: "demo/support", arguments: { product: "quire", question: "why?" } });
try {
  await client.getPrompt({ name: "demo/support", arguments: { product: "quire" } });
  out.missing = null;
} catch (e) {
  out.missing = { code: e.code, message: e.message };
}
out.resources = (await client.listResources()).resources.map((r) => r.uri);
out.read = await client.readResource({ uri: "skill://demo/pdf-tools/SKILL.md" });

const skills = new SkillsClient(client);
out.skillsSupported = skills.supported;
const listing = await skills.list();
out.skills = [];
for (const s of listing.skills) {
  const got = await skills.get(s.uri);
  const files = [];
  for (const r of s.resources ?? []) {
    const f = await skills.read(s, r.uri);
    files.push({ uri: r.uri, verified: f.verified });
  }
  const dir = await skills.readDirectory(s.uri.replace(/\/SKILL\.md$/, ""));
  out.skills.push({ uri: s.uri, got: got.skill.uri, files, dir: dir.resources.map((d) => d.uri), dirTtl: dir.ttlMs });
}
out.tools = (await client.listTools()).tools.map((t) => t.name);
out.tool = await client.callTool({ name: "render_prompt", arguments: { slug: "demo/greet", variables: { name: "Ts" } } });

let notified, updated;
const changed = new Promise((resolve) => (notified = resolve));
const resourceUpdated = new Promise((resolve) => (updated = resolve));
client.setNotificationHandler("notifications/prompts/list_changed", () => notified(true));
client.setNotificationHandler("notifications/resources/updated", (n) => updated(n.params.uri));
const sub = await client.listen({ promptsListChanged: true, resourceSubscriptions: ["skill://demo/pdf-tools/SKILL.md"] });
out.honored = sub.honoredFilter;
console.log("listening");
const timeout = new Promise((resolve) => setTimeout(() => resolve(false), 15000));
out.listChanged = await Promise.race([changed, timeout]);
out.resourceUpdated = await Promise.race([resourceUpdated, timeout]);
await sub.close();
await client.close();
console.log(JSON.stringify(out));
process.exit(0);
