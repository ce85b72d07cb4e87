// A host that adds quire by URL alone, through the official TypeScript
// SDK v2's OAuth client provider (OAuthClientProvider, auth(), the
// Streamable HTTP transport's 401 handling): run by mcp/oauthts_test.go as
//
//   node oauth.mjs MCP_URL ERA STATE [CLIENT_METADATA_URL]
//
// ERA is "modern" (protocol 2026-07-28, no session) or "legacy"
// (2025-11-25, initialize and a session). STATE is "state" for a provider
// that supplies an OAuth state (checked on the callback) or "nostate" for
// one that does not (the SDK then sends none). With CLIENT_METADATA_URL the
// client names itself by that Client ID Metadata Document; without it
// the SDK registers by Dynamic Client Registration.
//
// It talks to the test in lines: each step it reaches is one JSON object
// on stdout ({"step": ...}); between steps it waits for a line on stdin
// (the test acting as the user, or moving the clock). The steps:
//   authorize  — the SDK asks the user to open this URL (the test drives
//                Chromium through sign-in and consent; the redirect comes
//                back to this script's loopback callback)
//   connected  — code exchanged; prompts/list, prompts/get and a tool call
//                with the access token           (then waits: "continue")
//   refreshed  — prompts/get again, after the test expired the access
//                token: the SDK refreshed on the 401  (then waits)
//   revoked    — prompts/get after the user revoked the application: the
//                call fails, the SDK dropped its tokens and asked for a
//                new authorization
// Any failure exits non-zero with the error on stderr.
import { createServer } from "node:http";
import { createInterface } from "node:readline";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const [mcpURL, era, withState, metadataURL] = process.argv.slice(2);
const emit = (step, fields) => console.log(JSON.stringify({ step, ...fields }));

// The test's lines on stdin, one per wait.
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function waitFor(word) {
  const { value, done } = await lines.next();
  if (done || value.trim() !== word) throw new Error(`expected "${word}" on stdin, got ${done ? "end of input" : JSON.stringify(value)}`);
}

// The loopback redirect (RFC 8252 §7.3): the browser lands here with the
// code; the page it shows has #done for the test to wait for.
let callback;
const callbacks = [];
const server = createServer((req, res) => {
  const u = new URL(req.url, "http://127.0.0.1");
  if (u.pathname !== "/callback") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><html lang="en"><title>host</title><main><h1 id="done">Connected</h1></main></html>`);
  callbacks.push(u.searchParams);
  callback?.(u.searchParams);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${server.address().port}/callback`;
const nextCallback = () => new Promise((resolve) => (callback = resolve));

// An in-memory provider, as a desktop host keeps one per server.
class Provider {
  constructor() {
    this.client = undefined;
    this.stored = undefined;
    this.verifier = undefined;
    this.discovery = undefined;
    this.authorizations = [];
    this.invalidated = [];
    this.savedTokens = 0;
    if (metadataURL) this.clientMetadataUrl = metadataURL;
    if (withState === "state") this.state = () => (this.sentState = crypto.randomUUID());
  }
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: "TS SDK Host",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens) {
    this.stored = tokens;
    this.savedTokens++;
  }
  redirectToAuthorization(url) {
    this.authorizations.push(url.href);
    emit("authorize", { url: url.href });
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error("no code verifier saved");
    return this.verifier;
  }
  saveDiscoveryState(s) {
    this.discovery = s;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope) {
    this.invalidated.push(scope);
    if (scope === "all" || scope === "tokens") this.stored = undefined;
    if (scope === "all" || scope === "client") this.client = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }
}
const provider = new Provider();

function newClient() {
  const client = new Client({ name: "quire-oauth-ts", version: "1" });
  if (era === "modern") client.setVersionNegotiation({ mode: { pin: "2026-07-28" } });
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
  return { client, transport };
}

// 1. Connect with nothing: the 401 starts discovery, registration and the
// authorization request; connect fails until the user has approved.
let { client, transport } = newClient();
const approved = nextCallback();
let first;
try {
  await client.connect(transport);
  await client.listPrompts(); // a pinned 2026-07-28 connect may send nothing
  throw new Error("connected without authorization");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  first = e.name;
}
const params = await approved;
if (provider.sentState !== undefined && params.get("state") !== provider.sentState) throw new Error(`callback state ${params.get("state")}, sent ${provider.sentState}`);
await transport.finishAuth(params);
await transport.close().catch(() => {});

// 2. Connect again with the tokens; use them.
({ client, transport } = newClient());
await client.connect(transport);
const tokens = provider.tokens();
const out = {
  firstError: first,
  client: provider.client,
  callbackState: params.get("state") ?? "",
  callbackHasState: params.has("state"),
  protocolVersion: client.getNegotiatedProtocolVersion(),
  era: client.getProtocolEra(),
  tokens: { access: tokens.access_token, refresh: tokens.refresh_token, scope: tokens.scope, expiresIn: tokens.expires_in, type: tokens.token_type },
  discovery: {
    authorizationServer: provider.discovery?.authorizationServerUrl,
    resource: provider.discovery?.resourceMetadata?.resource,
    cimd: provider.discovery?.authorizationServerMetadata?.client_id_metadata_document_supported,
  },
};
out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
out.get = (await client.getPrompt({ name: "demo/greet", arguments: { name: "Ts" } })).messages.map((m) => m.content.text);
out.tool = await client.callTool({ name: "render_prompt", arguments: { slug: "demo/support", variables: { product: "quire", question: "why?" } } });
emit("connected", out);

// 3. The test moved the clock past the access token's hour: the next call
// is a 401, and the SDK refreshes (rotating both tokens) and retries.
await waitFor("continue");
const saved = provider.savedTokens;
const got = await client.getPrompt({ name: "demo/greet", arguments: { name: "Again" } });
const fresh = provider.tokens();
emit("refreshed", {
  text: got.messages.map((m) => m.content.text),
  saves: provider.savedTokens - saved,
  tokens: { access: fresh.access_token, refresh: fresh.refresh_token, scope: fresh.scope },
  authorizations: provider.authorizations.length,
});

// 4. The user revoked the application on quire's account page: the call
// fails; the SDK's refresh is refused (invalid_grant), it drops the tokens
// and asks the user to authorize again.
await waitFor("continue");
const revoked = { authorizationsBefore: provider.authorizations.length };
try {
  await client.getPrompt({ name: "demo/greet", arguments: { name: "Gone" } });
  revoked.error = null;
} catch (e) {
  revoked.error = { name: e.name, message: e.message, unauthorized: e instanceof UnauthorizedError };
}
revoked.authorizations = provider.authorizations.length;
revoked.reauthorize = provider.authorizations.at(-1);
revoked.invalidated = provider.invalidated;
revoked.tokensLeft = provider.tokens() !== undefined;
emit("revoked", revoked);

await client.close().catch(() => {});
server.close();
process.exit(0);
