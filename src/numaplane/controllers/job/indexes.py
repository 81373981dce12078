"""Completion indexes of Indexed Jobs as upstream's ``indexed_job_utils.go`` keeps them: ordered,
merged intervals printed as ``status.completedIndexes`` / ``status.failedIndexes`` (``"1,3-5,7"``;
two neighbours print as ``"3,4"``), the index of a pod (its
``batch.kubernetes.io/job-completion-index`` annotation) and the first indexes still to run.

Pure functions over plain values; the controller feeds them pods as dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

COMPLETION_INDEX_ANNOTATION: Final = "batch.kubernetes.io/job-completion-index"
#: A pod without a usable index (``unknownCompletionIndex``).
UNKNOWN_INDEX: Final = -1

Interval = tuple[int, int]
"""``(first, last)``, both included."""


class Intervals:
    """Ordered, non-overlapping, non-adjacent index intervals (upstream's ``orderedIntervals``)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[Interval] = ()) -> None:
        self._items: tuple[Interval, ...] = tuple(items)

    @property
    def items(self) -> tuple[Interval, ...]:
        """The intervals, in order."""
        return self._items

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Intervals) and other._items == self._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return f"Intervals({self})"

    def __bool__(self) -> bool:
        return bool(self._items)

    def total(self) -> int:
        """How many indexes the intervals hold."""
        return sum(last - first + 1 for first, last in self._items)

    def has(self, index: int) -> bool:
        """Whether ``index`` is in one of the intervals (binary search, as upstream)."""
        lo, hi = 0, len(self._items)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._items[mid][1] >= index:
                hi = mid
            else:
                lo = mid + 1
        return hi < len(self._items) and self._items[hi][0] <= index

    def with_indexes(self, new: Iterable[int]) -> Intervals:
        """These intervals merged with ``new`` indexes (``withOrderedIndexes``; ``new`` need not
        be sorted nor unique here)."""
        singles = [(ix, ix) for ix in sorted(set(new))]
        merged: list[list[int]] = []
        for first, last in sorted([*self._items, *singles]):
            if merged and first <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        return Intervals((a, b) for a, b in merged)

    def indexes(self) -> list[int]:
        """Every index, in order."""
        return [ix for first, last in self._items for ix in range(first, last + 1)]

    def __str__(self) -> str:
        parts: list[str] = []
        for first, last in self._items:
            if last == first:
                parts.append(str(first))
            elif last == first + 1:
                parts.append(f"{first},{last}")
            else:
                parts.append(f"{first}-{last}")
        return ",".join(parts)


def parse_intervals(text: str | None, completions: int) -> Intervals:
    """``parseIndexesFromString``: ``"0-2,5"`` read back, intervals at or beyond ``completions``
    dropped (a last index beyond it cut), corrupt parts skipped as upstream logs and ignores
    them."""
    if not text:
        return Intervals()
    out: list[list[int]] = []
    for part in text.split(","):
        bounds = part.split("-")
        try:
            first = int(bounds[0])
        except ValueError:
            continue
        if first >= completions:
            break
        if len(bounds) > 1:
            try:
                last = int(bounds[1])
            except ValueError:
                continue
            last = min(last, completions - 1)
        else:
            last = first
        if out and out[-1][1] == first - 1:
            out[-1][1] = last
        else:
            out.append([first, last])
    return Intervals((a, b) for a, b in out)


def completion_index(annotations: Mapping[str, Any] | None) -> int:
    """``getCompletionIndex``: the pod's index annotation as a non-negative int, else
    :data:`UNKNOWN_INDEX`."""
    if not annotations:
        return UNKNOWN_INDEX
    value = annotations.get(COMPLETION_INDEX_ANNOTATION)
    if not isinstance(value, str):
        return UNKNOWN_INDEX
    text = value.strip()
    # strconv.Atoi: an optional sign, then decimal digits only.
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii() or text != value:
        return UNKNOWN_INDEX
    index = int(text)
    return index if index >= 0 else UNKNOWN_INDEX


def pod_index(pod: Mapping[str, Any]) -> int:
    """The completion index of a pod dict."""
    meta = pod.get("metadata") or {}
    return completion_index(meta.get("annotations"))


def first_pending_indexes(
    active_indexes: Iterable[int], done: Intervals, count: int, completions: int
) -> list[int]:
    """``firstPendingIndexes``: the ``count`` lowest indexes below ``completions`` that no active
    pod holds and ``done`` (succeeded, and failed when per-index backoff is used) lacks."""
    if count <= 0:
        return []
    busy = done.with_indexes(ix for ix in active_indexes if ix != UNKNOWN_INDEX)
    result: list[int] = []
    candidate = 0
    for first, last in busy.items:
        while candidate < completions and len(result) < count and candidate < first:
            result.append(candidate)
            candidate += 1
        candidate = max(candidate, last + 1)
    while candidate < completions and len(result) < count:
        result.append(candidate)
        candidate += 1
    return result
