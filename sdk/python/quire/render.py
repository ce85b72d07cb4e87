"""quire's Mustache engine, ported line for line from the server's render/
package so that a local render gives exactly the server's answer: no HTML
escaping, partials, inheritance, dynamic names, standalone lines, every
missing name reported, and the same limits. render/testdata/conformance.json
is the proof: tests/test_conformance.py renders every case of it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Callable, Optional

from .errors import QuireError
from .schema import check_variables, checkable

MAX_OUTPUT = 1 << 20
MAX_STEPS = 1 << 18
MAX_DEPTH = 16
_MAX_NESTING = 64
_MAX_SECTIONS = 4096

# Go's unicode.IsSpace, which strings.TrimSpace and strings.Fields use.
_SPACE = "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_FIELDS = re.compile("[^" + re.escape(_SPACE) + "]+")

_TEXT, _VAR, _SECTION, _INVERTED, _PARTIAL, _PARENT, _BLOCK = range(7)

Partials = Callable[[str], Optional["Template"]]


class _SyntaxErr(Exception):
    def __init__(self, line: int, msg: str):
        super().__init__(f"line {line}: {msg}")


def _line_of(src: str, pos: int) -> int:
    return src.count("\n", 0, pos) + 1


class _Token:
    __slots__ = ("op", "start", "end", "name", "dynamic", "cut_before", "cut_after", "standalone", "line_cut", "ws", "match")

    def __init__(self, start: int):
        self.op = ""
        self.start = start
        self.end = 0
        self.name = ""
        self.dynamic = False
        self.cut_before = 0
        self.cut_after = 0
        self.standalone = False
        self.line_cut = False
        self.ws = ""
        self.match = 0


def _tokenize(src: str) -> list[_Token]:
    toks: list[_Token] = []
    open_: list[int] = []
    otag, ctag = "{{", "}}"

    def fail(pos: int, msg: str) -> _SyntaxErr:
        return _SyntaxErr(_line_of(src, pos), msg)

    pos = 0
    while True:
        i = src.find(otag, pos)
        if i < 0:
            break
        t = _Token(i)
        p = i + len(otag)
        if src.startswith("{", p):
            j = src.find("}" + ctag, p + 1)
            if j < 0:
                raise fail(t.start, f"unclosed tag {otag}{{")
            content, t.op, t.end = src[p + 1 : j], "&", j + 1 + len(ctag)
        elif src.startswith("=", p):
            j = src.find("=" + ctag, p + 1)
            if j < 0:
                raise fail(t.start, "unclosed set-delimiter tag")
            content, t.op, t.end = src[p + 1 : j], "=", j + 1 + len(ctag)
            f = _FIELDS.findall(content)
            if len(f) != 2 or "=" in content:
                raise fail(t.start, f"bad set-delimiter tag {otag}={content}={ctag}: it takes two delimiters without = or spaces")
            otag, ctag = f
        else:
            j = src.find(ctag, p)
            if j < 0:
                raise fail(t.start, f"unclosed tag {otag}")
            content, t.end = src[p:j].strip(_SPACE), j + len(ctag)
            if content and content[0] in "&#^/!><$":
                t.op, content = content[0], content[1:]
        pos = t.end
        if t.op in ("=", "!"):
            toks.append(t)
            continue
        content = content.strip(_SPACE)
        if t.op in (">", "<", "/") and content.startswith("*"):
            t.dynamic, content = True, content[1:].strip(_SPACE)
        if content == "":
            raise fail(t.start, "a tag without a name")
        t.name = content
        if t.op in ("#", "^", "<", "$"):
            open_.append(len(toks))
        elif t.op == "/":
            if not open_:
                raise fail(t.start, f"{otag}/{t.name}{ctag} closes nothing")
            o = open_[-1]
            if toks[o].name != t.name or (t.dynamic and not toks[o].dynamic):
                raise fail(t.start, f"{otag}/{t.name}{ctag} closes {otag}{toks[o].op}{toks[o].name}{ctag} (line {_line_of(src, toks[o].start)})")
            open_.pop()
            toks[o].match, t.match = len(toks), o
        toks.append(t)
    if open_:
        o = toks[open_[-1]]
        raise fail(o.start, f"{o.op}{o.name} is never closed")
    return toks


def _line_before(src: str, pos: int) -> tuple[int, bool]:
    k = pos
    while k > 0 and src[k - 1] in " \t":
        k -= 1
    return k, k == 0 or src[k - 1] == "\n"


def _rest_of_line(src: str, pos: int) -> tuple[int, bool]:
    k = pos
    n = len(src)
    while k < n and src[k] in " \t":
        k += 1
    if k == n:
        return k, True
    if src[k] == "\n":
        return k + 1, True
    if src[k] == "\r" and k + 1 < n and src[k + 1] == "\n":
        return k + 2, True
    return k, False


def _standalone(src: str, toks: list[_Token]) -> None:
    for t in toks:
        t.cut_before, t.cut_after = t.start, t.end
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.op == "" or t.op not in "#^/!><$=":
            i += 1
            continue
        ls, ok = _line_before(src, t.start)
        if not ok:
            i += 1
            continue
        eol, ok = _rest_of_line(src, t.end)
        if ok:
            t.standalone, t.line_cut, t.ws = True, True, src[ls : t.start]
            t.cut_before, t.cut_after = ls, eol
            i += 1
            continue
        if i + 1 >= len(toks) or toks[i + 1].start != t.end:
            i += 1
            continue
        u = toks[i + 1]
        eol, ok = _rest_of_line(src, u.end)
        if not ok:
            i += 1
            continue
        keep_eol = False
        if t.op == "<" and u.op == "$":
            pass
        elif t.op == "<" and u.op == "/" and u.match == i:
            pass
        elif t.op == "$" and u.op == "/" and u.match == i:
            keep_eol = True
        elif t.op == "/" and toks[t.match].op == "$" and u.op == "/" and toks[u.match].op == "<":
            pass
        else:
            i += 1
            continue
        ws = src[ls : t.start]
        t.standalone, t.line_cut, t.ws, t.cut_before = True, True, ws, ls
        u.standalone, u.ws = True, ws
        if not keep_eol:
            u.cut_after = eol
        i += 2


class _Node:
    __slots__ = ("kind", "dynamic", "standalone", "text", "parts", "starts", "nodes", "indent", "dedent")

    def __init__(self, kind: int, text: str):
        self.kind = kind
        self.dynamic = False
        self.standalone = False
        self.text = text
        self.parts: Optional[list[str]] = None
        self.starts: Optional[list[int]] = None
        self.nodes: list[_Node] = []
        self.indent = ""
        self.dedent = ""


def _next_line(src: str, p: int, b: int) -> int:
    q = src.find("\n", p, b)
    return q + 1 if q >= 0 else -1


def _common_indent(s: str) -> str:
    common = ""
    first = True
    for line in _lines(s):
        trimmed = line.lstrip(" \t")
        if trimmed.rstrip("\r\n") == "":
            continue
        ws = line[: len(line) - len(trimmed)]
        if first:
            common, first = ws, False
            continue
        n = 0
        while n < len(common) and n < len(ws) and common[n] == ws[n]:
            n += 1
        common = common[:n]
    return common


def _lines(s: str) -> list[str]:
    # strings.Lines: split after each "\n" only.
    out = s.split("\n")
    lines = [x + "\n" for x in out[:-1]]
    if out[-1]:
        lines.append(out[-1])
    return lines


def _parse(src: str) -> tuple[list[_Node], int]:
    toks = _tokenize(src)
    _standalone(src, toks)
    nested = sections = depth = 0
    stack: list[tuple[int, list[_Node]]] = [(-1, [])]

    def add_text(a: int, b: int, nxt: Optional[_Token]) -> None:
        starts: Optional[list[int]] = None
        p = a
        if p != 0 and src[p - 1] != "\n":
            p = _next_line(src, p, b)
        while 0 <= p < len(src):
            if p == b and (nxt is None or nxt.line_cut):
                break
            if starts is None:
                starts = []
            starts.append(p - a)
            p = _next_line(src, p, b)
        if a == b and starts is None:
            return
        n = _Node(_TEXT, src[a:b])
        n.starts = starts
        stack[-1][1].append(n)

    prev = 0
    for i, t in enumerate(toks):
        add_text(prev, max(prev, t.cut_before), t)
        prev = t.cut_after
        n = _Node(_VAR, t.name)
        n.dynamic, n.standalone = t.dynamic, t.standalone
        if t.name != ".":
            n.parts = t.name.split(".")
        op = t.op
        if op in ("!", "="):
            continue
        if op == ">":
            n.kind, n.indent = _PARTIAL, t.ws
        elif op in ("#", "^", "<", "$"):
            if op in ("<", "$"):
                nested += 1
                if nested > _MAX_NESTING:
                    raise _SyntaxErr(_line_of(src, t.start), f"parents and blocks nest deeper than {_MAX_NESTING} levels")
            else:
                sections += 1
                if sections > _MAX_SECTIONS:
                    raise _SyntaxErr(_line_of(src, t.start), f"sections nest deeper than {_MAX_SECTIONS} levels")
            stack.append((i, []))
            depth = max(depth, len(stack) - 1)
            continue
        elif op == "/":
            tok, body = stack.pop()
            o = toks[tok]
            if o.op in ("<", "$"):
                nested -= 1
            else:
                sections -= 1
            parts = n.parts
            n = _Node(_SECTION, o.name)
            n.dynamic, n.standalone, n.parts, n.nodes = o.dynamic, o.standalone, parts, body
            if o.op == "^":
                n.kind = _INVERTED
            elif o.op == "<":
                n.kind, n.indent = _PARENT, o.ws
                n.nodes = [c for c in body if c.kind == _BLOCK]
            elif o.op == "$":
                n.kind = _BLOCK
                if o.standalone:
                    n.dedent = _common_indent(src[o.cut_after : max(o.cut_after, t.cut_before)])
                    n.indent = n.dedent or o.ws
        stack[-1][1].append(n)
    add_text(prev, len(src), None)
    return stack[0][1], depth


def _unprocessable(message: str, details: Optional[dict] = None) -> QuireError:
    return QuireError(422, "unprocessable", message, details or {})


def _too_large() -> QuireError:
    return _unprocessable(f"the template expands to more than {MAX_OUTPUT} bytes (or {MAX_STEPS} tags) with these variables", {"limit": MAX_OUTPUT})


def missing_error(missing: list[str]) -> QuireError:
    """The error for missing variables and partials (">name"), as the server words it."""
    vars_ = [m for m in missing if not m.startswith(">")]
    parts = [m[1:] for m in missing if m.startswith(">")]
    msg = []
    if vars_:
        msg.append("missing variables: " + ", ".join(vars_))
    if parts:
        msg.append("missing partials: " + ", ".join(parts))
    details: dict[str, Any] = {"missing": list(missing)}
    if parts:
        details["missing_partials"] = parts
    return _unprocessable("; ".join(msg), details)


class Template:
    """A parsed template, immutable: parse once, render many times."""

    __slots__ = ("nodes", "depth")

    def __init__(self, nodes: list[_Node], depth: int):
        self.nodes = nodes
        self.depth = depth  # how deep sections, parents and blocks nest

    def render(self, variables: Optional[dict] = None, partials: Optional[Partials] = None, name: str = "") -> tuple[str, list[str]]:
        """Renders with variables; returns (text, the partials included).
        Raises a QuireError as the server answers."""
        r = _Renderer(partials, name, False)
        r.run(self, variables)
        if r.err is _TOO_LARGE:
            raise _too_large()
        if r.err is not None:
            raise r.err
        if r.missing:
            raise missing_error(r.missing)
        return "".join(r.out), [u[0] for u in r.used if u[1] is not None]

    def missing(self, variables: Optional[dict] = None, partials: Optional[Partials] = None, name: str = "") -> list[str]:
        """The names a render would find missing (">name" for partials)."""
        r = _Renderer(partials, name, True)
        r.run(self, variables)
        # A resolver's own exception (not an answer of the engine) goes on.
        if r.err is not None and r.err is not _TOO_LARGE and not isinstance(r.err, QuireError):
            raise r.err
        return r.missing


def parse_template(text: str) -> Template:
    """Parses a template that may include others; a syntax error is a 422 QuireError."""
    try:
        return Template(*_parse(text))
    except _SyntaxErr as e:
        raise _unprocessable(f"template does not parse as Mustache: {e}") from None


class _TooLarge(Exception):
    pass


_TOO_LARGE = _TooLarge()
_MISSING = object()


def _empty(v: Any) -> bool:
    if v is None or v is False:
        return True
    if isinstance(v, str):
        return v.strip(_SPACE) == ""
    if isinstance(v, (list, tuple)):
        return len(v) == 0
    if isinstance(v, float) and not math.isfinite(v):
        raise _not_json(v)
    return False


def _not_json(v: Any) -> QuireError:
    return QuireError(400, "invalid", f"variables cannot be sent as JSON: {v!r} is not a JSON value")


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')


def _escape(m: re.Match) -> str:
    c = m.group(0)
    if c in _ESCAPES:
        return _ESCAPES[c]
    if "\ud800" <= c <= "\udfff":
        return "\\ufffd"  # a lone surrogate, as invalid UTF-8 on the server
    return "\\u%04x" % ord(c)


def _json_string(s: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


def _number(v: Any) -> str:
    if isinstance(v, float):
        if not math.isfinite(v):
            raise _not_json(v)
        return repr(v)
    return str(v)


def _to_json(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return _json_string(v)
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_to_json(e) for e in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(_json_string(k) + ":" + _to_json(v[k]) for k in sorted(v)) + "}"
    raise _not_json(v)


def _value_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return _number(v)
    return _to_json(v)


def _trim_indent(indent: str, dedent: str) -> str:
    i = 0
    while i < len(indent) and i < len(dedent) and indent[i] == dedent[i]:
        i += 1
    return indent[i:]


def _utf8_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


class _Renderer:
    __slots__ = ("partials", "root", "dry", "out", "size", "stack", "chain", "used", "args", "active", "indent", "dedent", "steps", "missing", "seen", "err")

    def __init__(self, partials: Optional[Partials], root: str, dry: bool):
        self.partials = partials
        self.root = root
        self.dry = dry
        self.out: list[str] = []
        self.size = 0
        self.stack: list[Any] = []
        self.chain: list[int] = []
        self.used: list[tuple[str, Optional[Template]]] = []
        self.args: list[_Node] = []
        self.active: list[_Node] = []
        self.indent = ""
        self.dedent = ""
        self.steps = 0
        self.missing: list[str] = []
        self.seen: set[str] = set()
        self.err: Optional[BaseException] = None

    def run(self, t: Template, variables: Optional[dict]) -> None:
        self.stack.append(variables if variables is not None else {})
        # Sections nest up to 4,096 deep, each a Python frame or two.
        if t.depth > 200 and sys.getrecursionlimit() < 20000:
            sys.setrecursionlimit(20000)
        try:
            self.nodes(t.nodes)
        except QuireError as e:  # a value that is not JSON
            self.err = e

    def charge(self, n: int) -> bool:
        self.steps += n
        if self.steps > MAX_STEPS:
            self.err = _TOO_LARGE
            return False
        return True

    def write(self, s: str) -> bool:
        if not s:
            return True
        self.size += _utf8_len(s)
        if self.size > MAX_OUTPUT:
            self.err = _TOO_LARGE
            return False
        if not self.dry:
            self.out.append(s)
        return True

    def miss(self, name: str) -> None:
        if name not in self.seen:
            self.seen.add(name)
            self.missing.append(name)

    def lookup(self, n: _Node) -> Any:
        parts = n.parts
        if parts is None:
            return self.stack[-1]
        first = parts[0]
        v: Any = _MISSING
        for m in reversed(self.stack):
            if isinstance(m, dict) and first in m:
                v = m[first]
                break
        if v is _MISSING:
            return _MISSING
        for p in parts[1:]:
            if not isinstance(v, dict) or p not in v:
                return _MISSING
            v = v[p]
        return v

    def nodes(self, ns: list[_Node]) -> bool:
        for n in ns:
            kind = n.kind
            if kind == _TEXT:
                if not self.text(n):
                    return False
                continue
            if not self.charge(len(self.stack) + (0 if n.parts is None else len(n.parts))):
                return False
            if kind == _VAR:
                v = self.lookup(n)
                if v is _MISSING:
                    self.miss(n.text)
                    continue
                if not self.write(_value_text(v)):
                    return False
            elif kind == _SECTION:
                v = self.lookup(n)
                if v is _MISSING or _empty(v):
                    continue
                if isinstance(v, (list, tuple)):
                    for item in v:
                        if not self.charge(1):
                            return False
                        self.stack.append(item)
                        ok = self.nodes(n.nodes)
                        self.stack.pop()
                        if not ok:
                            return False
                    continue
                self.stack.append(v)
                ok = self.nodes(n.nodes)
                self.stack.pop()
                if not ok:
                    return False
            elif kind == _INVERTED:
                v = self.lookup(n)
                if (v is _MISSING or _empty(v)) and not self.nodes(n.nodes):
                    return False
            elif kind in (_PARTIAL, _PARENT):
                if not self.include(n):
                    return False
            elif kind == _BLOCK:
                if not self.block(n):
                    return False
        return True

    def text(self, n: _Node) -> bool:
        if n.starts is None or (self.indent == "" and self.dedent == ""):
            return self.write(n.text)
        s = n.text
        prev = 0
        for at in n.starts:
            if not self.write(s[prev:at]):
                return False
            k, d = at, 0
            dedent = self.dedent
            while d < len(dedent) and k < len(s) and s[k] == dedent[d]:
                k += 1
                d += 1
            if (k < len(s) and s[k] != "\n" and s[k] != "\r") or k == len(s):
                if not self.write(self.indent):
                    return False
            prev = k
        return self.write(s[prev:])

    def include(self, n: _Node) -> bool:
        name = n.text
        if n.dynamic:
            v = self.lookup(n)
            if v is _MISSING:
                self.miss(n.text)
                return True
            if isinstance(v, str):
                name = v
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                name = _number(v)
            else:
                self.err = _unprocessable(f"the dynamic partial name {_go_quote(n.text)} is not a string", {"variable": n.text})
                return False
        i = self.resolve(name)
        if i < 0:
            return False
        if name == self.root or i in self.chain:
            self.err = _unprocessable(f"partials include each other: {' > '.join(self.chain_names() + [name])}", {"cycle": self.chain_names() + [name]})
            return False
        if len(self.chain) >= MAX_DEPTH:
            chain = self.chain_names() + [name]
            self.err = _unprocessable(f"partials nest deeper than {MAX_DEPTH} levels: {' > '.join(chain)}", {"chain": chain, "limit": MAX_DEPTH})
            return False
        t = self.used[i][1]
        if t is None:
            self.miss(">" + name)
            return True
        indent, dedent = self.indent, self.dedent
        reframe = indent != "" or dedent != "" or (n.standalone and n.indent != "")
        if reframe:
            self.indent = indent + _trim_indent(n.indent, dedent) if n.standalone else ""
            self.dedent = ""
        self.chain.append(i)
        if n.kind == _PARENT:
            self.args.append(n)
        if t.depth > 200 and sys.getrecursionlimit() < 20000:
            sys.setrecursionlimit(20000)
        ok = self.nodes(t.nodes)
        if n.kind == _PARENT:
            self.args.pop()
        self.chain.pop()
        if reframe:
            self.indent, self.dedent = indent, dedent
        return ok

    def resolve(self, name: str) -> int:
        if not self.charge(len(self.used)):
            return -1
        for i, u in enumerate(self.used):
            if u[0] == name:
                return i
        t = None
        if self.partials is not None:
            try:
                t = self.partials(name)
            except Exception as e:  # noqa: BLE001 - the resolver's error ends the render
                self.err = e
                return -1
        self.used.append((name, t))
        return len(self.used) - 1

    def chain_names(self) -> list[str]:
        out = [self.root] if self.root else []
        return out + [self.used[i][0] for i in self.chain]

    def block(self, site: _Node) -> bool:
        content = site
        for p in self.args:
            if not self.charge(len(p.nodes)):
                return False
            for b in p.nodes:
                if b.text == site.text and not any(a is b for a in self.active):
                    content = b
                    break
            if content is not site:
                break
        if content is site and not site.standalone:
            return self.nodes(site.nodes)
        indent, dedent = self.indent, self.dedent
        if site.standalone:
            self.indent = indent + _trim_indent(site.indent, dedent)
        else:
            self.indent = ""
        self.dedent = content.dedent
        if content is not site:
            self.active.append(content)
        ok = self.nodes(content.nodes)
        if content is not site:
            self.active.pop()
        self.indent, self.dedent = indent, dedent
        return ok


def _go_quote(s: str) -> str:
    # Go's %q, as far as names of variables go.
    return json.dumps(s, ensure_ascii=False)


def placeholder_messages(name: str, v: Any) -> list[dict]:
    """Checks that v, the value of a chat placeholder, is a list of
    {role, content} messages, and returns them."""

    def bad(msg: str) -> QuireError:
        return _unprocessable(f"variables.{name} must be a list of {{role, content}} messages: {msg}", {"placeholder": name})

    if not isinstance(v, (list, tuple)):
        raise bad("it is not a list")
    out = []
    for i, m in enumerate(v):
        if not isinstance(m, dict):
            raise bad(f"item {i} is not an object")
        role, content = m.get("role"), m.get("content")
        if not isinstance(role, str) or not isinstance(content, str) or role == "" or len(m) != 2:
            raise bad(f"item {i} must hold exactly a string role and a string content")
        out.append({"role": role, "content": content})
    return out


class Compiled:
    """A prompt version's parsed templates: text for a text prompt, msgs
    (None for a placeholder) for a chat prompt, or err, which every render
    raises; schema is its variables_schema, checkable whether the SDK
    checks it locally."""

    __slots__ = ("text", "msgs", "err", "schema", "checkable")

    def __init__(self, text: Optional[Template] = None, msgs: Optional[list] = None, err: Optional[QuireError] = None):
        self.text, self.msgs, self.err = text, msgs, err
        self.schema: Any = None
        self.checkable = True


def compile_prompt(version: dict) -> Compiled:
    """Parses a prompt version's templates as the server does."""
    c = _compile_templates(version)
    c.schema = version.get("variables_schema")
    c.checkable = c.schema is None or checkable(c.schema)
    return c


def _compile_templates(version: dict) -> Compiled:
    try:
        if isinstance(version.get("template"), str):
            return Compiled(text=parse_template(version["template"]))
        messages = version.get("messages") or []
        if messages:
            msgs: list[Optional[Template]] = []
            for i, m in enumerate(messages):
                if m.get("type") == "placeholder":
                    msgs.append(None)
                    continue
                try:
                    msgs.append(parse_template(m.get("content", "")))
                except QuireError as e:
                    raise _unprocessable(f"messages[{i}]: {e.message}") from None
            return Compiled(msgs=msgs)
        return Compiled(err=_unprocessable(f"version {version.get('version', 0)} has no template"))
    except QuireError as e:
        return Compiled(err=e)


def render_compiled(compiled: Compiled, version: dict, variables: Optional[dict], partials: Optional[Partials] = None, name: str = "", skip_schema: bool = False) -> dict:
    """Renders a compiled prompt version as the server's render does: the
    variables checked against its variables_schema first (one the SDK
    cannot check is a QuireError "schema_unchecked" unless skip_schema),
    then {"text", "partials"} for a text prompt; for a chat prompt every missing
    name of every message in one error before any is rendered, then
    {"messages", "partials"} with placeholders spliced in."""
    if compiled.err is not None:
        raise compiled.err
    variables = variables if variables is not None else {}
    if compiled.schema is not None:
        if compiled.checkable:
            check_variables(compiled.schema, variables)
        elif not skip_schema:
            raise QuireError(0, "schema_unchecked", "the variables_schema uses keywords the SDK does not check: render on the server")
    if compiled.text is not None:
        text, used = compiled.text.render(variables, partials, name)
        return {"text": text, "partials": used}
    missing: list[str] = []
    for i, t in enumerate(compiled.msgs or []):
        if t is None:
            pname = version["messages"][i]["name"]
            if variables.get(pname) is None and pname not in missing:
                missing.append(pname)
            continue
        for m in t.missing(variables, partials, name):
            if m not in missing:
                missing.append(m)
    if missing:
        raise missing_error(missing)
    messages: list[dict] = []
    used_all: list[str] = []
    for i, t in enumerate(compiled.msgs or []):
        m = version["messages"][i]
        if t is None:
            messages.extend(placeholder_messages(m["name"], variables.get(m["name"])))
            continue
        text, used = t.render(variables, partials, name)
        for u in used:
            if u not in used_all:
                used_all.append(u)
        messages.append({"role": m["role"], "content": text})
    return {"messages": messages, "partials": used_all}


def render_prompt(version: dict, variables: Optional[dict], partials: Optional[Partials] = None, name: str = "") -> dict:
    """compile_prompt and render_compiled in one call."""
    return render_compiled(compile_prompt(version), version, variables, partials, name)
