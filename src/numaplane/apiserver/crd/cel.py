"""``x-kubernetes-validations`` CEL rules, as upstream's ``apiextensions-apiserver`` schema/cel.

Rules are compiled once per schema (:func:`compile_schema`, cached with the CRD's generation by
``definition``) with cel-python (``celpy``) and the Kubernetes libraries of
:mod:`numaplane.apiserver.crd.cellib`. :func:`validate` walks the object with its schema and,
at each node carrying rules, binds ``self`` to the node's value (typed by the schema: ``number``
is a double even when written ``1``, ``date-time`` strings are timestamps, ``set``/``map`` lists
compare without order) and ``oldSelf`` to the correlated old value. A transition rule (one that
names ``oldSelf``) runs only on update and only where an old value exists at that path (object
fields by name, ``map`` lists by key), unless ``optionalOldSelf`` makes ``oldSelf`` an optional.

A failed rule reports as upstream: ``spec.x: Invalid value: "object": <message>`` (the value is
the schema type), the message from ``messageExpression`` when it evaluates to a one-line
non-empty string, else ``message``, else ``failed rule: <rule>``; ``reason`` picks Forbidden,
Required or Duplicate; ``fieldPath`` extends the path; a rule at the root reports at ``<nil>``
(upstream's nil path). An evaluation error reads ``<error> evaluating rule: <message or rule>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import celpy
from celpy import celtypes

from numaplane.apiserver.crd import cellib
from numaplane.apiserver.crd.schema import Node
from numaplane.apiserver.crd.validation import child_path, index_path
from numaplane.apiserver.errors import OMIT, FieldError

ROOT_PATH: Final = "<nil>"

_OLD_SELF: Final = re.compile(r"\boldSelf\b")

#: Property names CEL cannot spell as written, escaped as Kubernetes does.
_RESERVED: Final = frozenset(
    {
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)


def escape_name(name: str) -> str:
    """A property name as CEL sees it (``__dash__``, ``__dot__``, ``__slash__``, reserved words
    as ``__name__``, ``__`` as ``__underscores__``)."""
    if name in _RESERVED:
        return f"__{name}__"
    escaped = name.replace("__", "__underscores__")
    return escaped.replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")


class CompileError(ValueError):
    """A rule that does not compile, worded as upstream's ``compilation failed: ...``."""


@dataclass(frozen=True)
class CompiledRule:
    """One rule of ``x-kubernetes-validations`` with its programs."""

    rule: str
    message: str
    message_expression: str
    reason: str
    field_path: str
    optional_old_self: bool
    transition: bool
    program: celpy.Runner | None
    message_program: celpy.Runner | None
    error: str = ""


@dataclass(frozen=True)
class CompiledRules:
    """The compiled rules of a schema, by node, and which nodes have rules below them."""

    root: Node
    by_node: Mapping[int, tuple[CompiledRule, ...]] = field(default_factory=dict)
    has_rules_below: frozenset[int] = frozenset()

    @property
    def empty(self) -> bool:
        """Whether the schema has no rule at all."""
        return not self.by_node

    def errors(self) -> list[str]:
        """The compilation errors (``validate_crd`` reports them)."""
        return [r.error for rules in self.by_node.values() for r in rules if r.error]


_ENV: Final = celpy.Environment()


def compile_rule(raw: Mapping[str, Any]) -> CompiledRule:
    """One rule dict compiled; a syntax error is kept in ``error`` (the rule then fails)."""
    text = str(raw.get("rule", ""))
    message_expression = str(raw.get("messageExpression", "") or "")
    error = ""
    program = None
    message_program = None
    try:
        program = _ENV.program(_ENV.compile(text), functions=cellib.FUNCTIONS)
    except Exception as exc:  # celpy raises its own parse errors and lark's
        error = f"compilation failed: {_one_line(str(exc))}"
    if message_expression:
        try:
            message_program = _ENV.program(
                _ENV.compile(message_expression), functions=cellib.FUNCTIONS
            )
        except Exception as exc:
            error = error or f"messageExpression compilation failed: {_one_line(str(exc))}"
    return CompiledRule(
        rule=text,
        message=str(raw.get("message", "") or ""),
        message_expression=message_expression,
        reason=str(raw.get("reason", "") or ""),
        field_path=str(raw.get("fieldPath", "") or ""),
        optional_old_self=bool(raw.get("optionalOldSelf", False)),
        transition=_OLD_SELF.search(text) is not None,
        program=program,
        message_program=message_program,
        error=error,
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def compile_schema(root: Node) -> CompiledRules:
    """Every rule of ``root``'s tree compiled once."""
    by_node: dict[int, tuple[CompiledRule, ...]] = {}
    below: set[int] = set()

    def visit(node: Node) -> bool:
        found = False
        if node.rules:
            by_node[id(node)] = tuple(compile_rule(r) for r in node.rules)
            found = True
        for sub in [*node.properties.values(), node.items, node.additional]:
            if sub is not None and visit(sub):
                found = True
        if found:
            below.add(id(node))
        return found

    visit(root)
    return CompiledRules(root, by_node, frozenset(below))


# ---- values --------------------------------------------------------------------------------


class SetList(celtypes.ListType):
    """A ``set`` or ``map`` list: equal to another with the same items in any order."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, list) or len(other) != len(self):
            return False
        remaining = list(other)
        for item in self:
            for i, candidate in enumerate(remaining):
                if _equal(item, candidate):
                    del remaining[i]
                    break
            else:
                return False
        return True

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]


def _equal(left: Any, right: Any) -> bool:
    try:
        return bool(left == right)
    except TypeError:
        return False


def to_cel(node: Node | None, value: Any) -> Any:
    """A JSON value as the CEL value Kubernetes binds for a field of schema ``node``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        if node is not None and node.type == "number":
            return celtypes.DoubleType(float(value))
        return celtypes.IntType(value)
    if isinstance(value, float):
        if node is not None and node.type == "integer" and value.is_integer():
            return celtypes.IntType(int(value))
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return _string(node, value)
    if isinstance(value, list):
        items = node.items if node is not None else None
        converted = [to_cel(items, v) for v in value]
        if node is not None and node.list_type in ("set", "map"):
            return SetList(converted)
        return celtypes.ListType(converted)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, sub in value.items():
            prop = node.properties.get(key) if node is not None else None
            if prop is not None:
                out[celtypes.StringType(escape_name(key))] = to_cel(prop, sub)
            else:
                extra = node.additional if node is not None else None
                out[celtypes.StringType(key)] = to_cel(extra, sub)
        return celtypes.MapType(out)
    return value


def _string(node: Node | None, value: str) -> Any:
    fmt = node.raw.get("format", "") if node is not None else ""
    try:
        if fmt in ("date-time", "datetime"):
            return celtypes.TimestampType(value)
        if fmt == "duration":
            return celtypes.DurationType(value)
    except (ValueError, TypeError):
        pass
    return celtypes.StringType(value)


# ---- evaluation ----------------------------------------------------------------------------


_ABSENT: Final = object()


def validate(compiled: CompiledRules, new: Any, old: Any | None) -> list[FieldError]:
    """The rule failures of ``new`` (an update when ``old`` is not ``None``)."""
    if compiled.empty:
        return []
    errs: list[FieldError] = []
    _walk(compiled, compiled.root, new, old if old is not None else _ABSENT, "", errs)
    return errs


def _walk(
    compiled: CompiledRules, node: Node, value: Any, old: Any, path: str, errs: list[FieldError]
) -> None:
    if id(node) not in compiled.has_rules_below or value is None:
        return
    for rule in compiled.by_node.get(id(node), ()):
        _run(rule, node, value, old, path, errs)
    if isinstance(value, dict):
        for key in sorted(value):
            sub = node.child(key)
            if sub is None:
                continue
            old_sub = old.get(key, _ABSENT) if isinstance(old, dict) else _ABSENT
            _walk(compiled, sub, value[key], old_sub, child_path(path, key), errs)
    elif isinstance(value, list) and node.items is not None:
        olds = _correlate(node, value, old)
        for i, item in enumerate(value):
            _walk(compiled, node.items, item, olds[i], index_path(path, i), errs)


def _correlate(node: Node, value: list[Any], old: Any) -> list[Any]:
    if node.list_type != "map" or not isinstance(old, list) or not node.map_keys:
        return [_ABSENT] * len(value)

    def key(item: Any) -> tuple[Any, ...] | None:
        if not isinstance(item, dict):
            return None
        return tuple(repr(item.get(k)) for k in node.map_keys)

    by_key = {key(item): item for item in old if key(item) is not None}
    return [by_key.get(key(item), _ABSENT) for item in value]


def _run(
    rule: CompiledRule, node: Node, value: Any, old: Any, path: str, errs: list[FieldError]
) -> None:
    where = _with_field_path(path, rule.field_path)
    shown_type = node.type
    if rule.program is None:
        errs.append(FieldError("FieldValueInvalid", where, shown_type, rule.error))
        return
    activation: dict[str, Any] = {"self": to_cel(node, value)}
    if rule.transition:
        if old is _ABSENT:
            if not rule.optional_old_self:
                return
            activation["oldSelf"] = cellib.Optional(None)
        else:
            converted = to_cel(node, old)
            activation["oldSelf"] = (
                cellib.Optional(converted) if rule.optional_old_self else converted
            )
    try:
        result = rule.program.evaluate(activation)
    except Exception as exc:  # celpy wraps evaluation errors of every kind
        detail = f"{describe_error(exc)} evaluating rule: {_rule_string(rule)}"
        errs.append(FieldError("FieldValueInvalid", where, shown_type, detail))
        return
    if isinstance(result, celtypes.BoolType) and bool(result):
        return
    if not isinstance(result, celtypes.BoolType):
        detail = f"rule did not evaluate to a bool evaluating rule: {_rule_string(rule)}"
        errs.append(FieldError("FieldValueInvalid", where, shown_type, detail))
        return
    message = _message(rule, activation)
    errs.append(_for_reason(rule.reason, where, shown_type, message))


def _rule_string(rule: CompiledRule) -> str:
    return rule.message.strip() if rule.message else rule.rule.strip()


def _message(rule: CompiledRule, activation: Mapping[str, Any]) -> str:
    if rule.message_program is not None:
        try:
            text = rule.message_program.evaluate(dict(activation))
        except Exception:  # a failing messageExpression falls back to the static message
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text and len(text) <= 5000:
            return str(text)
    if rule.message:
        return rule.message.strip()
    return f"failed rule: {_rule_string(rule)}"


def _for_reason(reason: str, path: str, value: str, message: str) -> FieldError:
    if reason == "FieldValueForbidden":
        return FieldError("FieldValueForbidden", path, OMIT, message)
    if reason == "FieldValueRequired":
        return FieldError("FieldValueRequired", path, OMIT, message)
    if reason == "FieldValueDuplicate":
        return FieldError("FieldValueDuplicate", path, value, "")
    return FieldError("FieldValueInvalid", path, value, message)


_FIELD_STEP: Final = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[\s*'([^']*)'\s*\]|\[\s*(\d+)\s*\]")


def _with_field_path(path: str, field_path: str) -> str:
    if not field_path:
        return path or ROOT_PATH
    out = path
    pos = 0
    while pos < len(field_path):
        step = _FIELD_STEP.match(field_path, pos)
        if step is None:
            break
        name, key, index = step.groups()
        if name is not None:
            out = child_path(out, name)
        elif key is not None:
            out = f"{out}[{key}]"
        else:
            out = index_path(out, int(index))
        pos = step.end()
    return out or ROOT_PATH


_NO_MEMBER: Final = re.compile(r"no such member in mapping: '([^']*)'")


def describe_error(exc: BaseException) -> str:
    """A celpy evaluation error in cel-go's words where they differ (``no such key: x``)."""
    text = str(exc.args[0]) if exc.args else str(exc)
    missing = _NO_MEMBER.search(text)
    if missing:
        return f"no such key: {missing.group(1)}"
    if "no matching overload" in text:
        return "no such overload"
    if "divide by zero" in text.lower() or "division by zero" in text.lower():
        return "division by zero"
    return _one_line(text)
