"""Typed variables: a version's variables_schema (JSON Schema 2020-12)
checked locally, with the server's 422 word for word, for the keywords
implemented here (those of the server's validator, santhosh-tekuri/
jsonschema, in its order). A schema using any other keyword is not checked
locally: the prompt cache renders such a prompt on the server. The
conformance corpus's schema/ cases are the proof."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Optional

from .errors import QuireError

_CHECKED = {
    "type", "enum", "const", "required", "properties", "additionalProperties", "items",
    "minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "not", "allOf", "anyOf", "oneOf", "if", "then", "else",
}
_ANNOTATIONS = {"$schema", "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
_TYPES = ["null", "boolean", "number", "integer", "string", "array", "object"]


def checkable(schema: Any) -> bool:
    """Whether schema uses only keywords this module checks exactly as the server."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for k, v in schema.items():
        if k in _ANNOTATIONS:
            if k == "$schema" and v != "https://json-schema.org/draft/2020-12/schema":
                return False
            continue
        if k not in _CHECKED:
            return False
        if k == "type" and not all(t in _TYPES for t in (v if isinstance(v, list) else [v])):
            return False
        if k == "properties" and not (isinstance(v, dict) and all(checkable(x) for x in v.values())):
            return False
        if k == "additionalProperties" and not isinstance(v, bool) and not checkable(v):
            return False
        if k in ("items", "not", "if", "then", "else") and not checkable(v):
            return False
        if k in ("allOf", "anyOf", "oneOf") and not (isinstance(v, list) and v and all(checkable(x) for x in v)):
            return False
        if k in ("enum", "required") and not isinstance(v, list):
            return False
    return True


def _type_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def _equals(a: Any, b: Any) -> bool:
    t = _type_of(a)
    if t != _type_of(b):
        return False
    if t == "array":
        return len(a) == len(b) and all(_equals(x, y) for x, y in zip(a, b))
    if t == "object":
        return len(a) == len(b) and all(k in b and _equals(a[k], b[k]) for k in a)
    return a == b


_ESC = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def _quote(s: str) -> str:
    # The validator's: Go's %q, then " unescaped and ' escaped.
    out = []
    for c in s:
        n = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif c == "'":
            out.append("\\'")
        elif n < 0x20 or n == 0x7F:
            out.append(_ESC.get(n, "\\x%02x" % n))
        else:
            out.append(c)
    return "'" + "".join(out) + "'"


def _display(v: Any) -> str:
    if isinstance(v, str):
        return _quote(v)
    if v is None:
        return "<nil>"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (list, dict)):
        return "value"
    return _shortest(v)


def _shortest(x: Any) -> str:
    """A number as JSON writes it (as the server received it)."""
    return json.dumps(x)


_SUPER = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _int(n: int) -> str:
    # %d as the validator's English message printer writes it.
    return f"{n:,}"


def _float(x: Any) -> str:
    # %v of a float64 as the printer writes it: the shortest digits,
    # grouped by thousands, or d.ddd×10ⁿⁿ when the exponent is below -4 or
    # 6 and over.
    f = float(x)
    sign = "-" if f < 0 else ""
    d = Decimal(repr(abs(f)))
    if d == 0:
        return sign + "0"
    digits = d.as_tuple().digits
    exp = d.adjusted()
    while len(digits) > 1 and digits[-1] == 0:
        digits = digits[:-1]
    if exp < -4 or exp >= 6:
        mant = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
        e = ("-" if exp < 0 else "") + f"{abs(exp):02d}"
        return sign + mant + "×10" + e.translate(_SUPER)
    s = format(d, "f")
    ip, _, fp = s.partition(".")
    fp = fp.rstrip("0")
    return sign + f"{int(ip):,}" + ("." + fp if fp else "")


def _ptr(loc: list[str]) -> str:
    return "".join("/" + s.replace("~", "~0").replace("/", "~1") for s in loc)


class _Fail:
    __slots__ = ("path", "message", "causes", "group")

    def __init__(self, loc: list[str], message: str, causes: Optional[list] = None, group: bool = False):
        self.path, self.message, self.causes, self.group = _ptr(loc), message, causes or [], group


def _validate(s: Any, v: Any, loc: list[str]) -> Optional[_Fail]:
    if s is True:
        return None
    if s is False:
        return _Fail(loc, "false schema")
    t = _type_of(v)
    if "type" in s:
        want = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not (t in want or ("integer" in want and t == "number" and float(v).is_integer())):
            return _Fail(loc, f"got {t}, want {' or '.join(x for x in _TYPES if x in want)}")
    if "const" in s and not _equals(v, s["const"]):
        return _Fail(loc, "'const' failed" if isinstance(s["const"], (list, dict)) else f"value must be {_display(s['const'])}")
    if "enum" in s and not any(_equals(v, e) for e in s["enum"]):
        enum = s["enum"]
        if any(isinstance(e, (list, dict)) for e in enum):
            msg = "'enum' failed"
        elif len(enum) == 1:
            msg = f"value must be {_display(enum[0])}"
        else:
            msg = "value must be one of " + ", ".join(_display(e) for e in enum)
        return _Fail(loc, msg)
    errs: list[Optional[_Fail]] = []
    if t == "object":
        n = len(v)
        if "minProperties" in s and n < s["minProperties"]:
            errs.append(_Fail(loc, f"minProperties: got {_int(n)}, want {_int(s['minProperties'])}"))
        if "maxProperties" in s and n > s["maxProperties"]:
            errs.append(_Fail(loc, f"maxProperties: got {_int(n)}, want {_int(s['maxProperties'])}"))
        missing = [p for p in s.get("required", []) if p not in v]
        if len(missing) == 1:
            errs.append(_Fail(loc, f"missing property {_quote(missing[0])}"))
        elif missing:
            errs.append(_Fail(loc, "missing properties " + ", ".join(_quote(p) for p in missing)))
        additional = []
        props = s.get("properties", {})
        extra = s.get("additionalProperties")
        for k, x in v.items():
            if k in props:
                errs.append(_validate(props[k], x, loc + [k]))
            elif extra is False:
                additional.append(k)
            elif isinstance(extra, dict):
                errs.append(_validate(extra, x, loc + [k]))
        if additional:
            errs.append(_Fail(loc, "additional properties " + ", ".join(_quote(k) for k in additional) + " not allowed"))
    elif t == "array":
        if "minItems" in s and len(v) < s["minItems"]:
            errs.append(_Fail(loc, f"minItems: got {_int(len(v))}, want {_int(s['minItems'])}"))
        if "maxItems" in s and len(v) > s["maxItems"]:
            errs.append(_Fail(loc, f"maxItems: got {_int(len(v))}, want {_int(s['maxItems'])}"))
        if "items" in s:
            errs.extend(_validate(s["items"], x, loc + [str(i)]) for i, x in enumerate(v))
    elif t == "string":
        n = len(v)
        if "minLength" in s and n < s["minLength"]:
            errs.append(_Fail(loc, f"minLength: got {_int(n)}, want {_int(s['minLength'])}"))
        if "maxLength" in s and n > s["maxLength"]:
            errs.append(_Fail(loc, f"maxLength: got {_int(n)}, want {_int(s['maxLength'])}"))
    elif t == "number":
        for key, bad in (
            ("minimum", lambda a, b: a < b),
            ("maximum", lambda a, b: a > b),
            ("exclusiveMinimum", lambda a, b: a <= b),
            ("exclusiveMaximum", lambda a, b: a >= b),
        ):
            if key in s and bad(v, s[key]):
                errs.append(_Fail(loc, f"{key}: got {_float(v)}, want {_float(s[key])}"))
    # The combinators, after the rest, in the validator's order.
    if "not" in s and _validate(s["not"], v, loc) is None:
        errs.append(_Fail(loc, "'not' failed"))
    if "allOf" in s:
        failed = [e for e in (_validate(x, v, loc) for x in s["allOf"]) if e is not None]
        if failed:
            errs.append(_Fail(loc, "'allOf' failed", failed))
    if "anyOf" in s:
        failed = []
        for x in s["anyOf"]:
            e = _validate(x, v, loc)
            if e is None:
                break
            failed.append(e)
        else:
            errs.append(_Fail(loc, "'anyOf' failed", failed))
    if "oneOf" in s:
        failed, matched = [], -1
        for i, x in enumerate(s["oneOf"]):
            e = _validate(x, v, loc)
            if e is not None:
                if matched == -1:
                    failed.append(e)
            elif matched == -1:
                matched = i
            else:
                errs.append(_Fail(loc, f"'oneOf' failed, subschemas {_int(matched)}, {_int(i)} matched"))
                break
        if matched == -1:
            errs.append(_Fail(loc, "'oneOf' failed, none matched", failed))
    if "if" in s:
        if _validate(s["if"], v, loc) is None:
            if "then" in s:
                errs.append(_validate(s["then"], v, loc))
        elif "else" in s:
            errs.append(_validate(s["else"], v, loc))
    found = [e for e in errs if e is not None]
    if not found:
        return None
    return found[0] if len(found) == 1 else _Fail(loc, "validation failed", found, True)


def check_variables(schema: Any, variables: Optional[dict]) -> None:
    """Checks variables against a checkable schema as the server's render
    does: raises the 422 QuireError with details["errors"] ([{path,
    message}]), or returns when they satisfy it."""
    try:
        # As the server receives them.
        sent = json.loads(json.dumps(variables or {}, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise QuireError(400, "invalid", f"variables cannot be sent as JSON: {e}") from None
    r = _validate(schema, sent, [])
    if r is None:
        return
    out: list[dict] = []
    seen: set[tuple[str, str]] = set()

    def walk(causes: list[_Fail]) -> None:
        for c in causes:
            if (c.path, c.message) not in seen:
                seen.add((c.path, c.message))
                out.append({"path": c.path, "message": c.message})
            walk(c.causes)

    # The validator reports a group of errors by its members.
    walk(r.causes if r.group else [r])
    out.sort(key=lambda e: e["path"].encode())
    raise QuireError(422, "unprocessable", f"variables do not satisfy the version's variables_schema: {out[0]['path']}: {out[0]['message']}", {"errors": out})
