// quire's Mustache engine, ported line for line from the server's
// render/ package so that a local render gives exactly the server's
// answer: no HTML escaping, partials, inheritance, dynamic names,
// standalone lines, every missing name reported, and the same limits.
// render/testdata/conformance.json is the proof: test/conformance.test.js
// renders every case of it.

import { QuireError } from "./errors.js";
import { checkable, checkVariables } from "./schema.js";

export const MAX_OUTPUT = 1 << 20;
export const MAX_STEPS = 1 << 18;
export const MAX_DEPTH = 16;
const MAX_NESTING = 64;
const MAX_SECTIONS = 4096;

// Go's unicode.IsSpace, which strings.TrimSpace and strings.Fields use.
const SPACE = "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000";
const isSpace = (c) => SPACE.includes(c);

function trimSpace(s) {
  let a = 0;
  let b = s.length;
  while (a < b && isSpace(s[a])) a++;
  while (b > a && isSpace(s[b - 1])) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

function fields(s) {
  const out = [];
  let cur = "";
  for (const c of s) {
    if (isSpace(c)) {
      if (cur) out.push(cur);
      cur = "";
    } else cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

const K_TEXT = 0, K_VAR = 1, K_SECTION = 2, K_INVERTED = 3, K_PARTIAL = 4, K_PARENT = 5, K_BLOCK = 6;

class SyntaxErr extends Error {
  constructor(line, msg) {
    super(`line ${line}: ${msg}`);
  }
}

function lineOf(src, pos) {
  let n = 1;
  for (let i = src.indexOf("\n"); i >= 0 && i < pos; i = src.indexOf("\n", i + 1)) n++;
  return n;
}

const eligible = (op) => "#^/!><$=".includes(op) && op !== "";
const opens = (op) => op === "#" || op === "^" || op === "<" || op === "$";

function tokenize(src) {
  const toks = [];
  const open = [];
  let otag = "{{", ctag = "}}";
  const fail = (pos, msg) => new SyntaxErr(lineOf(src, pos), msg);
  for (let pos = 0; ;) {
    const i = src.indexOf(otag, pos);
    if (i < 0) break;
    const t = { op: "", start: i, end: 0, name: "", dynamic: false, cutBefore: 0, cutAfter: 0, standalone: false, lineCut: false, ws: "", match: 0 };
    const p = i + otag.length;
    let content;
    if (src.startsWith("{", p)) {
      const j = src.indexOf("}" + ctag, p + 1);
      if (j < 0) throw fail(t.start, `unclosed tag ${otag}{`);
      content = src.slice(p + 1, j);
      t.op = "&";
      t.end = j + 1 + ctag.length;
    } else if (src.startsWith("=", p)) {
      const j = src.indexOf("=" + ctag, p + 1);
      if (j < 0) throw fail(t.start, "unclosed set-delimiter tag");
      content = src.slice(p + 1, j);
      t.op = "=";
      t.end = j + 1 + ctag.length;
      const f = fields(content);
      if (f.length !== 2 || content.includes("=")) {
        throw fail(t.start, `bad set-delimiter tag ${otag}=${content}=${ctag}: it takes two delimiters without = or spaces`);
      }
      [otag, ctag] = f;
    } else {
      const j = src.indexOf(ctag, p);
      if (j < 0) throw fail(t.start, `unclosed tag ${otag}`);
      content = trimSpace(src.slice(p, j));
      t.end = j + ctag.length;
      if (content !== "" && "&#^/!><$".includes(content[0])) {
        t.op = content[0];
        content = content.slice(1);
      }
    }
    pos = t.end;
    if (t.op === "=" || t.op === "!") {
      toks.push(t);
      continue;
    }
    content = trimSpace(content);
    if ((t.op === ">" || t.op === "<" || t.op === "/") && content.startsWith("*")) {
      t.dynamic = true;
      content = trimSpace(content.slice(1));
    }
    if (content === "") throw fail(t.start, "a tag without a name");
    t.name = content;
    if (opens(t.op)) {
      open.push(toks.length);
    } else if (t.op === "/") {
      if (open.length === 0) throw fail(t.start, `${otag}/${t.name}${ctag} closes nothing`);
      const o = open[open.length - 1];
      if (toks[o].name !== t.name || (t.dynamic && !toks[o].dynamic)) {
        throw fail(t.start, `${otag}/${t.name}${ctag} closes ${otag}${toks[o].op}${toks[o].name}${ctag} (line ${lineOf(src, toks[o].start)})`);
      }
      open.pop();
      toks[o].match = toks.length;
      t.match = o;
    }
    toks.push(t);
  }
  if (open.length > 0) {
    const o = toks[open[open.length - 1]];
    throw fail(o.start, `${o.op}${o.name} is never closed`);
  }
  return toks;
}

function lineBefore(src, pos) {
  let k = pos;
  while (k > 0 && (src[k - 1] === " " || src[k - 1] === "\t")) k--;
  return [k, k === 0 || src[k - 1] === "\n"];
}

function restOfLine(src, pos) {
  let k = pos;
  while (k < src.length && (src[k] === " " || src[k] === "\t")) k++;
  if (k === src.length) return [k, true];
  if (src[k] === "\n") return [k + 1, true];
  if (src[k] === "\r" && k + 1 < src.length && src[k + 1] === "\n") return [k + 2, true];
  return [k, false];
}

function markStandalone(src, toks) {
  for (const t of toks) {
    t.cutBefore = t.start;
    t.cutAfter = t.end;
  }
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (!eligible(t.op)) continue;
    const [ls, ok] = lineBefore(src, t.start);
    if (!ok) continue;
    const [eol, ok2] = restOfLine(src, t.end);
    if (ok2) {
      t.standalone = true;
      t.lineCut = true;
      t.ws = src.slice(ls, t.start);
      t.cutBefore = ls;
      t.cutAfter = eol;
      continue;
    }
    if (i + 1 >= toks.length || toks[i + 1].start !== t.end) continue;
    const u = toks[i + 1];
    const [eol2, ok3] = restOfLine(src, u.end);
    if (!ok3) continue;
    let keepEOL = false;
    if (t.op === "<" && u.op === "$") {
      // a parent with its first block
    } else if (t.op === "<" && u.op === "/" && u.match === i) {
      // an empty parent
    } else if (t.op === "$" && u.op === "/" && u.match === i) {
      keepEOL = true;
    } else if (t.op === "/" && toks[t.match].op === "$" && u.op === "/" && toks[u.match].op === "<") {
      // a last block's end with its parent's
    } else continue;
    const ws = src.slice(ls, t.start);
    t.standalone = true;
    t.lineCut = true;
    t.ws = ws;
    t.cutBefore = ls;
    u.standalone = true;
    u.ws = ws;
    if (!keepEOL) u.cutAfter = eol2;
    i++;
  }
}

function nextLine(src, p, b) {
  for (let q = p; q < b; q++) if (src.charCodeAt(q) === 10) return q + 1;
  return -1;
}

function commonIndent(s) {
  let common = "";
  let first = true;
  for (const line of s.split(/(?<=\n)/)) {
    if (line === "") continue;
    let k = 0;
    while (k < line.length && (line[k] === " " || line[k] === "\t")) k++;
    const trimmed = line.slice(k);
    if (trimmed.replace(/[\r\n]+$/, "") === "") continue;
    const ws = line.slice(0, k);
    if (first) {
      common = ws;
      first = false;
      continue;
    }
    let n = 0;
    while (n < common.length && n < ws.length && common[n] === ws[n]) n++;
    common = common.slice(0, n);
  }
  return common;
}

function node(kind, text) {
  return { kind, dynamic: false, standalone: false, text, parts: null, starts: null, nodes: null, indent: "", dedent: "" };
}

function parse(src) {
  const toks = tokenize(src);
  markStandalone(src, toks);
  let textLen = 0, nested = 0, sections = 0;
  const stack = [{ tok: -1, nodes: [] }];
  const addText = (a, b, next) => {
    const top = stack[stack.length - 1];
    let starts = null;
    let p = a;
    if (p !== 0 && src[p - 1] !== "\n") p = nextLine(src, p, b);
    while (p >= 0 && p < src.length) {
      if (p === b && (next === null || next.lineCut)) break;
      (starts ??= []).push(p - a);
      p = nextLine(src, p, b);
    }
    if (a === b && starts === null) return;
    textLen += b - a;
    const n = node(K_TEXT, src.slice(a, b));
    n.starts = starts;
    top.nodes.push(n);
  };
  let prev = 0;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    addText(prev, Math.max(prev, t.cutBefore), t);
    prev = t.cutAfter;
    let n = node(K_VAR, t.name);
    n.dynamic = t.dynamic;
    n.standalone = t.standalone;
    if (t.name !== ".") n.parts = t.name.split(".");
    switch (t.op) {
      case "!":
      case "=":
        continue;
      case "":
      case "&":
        break;
      case ">":
        n.kind = K_PARTIAL;
        n.indent = t.ws;
        break;
      case "#":
      case "^":
      case "<":
      case "$":
        if (t.op === "<" || t.op === "$") {
          if (++nested > MAX_NESTING) throw new SyntaxErr(lineOf(src, t.start), `parents and blocks nest deeper than ${MAX_NESTING} levels`);
        } else if (++sections > MAX_SECTIONS) {
          throw new SyntaxErr(lineOf(src, t.start), `sections nest deeper than ${MAX_SECTIONS} levels`);
        }
        stack.push({ tok: i, nodes: [] });
        continue;
      case "/": {
        const b = stack.pop();
        const o = toks[b.tok];
        if (o.op === "<" || o.op === "$") nested--;
        else sections--;
        const parts = n.parts;
        n = node(K_SECTION, o.name);
        n.dynamic = o.dynamic;
        n.standalone = o.standalone;
        n.parts = parts;
        n.nodes = b.nodes;
        if (o.op === "^") n.kind = K_INVERTED;
        else if (o.op === "<") {
          n.kind = K_PARENT;
          n.indent = o.ws;
          n.nodes = b.nodes.filter((c) => c.kind === K_BLOCK);
        } else if (o.op === "$") {
          n.kind = K_BLOCK;
          if (o.standalone) {
            n.dedent = commonIndent(src.slice(o.cutAfter, Math.max(o.cutAfter, t.cutBefore)));
            n.indent = n.dedent || o.ws;
          }
        }
        break;
      }
    }
    stack[stack.length - 1].nodes.push(n);
  }
  addText(prev, src.length, null);
  return { nodes: stack[0].nodes, textLen };
}

function unprocessable(message, details) {
  return new QuireError({ status: 422, code: "unprocessable", message, details });
}

/** A parsed template, immutable: parse once, render many times. */
export class Template {
  constructor(nodes) {
    this.nodes = nodes;
  }

  /** Whether the template has a partial or parent tag. */
  includes() {
    const walk = (ns) => ns.some((n) => n.kind === K_PARTIAL || n.kind === K_PARENT || ((n.kind === K_SECTION || n.kind === K_INVERTED || n.kind === K_BLOCK) && walk(n.nodes)));
    return walk(this.nodes);
  }

  /**
   * Renders with vars; partials(name) returns a Template or null (missing).
   * Returns {text, partials}; throws a QuireError as the server answers.
   */
  render(vars, { partials = null, name = "" } = {}) {
    const r = new Renderer(partials, name, false);
    r.stack.push(vars ?? {});
    r.nodes(this.nodes);
    if (r.err === TOO_LARGE) throw tooLargeError();
    if (r.err) throw r.err;
    if (r.missing.length > 0) throw missingError(r.missing);
    return { text: r.out.join(""), partials: r.used.filter((u) => u.t !== null).map((u) => u.name) };
  }

  /** The names a render with vars would find missing (">name" for partials). */
  missing(vars, { partials = null, name = "" } = {}) {
    const r = new Renderer(partials, name, true);
    r.stack.push(vars ?? {});
    r.nodes(this.nodes);
    // A resolver's own exception (not an answer of the engine) goes on
    // to the caller, who may fetch the partial and try again.
    if (r.err !== null && r.err !== TOO_LARGE && !(r.err instanceof QuireError)) throw r.err;
    return r.missing;
  }
}

/** Parses a template that may include others; a syntax error is a 422 QuireError. */
export function parseTemplate(text) {
  try {
    return new Template(parse(text).nodes);
  } catch (e) {
    if (e instanceof SyntaxErr) throw unprocessable(`template does not parse as Mustache: ${e.message}`);
    throw e;
  }
}

const TOO_LARGE = Symbol("too large");

function tooLargeError() {
  return unprocessable(`the template expands to more than ${MAX_OUTPUT} bytes (or ${MAX_STEPS} tags) with these variables`, { limit: MAX_OUTPUT });
}

/** The error for missing variables and partials (">name"), as the server words it. */
export function missingError(missing) {
  const vars = missing.filter((m) => !m.startsWith(">"));
  const parts = missing.filter((m) => m.startsWith(">")).map((m) => m.slice(1));
  const msg = [];
  if (vars.length > 0) msg.push("missing variables: " + vars.join(", "));
  if (parts.length > 0) msg.push("missing partials: " + parts.join(", "));
  const details = { missing };
  if (parts.length > 0) details.missing_partials = parts;
  return unprocessable(msg.join("; "), details);
}

function cycleError(chain) {
  return unprocessable(`partials include each other: ${chain.join(" > ")}`, { cycle: chain });
}

function depthError(chain) {
  return unprocessable(`partials nest deeper than ${MAX_DEPTH} levels: ${chain.join(" > ")}`, { chain, limit: MAX_DEPTH });
}

// utf8Len is the UTF-8 length of s: the output limit counts bytes, as
// the server's does.
function utf8Len(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}

const isMap = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

// jsonValue is v as JSON.stringify would send it: a value with toJSON
// (a Date) is what toJSON returns, NaN and the infinities are null.
function jsonValue(v) {
  if (typeof v === "number" && !Number.isFinite(v)) return null;
  if (v !== null && typeof v === "object" && typeof v.toJSON === "function") return v.toJSON();
  return v;
}

/** Mustache falsiness for JSON values, as the server has it. */
function empty(v) {
  if (v === null || v === undefined || v === false) return true;
  if (typeof v === "string") return trimSpace(v) === "";
  if (Array.isArray(v)) return v.length === 0;
  return false;
}

function compareKeys(a, b) {
  // Go sorts keys by their UTF-8 bytes: code point order.
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i), y = b.codePointAt(i);
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : 1;
}

function jsonString(s) {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0xd800 || c > 0xdfff)) continue;
    let esc;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      i++;
      continue;
    } else if (c >= 0xd800 && c <= 0xdfff) esc = "\\ufffd"; // a lone surrogate, as invalid UTF-8 on the server
    else if (c === 0x22) esc = '\\"';
    else if (c === 0x5c) esc = "\\\\";
    else if (c === 0x0a) esc = "\\n";
    else if (c === 0x0d) esc = "\\r";
    else if (c === 0x09) esc = "\\t";
    else esc = "\\u00" + c.toString(16).padStart(2, "0");
    out += s.slice(start, i) + esc;
    start = i + 1;
  }
  return out + s.slice(start) + '"';
}

function toJSON(v) {
  v = jsonValue(v);
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "string":
      return jsonString(v);
    case "number":
    case "bigint":
      return String(v);
    case "boolean":
      return v ? "true" : "false";
  }
  if (Array.isArray(v)) return "[" + v.map(toJSON).join(",") + "]";
  const keys = Object.keys(v).filter((k) => v[k] !== undefined && typeof v[k] !== "function").sort(compareKeys);
  return "{" + keys.map((k) => jsonString(k) + ":" + toJSON(v[k])).join(",") + "}";
}

/** The text {{x}} renders for v. */
function valueText(v) {
  switch (typeof v) {
    case "string":
      return v;
    case "number":
    case "bigint":
      return String(v);
    case "boolean":
      return v ? "true" : "false";
  }
  if (v === null || v === undefined) return "";
  return toJSON(v);
}

function trimIndent(indent, dedent) {
  let i = 0;
  while (i < indent.length && i < dedent.length && indent[i] === dedent[i]) i++;
  return indent.slice(i);
}

class Renderer {
  constructor(partials, root, dry) {
    this.partials = partials;
    this.root = root;
    this.dry = dry;
    this.out = [];
    this.size = 0;
    this.stack = [];
    this.chain = [];
    this.used = [];
    this.args = [];
    this.active = [];
    this.indent = "";
    this.dedent = "";
    this.steps = 0;
    this.missing = [];
    this.seen = new Set();
    this.err = null;
  }

  charge(n) {
    if ((this.steps += n) > MAX_STEPS) {
      this.err = TOO_LARGE;
      return false;
    }
    return true;
  }

  write(s) {
    if (s.length === 0) return true;
    if ((this.size += utf8Len(s)) > MAX_OUTPUT) {
      this.err = TOO_LARGE;
      return false;
    }
    if (!this.dry) this.out.push(s);
    return true;
  }

  miss(name) {
    if (!this.seen.has(name)) {
      this.seen.add(name);
      this.missing.push(name);
    }
  }

  lookup(n) {
    if (n.parts === null) return [jsonValue(this.stack[this.stack.length - 1]), true];
    let v;
    let found = false;
    const first = n.parts[0];
    for (let i = this.stack.length - 1; i >= 0; i--) {
      const m = this.stack[i];
      if (isMap(m) && Object.hasOwn(m, first) && m[first] !== undefined) {
        v = jsonValue(m[first]);
        found = true;
        break;
      }
    }
    if (!found) return [undefined, false];
    for (let i = 1; i < n.parts.length; i++) {
      const p = n.parts[i];
      if (!isMap(v) || !Object.hasOwn(v, p) || v[p] === undefined) return [undefined, false];
      v = jsonValue(v[p]);
    }
    return [v, true];
  }

  nodes(ns) {
    for (const n of ns) {
      if (n.kind === K_TEXT) {
        if (!this.text(n)) return false;
        continue;
      }
      if (!this.charge(this.stack.length + (n.parts === null ? 0 : n.parts.length))) return false;
      switch (n.kind) {
        case K_VAR: {
          const [v, ok] = this.lookup(n);
          if (!ok) {
            this.miss(n.text);
            continue;
          }
          if (!this.write(valueText(v))) return false;
          break;
        }
        case K_SECTION: {
          const [v, ok] = this.lookup(n);
          if (!ok || empty(v)) continue;
          if (Array.isArray(v)) {
            for (const item of v) {
              if (!this.charge(1)) return false;
              this.stack.push(item === undefined ? null : jsonValue(item));
              const ok2 = this.nodes(n.nodes);
              this.stack.pop();
              if (!ok2) return false;
            }
            continue;
          }
          this.stack.push(v);
          const ok2 = this.nodes(n.nodes);
          this.stack.pop();
          if (!ok2) return false;
          break;
        }
        case K_INVERTED: {
          const [v, ok] = this.lookup(n);
          if ((!ok || empty(v)) && !this.nodes(n.nodes)) return false;
          break;
        }
        case K_PARTIAL:
        case K_PARENT:
          if (!this.include(n)) return false;
          break;
        case K_BLOCK:
          if (!this.block(n)) return false;
          break;
      }
    }
    return true;
  }

  text(n) {
    if (n.starts === null || (this.indent === "" && this.dedent === "")) return this.write(n.text);
    const s = n.text;
    let prev = 0;
    for (const at of n.starts) {
      if (!this.write(s.slice(prev, at))) return false;
      let k = at;
      let d = 0;
      while (d < this.dedent.length && k < s.length && s[k] === this.dedent[d]) {
        k++;
        d++;
      }
      if ((k < s.length && s[k] !== "\n" && s[k] !== "\r") || k === s.length) {
        if (!this.write(this.indent)) return false;
      }
      prev = k;
    }
    return this.write(s.slice(prev));
  }

  include(n) {
    let name = n.text;
    if (n.dynamic) {
      const [v, ok] = this.lookup(n);
      if (!ok) {
        this.miss(n.text);
        return true;
      }
      if (typeof v === "string") name = v;
      else if (typeof v === "number" || typeof v === "bigint") name = String(v);
      else {
        this.err = unprocessable(`the dynamic partial name ${goQuote(n.text)} is not a string`, { variable: n.text });
        return false;
      }
    }
    const i = this.resolve(name);
    if (i < 0) return false;
    if (name === this.root || this.chain.includes(i)) {
      this.err = cycleError([...this.chainNames(), name]);
      return false;
    }
    if (this.chain.length >= MAX_DEPTH) {
      this.err = depthError([...this.chainNames(), name]);
      return false;
    }
    const t = this.used[i].t;
    if (t === null) {
      this.miss(">" + name);
      return true;
    }
    const indent = this.indent, dedent = this.dedent;
    const reframe = indent !== "" || dedent !== "" || (n.standalone && n.indent !== "");
    if (reframe) {
      this.indent = n.standalone ? indent + trimIndent(n.indent, dedent) : "";
      this.dedent = "";
    }
    this.chain.push(i);
    if (n.kind === K_PARENT) this.args.push(n);
    const ok = this.nodes(t.nodes);
    if (n.kind === K_PARENT) this.args.pop();
    this.chain.pop();
    if (reframe) {
      this.indent = indent;
      this.dedent = dedent;
    }
    return ok;
  }

  // resolve returns the index of name in used, resolving it once per
  // render; -1 when the render must stop.
  resolve(name) {
    if (!this.charge(this.used.length)) return -1;
    const i = this.used.findIndex((u) => u.name === name);
    if (i >= 0) return i;
    let t = null;
    if (this.partials !== null) {
      try {
        t = this.partials(name) ?? null;
      } catch (e) {
        this.err = e;
        return -1;
      }
    }
    this.used.push({ name, t });
    return this.used.length - 1;
  }

  chainNames() {
    const out = this.root !== "" ? [this.root] : [];
    for (const i of this.chain) out.push(this.used[i].name);
    return out;
  }

  block(site) {
    let content = site;
    for (const p of this.args) {
      if (!this.charge(p.nodes.length)) return false;
      const b = p.nodes.find((b) => b.text === site.text && !this.active.includes(b));
      if (b !== undefined) {
        content = b;
        break;
      }
    }
    if (content === site && !site.standalone) return this.nodes(site.nodes);
    const indent = this.indent, dedent = this.dedent;
    if (site.standalone) {
      this.indent = indent + trimIndent(site.indent, dedent);
      this.dedent = content.dedent;
    } else {
      this.indent = "";
      this.dedent = content.dedent;
    }
    if (content !== site) this.active.push(content);
    const ok = this.nodes(content.nodes);
    if (content !== site) this.active.pop();
    this.indent = indent;
    this.dedent = dedent;
    return ok;
  }
}

// goQuote quotes s as Go's %q does for printable text.
function goQuote(s) {
  return JSON.stringify(s);
}

/**
 * Checks that v, the value of a chat placeholder, is a list of
 * {role, content} messages, and returns them.
 */
export function placeholderMessages(name, v) {
  const bad = (msg) => unprocessable(`variables.${name} must be a list of {role, content} messages: ${msg}`, { placeholder: name });
  if (!Array.isArray(v)) throw bad("it is not a list");
  return v.map((m, i) => {
    if (!isMap(m)) throw bad(`item ${i} is not an object`);
    const keys = Object.keys(m).filter((k) => m[k] !== undefined);
    if (typeof m.role !== "string" || typeof m.content !== "string" || m.role === "" || keys.length !== 2) {
      throw bad(`item ${i} must hold exactly a string role and a string content`);
    }
    return { role: m.role, content: m.content };
  });
}

/**
 * Parses a prompt version's templates as the server does: {text} for a
 * text prompt, {msgs} (null for a placeholder) for a chat prompt, or
 * {err}, the parse error, which every render then throws.
 */
export function compilePrompt(version) {
  const c = compileTemplates(version);
  const schema = version.variables_schema ?? null;
  c.schema = schema;
  c.checkable = schema === null || checkable(schema);
  return c;
}

function compileTemplates(version) {
  try {
    if (typeof version.template === "string") return { text: parseTemplate(version.template), msgs: null, err: null };
    if (Array.isArray(version.messages) && version.messages.length > 0) {
      const msgs = version.messages.map((m, i) => {
        if (m.type === "placeholder") return null;
        try {
          return parseTemplate(m.content);
        } catch (e) {
          throw unprocessable(`messages[${i}]: ${e.message}`);
        }
      });
      return { text: null, msgs, err: null };
    }
    return { text: null, msgs: null, err: unprocessable(`version ${version.version ?? 0} has no template`) };
  } catch (e) {
    return { text: null, msgs: null, err: e };
  }
}

/**
 * Renders a compiled prompt version as the server's render does: the
 * variables checked against its variables_schema first (one the SDK
 * cannot check is a QuireError "schema_unchecked" unless opts.skipSchema),
 * then {text, partials} for a text prompt; for a chat prompt every missing
 * name of every message in one error before any is rendered, then
 * {messages, partials} with placeholders spliced in.
 */
export function renderCompiled(compiled, version, vars, opts = {}) {
  if (compiled.err) throw compiled.err;
  vars ??= {};
  if (compiled.schema !== null && compiled.schema !== undefined) {
    if (compiled.checkable) checkVariables(compiled.schema, vars);
    else if (!opts.skipSchema) {
      throw new QuireError({ code: "schema_unchecked", message: "the variables_schema uses keywords the SDK does not check: render on the server" });
    }
  }
  if (compiled.text !== null) return compiled.text.render(vars, opts);
  const missing = [];
  const add = (m) => missing.includes(m) || missing.push(m);
  compiled.msgs.forEach((t, i) => {
    if (t === null) {
      const name = version.messages[i].name;
      if (vars[name] === null || vars[name] === undefined) add(name);
    } else t.missing(vars, opts).forEach(add);
  });
  if (missing.length > 0) throw missingError(missing);
  const messages = [];
  const partials = [];
  compiled.msgs.forEach((t, i) => {
    const m = version.messages[i];
    if (t === null) {
      messages.push(...placeholderMessages(m.name, vars[m.name]));
      return;
    }
    const r = t.render(vars, opts);
    r.partials.forEach((p) => partials.includes(p) || partials.push(p));
    messages.push({ role: m.role, content: r.text });
  });
  return { messages, partials };
}

/** compilePrompt and renderCompiled in one call. */
export function renderPrompt(version, vars, opts = {}) {
  return renderCompiled(compilePrompt(version), version, vars, opts);
}
