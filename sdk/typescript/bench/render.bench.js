// The cached render benchmark: the two-variable prompt of the Go SDK's
// BenchmarkPromptCacheRender, fetched once from a real quire, then
// rendered locally from the cache. Prints the median of five rounds in
// µs per render and per get; exits 1 over the goal (20 µs a render).
//
//	node bench/render.bench.js [--markdown]
import { Client } from "../src/index.js";
import { startServer } from "../test/server.js";

export const GOAL_US = 20;
const TEMPLATE = "Hello {{name}}, here is a short note about {{topic}}.";

// measure times renders and gets of the cached prompt in µs a call: by
// the wall clock, or with cpu by the process's CPU time, which a loaded
// machine (other processes running) inflates far less.
export async function measure(pc, rounds = 5, n = 20000, { cpu = false } = {}) {
  const vars = { name: "Ann", topic: "caching" };
  const now = cpu ? () => { const u = process.cpuUsage(); return (u.user + u.system) * 1000; } : () => Number(process.hrtime.bigint());
  const time = async (f) => {
    const per = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = now();
      for (let i = 0; i < n; i++) await f();
      per.push((now() - t0) / n / 1000);
    }
    return per.sort((a, b) => a - b)[rounds >> 1];
  };
  await time(() => pc.render("bench/note", vars)); // warm up (the first render fetches)
  return { render: await time(() => pc.render("bench/note", vars)), get: await time(() => pc.get("bench/note")) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const srv = await startServer();
  try {
    await srv.api("POST", "/v1/projects", { name: "bench", slug: "bench" });
    await srv.publish("bench", "note", { template: TEMPLATE });
    const pc = new Client(srv.url, { token: srv.token }).prompts();
    const before = await srv.requests();
    const m = await measure(pc);
    const requests = (await srv.requests()) - before;
    await pc.close();
    const line = `| Node ${process.versions.node} | ${m.render.toFixed(2)} µs | ${m.get.toFixed(2)} µs | ${GOAL_US} µs | ${requests} |`;
    console.log(process.argv.includes("--markdown") ? line : JSON.stringify({ ...m, requests }));
    if (m.render > GOAL_US) process.exitCode = 1;
  } finally {
    await srv.stop();
  }
}
