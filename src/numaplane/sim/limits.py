"""The simulator's size limits and the number checks shared by the trace reader and generator.

Every count and duration a trace or a ``trace generate``/``simulate`` option gives is checked
against these limits *before* anything is built, so a typo like ``count: 100000000`` is one
error line naming the limit, not minutes of work and gigabytes of memory. ``trace generate``
checks what it writes with the same functions the trace reader uses, so it never writes a trace
that ``simulate`` then refuses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from numaplane.api import yamlbounds

__all__ = [
    "MAX_CONFIGS",
    "MAX_CONFIG_BYTES",
    "MAX_DEVICES",
    "MAX_EVENTS",
    "MAX_NODES",
    "MAX_OPTIMUM_CELLS",
    "MAX_POD_SIZE",
    "MAX_SECONDS",
    "MAX_SIZE_MIX",
    "MAX_SOLVE_SECONDS",
    "MAX_TRACE_BYTES",
    "MAX_WEIGHT",
    "LimitError",
    "check_aliases",
    "check_count",
    "check_seconds",
    "describe",
    "printable",
    "shown",
]

MAX_NODES: Final = 1000
"""Nodes in one trace, every ``count`` added up (each is a full kubelet engine per config)."""
MAX_EVENTS: Final = 200_000
"""Events in one trace, and ``trace generate --pods``: reading a trace peaks at about 6 KiB of
memory per event (measured: 100,000 events, 610 MB), so this keeps a replay near 1.2 GB."""
MAX_CONFIGS: Final = 64
"""Configurations one ``simulate`` replays (trace ``configs`` or ``--compare`` values)."""
MAX_DEVICES: Final = 100_000
"""Devices declared over all nodes of a trace (each node's inventory times its count)."""
MAX_SECONDS: Final = 1e12
"""Event times and lifetimes (about 31,700 years): their sums stay exact enough and finite."""
MAX_TRACE_BYTES: Final = 16 << 20
"""A trace file's size, refused before it is parsed: parsing YAML peaks at about 70 bytes of
memory per byte of text (a 16 MiB trace: about 1.2 GB)."""
MAX_CONFIG_BYTES: Final = 4 << 20
"""A KubeletConfiguration file named by a trace or ``--compare``."""
MAX_SIZE_MIX: Final = 256
"""Entries of ``--size-mix``."""
MAX_POD_SIZE: Final = 65536
"""A ``--size-mix`` SIZE (CPUs or GPUs per pod): the most CPUs a machine may have."""
MAX_WEIGHT: Final = 1e9
"""A ``--size-mix`` WEIGHT (weights are relative, so the scale does not matter)."""
MAX_SOLVE_SECONDS: Final = 86400.0
"""``--optimum-time-limit``: one day per solve."""
MAX_OPTIMUM_CELLS: Final = 2_000_000
"""Pods x nodes x NUMA nodes of one ``--optimum`` model (its placement variables)."""


class LimitError(Exception):
    """A value is out of range; ``reason`` is the sentence to show, the caller adds where."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def describe(value: object) -> str:
    """A short description of a decoded YAML/JSON value for an error message.

    Bounded whatever the value: containers are never rendered (an aliased YAML document can
    be exponentially large when expanded) and long strings are cut.
    """
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str):
        text = repr(value[:60] + "...") if len(value) > 60 else repr(value)
        return f"str {text}"
    if isinstance(value, bool | float):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, int):
        return f"int {_int_text(value)}"
    return type(value).__name__


def printable(text: str) -> str:
    """``text`` with every unprintable character escaped (``\\n``, ``\\x85``, ``\\u2028``).

    User text (a YAML key, a node or config name) goes into one-line error messages and table
    cells: a newline in it must not break the line.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(value: object) -> str:
    """A name as an error message quotes it: ``'web'`` for a string, else ``describe``."""
    if isinstance(value, str):
        return repr(value[:60] + "...") if len(value) > 60 else repr(value)
    return describe(value)


def _int_text(value: int) -> str:
    # str() of a huge int is slow (and refused past 4,300 digits): say its size instead.
    return str(value) if abs(value) < 10**30 else "an integer of over 30 digits"


def check_seconds(value: object, *, what: str = "seconds") -> float:
    """``value`` as a duration in seconds: a finite number in ``[0, MAX_SECONDS]``.

    Raises ``LimitError`` for anything else (booleans, strings, NaN, infinities, negatives).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LimitError(f"expected a number of {what}, got {describe(value)}")
    if isinstance(value, int) and value > MAX_SECONDS:
        raise LimitError(f"{_int_text(value)} is over the limit of {MAX_SECONDS:g} {what}")
    number = float(value) if isinstance(value, float) or value >= 0 else -1.0
    if not math.isfinite(number):
        raise LimitError(f"expected a finite number of {what}, got {number!r}")
    if number < 0:
        raise LimitError(f"must not be negative, got {describe(value)}")
    if number > MAX_SECONDS:
        raise LimitError(f"{number:g} is over the limit of {MAX_SECONDS:g} {what}")
    return number


def check_count(value: object, limit: int, what: str, *, minimum: int = 1) -> int:
    """``value`` as a whole number in ``[minimum, limit]`` of ``what`` (``"nodes per trace"``).

    Raises ``LimitError`` saying which limit was hit.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise LimitError(f"expected a whole number, got {describe(value)}")
    if value < minimum:
        raise LimitError(f"expected at least {minimum}, got {_int_text(value)}")
    if value > limit:
        raise LimitError(f"{_int_text(value)} is over the simulator's limit of {limit:,} {what}")
    return value


def check_aliases(root: object, budget: int) -> None:
    """``numaplane.api.yamlbounds.check_aliases``, refusing with a ``LimitError``."""
    try:
        yamlbounds.check_aliases(root, budget)
    except yamlbounds.AliasError as err:
        raise LimitError(err.reason) from None
