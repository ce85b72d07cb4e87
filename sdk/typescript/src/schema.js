// Typed variables: a version's variables_schema (JSON Schema 2020-12)
// checked locally, with the server's 422 word for word, for the keywords
// implemented here (those of the server's validator, santhosh-tekuri/
// jsonschema, in its order). A schema using any other keyword is not
// checked locally: the prompt cache renders such a prompt on the server.
// The conformance corpus's schema/ cases are the proof.

import { QuireError } from "./errors.js";

const CHECKED = new Set([
  "type", "enum", "const", "required", "properties", "additionalProperties", "items",
  "minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "not", "allOf", "anyOf", "oneOf", "if", "then", "else",
]);
const ANNOTATIONS = new Set(["$schema", "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"]);
const TYPES = ["null", "boolean", "number", "integer", "string", "array", "object"];
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether schema uses only keywords this module checks exactly as the server. */
export function checkable(schema) {
  if (typeof schema === "boolean") return true;
  if (!isObject(schema)) return false;
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) {
      if (k === "$schema" && v !== "https://json-schema.org/draft/2020-12/schema") return false;
      continue;
    }
    if (!CHECKED.has(k)) return false;
    switch (k) {
      case "type":
        if (![v].flat().every((t) => TYPES.includes(t))) return false;
        break;
      case "properties":
        if (!isObject(v) || !Object.values(v).every(checkable)) return false;
        break;
      case "additionalProperties":
        if (typeof v !== "boolean" && !checkable(v)) return false;
        break;
      case "items":
      case "not":
      case "if":
      case "then":
      case "else":
        if (!checkable(v)) return false;
        break;
      case "allOf":
      case "anyOf":
      case "oneOf":
        if (!Array.isArray(v) || v.length === 0 || !v.every(checkable)) return false;
        break;
      case "enum":
      case "required":
        if (!Array.isArray(v)) return false;
        break;
    }
  }
  return true;
}

function typeOf(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number" || typeof v === "bigint") return "number";
  if (typeof v === "string") return "string";
  return Array.isArray(v) ? "array" : "object";
}

function equals(a, b) {
  const t = typeOf(a);
  if (t !== typeOf(b)) return false;
  if (t === "array") return a.length === b.length && a.every((x, i) => equals(x, b[i]));
  if (t === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equals(a[k], b[k]));
  }
  if (t === "null") return true;
  return a == b; // numbers compare by value (1 equals 1.0); bigint too
}

// quote is the validator's: Go's %q, then " unescaped and ' escaped.
function quote(s) {
  let out = "";
  for (const c of s) {
    const n = c.codePointAt(0);
    if (c === "\\") out += "\\\\";
    else if (c === "'") out += "\\'";
    else if (n < 0x20 || n === 0x7f) out += { 7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v" }[n] ?? "\\x" + n.toString(16).padStart(2, "0");
    else out += c;
  }
  return "'" + out + "'";
}

function display(v) {
  if (typeof v === "string") return quote(v);
  if (v === null) return "<nil>";
  if (typeof v === "object") return "value";
  return String(v);
}

const SUPERSCRIPT = { "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻" };

function group(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

// int is an integer as the validator's English message printer writes
// %d: digits grouped by thousands.
function int(n) {
  return n < 0 ? "-" + group(String(-n)) : group(String(n));
}

// float is a number as the printer writes %v of a float64: the shortest
// digits, grouped by thousands, or d.ddd×10ⁿⁿ when the exponent is below
// -4 or 6 and over.
function float(x) {
  x = Number(x);
  const sign = x < 0 ? "-" : "";
  x = Math.abs(x);
  const [mant, e] = x.toExponential().split("e");
  const exp = Number(e);
  if (x !== 0 && (exp < -4 || exp >= 6)) {
    const ee = String(Math.abs(exp)).padStart(2, "0");
    return sign + mant + "×10" + [...(exp < 0 ? "-" : "") + ee].map((c) => SUPERSCRIPT[c]).join("");
  }
  const [ip, fp] = String(x).split(".");
  return sign + group(ip) + (fp ? "." + fp : "");
}

const ptr = (loc) => loc.map((s) => "/" + s.replaceAll("~", "~0").replaceAll("/", "~1")).join("");

function fail(loc, message, causes = [], group = false) {
  return { path: ptr(loc), message, causes, group };
}

const codePoints = (s) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

// validate checks v at loc against s: null, one error, or a group of
// errors ("validation failed") when s found several.
function validate(s, v, loc) {
  if (s === true) return null;
  if (s === false) return fail(loc, "false schema");
  const t = typeOf(v);
  if (s.type !== undefined) {
    const want = [s.type].flat();
    if (!(want.includes(t) || (want.includes("integer") && t === "number" && Number.isInteger(Number(v))))) {
      return fail(loc, `got ${t}, want ${TYPES.filter((x) => want.includes(x)).join(" or ")}`);
    }
  }
  if (Object.hasOwn(s, "const") && !equals(v, s.const)) {
    return fail(loc, typeof s.const === "object" && s.const !== null ? "'const' failed" : `value must be ${display(s.const)}`);
  }
  if (s.enum !== undefined && !s.enum.some((e) => equals(v, e))) {
    const primitive = s.enum.every((e) => typeof e !== "object" || e === null);
    const msg = !primitive ? "'enum' failed" : s.enum.length === 1 ? `value must be ${display(s.enum[0])}` : `value must be one of ${s.enum.map(display).join(", ")}`;
    return fail(loc, msg);
  }
  const errs = [];
  if (t === "object") {
    const n = Object.keys(v).length;
    if (s.minProperties !== undefined && n < s.minProperties) errs.push(fail(loc, `minProperties: got ${int(n)}, want ${int(s.minProperties)}`));
    if (s.maxProperties !== undefined && n > s.maxProperties) errs.push(fail(loc, `maxProperties: got ${int(n)}, want ${int(s.maxProperties)}`));
    const missing = (s.required ?? []).filter((p) => !Object.hasOwn(v, p) || v[p] === undefined);
    if (missing.length === 1) errs.push(fail(loc, `missing property ${quote(missing[0])}`));
    else if (missing.length > 1) errs.push(fail(loc, `missing properties ${missing.map(quote).join(", ")}`));
    const additional = [];
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      if (s.properties !== undefined && Object.hasOwn(s.properties, k)) errs.push(validate(s.properties[k], x, [...loc, k]));
      else if (s.additionalProperties === false) additional.push(k);
      else if (isObject(s.additionalProperties)) errs.push(validate(s.additionalProperties, x, [...loc, k]));
    }
    if (additional.length > 0) errs.push(fail(loc, `additional properties ${additional.map(quote).join(", ")} not allowed`));
  } else if (t === "array") {
    if (s.minItems !== undefined && v.length < s.minItems) errs.push(fail(loc, `minItems: got ${int(v.length)}, want ${int(s.minItems)}`));
    if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(fail(loc, `maxItems: got ${int(v.length)}, want ${int(s.maxItems)}`));
    if (s.items !== undefined) v.forEach((x, i) => errs.push(validate(s.items, x === undefined ? null : x, [...loc, String(i)])));
  } else if (t === "string") {
    const n = s.minLength !== undefined || s.maxLength !== undefined ? codePoints(v) : 0;
    if (s.minLength !== undefined && n < s.minLength) errs.push(fail(loc, `minLength: got ${int(n)}, want ${int(s.minLength)}`));
    if (s.maxLength !== undefined && n > s.maxLength) errs.push(fail(loc, `maxLength: got ${int(n)}, want ${int(s.maxLength)}`));
  } else if (t === "number") {
    const x = Number(v);
    if (s.minimum !== undefined && x < s.minimum) errs.push(fail(loc, `minimum: got ${float(x)}, want ${float(s.minimum)}`));
    if (s.maximum !== undefined && x > s.maximum) errs.push(fail(loc, `maximum: got ${float(x)}, want ${float(s.maximum)}`));
    if (s.exclusiveMinimum !== undefined && x <= s.exclusiveMinimum) errs.push(fail(loc, `exclusiveMinimum: got ${float(x)}, want ${float(s.exclusiveMinimum)}`));
    if (s.exclusiveMaximum !== undefined && x >= s.exclusiveMaximum) errs.push(fail(loc, `exclusiveMaximum: got ${float(x)}, want ${float(s.exclusiveMaximum)}`));
  }
  // The combinators, after the rest, in the validator's order.
  if (s.not !== undefined && validate(s.not, v, loc) === null) errs.push(fail(loc, "'not' failed"));
  if (s.allOf !== undefined) {
    const failed = s.allOf.map((x) => validate(x, v, loc)).filter((e) => e !== null);
    if (failed.length > 0) errs.push(fail(loc, "'allOf' failed", failed));
  }
  if (s.anyOf !== undefined) {
    const failed = [];
    let matched = false;
    for (const x of s.anyOf) {
      const e = validate(x, v, loc);
      if (e === null) {
        matched = true;
        break;
      }
      failed.push(e);
    }
    if (!matched) errs.push(fail(loc, "'anyOf' failed", failed));
  }
  if (s.oneOf !== undefined) {
    const failed = [];
    let matched = -1;
    for (let i = 0; i < s.oneOf.length; i++) {
      const e = validate(s.oneOf[i], v, loc);
      if (e !== null) {
        if (matched === -1) failed.push(e);
      } else if (matched === -1) {
        matched = i;
      } else {
        errs.push(fail(loc, `'oneOf' failed, subschemas ${int(matched)}, ${int(i)} matched`));
        break;
      }
    }
    if (matched === -1) errs.push(fail(loc, "'oneOf' failed, none matched", failed));
  }
  if (s.if !== undefined) {
    if (validate(s.if, v, loc) === null) {
      if (s.then !== undefined) errs.push(validate(s.then, v, loc));
    } else if (s.else !== undefined) {
      errs.push(validate(s.else, v, loc));
    }
  }
  const found = errs.filter((e) => e !== null);
  if (found.length === 0) return null;
  return found.length === 1 ? found[0] : fail(loc, "validation failed", found, true);
}

/**
 * Checks variables against a checkable schema as the server's render
 * does: the 422 QuireError with details.errors ([{path, message}]), or
 * nothing when they satisfy it.
 */
export function checkVariables(schema, variables) {
  const r = validate(schema, JSON.parse(JSON.stringify(variables ?? {})), []);
  if (r === null) return;
  const out = [];
  const seen = new Set();
  const walk = (causes) => {
    for (const c of causes) {
      const key = c.path + "\0" + c.message;
      if (!seen.has(key)) {
        seen.add(key);
        out.push({ path: c.path, message: c.message });
      }
      walk(c.causes);
    }
  };
  // The validator reports a group of errors by its members.
  walk(r.group ? r.causes : [r]);
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  throw new QuireError({
    status: 422,
    code: "unprocessable",
    message: `variables do not satisfy the version's variables_schema: ${out[0].path}: ${out[0].message}`,
    details: { errors: out },
  });
}
