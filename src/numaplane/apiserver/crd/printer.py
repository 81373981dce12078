"""``additionalPrinterColumns`` as a :class:`~numaplane.apiserver.resource.TablePrinter`, with the
subset of kube's JSONPath that CRD columns use, and upstream's cell typing.

A column's ``jsonPath`` (``.status.conditions[?(@.type=='Active')].status``) is evaluated from
the object's root; the first match is the cell (``None``, printed ``<none>`` by kubectl, when
nothing matches). ``string`` cells print the value as kube's JSONPath printer does (maps and
lists as JSON); ``integer``/``number``/``boolean`` keep a value of that type; ``date`` becomes an
age (``duration.HumanDuration``), ``<invalid>`` for an unparsable time. A version with no
columns gets upstream's default ``Age`` column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from numaplane.apiserver.crd.validation import go_number
from numaplane.apiserver.resource import CREATION_DESCRIPTION, NAME_DESCRIPTION, Object, TableColumn
from numaplane.errors import NumaplaneError
from numaplane.gofmt import human_duration

#: Upstream's column for a version that declares none.
DEFAULT_COLUMNS: Final = (
    {
        "name": "Age",
        "type": "date",
        "description": CREATION_DESCRIPTION,
        "jsonPath": ".metadata.creationTimestamp",
    },
)


class JSONPathError(NumaplaneError):
    """A JSONPath outside the supported subset."""


@dataclass(frozen=True)
class _Step:
    kind: str  # "field" | "index" | "wildcard" | "slice" | "filter" | "recursive"
    key: str = ""
    index: int = 0
    end: int | None = None
    filter_path: tuple[_Step, ...] = ()
    op: str = ""
    operand: Any = None


_TOKEN: Final = re.compile(r"\.\.|\.|\[")


def parse_jsonpath(text: str) -> tuple[_Step, ...]:
    """``.spec.a[0]['b.c'][*].d`` (optionally wrapped in ``{}``) as steps."""
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    text = text.removeprefix("$")
    steps: list[_Step] = []
    pos = 0
    while pos < len(text):
        if text.startswith("..", pos):
            steps.append(_Step("recursive"))
            pos += 2
            pos = _read_field(text, pos, steps)
        elif text[pos] == ".":
            pos = _read_field(text, pos + 1, steps)
        elif text[pos] == "[":
            end = _bracket_end(text, pos)
            steps.append(_bracket(text[pos + 1 : end]))
            pos = end + 1
        elif text[pos] == "@" and not steps:
            pos += 1
        else:
            pos = _read_field(text, pos, steps)
    return tuple(steps)


def _read_field(text: str, pos: int, steps: list[_Step]) -> int:
    match = re.compile(r"[^.\[\]]*").match(text, pos)
    assert match is not None
    name = match.group(0)
    if name == "*":
        steps.append(_Step("wildcard"))
    elif name:
        steps.append(_Step("field", key=name))
    return match.end()


def _bracket_end(text: str, start: int) -> int:
    depth = 0
    quote = ""
    for i in range(start, len(text)):
        char = text[i]
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return i
    raise JSONPathError(f"unterminated array notation in {text!r}")


_FILTER: Final = re.compile(r"^\?\((.*)\)$", re.S)
_COMPARE: Final = re.compile(r"^\s*(@[^\s=!<>]*)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*$", re.S)


def _bracket(inner: str) -> _Step:
    inner = inner.strip()
    if inner == "*":
        return _Step("wildcard")
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return _Step("field", key=inner[1:-1])
    filtered = _FILTER.match(inner)
    if filtered:
        expr = filtered.group(1).strip()
        compared = _COMPARE.match(expr)
        if compared:
            left, op, right = compared.groups()
            return _Step(
                "filter", filter_path=parse_jsonpath(left[1:]), op=op, operand=_literal(right)
            )
        return _Step("filter", filter_path=parse_jsonpath(expr.removeprefix("@")), op="exists")
    if ":" in inner:
        start_text, _, end_text = inner.partition(":")
        end_text = end_text.split(":")[0]
        start = int(start_text) if start_text.strip() else 0
        end = int(end_text) if end_text.strip() else None
        return _Step("slice", index=start, end=end)
    try:
        return _Step("index", index=int(inner))
    except ValueError:
        raise JSONPathError(f"unsupported JSONPath element [{inner}]") from None


def _literal(text: str) -> Any:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def find(steps: Sequence[_Step], root: Any) -> list[Any]:
    """Every value ``steps`` reach from ``root`` (missing keys reach nothing)."""
    current = [root]
    for step in steps:
        found: list[Any] = []
        for value in current:
            found.extend(_apply(step, value))
        current = found
    return current


def _apply(step: _Step, value: Any) -> list[Any]:
    if step.kind == "field":
        return [value[step.key]] if isinstance(value, Mapping) and step.key in value else []
    if step.kind == "wildcard":
        if isinstance(value, Mapping):
            return [value[k] for k in sorted(value)]
        return list(value) if isinstance(value, list) else []
    if step.kind == "index":
        if isinstance(value, list) and -len(value) <= step.index < len(value):
            return [value[step.index]]
        return []
    if step.kind == "slice":
        return list(value[step.index : step.end]) if isinstance(value, list) else []
    if step.kind == "recursive":
        return _descend(value)
    items = list(value) if isinstance(value, list) else [value]
    return [item for item in items if _matches(step, item)]


def _descend(value: Any) -> list[Any]:
    out = [value]
    children = (
        [value[k] for k in sorted(value)]
        if isinstance(value, Mapping)
        else (value if isinstance(value, list) else [])
    )
    for child in children:
        out.extend(_descend(child))
    return out


def _matches(step: _Step, item: Any) -> bool:
    found = find(step.filter_path, item)
    if step.op == "exists":
        return bool(found)
    if not found:
        return False
    left, right = found[0], step.operand
    try:
        if step.op == "==":
            return bool(left == right)
        if step.op == "!=":
            return bool(left != right)
        if step.op == "<":
            return bool(left < right)
        if step.op == ">":
            return bool(left > right)
        if step.op == "<=":
            return bool(left <= right)
        return bool(left >= right)
    except TypeError:
        return False


def text_of(value: Any) -> str:
    """A value as kube's JSONPath printer shows it: strings bare, maps and lists as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_number(value)
    if value is None:
        return "<nil>"
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def parse_time(text: str) -> float | None:
    """An RFC 3339 time as epoch seconds, ``None`` if unparsable."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def cell(column_type: str, value: Any, now: float) -> Any:
    """A non-string column's cell, typed as upstream's ``cellForJSONValue``."""
    if value is None:
        return None
    if column_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            return int(value)
    elif column_type == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif column_type == "boolean":
        return value if isinstance(value, bool) else None
    elif column_type == "string":
        return value if isinstance(value, str) else None
    elif column_type == "date" and isinstance(value, str):
        when = parse_time(value)
        if when is None:
            return "<invalid>"
        return human_duration(now - when)
    return None


@dataclass(frozen=True)
class _Column:
    definition: TableColumn
    steps: tuple[_Step, ...] | None  # None: a path outside the subset, whose cells stay empty


def _steps_or_none(path: str) -> tuple[_Step, ...] | None:
    try:
        return parse_jsonpath(path)
    except (JSONPathError, ValueError):
        return None


class CRDTablePrinter:
    """The table of one served version: ``Name``, then its printer columns."""

    def __init__(self, columns: Sequence[Mapping[str, Any]]) -> None:
        """``columns`` are ``additionalPrinterColumns`` entries (the default Age when empty)."""
        chosen = columns or DEFAULT_COLUMNS
        self._columns = tuple(
            _Column(
                TableColumn(
                    name=str(col["name"]),
                    type=str(col.get("type", "string")),
                    format=str(col.get("format", "")),
                    description=str(col.get("description", "")),
                    priority=int(col.get("priority", 0)),
                ),
                _steps_or_none(str(col.get("jsonPath", ""))),
            )
            for col in chosen
        )

    def columns(self) -> tuple[TableColumn, ...]:
        """``Name`` (format ``name``) and the printer columns in order."""
        name = TableColumn("Name", "string", "name", NAME_DESCRIPTION, 0)
        return (name, *(c.definition for c in self._columns))

    def row(self, obj: Object, now: float) -> list[Any]:
        """The cells of ``obj``: its name, then each column's first JSONPath match."""
        cells: list[Any] = [obj.get("metadata", {}).get("name", "")]
        for column in self._columns:
            found = find(column.steps, obj) if column.steps is not None else []
            if not found:
                cells.append(None)
            elif column.definition.type == "string":
                cells.append(text_of(found[0]) if found[0] is not None else None)
            else:
                cells.append(cell(column.definition.type, found[0], now))
        return cells
