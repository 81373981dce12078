"""Label and field selectors, parsed, validated, printed and matched as apimachinery's
``labels`` and ``fields`` packages do (same grammar, same error wording), so that a bad
``?labelSelector=`` gets the message kubectl users know and a good one selects the same objects.

Pure functions: the API server uses them for list, watch and deletecollection, the scheduler of a
later issue for its own selectors. This module holds the label selector values and their
matching; the text grammar is :mod:`numaplane.api.labelparser` and field selectors are
:mod:`numaplane.api.fieldselectors`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from numaplane.api.validation import is_qualified_name, is_valid_label_value
from numaplane.errors import NumaplaneError
from numaplane.gofmt import go_quote


class SelectorError(NumaplaneError):
    """A label or field selector that does not parse; ``str()`` is upstream's message (the API
    server answers it as a 400 BadRequest)."""


def _go_string_slice(values: list[str] | None) -> str:
    # field.Invalid prints a []string bad value with Go's %#v.
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def invalid_value_text(path: str, shown_value: str, detail: str) -> str:
    """``field.Invalid(...).Error()``: ``<path>: Invalid value: <value>: <detail>``."""
    return f"{path}: Invalid value: {shown_value}: {detail}"


def _aggregate(messages: list[str]) -> str:
    # utilerrors.Aggregate: one error bare, several deduplicated inside brackets.
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    return "[" + ", ".join(seen) + "]"


# --- label selectors ---------------------------------------------------------------------------


class Operator(StrEnum):
    """``selection.Operator`` values that label selectors use."""

    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    IN = "in"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    EXISTS = "exists"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_INT64_RE: Final = re.compile(r"[+-]?[0-9]+")


def _parse_int64(text: str) -> int | None:
    # strconv.ParseInt(text, 10, 64)
    if _INT64_RE.fullmatch(text) is None:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


@dataclass(frozen=True)
class Requirement:
    """One requirement of a label selector: ``key``, ``operator`` and ``values`` (sorted and
    unique when parsed from text, as upstream's string sets give them)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement (upstream's ``Requirement.Matches``)."""
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels or len(self.values) != 1:
            return False
        have = _parse_int64(labels[self.key])
        want = _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        if op is Operator.EXISTS:
            return self.key
        shown = {
            Operator.EQUALS: "=",
            Operator.DOUBLE_EQUALS: "==",
            Operator.NOT_EQUALS: "!=",
            Operator.IN: " in ",
            Operator.NOT_IN: " notin ",
            Operator.GREATER_THAN: ">",
            Operator.LESS_THAN: "<",
        }[op]
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op in (Operator.IN, Operator.NOT_IN):
            values = f"({values})"
        return f"{self.key}{shown}{values}"


def new_requirement(
    key: str, operator: Operator, values: list[str] | None, path: str = ""
) -> Requirement:
    """apimachinery's ``NewRequirement``: validate ``key``, ``operator`` and ``values`` and build
    the requirement, or raise :class:`SelectorError` with upstream's aggregated field errors.
    ``path`` prefixes the field paths (``key``, ``values[0][key]``)."""
    errs: list[str] = []
    prefix = f"{path}." if path else ""
    key_problems = is_qualified_name(key)
    if key_problems:
        errs.append(invalid_value_text(f"{prefix}key", go_quote(key), "; ".join(key_problems)))
    vals = list(values) if values is not None else []
    values_path = f"{prefix}values"
    if operator in (Operator.IN, Operator.NOT_IN):
        if not vals:
            errs.append(
                invalid_value_text(
                    values_path,
                    _go_string_slice(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(vals) != 1:
            errs.append(
                invalid_value_text(
                    values_path,
                    _go_string_slice(values),
                    "exact-match compatibility requires one single value",
                )
            )
    elif operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if vals:
            errs.append(
                invalid_value_text(
                    values_path,
                    _go_string_slice(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    else:
        if len(vals) != 1:
            errs.append(
                invalid_value_text(
                    values_path,
                    _go_string_slice(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                errs.append(
                    invalid_value_text(
                        f"{values_path}[{i}]",
                        go_quote(v),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(vals):
        problems = is_valid_label_value(v)
        if problems:
            errs.append(
                invalid_value_text(f"{values_path}[{i}][{key}]", go_quote(v), "; ".join(problems))
            )
    if errs:
        raise SelectorError(_aggregate(errs))
    return Requirement(key, operator, tuple(vals))


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: its requirements sorted by key (stable, as upstream's sort keeps
    duplicates of a key in their written order only by chance; we keep them written order).

    ``nothing`` is ``labels.Nothing()`` (a nil ``metav1.LabelSelector``): it matches no object.
    The empty selector matches every object.
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with ``labels`` is selected."""
        if self.nothing:
            return False
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    def empty(self) -> bool:
        """Whether the selector selects everything (upstream's ``Empty``)."""
        return not self.nothing and not self.requirements

    def requires_exact_match(self, key: str) -> str | None:
        """The one value ``key`` must have, when the selector pins it (``RequiresExactMatch``)."""
        for r in self.requirements:
            if r.key == key:
                exact = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
                if r.operator in exact and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING: Final = LabelSelector()
NOTHING: Final = LabelSelector(nothing=True)


_DICT_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: a ``{matchLabels, matchExpressions}`` dict as a
    selector. ``None`` selects nothing, an empty one everything."""
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    for key, value in match_labels.items():
        requirements.append(new_requirement(str(key), Operator.EQUALS, [str(value)]))
    for expr in expressions:
        raw_op = expr.get("operator", "")
        op = _DICT_OPERATORS.get(raw_op)
        if op is None:
            raise SelectorError(f"{go_quote(str(raw_op))} is not a valid label selector operator")
        raw_values = expr.get("values")
        values = None if not raw_values else [str(v) for v in raw_values]
        requirements.append(new_requirement(str(expr.get("key", "")), op, values))
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))
