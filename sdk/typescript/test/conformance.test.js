// Every case of render/testdata/conformance.json, the server engine's own
// answers, rendered by this SDK's engine: the text, or the error's code,
// message and details.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { parseTemplate, renderPrompt } from "../src/render.js";

const corpus = JSON.parse(readFileSync(new URL("../../../render/testdata/conformance.json", import.meta.url), "utf8"));

test("the corpus is there", () => {
  assert.ok(corpus.cases.length > 200, `${corpus.cases.length} cases`);
});

for (const c of corpus.cases) {
  test(c.name, () => {
    const partials = new Map(Object.entries(c.partials ?? {}).map(([k, v]) => [k, parseTemplate(v)]));
    const version = c.template !== undefined ? { template: c.template } : { messages: c.messages };
    if (c.variables_schema !== undefined) version.variables_schema = c.variables_schema;
    let got;
    try {
      got = renderPrompt(version, c.variables, { partials: (name) => partials.get(name) ?? null, name: c.self ?? "" });
    } catch (e) {
      if (!c.error) throw e;
      assert.equal(e.code, c.error.code);
      assert.equal(e.message, c.error.message);
      assert.deepEqual(e.details, c.error.details ?? {});
      return;
    }
    assert.equal(c.error, undefined, `rendered, want the error ${JSON.stringify(c.error)}`);
    if (c.expected_sha256) {
      assert.equal(Buffer.byteLength(got.text), c.expected_length);
      assert.equal(createHash("sha256").update(got.text).digest("hex"), c.expected_sha256);
    } else if (c.template !== undefined) {
      assert.equal(got.text, c.expected);
    } else {
      assert.deepEqual(got.messages, c.expected_messages);
    }
    assert.deepEqual(got.partials, c.partials_used ?? []);
  });
}
