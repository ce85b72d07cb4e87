// The official TypeScript SDK's client against quire's /mcp: run by
// mcp/interop_test.go as `node interop.mjs URL TOKEN`; prints one JSON
// object of what it saw, or exits non-zero with the error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "quire-interop", version: "1" });
await client.connect(transport);

const out = { protocolVersion: transport.protocolVersion, capabilities: client.getServerCapabilities() };
out.prompts = (await client.listPrompts()).prompts.map((p) => ({ name: p.name, arguments: p.arguments }));
out.get = await client.getPrompt({ name: "demo/support", arguments: { product: "quire", question: "why?" } });
try {
  await client.getPrompt({ name: "demo/support", arguments: { product: "quire" } });
  out.missing = null;
} catch (e) {
  out.missing = { code: e.code, message: e.message };
}
out.read = await client.readResource({ uri: "skill://demo/pdf-tools/SKILL.md" });
// The Skills Extension's methods, which the SDK does not know: sent as
// plain requests, their results kept whole.
out.skills = await client.request({ method: "skills/list", params: {} }, ResultSchema);
out.dir = await client.request({ method: "resources/directory/read", params: { uri: "skill://demo/pdf-tools" } }, ResultSchema);
out.tool = await client.callTool({ name: "render_prompt", arguments: { slug: "demo/greet", variables: { name: "Ts" } } });
await client.close();
console.log(JSON.stringify(out));
