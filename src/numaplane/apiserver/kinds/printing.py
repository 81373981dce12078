"""Table printing and field selection shared by the built-in kinds: ages as apimachinery's
``duration.HumanDuration``, the printer shape, the default table (Name, Created At) and the
object-meta field set every kind starts from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from numaplane.apiserver.kinds.meta import as_dict, as_list, as_str, metadata
from numaplane.apiserver.resource import CREATION_DESCRIPTION, NAME_DESCRIPTION, TableColumn
from numaplane.gofmt import human_duration as human_duration

Object = dict[str, Any]
RowFunc = Callable[[Object, float], list[Any]]


#: The Age column describes creationTimestamp, as upstream's printers do.
AGE_DESCRIPTION: Final = CREATION_DESCRIPTION
NAME_COLUMN: Final = TableColumn("Name", "string", "name", NAME_DESCRIPTION)
AGE_COLUMN: Final = TableColumn("Age", "string", "", AGE_DESCRIPTION)
NONE: Final = "<none>"
UNKNOWN: Final = "<unknown>"


def parse_time(value: object) -> float | None:
    """An RFC 3339 timestamp (``2024-05-01T10:00:00Z``, fractions allowed) as epoch seconds;
    ``None`` for absent or unreadable values (upstream's zero time)."""
    text = as_str(value)
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def since(value: object, now: float) -> str:
    """``translateTimestampSince``: the age of a timestamp, ``<unknown>`` when unset."""
    at = parse_time(value)
    return UNKNOWN if at is None else human_duration(now - at)


def age(obj: Object, now: float) -> str:
    """The Age cell: time since ``metadata.creationTimestamp``."""
    return since(metadata(obj).get("creationTimestamp"), now)


def created_at(obj: Object) -> str:
    """The ``Created At`` cell of the default table (RFC 3339 in UTC)."""
    at = parse_time(metadata(obj).get("creationTimestamp"))
    stamp = datetime.fromtimestamp(at if at is not None else -62135596800, UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def name_of(obj: Object) -> str:
    """``metadata.name``."""
    return as_str(metadata(obj).get("name"))


@dataclass(frozen=True)
class Printer:
    """A :class:`~numaplane.apiserver.resource.TablePrinter` from its columns and a row function
    (every cell, wide columns included: the server always prints wide, kubectl hides)."""

    column_defs: tuple[TableColumn, ...]
    row_func: RowFunc

    def columns(self) -> tuple[TableColumn, ...]:
        """The column definitions."""
        return self.column_defs

    def row(self, obj: Object, now: float) -> list[Any]:
        """The cells of ``obj``'s row."""
        return self.row_func(obj, now)


def _default_row(obj: Object, now: float) -> list[Any]:
    return [name_of(obj), created_at(obj)]


#: The table of kinds without a printer of their own (upstream's default table convertor).
DEFAULT_PRINTER: Final = Printer(
    (NAME_COLUMN, TableColumn("Created At", "date", "", AGE_DESCRIPTION)), _default_row
)


def name_age_printer(*middle: tuple[TableColumn, Callable[[Object], Any]]) -> Printer:
    """Name, the given columns, Age: the shape of most simple kinds' tables."""
    columns = (NAME_COLUMN, *(column for column, _ in middle), AGE_COLUMN)

    def row(obj: Object, now: float) -> list[Any]:
        return [name_of(obj), *(cell(obj) for _, cell in middle), age(obj, now)]

    return Printer(columns, row)


def meta_fields(obj: Object, namespaced: bool) -> dict[str, str]:
    """``AddObjectMetaFieldsSet``: ``metadata.name`` and, for namespaced kinds,
    ``metadata.namespace``."""
    meta = metadata(obj)
    fields = {"metadata.name": as_str(meta.get("name"))}
    if namespaced:
        fields["metadata.namespace"] = as_str(meta.get("namespace"))
    return fields


def namespaced_fields(obj: Object) -> Mapping[str, str]:
    """The field set of a namespaced kind with no selectable fields of its own."""
    return meta_fields(obj, True)


def cluster_fields(obj: Object) -> Mapping[str, str]:
    """The field set of a cluster-scoped kind with no selectable fields of its own."""
    return meta_fields(obj, False)


def go_bool(value: object) -> str:
    """``strconv.FormatBool`` of a JSON boolean (absent is false)."""
    return "true" if value is True else "false"


def join_or_none(items: list[str], sep: str = ",") -> str:
    """Items joined, or ``<none>``."""
    return sep.join(items) if items else NONE


def container_cells(pod_spec: object) -> tuple[str, str]:
    """``layoutContainerCells``: the containers' names and images, comma-separated."""
    containers = [as_dict(c) for c in as_list(as_dict(pod_spec).get("containers"))]
    names = ",".join(as_str(c.get("name")) for c in containers)
    images = ",".join(as_str(c.get("image")) for c in containers)
    return names, images


def format_label_selector(selector: object) -> str:
    """``metav1.FormatLabelSelector``: ``a=b,c in (d,e)``, ``<none>`` for none and empty."""
    sel = as_dict(selector)
    if not sel and selector is None:
        return NONE
    # labels.Selector.String(): requirements sorted by key, values sorted.
    parts = [(k, f"{k}={v}") for k, v in as_dict(sel.get("matchLabels")).items()]
    for expr in as_list(sel.get("matchExpressions")):
        expr = as_dict(expr)
        key = as_str(expr.get("key"))
        op = as_str(expr.get("operator"))
        values = ",".join(sorted(as_str(v) for v in as_list(expr.get("values"))))
        shown = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(op)
        if shown is not None:
            parts.append((key, shown))
    text = ",".join(shown for _, shown in sorted(parts, key=lambda part: part[0]))
    return text if text else NONE
