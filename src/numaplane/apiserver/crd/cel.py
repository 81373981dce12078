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
from numaplane.apiserver.crd.celvalues import to_cel
from numaplane.apiserver.crd.correlation import NO_OLD, correlate, json_equal
from numaplane.apiserver.crd.paths import child_path, field_path, index_path
from numaplane.apiserver.crd.schema import Node
from numaplane.apiserver.errors import OMIT, FieldError
from numaplane.errors import NumaplaneError

ROOT_PATH: Final = "<nil>"

#: The ``reason`` values a rule may give (upstream's ``FieldValueErrorReason``).
REASONS: Final = (
    "FieldValueRequired",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueDuplicate",
)

_OLD_SELF: Final = re.compile(r"\boldSelf\b")


class CompileError(NumaplaneError):
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


def parse_rule(text: str) -> Any:
    """The parse tree of a rule (``CompileError`` worded as cel-go when it does not parse)."""
    try:
        return _ENV.compile(text)
    except Exception as exc:  # celpy raises its own parse errors and lark's
        raise CompileError(f"compilation failed: {_syntax_error(exc)}") from None


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
        error = f"compilation failed: {_syntax_error(exc)}"
    if message_expression:
        try:
            message_program = _ENV.program(
                _ENV.compile(message_expression), functions=cellib.FUNCTIONS
            )
        except Exception as exc:
            error = error or f"messageExpression compilation failed: {_syntax_error(exc)}"
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


def _syntax_error(exc: BaseException) -> str:
    # cel-go's shape (``ERROR: <input>:1:8: Syntax error: ...``); celpy knows where, not why.
    line = getattr(exc, "line", None) or 1
    column = getattr(exc, "column", None) or 1
    return f"ERROR: <input>:{line}:{column}: Syntax error: unexpected input"


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


# ---- evaluation ----------------------------------------------------------------------------


@dataclass
class _Pass:
    """One validation: its errors, and each node's value converted once."""

    compiled: CompiledRules
    errs: list[FieldError] = field(default_factory=list)
    converted: dict[tuple[int, int, bool], Any] = field(default_factory=dict)

    def cel_value(self, node: Node, value: Any, resource: bool) -> Any:
        """``value`` (under ``node``) as a CEL value, converted once per pass."""
        key = (id(node), id(value), resource)
        found = self.converted.get(key, _MISS)
        if found is _MISS:
            found = self.converted[key] = to_cel(node, value, resource=resource)
        return found


_MISS: Final = object()


def validate(compiled: CompiledRules, new: Any, old: Any | None) -> list[FieldError]:
    """The rule failures of ``new`` (an update when ``old`` is not ``None``).

    On update, a rule that does not read ``oldSelf`` and evaluates to false where the value is
    unchanged (the value itself when it correlates with an old one, else its nearest
    correlatable ancestor) is not reported: upstream's validation ratcheting. Evaluation errors
    are always reported, as upstream does."""
    if compiled.empty:
        return []
    run = _Pass(compiled)
    start = old if old is not None else NO_OLD
    _walk(run, compiled.root, new, start, "", start, False)
    return run.errs


def _walk(
    run: _Pass,
    node: Node,
    value: Any,
    old: Any,
    path: str,
    ratchet_old: Any,
    parent_unchanged: bool,
) -> None:
    # ``old`` is what oldSelf binds (correlated through objects and map lists); ``ratchet_old``
    # the value ratcheting compares with (also through set lists).
    if id(node) not in run.compiled.has_rules_below or value is None:
        return
    unchanged = parent_unchanged if ratchet_old is NO_OLD else json_equal(value, ratchet_old)
    for rule in run.compiled.by_node.get(id(node), ()):
        _run(run, rule, node, value, old, path, ratchet=unchanged and not rule.transition)
    if isinstance(value, dict):
        for key in sorted(value):
            sub = node.child(key)
            if sub is None:
                continue
            old_sub = old.get(key, NO_OLD) if isinstance(old, dict) else NO_OLD
            ratchet_sub = ratchet_old.get(key, NO_OLD) if isinstance(ratchet_old, dict) else NO_OLD
            here = field_path(path, key, key in node.properties)
            _walk(run, sub, value[key], old_sub, here, ratchet_sub, unchanged)
    elif isinstance(value, list) and node.items is not None:
        olds = _correlate(node, value, old)
        ratchet_olds = correlate(node, value, ratchet_old)
        for i, item in enumerate(value):
            here = index_path(path, i)
            _walk(run, node.items, item, olds[i], here, ratchet_olds[i], unchanged)


def _correlate(node: Node, value: list[Any], old: Any) -> list[Any]:
    # Transition rules correlate only through map lists (upstream: a set or atomic list item
    # has no identity to carry oldSelf across an update).
    if node.list_type != "map":
        return [NO_OLD] * len(value)
    return correlate(node, value, old)


def _run(
    run: _Pass, rule: CompiledRule, node: Node, value: Any, old: Any, path: str, *, ratchet: bool
) -> None:
    errs = run.errs
    where = path or ROOT_PATH
    shown_type = node.type
    if rule.program is None:
        errs.append(
            FieldError("FieldValueInvalid", where, shown_type, f"rule compile error: {rule.error}")
        )
        return
    root = not path
    activation: dict[str, Any] = {"self": run.cel_value(node, value, root)}
    if rule.transition:
        if old is NO_OLD:
            if not rule.optional_old_self:
                return
            activation["oldSelf"] = cellib.Optional(None)
        else:
            converted = run.cel_value(node, old, root)
            activation["oldSelf"] = (
                cellib.Optional(converted) if rule.optional_old_self else converted
            )
    try:
        result = rule.program.evaluate(activation)
    except Exception as exc:  # celpy wraps evaluation errors of every kind
        errs.append(FieldError("FieldValueInvalid", where, shown_type, _eval_error(exc, rule)))
        return
    if isinstance(result, celtypes.BoolType) and bool(result):
        return
    if not isinstance(result, celtypes.BoolType):
        detail = f"rule did not evaluate to a bool evaluating rule: {_rule_string(rule)}"
        errs.append(FieldError("FieldValueInvalid", where, shown_type, detail))
        return
    if ratchet:
        return
    where = _with_field_path(path, rule.field_path)
    message = _message(rule, activation)
    errs.append(_for_reason(rule.reason, where, shown_type, message))


def _eval_error(exc: BaseException, rule: CompiledRule) -> str:
    described = describe_error(exc)
    if described.startswith("no such overload"):
        return (
            f"'{described}': call arguments did not match a supported operator, function or "
            f"macro signature for rule: {_rule_string(rule)}"
        )
    return f"{described} evaluating rule: {_rule_string(rule)}"


def _rule_string(rule: CompiledRule) -> str:
    return rule.message.strip() if rule.message else rule.rule.strip()


def _message(rule: CompiledRule, activation: Mapping[str, Any]) -> str:
    if rule.message_program is not None:
        try:
            text = rule.message_program.evaluate(dict(activation))
        except Exception:  # a failing messageExpression falls back to the static message
            text = None
        trimmed = str(text).strip() if isinstance(text, str) else ""
        if trimmed and "\n" not in trimmed and len(trimmed.encode()) <= 5000:
            return trimmed
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
