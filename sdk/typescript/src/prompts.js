// The prompt cache, as the Go SDK's (client/prompts.go) has it. A prompt
// is fetched once, then served from memory. Past its TTL a get still
// answers at once with what it holds and revalidates in the background
// (If-None-Match: a 304 costs no body). When the server cannot be reached
// or answers 5xx the last good version keeps being served
// (stale-if-error, told to onStale); a prompt never fetched can come from
// a fallback template. With events on, each project's event stream
// revalidates a prompt at once when it is published, promoted, archived,
// deleted or a label moves. render() renders locally with the server's
// engine (render.js), partials from the same cache.

import { QuireError } from "./errors.js";
import { compilePrompt, renderCompiled } from "./render.js";

// The events that can change a prompt's live, pinned or labelled read.
const REFRESH_TYPES = ["version.published", "version.promoted", "version.archived", "version.deleted", "label.moved", "label.deleted", "asset.deleted"];

const unreachable = (e) => e instanceof QuireError && e.unreachable;

// NeedPartial stops a local render at a partial the cache does not hold
// yet: render() fetches it and renders again.
class NeedPartial {
  constructor(key, version) {
    this.key = key;
    this.version = version;
  }
}

export class PromptCache {
  constructor(client, { ttl = 60000, events = false, fallbacks = {}, onStale = null, onEvent = null, now = Date.now } = {}) {
    this.client = client;
    this.ttl = ttl;
    this.events = events;
    this.fallbacks = new Map(Object.entries(fallbacks));
    this.onStale = onStale;
    this.onEvent = onEvent;
    this.now = now;
    this.entries = new Map(); // cache key -> entry
    this.inflight = new Map(); // cache key -> Promise of an entry (first reads)
    this.refreshing = new Set();
    this.again = new Set();
    this.pending = new Set(); // background revalidations, awaited by close()
    this.streams = new Map(); // project -> Promise of its stream loop
    this.abort = new AbortController();
  }

  /** Stops background revalidations and event streams, and waits for them. */
  async close() {
    this.abort.abort();
    await Promise.allSettled([...this.pending, ...this.streams.values()]);
  }

  event(key, ev) {
    if (this.onEvent) this.onEvent(key, ev);
  }

  stale(key, err) {
    if (this.onStale) this.onStale(key, err);
  }

  /**
   * The prompt version key ("project/slug") at the version opts pick
   * ({version: n} or {label: "name"}; live otherwise), as the API's
   * PromptVersion. Shared with the cache: read it, never change it.
   */
  async get(key, opts = {}) {
    return (await this.entry(key, opts.version ?? 0, opts.label ?? "")).pv;
  }

  // cached returns a held entry without a request: fresh, or stale with a
  // revalidation started. undefined when none is held.
  cached(key, version, label) {
    const k = `${key}\0${version}\0${label}`;
    const e = this.entries.get(k);
    if (e === undefined || e.fallback) return undefined;
    if (this.now() - e.fetchedAt < this.ttl) {
      this.event(key, "hit");
    } else {
      this.event(key, "stale_served");
      this.revalidate(k, { key, version, label }, e);
    }
    return e;
  }

  async entry(key, version, label) {
    const e = this.cached(key, version, label);
    if (e !== undefined) return e;
    const k = `${key}\0${version}\0${label}`;
    this.event(key, "miss");
    // Concurrent first reads of one prompt make one request.
    let p = this.inflight.get(k);
    if (p === undefined) {
      p = this.fetch(k, { key, version, label }, null).finally(() => this.inflight.delete(k));
      this.inflight.set(k, p);
    }
    try {
      return await p;
    } catch (err) {
      if (!unreachable(err)) throw err;
      const held = this.entries.get(k); // a fallback served before
      if (held !== undefined) {
        this.stale(key, err);
        this.event(key, "fallback");
        return held;
      }
      const fb = this.fallbacks.get(key);
      if (fb !== undefined && version === 0 && label === "") {
        const pv = { prompt_id: "", version: 0, commit: "", template: fb, model: "", model_params: {} };
        const fe = { pv, compiled: compilePrompt(pv), fetchedAt: 0, fallback: true };
        this.entries.set(k, fe);
        this.stale(key, err);
        this.event(key, "fallback");
        return fe;
      }
      throw err;
    }
  }

  // revalidate starts one background revalidation of k.
  revalidate(k, sel, old) {
    if (this.refreshing.has(k)) {
      // One at a time; an event arriving meanwhile asks for another once
      // this one is done, since it may have read too early.
      this.again.add(k);
      return;
    }
    this.refreshing.add(k);
    const run = (async () => {
      let err = null;
      try {
        await this.fetch(k, sel, old);
      } catch (e) {
        err = e;
      }
      this.refreshing.delete(k);
      const again = this.again.delete(k);
      const cur = this.entries.get(k);
      if (this.abort.signal.aborted) return;
      if (err === null) {
        if (again && cur !== undefined) this.revalidate(k, sel, cur);
      } else if (unreachable(err)) {
        // Keep serving the last good version; try again after another
        // TTL rather than on every get.
        if (this.entries.get(k) === old) this.entries.set(k, { ...old, fetchedAt: this.now() });
        this.stale(sel.key, err);
        this.event(sel.key, "error");
      } else {
        // The server answered: the prompt (or version, or access) is
        // gone. Drop it; the next get reports the error.
        if (this.entries.get(k) === old) this.entries.delete(k);
        this.event(sel.key, "evicted");
      }
    })();
    this.pending.add(run);
    run.finally(() => this.pending.delete(run));
  }

  // fetch reads sel from the server (conditionally when old is set) and
  // stores the entry.
  async fetch(k, sel, old) {
    const [project, slug] = splitKey(sel.key);
    const at = { project, slug };
    let path = "/v1/projects/{project}/prompts/{slug}/live";
    if (sel.version > 0) {
      path = "/v1/projects/{project}/prompts/{slug}/versions/{version}";
      at.version = sel.version;
    } else if (sel.label !== "" && sel.label !== "live") {
      // No read by label: the label list names the version, whose
      // content (immutable) revalidates like any version's.
      const { data } = await this.client.GET("/v1/projects/{project}/prompts/{slug}/labels", { params: { path: at }, signal: this.abort.signal });
      const l = (data.labels ?? []).find((l) => l.name === sel.label);
      if (l === undefined) throw new QuireError({ status: 404, code: "not_found", message: `label ${sel.label} not found` });
      path = "/v1/projects/{project}/prompts/{slug}/versions/{version}";
      at.version = l.version;
    }
    const headers = old !== null ? { "If-None-Match": `"${old.pv.commit}"` } : {};
    const res = await this.client.GET(path, { params: { path: at }, headers, signal: this.abort.signal });
    let e;
    if (res.status === 304) {
      e = { pv: old.pv, compiled: old.compiled, fetchedAt: this.now(), fallback: false };
      this.event(sel.key, "not_modified");
    } else {
      const pv = res.data?.version;
      if (!pv) throw new QuireError({ status: res.status, message: `GET ${path}: the answer has no version` });
      e = { pv, compiled: compilePrompt(pv), fetchedAt: this.now(), fallback: false };
      if (old !== null) this.event(sel.key, "updated");
    }
    this.entries.set(k, e);
    if (this.events && old === null) this.subscribe(project);
    return e;
  }

  /**
   * Renders the prompt key at the version opts pick, locally, with vars:
   * the answer the server's render gives for the same variables
   * ({prompt_id, version, commit, rendered | messages, model,
   * model_params, partials}). Partials {{> slug}} and {{> slug@N}} come
   * from the same project through this cache. Errors are QuireErrors
   * worded as the server's (missing variables: code "unprocessable",
   * details.missing; typed variables that fail the version's
   * variables_schema: details.errors). A schema with keywords the SDK does
   * not check (src/schema.js) is rendered by the server instead.
   */
  async render(key, vars = {}, opts = {}) {
    const e = await this.entry(key, opts.version ?? 0, opts.label ?? "");
    const [project, slug] = splitKey(key);
    let skipSchema = false;
    if (!e.compiled.checkable) {
      // A variables_schema the SDK cannot check exactly: the server
      // renders (the same version), or, when it cannot be reached, a local
      // render without the check.
      try {
        const body = { variables: vars, version: e.pv.version };
        return (await this.client.POST("/v1/projects/{project}/prompts/{slug}/render", { params: { path: { project, slug } }, body })).data;
      } catch (err) {
        if (!unreachable(err)) throw err;
        this.stale(key, err);
        skipSchema = true;
      }
    }
    const gone = new Set(); // partials the server does not have
    for (;;) {
      const used = new Map();
      const partials = (name) => this.partial(project, name, used, gone);
      let out;
      try {
        out = renderCompiled(e.compiled, e.pv, vars, { partials, name: slug, skipSchema });
      } catch (err) {
        if (!(err instanceof NeedPartial)) throw err;
        try {
          await this.entry(err.key, err.version, "");
        } catch (fetchErr) {
          if (fetchErr instanceof QuireError && fetchErr.status === 404) gone.add(`${err.key}\0${err.version}`);
          else throw fetchErr;
        }
        continue;
      }
      const pv = e.pv;
      const answer = { prompt_id: pv.prompt_id, version: pv.version, commit: pv.commit };
      if (out.text !== undefined) answer.rendered = out.text;
      else answer.messages = out.messages;
      answer.model = pv.model ?? "";
      answer.model_params = pv.model_params ?? {};
      answer.partials = out.partials.filter((n) => used.has(n)).map((n) => used.get(n));
      return answer;
    }
  }

  // partial resolves {{> slug}} (live) and {{> slug@N}} (published N) to
  // a text prompt of project held by the cache, or null (missing).
  partial(project, name, used, gone) {
    const at = name.indexOf("@");
    const slug = at < 0 ? name : name.slice(0, at);
    let version = 0;
    if (at >= 0) {
      const ver = name.slice(at + 1);
      version = Number(ver);
      if (!/^[1-9][0-9]*$/.test(ver) || !Number.isSafeInteger(version)) return null;
    }
    if (slug === "" || slug.includes("/")) return null;
    const key = `${project}/${slug}`;
    if (gone.has(`${key}\0${version}`)) return null;
    // A fallback (served while the server is down) is held but not cached.
    const e = this.cached(key, version, "") ?? this.entries.get(`${key}\0${version}\0`);
    if (e === undefined) throw new NeedPartial(key, version);
    if (e.compiled.text === null) return null; // only text prompts are partials
    used.set(name, { slug: name, prompt_id: e.pv.prompt_id, version: e.pv.version, commit: e.pv.commit });
    return e.compiled.text;
  }

  // subscribe starts project's event stream, once.
  subscribe(project) {
    if (this.streams.has(project) || this.abort.signal.aborted) return;
    this.streams.set(project, this.follow(project));
  }

  // follow reads project's stream until close(), reconnecting with a
  // backoff (1 s doubling to 30 s) and resuming with Last-Event-ID. A 4xx
  // answer (no events capability, no access) ends it: the TTL alone
  // applies then.
  async follow(project) {
    const last = { id: "" };
    let wait = 1000;
    const signal = this.abort.signal;
    while (!signal.aborted) {
      let connected = false;
      try {
        connected = await this.stream(project, last);
      } catch (e) {
        if (e instanceof QuireError && e.status >= 400 && e.status < 500) return;
      }
      if (connected) wait = 1000;
      await new Promise((resolve) => {
        const t = setTimeout(resolve, wait);
        signal.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        }, { once: true });
      });
      wait = Math.min(2 * wait, 30000);
    }
  }

  // stream reads one connection of project's stream; it resolves true
  // once the stream ends after it was connected.
  async stream(project, last) {
    const url = new URL(`${this.client.base}/v1/projects/${encodeURIComponent(project)}/events`);
    url.searchParams.set("types", REFRESH_TYPES.join(","));
    const headers = this.client.headers({ Accept: "text/event-stream" });
    if (last.id) headers["Last-Event-ID"] = last.id;
    let res;
    try {
      res = await this.client.fetch(url, { headers, signal: this.abort.signal });
    } catch (e) {
      throw new QuireError({ status: 0, message: e.message, cause: e });
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new QuireError({ status: res.status, message: res.statusText });
    }
    // Events may have been missed between the entries' fetch (or the
    // last connection) and now: revalidate the project's entries once.
    this.notify(project, "");
    const decoder = new TextDecoder();
    let buf = "";
    let data = "";
    try {
      // A reader rather than for-await: browsers iterate streams only lately.
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).replace(/\r$/, "");
          buf = buf.slice(nl + 1);
          if (line === "") {
            if (data !== "") {
              try {
                const ev = JSON.parse(data);
                if (ev.asset?.kind === "prompt") this.notify(project, ev.asset.id);
              } catch {
                // not an event of ours
              }
              data = "";
            }
          } else if (line.startsWith("id:")) {
            last.id = line.slice(3).trim();
          } else if (line.startsWith("data:")) {
            data += line.slice(5).replace(/^ /, "");
          }
        }
      }
    } catch {
      // the connection dropped (or close() aborted it)
    }
    return true;
  }

  // notify revalidates now the entries of prompt id in project ("": every
  // entry of the project).
  notify(project, id) {
    for (const [k, e] of this.entries) {
      const [key, version, label] = k.split("\0");
      if (e.fallback || splitKey(key)[0] !== project || (id !== "" && e.pv.prompt_id !== id)) continue;
      if (id !== "") this.event(key, "notified");
      this.revalidate(k, { key, version: Number(version), label }, e);
    }
  }
}

function splitKey(key) {
  const i = key.indexOf("/");
  const project = key.slice(0, i), slug = key.slice(i + 1);
  if (i <= 0 || slug === "" || slug.includes("/")) throw new TypeError(`prompt key ${JSON.stringify(key)} must be "project/slug"`);
  return [project, slug];
}
