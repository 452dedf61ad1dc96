"""Just enough Jinja to read kubespray's download defaults without running Ansible.

kubespray's role defaults are YAML whose strings are Jinja templates
(`"{{ github_url }}/etcd-io/etcd/releases/download/v{{ etcd_version }}/..."`).
kubelab evaluates the few it needs, lazily, against the layers of variables
(defaults, then what kubelab sets, then role vars, then extra vars: Ansible's
order). The expression subset is the one used by
roles/kubespray_defaults/{defaults,vars}/main/*.yml at kubespray v2.31.0 and
master 46dbdd39: names, literals, `.attr`, `[index]`, slices, calls of
`.keys()`, filters (`| dict2items`, `| default`, `| split`, `| join`, `| int`,
`| lower`, `| select('version', v, op)`), the tests `version`, `defined`,
`none`, comparisons, `in`, `and`/`or`/`not`, `+`, `~` and `a if b else c`.
Anything else (`{% %}` blocks, other filters) is refused with the variable's
name, so a newer kubespray that needs more says so instead of being misread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml


class TemplateError(Exception):
    """An expression this evaluator does not handle, or a variable no layer defines."""


class Undefined:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"Undefined({self.name})"


# -- values that remember which checksum table they came from ------------------

class Table(dict):
    """A checksum table (`kubeadm_checksums`): {arch: {version: "sha256:..."}}.

    `grows`: a version the table lacks reads as an empty Checksum that still names its table and
    version, for a release kubelab builds itself and adds a row for (a scenario's
    `containerd_version` beyond the checkout's table); otherwise it is an error."""

    def __init__(self, name: str, data: dict, grows: bool = False):
        super().__init__(data)
        self.name, self.grows = name, grows


class Row(dict):
    """One arch of a checksum table: {version: "sha256:..."}."""

    def __init__(self, table: str, arch: str, data: dict, grows: bool = False):
        super().__init__(data)
        self.table, self.arch, self.grows = table, arch, grows


class Checksum(str):
    """A value read from a checksum table, with its table, arch and version."""

    table: str
    arch: str
    version: str


def _index(obj, key):
    if isinstance(obj, Undefined):
        raise TemplateError(f"`{obj.name}` is not defined")
    if isinstance(obj, Table) and isinstance(obj.get(key), dict):
        return Row(obj.name, key, obj[key], obj.grows)
    if isinstance(obj, Row):
        if key not in obj and not obj.grows:
            raise TemplateError(f"{obj.table}[{obj.arch!r}] has no {key!r}")
        value = obj.get(key, "")
        if isinstance(value, str):
            out = Checksum(value)
            out.table, out.arch, out.version = obj.table, obj.arch, str(key)
            return out
        return value
    try:
        return obj[key]
    except (KeyError, IndexError, TypeError) as exc:
        raise TemplateError(f"{_describe(obj)} has no [{key!r}]") from exc


def _describe(obj) -> str:
    if isinstance(obj, dict):
        return "mapping with keys " + ", ".join(repr(k) for k in list(obj)[:8])
    return f"{type(obj).__name__} {obj!r}"[:80]


# -- versions, as Ansible's `version` test compares them (loose) -----------------

def version_key(v) -> list:
    parts = []
    for p in re.findall(r"\d+|[a-z]+", str(v).lower()):
        parts.append(int(p) if p.isdigit() else p)
    return parts


def version_compare(a, b, op: str) -> bool:
    ka, kb = version_key(a), version_key(b)
    try:
        lt, eq = ka < kb, ka == kb
    except TypeError as exc:
        raise TemplateError(f"cannot compare versions {a!r} and {b!r}") from exc
    table = {"<": lt, "lt": lt, "<=": lt or eq, "le": lt or eq, "==": eq, "=": eq, "eq": eq,
             "!=": not eq, "ne": not eq, ">": not (lt or eq), "gt": not (lt or eq),
             ">=": not lt, "ge": not lt}
    if op not in table:
        raise TemplateError(f"version comparison {op!r} is not supported")
    return table[op]


# -- tokens --------------------------------------------------------------------

TOKEN = re.compile(r"""
    \s*(?:
      (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<num>\d+(?:\.\d+)?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|//|[<>()\[\].,|+\-~:*/%])
    )""", re.VERBOSE)


def tokenize(text: str) -> list[tuple[str, object]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise TemplateError(f"cannot read `{text[pos:pos + 20]}` in `{text}`")
        pos = m.end()
        if m.group("str") is not None:
            raw = m.group("str")[1:-1]
            out.append(("lit", re.sub(r"\\(.)", r"\1", raw)))
        elif m.group("num") is not None:
            n = m.group("num")
            out.append(("lit", float(n) if "." in n else int(n)))
        elif m.group("name") is not None:
            out.append(("name", m.group("name")))
        else:
            out.append(("op", m.group("op")))
    out.append(("end", None))
    return out


LITERALS = {"true": True, "True": True, "false": False, "False": False, "none": None, "None": None}
KEYWORDS = {"if", "else", "and", "or", "not", "in", "is"}


# -- the evaluator: parses and evaluates in one pass, short-circuiting ------------

@dataclass
class Scope:
    """Layers of variables, lowest precedence first; templates are rendered when read."""

    layers: list[Mapping] = field(default_factory=list)
    _cache: dict = field(default_factory=dict)
    _busy: set = field(default_factory=set)

    def raw(self, name: str):
        for layer in reversed(self.layers):
            if name in layer:
                return layer[name]
        return Undefined(name)

    def get(self, name: str):
        if name in self._cache:
            return self._cache[name]
        value = self.raw(name)
        if isinstance(value, Undefined):
            return value
        if name in self._busy:
            raise TemplateError(f"`{name}` refers to itself")
        self._busy.add(name)
        try:
            result = self.render(value)
        except TemplateError as exc:
            if str(exc).startswith("in `"):
                raise
            raise TemplateError(f"in `{name}`: {exc}") from exc
        finally:
            self._busy.discard(name)
        self._cache[name] = result
        return result

    def render(self, value):
        """A string's templates evaluated (a lone `{{ expr }}` keeps its type); containers recursively."""
        if isinstance(value, (Table, Row)):
            return value
        if isinstance(value, dict):
            return {k: self.render(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render(v) for v in value]
        if not isinstance(value, str) or ("{{" not in value and "{%" not in value):
            return value
        if "{%" in value:
            raise TemplateError("`{% ... %}` blocks are not evaluated by kubelab")
        pieces = re.split(r"\{\{(.*?)\}\}", value, flags=re.S)
        if len(pieces) == 3 and pieces[0].strip() == "" and pieces[2].strip() == "":
            return self.evaluate(pieces[1])
        out = []
        for i, piece in enumerate(pieces):
            if i % 2 == 0:
                out.append(piece)
            else:
                v = self.evaluate(piece)
                if isinstance(v, Undefined):
                    raise TemplateError(f"`{v.name}` is not defined")
                out.append(str(v))
        return "".join(out)

    def evaluate(self, text: str):
        parser = _Parser(tokenize(text), self, text)
        value = parser.expr(True)
        parser.expect("end")
        return value


class _Parser:
    def __init__(self, tokens, scope: Scope, text: str):
        self.tokens, self.pos, self.scope, self.text = tokens, 0, scope, text

    # token helpers
    def peek(self, offset=0):
        return self.tokens[self.pos + offset]

    def take(self):
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def at(self, kind, value=None, offset=0) -> bool:
        k, v = self.peek(offset)
        return k == kind and (value is None or v == value)

    def accept(self, kind, value=None) -> bool:
        if self.at(kind, value):
            self.pos += 1
            return True
        return False

    def expect(self, kind, value=None):
        if not self.at(kind, value):
            got = self.peek()[1]
            raise TemplateError(f"expected {value or kind}, found {got!r} in `{self.text.strip()}`")
        return self.take()[1]

    # grammar; `live` False means: parse only (a branch not taken)
    def expr(self, live):
        # `a if b else c`: `a` is read first but must only be evaluated when `b` holds
        # (kubespray's `x if static else y` names a table row that may not exist).
        start = self.pos
        self.or_(False)
        if not self.at("name", "if"):
            self.pos = start
            return self.or_(live)
        self.take()
        cond = self.or_(live)
        taken = live and _truth(cond)
        other = self.expr(live and not taken) if self.accept("name", "else") else ""
        if not taken:
            return other
        end, self.pos = self.pos, start
        value = self.or_(True)
        self.pos = end
        return value

    def or_(self, live):
        value = self.and_(live)
        while self.accept("name", "or"):
            right = self.and_(live and not _truth(value))
            if live and not _truth(value):
                value = right
        return value

    def and_(self, live):
        value = self.not_(live)
        while self.accept("name", "and"):
            right = self.not_(live and _truth(value))
            if live and _truth(value):
                value = right
        return value

    def not_(self, live):
        if self.accept("name", "not"):
            return live and not _truth(self.not_(live))
        return self.compare(live)

    def compare(self, live):
        value = self.arith(live)
        while True:
            if self.at("op") and self.peek()[1] in ("==", "!=", "<", ">", "<=", ">="):
                op = self.take()[1]
                right = self.arith(live)
                if live:
                    value = _compare(value, op, right)
            elif self.at("name", "in") or (self.at("name", "not") and self.at("name", "in", 1)):
                negate = self.accept("name", "not")
                self.take()
                right = self.arith(live)
                if live:
                    _need(value), _need(right)
                    value = (value in right) != negate
            else:
                return value

    def arith(self, live):
        value = self.unary(live)
        while self.at("op") and self.peek()[1] in ("+", "-", "~"):
            op = self.take()[1]
            right = self.unary(live)
            if live:
                _need(value), _need(right)
                if op == "~":
                    value = f"{value}{right}"
                elif op == "+":
                    value = value + right
                else:
                    value = value - right
        return value

    def unary(self, live):
        if self.accept("op", "-"):
            v = self.unary(live)
            return -v if live else None
        value = self.postfix(self.primary(live), live)
        while True:
            if self.accept("op", "|"):
                name = self.expect("name")
                args = self.args(live) if self.at("op", "(") else []
                value = _filter(name, value, args) if live else None
                value = self.postfix(value, live)
            elif self.accept("name", "is"):
                negate = self.accept("name", "not")
                name = self.expect("name")
                args = self.args(live) if self.at("op", "(") else []
                if live:
                    value = _test(name, value, args) != negate
            else:
                return value

    def primary(self, live):
        kind, v = self.take()
        if kind == "lit":
            return v
        if kind == "name" and v in LITERALS:
            return LITERALS[v]
        if kind == "name" and v == "lookup":
            args = self.args(live)
            return self.lookup(args) if live else None
        if kind == "name" and v not in KEYWORDS:
            return self.scope.get(v) if live else None
        if kind == "op" and v == "(":
            value = self.expr(live)
            self.expect("op", ")")
            return value
        if kind == "op" and v == "[":
            items = []
            while not self.accept("op", "]"):
                items.append(self.expr(live))
                if not self.at("op", "]"):
                    self.expect("op", ",")
            return items
        raise TemplateError(f"unexpected {v!r} in `{self.text.strip()}`")

    def postfix(self, value, live):
        while True:
            if self.accept("op", "."):
                attr = self.expect("name")
                if self.at("op", "("):
                    args = self.args(live)
                    value = _method(value, attr, args) if live else None
                else:
                    value = _index(value, attr) if live else None
            elif self.accept("op", "["):
                value = self.subscript(value, live)
            else:
                return value

    def subscript(self, value, live):
        start = stop = None
        if not self.at("op", ":"):
            start = self.expr(live)
        if self.accept("op", ":"):
            if not self.at("op", "]"):
                stop = self.expr(live)
            self.expect("op", "]")
            return value[start:stop] if live else None
        self.expect("op", "]")
        return _index(value, start) if live else None

    def args(self, live):
        self.expect("op", "(")
        out = []
        while not self.accept("op", ")"):
            out.append(self.expr(live))
            if not self.at("op", ")"):
                self.expect("op", ",")
        return out

    def lookup(self, args):
        if len(args) == 2 and args[0] == "vars":
            value = self.scope.get(str(args[1]))
            if isinstance(value, Undefined):
                raise TemplateError(f"lookup('vars', {args[1]!r}): not defined")
            return value
        raise TemplateError(f"lookup{tuple(args)!r} is not evaluated by kubelab")


def _need(value):
    if isinstance(value, Undefined):
        raise TemplateError(f"`{value.name}` is not defined")
    return value


def _truth(value) -> bool:
    return bool(_need(value))


def _compare(a, op, b):
    _need(a), _need(b)
    return {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, ">": lambda: a > b,
            "<=": lambda: a <= b, ">=": lambda: a >= b}[op]()


def _filter(name: str, value, args: list):
    if name in ("default", "d"):
        if not isinstance(value, Undefined):
            return value
        return args[0] if args else ""
    _need(value)
    if name == "dict2items":
        return [{"key": k, "value": v} for k, v in value.items()]
    if name == "lower":
        return str(value).lower()
    if name == "split":
        return str(value).split(*(args[:1] or []))
    if name == "join":
        return (args[0] if args else "").join(str(v) for v in value)
    if name == "int":
        try:
            return int(value)
        except (TypeError, ValueError):
            return 0
    if name == "string":
        return str(value)
    if name == "list":
        return list(value)
    if name == "bool":
        return value if isinstance(value, bool) else str(value).lower() in ("yes", "on", "1", "true")
    if name == "select" and args and args[0] == "version":
        return [v for v in value if version_compare(v, args[1], args[2] if len(args) > 2 else ">=")]
    raise TemplateError(f"filter `{name}` is not evaluated by kubelab")


def _test(name: str, value, args: list) -> bool:
    if name == "defined":
        return not isinstance(value, Undefined)
    if name == "undefined":
        return isinstance(value, Undefined)
    if name == "none":
        return value is None
    if name in ("version", "version_compare"):
        return version_compare(_need(value), args[0], args[1] if len(args) > 1 else "==")
    raise TemplateError(f"test `{name}` is not evaluated by kubelab")


def _method(value, name: str, args: list):
    _need(value)
    if isinstance(value, dict) and name in ("keys", "values", "items") and not args:
        return list(getattr(value, name)())
    if isinstance(value, str) and name in ("split", "lower", "upper", "strip"):
        return getattr(value, name)(*args)
    raise TemplateError(f"method `.{name}()` is not evaluated by kubelab")


# -- YAML as Ansible reads it, but with mapping keys kept as written -----------

class _KeysAsWritten(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """Checksum tables are keyed by versions (`1.36.4:`, `'1.36':`); keep each key's text
    so `1.10` stays "1.10" rather than the float 1.1."""


def _mapping(loader, node, deep=False):
    loader.flatten_mapping(node)
    out = {}
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else loader.construct_object(key_node, deep)
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_KeysAsWritten.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(text: str, where: str) -> dict:
    try:
        data = yaml.load(text, Loader=_KeysAsWritten)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise TemplateError(f"{where}: not valid YAML ({exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise TemplateError(f"{where}: expected a mapping of variables")
    return data
