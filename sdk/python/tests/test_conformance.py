"""Every case of render/testdata/conformance.json, the server engine's own
answers, rendered by this SDK's engine: the text, or the error's code,
message and details."""

import hashlib
import json
import pathlib
import unittest

from quire import QuireError
from quire.render import parse_template, render_prompt

CORPUS = pathlib.Path(__file__).resolve().parents[3] / "render" / "testdata" / "conformance.json"


class Conformance(unittest.TestCase):
    def test_corpus(self):
        cases = json.loads(CORPUS.read_text("utf-8"))["cases"]
        self.assertGreater(len(cases), 200)
        for c in cases:
            with self.subTest(c["name"]):
                self.run_case(c)

    def run_case(self, c):
        partials = {k: parse_template(v) for k, v in (c.get("partials") or {}).items()}
        version = {"template": c["template"]} if "template" in c else {"messages": c["messages"]}
        if "variables_schema" in c:
            version["variables_schema"] = c["variables_schema"]
        try:
            got = render_prompt(version, c["variables"], partials.get, c.get("self", ""))
        except QuireError as e:
            if "error" not in c:
                raise
            self.assertEqual(e.code, c["error"]["code"])
            self.assertEqual(e.message, c["error"]["message"])
            self.assertEqual(e.details, c["error"].get("details", {}))
            return
        self.assertNotIn("error", c, "rendered, want an error")
        if "expected_sha256" in c:
            b = got["text"].encode()
            self.assertEqual(len(b), c["expected_length"])
            self.assertEqual(hashlib.sha256(b).hexdigest(), c["expected_sha256"])
        elif "template" in c:
            self.assertEqual(got["text"], c["expected"])
        else:
            self.assertEqual(got["messages"], c["expected_messages"])
        self.assertEqual(got["partials"], c.get("partials_used", []))


class Version(unittest.TestCase):
    def test_package_version_is_the_apis(self):
        import quire

        api = json.loads((CORPUS.parents[2] / "internal" / "apiclient" / "openapi.json").read_text("utf-8"))["info"]["version"]
        pyproject = (pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml").read_text("utf-8")
        self.assertEqual(quire.__version__, api)
        self.assertIn(f'version = "{api}"', pyproject)


if __name__ == "__main__":
    unittest.main()
