"""Generates quire/api.py, the typed thin client: one method per operation
of the OpenAPI document the server serves (internal/apiclient/openapi.json
is its committed copy), named by its operationId, each a call of
Client.request.

    python3 gen_api.py          # rewrite quire/api.py
    python3 gen_api.py --check  # exit 1 when quire/api.py is stale (CI)
"""

from __future__ import annotations

import json
import keyword
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
DOC = HERE.parents[1] / "internal" / "apiclient" / "openapi.json"
OUT = HERE / "quire" / "api.py"

TYPES = {"string": "str", "integer": "int", "boolean": "bool", "number": "float"}


def ident(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"[^0-9a-zA-Z_]", "_", s).lower()
    return s + "_" if keyword.iskeyword(s) or s in ("body", "self") else s


def pytype(schema: dict) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    return TYPES.get(t, "str")


def generate(doc: dict) -> str:
    out = [
        '"""The API, one method per operation of the OpenAPI document. Generated',
        "by gen_api.py from internal/apiclient/openapi.json (API version",
        f'{doc["info"]["version"]}): do not edit."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TYPE_CHECKING, Any, Optional",
        "",
        "if TYPE_CHECKING:",
        "    from .client import Answer",
        "",
        "",
        "class API:",
        '    """Every operation of the API; Client supplies request()."""',
        "",
        "    def request(self, method: str, path: str, path_params: Optional[dict[str, Any]] = None, query: Optional[dict[str, Any]] = None, body: Any = None, headers: Optional[dict[str, str]] = None) -> Answer:",
        "        raise NotImplementedError",
    ]
    ops = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                ops.append((op["operationId"], method.upper(), path, op))
    for op_id, method, path, op in sorted(ops):
        params = op.get("parameters", [])
        pos = [p for p in params if p["in"] == "path"]
        kw = [p for p in params if p["in"] in ("query", "header")]
        body = "requestBody" in op
        sig = ["self"] + [f"{ident(p['name'])}: {pytype(p.get('schema', {}))}" for p in pos]
        if body or kw:
            sig.append("*")
        if body:
            required = op["requestBody"].get("required", False)
            sig.append("body: Any" if required else "body: Any = None")
        for p in kw:
            sig.append(f"{ident(p['name'])}: Optional[{pytype(p.get('schema', {}))}] = None")
        summary = (op.get("summary") or op.get("description") or "").strip().replace('"""', "'''").replace("\\", "\\\\")
        out += ["", f"    def {op_id}({', '.join(sig)}) -> Answer:", f'        """{method} {path}', "", f"        {summary}", '        """']
        path_params = ", ".join(f"{p['name']!r}: {ident(p['name'])}" for p in pos)
        query = ", ".join(f"{p['name']!r}: {ident(p['name'])}" for p in kw if p["in"] == "query")
        headers = [p for p in kw if p["in"] == "header"]
        args = [repr(method), repr(path), "{" + path_params + "}", "{" + query + "}", "body" if body else "None"]
        if headers:
            out.append("        headers = {k: v for k, v in {" + ", ".join(f"{p['name']!r}: {ident(p['name'])}" for p in headers) + "}.items() if v is not None}")
            args.append("headers")
        out.append(f"        return self.request({', '.join(args)})")
    return "\n".join(out) + "\n"


def main() -> int:
    text = generate(json.loads(DOC.read_text("utf-8")))
    if "--check" in sys.argv:
        if OUT.read_text("utf-8") != text:
            print(f"{OUT} is stale: run python3 sdk/python/gen_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
