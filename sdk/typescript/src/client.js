// The client: one request function over fetch that every route goes
// through, typed by the OpenAPI document's paths (src/api.d.ts, made by
// openapi-typescript from GET /openapi.json), and the prompt cache.

import { QuireError, errorFrom } from "./errors.js";
import { PromptCache } from "./prompts.js";

export const VERSION = "2.2.0";

/** A quire client: `new Client("http://127.0.0.1:8080", {token})`. */
export class Client {
  // Private: a logged or inspected client does not show its credential.
  #token;

  constructor(baseUrl, { token = "", fetch: fetchFn = globalThis.fetch, userAgent = `quire-sdk-js/${VERSION}`, timeoutMs = 30000 } = {}) {
    const u = new URL(baseUrl);
    this.base = u.origin + u.pathname.replace(/\/+$/, "");
    this.#token = token;
    // Called as a plain function: a browser's fetch refuses another this.
    this.fetch = (input, init) => fetchFn(input, init);
    this.userAgent = userAgent;
    this.timeoutMs = timeoutMs;
  }

  headers(extra = {}) {
    const h = { ...extra };
    if (this.#token) h.Authorization = `Bearer ${this.#token}`;
    // Browsers refuse to set User-Agent; Node sends it.
    if (typeof window === "undefined") h["User-Agent"] = this.userAgent;
    return h;
  }

  /**
   * Calls one route of the API: path as the OpenAPI document writes it,
   * its {parameters} filled from params.path. Resolves to
   * {status, headers, data} (data: the decoded JSON, the bytes of any
   * other answer, null for a 304 or an empty body); an
   * answer of 400 or more rejects with a QuireError, as does a failure
   * to reach the server (status 0).
   */
  async request(method, path, { params = {}, body, headers = {}, signal } = {}) {
    const url = new URL(this.base + fillPath(path, params.path ?? {}));
    for (const [k, v] of Object.entries(params.query ?? {})) {
      if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    }
    const h = this.headers({ Accept: "application/json", ...headers });
    if (body !== undefined) h["Content-Type"] = "application/json";
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let res;
    try {
      res = await this.fetch(url, {
        method,
        headers: h,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (e) {
      throw new QuireError({ status: 0, code: "unreachable", message: `${method} ${path}: ${e.message}`, cause: e });
    }
    if (res.status >= 400) throw await errorFrom(res);
    let data = null;
    if (res.status !== 304 && res.status !== 204) {
      // JSON answers decoded; others (a diff, a file, an archive) as bytes.
      if (/json/.test(res.headers.get("content-type") ?? "")) {
        const text = await res.text();
        data = text === "" ? null : JSON.parse(text);
      } else {
        data = new Uint8Array(await res.arrayBuffer());
      }
    }
    return { status: res.status, headers: res.headers, data };
  }

  GET(path, init) {
    return this.request("GET", path, init);
  }

  POST(path, init) {
    return this.request("POST", path, init);
  }

  PUT(path, init) {
    return this.request("PUT", path, init);
  }

  PATCH(path, init) {
    return this.request("PATCH", path, init);
  }

  DELETE(path, init) {
    return this.request("DELETE", path, init);
  }

  /** A prompt cache over this client; close() it when done. */
  prompts(options = {}) {
    return new PromptCache(this, options);
  }
}

function fillPath(path, params) {
  return path.replace(/\{([^}]+)\}/g, (_, name) => {
    const v = params[name];
    if (v === undefined || v === null) throw new TypeError(`path parameter ${name} of ${path} is not given`);
    return encodeURIComponent(String(v));
  });
}
