"""The part of cel-go's type check a CRD's rules need at creation: every field a rule selects on
``self``/``oldSelf`` (and on the variables of ``all``/``exists``/``map``/``filter`` over them)
must be declared by the schema, else upstream refuses the CRD with ``undefined field 'x'``.

cel-python does not type-check, so this walks its parse tree with the schema beside it. It is
deliberately partial: where the type of an expression is not a schema node it knows (a
function's result, a literal, a map with open keys, preserve-unknown-fields), it checks
nothing, so a valid rule is never refused.
"""

from __future__ import annotations

from typing import Any, Final

import lark

from numaplane.apiserver.crd.celvalues import escape_name
from numaplane.apiserver.crd.schema import Node, parse

_MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})
_RESOURCE_FIELDS: Final = ("apiVersion", "kind", "metadata")
#: What CEL sees of an object's ``metadata`` at the root and in embedded resources.
_META: Final = parse(
    {
        "type": "object",
        "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
    }
)
_STRING: Final = parse({"type": "string"})


class _Unknown:
    """An expression whose type this checker does not follow."""


UNKNOWN: Final = _Unknown()
Typed = Node | _Unknown


def undefined_fields(tree: lark.Tree[Any], node: Node, *, root: bool) -> list[str]:
    """cel-go's messages for the undeclared fields ``tree`` selects, for a rule on ``node``
    (``root``: the resource root, where apiVersion, kind and metadata always exist)."""
    errors: list[str] = []
    _Checker(errors, node if root else None).type_of(tree, {"self": node, "oldSelf": node})
    return errors


class _Checker:
    def __init__(self, errors: list[str], root: Node | None) -> None:
        self.errors = errors
        self.root = root

    def type_of(self, tree: Any, env: dict[str, Typed]) -> Typed:
        """The schema node ``tree`` evaluates to (:data:`UNKNOWN` when not followed),
        recording undeclared fields on the way."""
        if not isinstance(tree, lark.Tree):
            return UNKNOWN
        handler = getattr(self, f"_{tree.data}", None)
        if handler is not None:
            result: Typed = handler(tree, env)
            return result
        if tree.data in _PASS_THROUGH and len(tree.children) == 1:
            # A level of the grammar (expr -> conditionalor -> ... -> member) that only wraps
            # its child keeps the child's type.
            return self.type_of(tree.children[0], env)
        for child in tree.children:
            self.type_of(child, env)
        return UNKNOWN

    def _primary(self, tree: lark.Tree[Any], env: dict[str, Typed]) -> Typed:
        child = tree.children[0] if tree.children else None
        if isinstance(child, lark.Tree) and child.data == "ident":
            name = str(child.children[0])
            return env.get(name, UNKNOWN)
        for sub in tree.children:
            self.type_of(sub, env)
        return UNKNOWN

    def _member_dot(self, tree: lark.Tree[Any], env: dict[str, Typed]) -> Typed:
        target, name_token = tree.children[0], tree.children[1]
        typed = self.type_of(target, env)
        return self._select(typed, str(name_token), name_token)

    def _select(self, typed: Typed, name: str, token: Any) -> Typed:
        if not isinstance(typed, Node):
            return UNKNOWN
        if typed.additional is not None:
            return typed.additional
        if typed.preserve_unknown or typed.int_or_string or typed.type not in ("object", ""):
            return UNKNOWN
        if not typed.properties and not typed.type:
            return UNKNOWN
        by_name = {escape_name(k): v for k, v in typed.properties.items()}
        if name in by_name:
            found = by_name[name]
            if name == "metadata" and (typed is self.root or typed.embedded):
                return _META
            return found
        if (typed.embedded or typed is self.root) and name in _RESOURCE_FIELDS:
            return _META if name == "metadata" else _STRING
        # cel-go places a selection at its dot, one column before the field's name.
        line = getattr(token, "line", 1) or 1
        column = max(1, (getattr(token, "column", 2) or 2) - 1)
        self.errors.append(f"ERROR: <input>:{line}:{column}: undefined field '{name}'")
        return UNKNOWN

    def _member_dot_arg(self, tree: lark.Tree[Any], env: dict[str, Typed]) -> Typed:
        target, method = tree.children[0], str(tree.children[1])
        args = tree.children[2] if len(tree.children) > 2 else None
        typed = self.type_of(target, env)
        exprs = list(args.children) if isinstance(args, lark.Tree) else []
        if method in _MACROS and len(exprs) >= 2:
            var = _ident_of(exprs[0])
            element: Typed = UNKNOWN
            if isinstance(typed, Node):
                if typed.items is not None:
                    element = typed.items
                elif typed.additional is not None or typed.type == "object":
                    element = _STRING
            scoped = dict(env)
            if var is not None:
                scoped[var] = element
            for expr in exprs[1:]:
                self.type_of(expr, scoped)
            return typed if method == "filter" else UNKNOWN
        for expr in exprs:
            self.type_of(expr, env)
        return UNKNOWN

    def _member_index(self, tree: lark.Tree[Any], env: dict[str, Typed]) -> Typed:
        typed = self.type_of(tree.children[0], env)
        for sub in tree.children[1:]:
            self.type_of(sub, env)
        if isinstance(typed, Node):
            if typed.items is not None:
                return typed.items
            if typed.additional is not None:
                return typed.additional
        return UNKNOWN


_PASS_THROUGH: Final = frozenset(
    {
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
    }
)


def _ident_of(tree: Any) -> str | None:
    # The variable of a macro is written as a bare identifier: find the single ident leaf.
    found: list[str] = []

    def visit(sub: Any) -> None:
        if isinstance(sub, lark.Tree):
            if sub.data == "ident":
                found.append(str(sub.children[0]))
            for child in sub.children:
                visit(child)

    visit(tree)
    return found[0] if len(found) == 1 else None
