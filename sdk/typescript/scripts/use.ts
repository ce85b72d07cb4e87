// A scratch project's use of @quire/sdk, type-checked by check-pack.sh.
import { Client, QuireError, toOpenAIMessages, type Rendered } from "@quire/sdk";
const c = new Client("http://127.0.0.1:8080", { token: "x" });
async function main() {
  const pc = c.prompts({ ttl: 60_000, events: true, fallbacks: { "demo/greeting": "Hello {{name}}" }, onStale: (k, e) => console.log(k, e.status) });
  const out: Rendered = await pc.render("demo/greeting", { name: "Ann" }, { label: "production" });
  const v = await pc.get("demo/greeting", { version: 2 });
  const n: number = v.version;
  const { data } = await c.GET("/v1/projects/{project}/prompts", { params: { path: { project: "demo" }, query: { limit: 5 } } });
  const slugs: string[] = data.prompts.map((p) => p.slug);
  // @ts-expect-error: not a route
  await c.GET("/v1/nope");
  const body = toOpenAIMessages(out);
  if (body.messages.length === 0) throw new QuireError();
  await pc.close();
  return [n, slugs];
}
main();
