"""A JSON schema made ready for llama-cpp-python's grammar converter, within a budget.

The converter takes a schema as it comes, and some schemas cost it (or llama.cpp after it) far
more than their size: counts are unrolled (``maxItems: 20000`` nests 20,000 groups, which
overflows llama.cpp's recursive parser), ``$ref`` chains of ``anyOf`` fan out exponentially, long
enums and nested pattern repetitions multiply llama.cpp's parse stacks. :func:`prepare` rewrites
and bounds the schema first, so that what reaches the converter is linear in its size:

- ``$ref`` is resolved against the schema's own root, every target hoisted into ``$defs`` under a
  new name (unique per ``prefix``), so a schema nested in a larger one (a tool's parameters under
  its call's ``arguments``) keeps its references, and a shared target is converted once;
- a schema that constrains nothing the converter reads (``{}``, ``true``, a property with only a
  ``description``) is JSON Schema's "anything": any JSON value, not the converter's "an object";
- ``"type": [a, b]`` is an ``anyOf`` of the schema with each type, so the other keywords still hold;
- counts above :data:`MAX_COUNT` are refused (``minItems``, ``minLength``, a pattern's ``{m,n}``)
  or dropped (``maxItems``, ``maxLength``: the grammar then allows more, never less); a
  pattern's counts nested in counts may multiply to :data:`MAX_NESTED_COUNT` (``(a{0,30}){0,30}``
  costs llama.cpp a second a token, ``((a{0,100}){0,100}){0,100}`` minutes);
- nesting (:data:`MAX_DEPTH`, through references too), enums (:data:`MAX_ENUM`), the alternatives
  llama.cpp may have to follow at once (:data:`MAX_ALTERNATIVES`) and the schema's size
  (:data:`MAX_NODES`) are bounded: past them the schema is refused with :class:`SchemaRefused`,
  which says where (a JSON pointer).
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 32  # sub-schemas inside one another (64 through $ref)
MAX_COUNT = 10_000  # minItems, minLength, a pattern's {m,n} (nested repetitions multiplied)
MAX_NESTED_COUNT = 100  # a pattern's counts inside counts, multiplied: (a{0,10}){0,10}
MAX_ENUM = 500  # values of one enum (each a parse stack while the answer's first tokens fit many)
MAX_ALTERNATIVES = 512  # anyOf/oneOf/enum values/optional properties open at once (multiplied through $ref)
MAX_NODES = 10_000  # sub-schemas in all

TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
ANY: dict[str, Any] = {"type": ["object", "array", "string", "number", "boolean", "null"]}
# What the converter reads; a schema with none of these constrains nothing it can enforce.
_READ = ("$ref", "type", "anyOf", "oneOf", "allOf", "const", "enum", "properties", "additionalProperties")
_READ_MORE = ("items", "prefixItems", "pattern")
_FORMATS = re.compile(r"^(uuid[1-5]?|date|time|date-time)$")
_COUNTS = ("minItems", "maxItems", "minLength", "maxLength")


class SchemaRefused(ValueError):
    """A schema SpecChat's grammars do not take, with where and why (one line)."""


def _pointer(path: str) -> str:
    return path or "/"


def _is_anything(schema: dict[str, Any]) -> bool:
    if any(key in schema for key in _READ + _READ_MORE):
        return False
    fmt = schema.get("format")
    return not (isinstance(fmt, str) and _FORMATS.match(fmt))


def _count(schema: dict[str, Any], key: str, path: str) -> int | None:
    value = schema.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
        raise SchemaRefused(f"'{key}' at {_pointer(path)} must be a non-negative integer")
    return int(value)


def pattern_cost(pattern: str) -> tuple[int, int]:
    """(the largest product of nested ``{m,n}`` bounds in a regular expression, the largest
    such product of two or more nested ones; 1: none): what the pattern's grammar repeats at
    most, and how many ways to split a text nested counts open (each a parse stack per token)."""
    costs: list[int] = [1]  # the deepest cost seen in each open group
    last = 1  # the cost of the atom a quantifier would apply to
    nested = 1
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i, last = i + 2, 1
            continue
        if c == "[":
            i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            last = 1
        elif c in "]}":  # the converter would loop forever on it
            raise SchemaRefused(f"the pattern has an unmatched '{c}' (escape it as '\\{c}')")
        elif c == "(":
            costs.append(1)
        elif c == ")" and len(costs) > 1:
            last = costs.pop()
            costs[-1] = max(costs[-1], last)
        elif c == "{":
            end = pattern.find("}", i)
            bounds = [b.strip() for b in pattern[i + 1 : end].split(",")] if end > 0 else []
            if 1 <= len(bounds) <= 2 and all(b.isdigit() or not b for b in bounds):
                digits = [b for b in bounds if b]
                bound = max((int(b) if len(b) < 12 else 10**12 for b in digits), default=1)
                if last > 1:
                    nested = max(nested, last * max(bound, 1))
                last *= max(bound, 1)
                costs[-1] = max(costs[-1], last)
                i = end
        else:
            last = 1
        i += 1
    return max(costs), nested


class _Preparer:
    def __init__(self, root: dict[str, Any], prefix: str) -> None:
        self.root = root
        self.prefix = prefix
        self.names: dict[str, str] = {}  # a $ref's pointer → its def's new name
        self.defs: dict[str, Any] = {}
        self.pending: list[tuple[str, str]] = []
        self.nodes = 0

    def ref(self, ref: object, path: str) -> dict[str, Any]:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise SchemaRefused(
                f"the $ref {str(ref)[:80]!r} at {_pointer(path)} is not in the schema (only '#...' refs are)"
            )
        pointer = ref[1:]
        if pointer not in self.names:
            self.names[pointer] = f"{self.prefix}def-{len(self.names) + 1}"
            self.pending.append((pointer, ref))
        return {"$ref": f"#/$defs/{self.names[pointer]}"}

    def target(self, pointer: str, ref: str) -> Any:
        node: Any = self.root
        for part in pointer.split("/")[1:] if pointer else []:
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise SchemaRefused(f"the $ref {ref[:80]!r} points at nothing in the schema")
        return node

    def run(self, schema: Any) -> dict[str, Any]:
        top = self.visit(schema, "", 0)
        while self.pending:
            pointer, ref = self.pending.pop()
            self.defs[self.names[pointer]] = self.visit(self.target(pointer, ref), pointer, 0)
        return top

    def visit(self, schema: Any, path: str, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise SchemaRefused(f"the schema has more than {MAX_NODES:,} sub-schemas")
        if depth > MAX_DEPTH:
            raise SchemaRefused(f"the schema is nested more than {MAX_DEPTH} deep (at {_pointer(path)})")
        if schema is True:
            return dict(ANY)
        if not isinstance(schema, dict):
            what = "allows nothing" if schema is False else "is not a schema"
            raise SchemaRefused(f"the sub-schema at {_pointer(path)} {what}")
        if "$ref" in schema:
            return self.ref(schema["$ref"], path)
        if _is_anything(schema):
            return dict(ANY)
        out = {k: v for k, v in schema.items() if k not in ("$defs", "definitions", "$id", "$schema")}
        kind = out.get("type")
        if isinstance(kind, list):
            if not kind or not all(isinstance(t, str) and t in TYPES for t in kind):
                raise SchemaRefused(f"'type' at {_pointer(path)} must name JSON types")
            if len(kind) == 1:
                out["type"] = kind[0]
            elif not any(k in out for k in ("anyOf", "oneOf")):
                out.pop("type")
                out = {"anyOf": [{**out, "type": t} for t in dict.fromkeys(kind)]}
        elif kind is not None and kind not in TYPES:
            raise SchemaRefused(f"'type' at {_pointer(path)} must name a JSON type, not {str(kind)[:40]!r}")
        self.counts(out, path)
        return self.children(out, path, depth)

    def counts(self, out: dict[str, Any], path: str) -> None:
        for key in _COUNTS:
            value = _count(out, key, path)
            if value is None:
                continue
            if value > MAX_COUNT and key.startswith("min"):
                said = f"{value:,}" if value < 10**15 else f"{value:.3g}"
                raise SchemaRefused(
                    f"'{key}' {said} at {_pointer(path)} is more than the {MAX_COUNT:,} a grammar takes"
                )
            if value > MAX_COUNT:
                del out[key]  # the grammar allows any count: more than asked, never fewer
            else:
                out[key] = value
        for low, high in (("minItems", "maxItems"), ("minLength", "maxLength")):
            if low in out and high in out and out[low] > out[high]:
                raise SchemaRefused(f"'{low}' is above '{high}' at {_pointer(path)}: nothing matches")
        enum = out.get("enum")
        if enum is not None and (not isinstance(enum, list) or not enum or len(enum) > MAX_ENUM):
            raise SchemaRefused(f"'enum' at {_pointer(path)} must be a list of 1 to {MAX_ENUM:,} values")
        pattern = out.get("pattern")
        if pattern is not None:
            if not isinstance(pattern, str):
                raise SchemaRefused(f"'pattern' at {_pointer(path)} must be a string")
            largest, nested = pattern_cost(pattern)
            if largest > MAX_COUNT or nested > MAX_NESTED_COUNT:
                raise SchemaRefused(
                    f"the pattern at {_pointer(path)} nests counts that multiply to {min(nested, 10**12):,}, more "
                    f"than {MAX_NESTED_COUNT} (each way to split a text costs every token)"
                    if nested > MAX_NESTED_COUNT
                    else f"the pattern at {_pointer(path)} repeats more than {MAX_COUNT:,} times"
                )

    def children(self, out: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            if key in out:
                alts = out[key]
                if not isinstance(alts, list) or not alts:
                    raise SchemaRefused(f"'{key}' at {_pointer(path)} must be a non-empty list of schemas")
                out[key] = [self.visit(a, f"{path}/{key}/{i}", depth + 1) for i, a in enumerate(alts)]
        if "allOf" in out and len(out["allOf"]) == 1 and not any(k in out for k in ("properties", "anyOf", "oneOf")):
            return dict(out["allOf"][0])  # one schema: itself (the converter would keep only its properties)
        items = out.get("items")
        if isinstance(items, list):
            out["items"] = [self.visit(a, f"{path}/items/{i}", depth + 1) for i, a in enumerate(items)]
        elif items is False:
            del out["items"]
        elif items is not None:
            out["items"] = self.visit(items, f"{path}/items", depth + 1)
        props = out.get("properties")
        if props is not None:
            if not isinstance(props, dict):
                raise SchemaRefused(f"'properties' at {_pointer(path)} must be an object")
            out["properties"] = {k: self.visit(v, f"{path}/properties/{k}", depth + 1) for k, v in props.items()}
        required = out.get("required")
        if required is not None and not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
            raise SchemaRefused(f"'required' at {_pointer(path)} must be a list of names")
        extra = out.get("additionalProperties")
        if isinstance(extra, dict):
            out["additionalProperties"] = self.visit(extra, f"{path}/additionalProperties", depth + 1)
        elif extra is not None and not isinstance(extra, bool):
            raise SchemaRefused(f"'additionalProperties' at {_pointer(path)} must be a schema")
        return out


def _measure(node: Any, defs: dict[str, Any], memo: dict[str, tuple[int, int]], open_refs: set[str]) -> tuple[int, int]:
    """(alternatives open at once, nesting) of a prepared sub-schema, through its references."""
    if not isinstance(node, dict):
        return 1, 0
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in open_refs:  # recursion: no wider than the way in
            return 1, 0
        if name not in memo:
            open_refs.add(name)
            memo[name] = _measure(defs.get(name), defs, memo, open_refs)
            open_refs.discard(name)
        return memo[name]
    width, depth = 1, 0
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            sizes = [_measure(a, defs, memo, open_refs) for a in node[key]]
            width = min(sum(s[0] for s in sizes), MAX_ALTERNATIVES + 1)
            depth = max(s[1] for s in sizes)
    if isinstance(node.get("enum"), list):
        width = len(node["enum"])
    if isinstance(node.get("properties"), dict):  # the optional ones are open at once where a key may come
        optional = set(node["properties"]) - set(node.get("required") or ())
        width = max(width, len(optional) + (node.get("additionalProperties") not in (None, False)))
    children: list[Any] = list(node.get("properties", {}).values()) + list(node.get("allOf", []))
    children += node["items"] if isinstance(node.get("items"), list) else [node.get("items")]
    children += list(node.get("prefixItems", [])) + [node.get("additionalProperties")]
    for child in children:
        if isinstance(child, dict):
            w, d = _measure(child, defs, memo, open_refs)
            width, depth = max(width, w), max(depth, d)
    return width, depth + 1


def prepare(schema: Any, prefix: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the schema, its definitions by name) for the converter; the schema's references point at
    ``#/$defs/<name>``, so the definitions must sit in ``$defs`` of the root the converter is
    given. SchemaRefused when the schema is past a bound or not a schema the converter takes."""
    preparer = _Preparer(schema if isinstance(schema, dict) else {}, prefix)
    try:
        top = preparer.run(schema)
        width, depth = _measure(top, preparer.defs, {}, set())
    except RecursionError:
        raise SchemaRefused("the schema's $refs are nested too deep") from None
    if width > MAX_ALTERNATIVES:
        raise SchemaRefused(
            f"the schema's anyOf/oneOf/enum/optional-property alternatives multiply to more than "
            f"{MAX_ALTERNATIVES:,} (through its $refs)"
        )
    if depth > 2 * MAX_DEPTH:
        raise SchemaRefused(f"the schema is nested more than {2 * MAX_DEPTH} deep through its $refs")
    return top, preparer.defs


def rooted(schema: Any) -> dict[str, Any]:
    """``schema`` prepared as a whole document for the converter: its definitions in ``$defs``
    (a root that is itself a reference is wrapped, since the converter resolves nothing beside
    a root ``$ref``)."""
    top, defs = prepare(schema)
    if "$ref" in top:
        top = {"anyOf": [top]}
    return {**top, "$defs": defs} if defs else top
