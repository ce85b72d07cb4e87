// A real quire for the tests: `quire serve` on a spare 127.0.0.1 port
// with a temporary data root and the embedded Redis. The binary is
// $QUIRE_BIN, or built from this repository once per process.

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../..", import.meta.url));
export const ADMIN = { email: "sdk-admin@example.com", password: "sdk-test-password-1" };

let built = "";

function binary() {
  if (process.env.QUIRE_BIN) return process.env.QUIRE_BIN;
  if (!built) {
    built = join(mkdtempSync(join(tmpdir(), "quire-sdk-bin-")), "quire");
    execFileSync("go", ["build", "-o", built, "./cmd/quire"], { cwd: repo, stdio: "inherit" });
  }
  return built;
}

function sparePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a quire and resolves to {url, metricsUrl, token, api(method, path, body),
 * requests(), kill(), stop()} once it listens and the admin is logged in.
 */
export async function startServer() {
  const data = mkdtempSync(join(tmpdir(), "quire-sdk-data-"));
  const metricsPort = await sparePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("QUIRE_")));
  Object.assign(env, { QUIRE_ADMIN_EMAIL: ADMIN.email, QUIRE_ADMIN_PASSWORD: ADMIN.password });
  const proc = spawn(binary(), ["serve", "--addr", "127.0.0.1:0", "--data", data, "--metrics-addr", `127.0.0.1:${metricsPort}`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  const addr = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire did not listen within 60 s:\n${log.slice(-4000)}`)), 60000);
    proc.stderr.on("data", (b) => {
      log += b.toString();
      for (const line of log.split("\n")) {
        if (!line.includes('"quire started"')) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line).addr);
        return;
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`quire exited (${code}) before listening:\n${log.slice(-4000)}`));
    });
  });
  const url = `http://${addr}`;
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  const srv = {
    url,
    token: "",
    async api(method, path, body) {
      const res = await fetch(url + path, {
        method,
        headers: { "Content-Type": "application/json", ...(srv.token ? { Authorization: `Bearer ${srv.token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    // requests is how many API requests the server has answered, from
    // its Prometheus counter (scraped on its own listener, not counted).
    async requests() {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      let n = 0;
      for (const line of text.split("\n")) {
        if (line.startsWith("quire_http_requests_total{")) n += Number(line.slice(line.lastIndexOf(" ") + 1));
      }
      return n;
    },
    // publish writes a text or chat prompt version and publishes it;
    // the prompt is created first when it is new.
    async publish(project, slug, content) {
      try {
        await srv.api("GET", `/v1/projects/${project}/prompts/${slug}`);
      } catch {
        await srv.api("POST", `/v1/projects/${project}/prompts`, { name: slug, slug });
      }
      const { version } = await srv.api("POST", `/v1/projects/${project}/prompts/${slug}/versions`, { from: "empty", ...content });
      return (await srv.api("POST", `/v1/projects/${project}/prompts/${slug}/versions/${version.version}/publish`)).version;
    },
    kill() {
      proc.kill("SIGKILL");
      return exited;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGKILL");
        await exited;
      }
      if (existsSync(data)) rmSync(data, { recursive: true, force: true });
    },
  };
  srv.token = (await srv.api("POST", "/v1/auth/login", ADMIN)).token;
  return srv;
}
