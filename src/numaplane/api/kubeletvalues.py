"""The small value languages inside a kubelet configuration: Go durations and eviction thresholds.

Both are read the way the kubelet reads them (``time.ParseDuration``; the eviction manager's
``parseThresholdStatement``), with upstream's error wording, so a message numaplane prints is
the one the kubelet would print for the same file.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from fractions import Fraction
from types import MappingProxyType
from typing import Final

from numaplane.api.quantity import Quantity, QuantityError, QuantityFormat

__all__ = [
    "DEFAULT_EVICTION_HARD",
    "EVICTION_SIGNALS",
    "EvictionThreshold",
    "MemoryReservation",
    "ValueSyntaxError",
    "parse_go_duration",
    "parse_threshold",
]


class ValueSyntaxError(ValueError):
    """A value does not parse; ``str()`` is upstream's message for it."""


# time.ParseDuration's units, in nanoseconds.
_UNITS: Final[Mapping[str, int]] = MappingProxyType(
    {
        "ns": 1,
        "us": 1_000,
        "µs": 1_000,
        "μs": 1_000,
        "ms": 1_000_000,
        "s": 1_000_000_000,
        "m": 60_000_000_000,
        "h": 3_600_000_000_000,
    }
)
_DURATION_PART: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def parse_go_duration(text: str) -> timedelta:
    """Parse a Go duration (``"10s"``, ``"1m30s"``, ``"1.5h"``, ``"0"``).

    Raises ``ValueSyntaxError`` with ``time.ParseDuration``'s message.
    """
    quoted = '"' + text + '"'
    body = text
    negative = False
    if body[:1] in ("+", "-"):
        negative = body[0] == "-"
        body = body[1:]
    if body == "0":
        return timedelta(0)
    if not body:
        raise ValueSyntaxError(f"time: invalid duration {quoted}")
    total = Fraction(0)
    pos = 0
    while pos < len(body):
        match = _DURATION_PART.match(body, pos)
        assert match is not None  # the pattern matches the empty string
        number, unit = match.group(1), match.group(2)
        if number in ("", "."):
            raise ValueSyntaxError(f"time: invalid duration {quoted}")
        if not unit:
            raise ValueSyntaxError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS:
            raise ValueSyntaxError(f'time: unknown unit "{unit}" in duration {quoted}')
        total += Fraction(number) * _UNITS[unit]
        pos = match.end()
    nanos = int(total)  # Go truncates fractional nanoseconds
    return timedelta(microseconds=(-nanos if negative else nanos) / 1000)


# The eviction manager's signals (signalToResource keys), v1.35.
EVICTION_SIGNALS: Final = frozenset(
    {
        "memory.available",
        "allocatableMemory.available",
        "nodefs.available",
        "nodefs.inodesFree",
        "imagefs.available",
        "imagefs.inodesFree",
        "containerfs.available",
        "containerfs.inodesFree",
        "pid.available",
    }
)

# The v1beta1 default of evictionHard on Linux.
DEFAULT_EVICTION_HARD: Final[Mapping[str, str]] = MappingProxyType(
    {
        "memory.available": "100Mi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "15%",
        "imagefs.inodesFree": "5%",
    }
)


@dataclass(frozen=True)
class MemoryReservation:
    """One ``reservedMemory`` entry: memory held back for the system on one NUMA node."""

    numa_node: int
    limits: Mapping[str, Quantity]


def _float32(value: float) -> float:
    result: float = struct.unpack("f", struct.pack("f", value))[0]
    return result


@dataclass(frozen=True)
class EvictionThreshold:
    """One hard eviction threshold: an absolute quantity or a fraction of capacity.

    ``percentage`` is a fraction (0.1 for "10%") held as upstream holds it, a float32, so that
    ``resolve`` truncates exactly as ``GetThresholdQuantity`` does.
    """

    signal: str
    quantity: Quantity | None = None
    percentage: float | None = None

    def resolve(self, capacity: Quantity) -> Quantity:
        """The threshold as an amount of ``capacity`` (a percentage is truncated, binary SI)."""
        if self.quantity is not None:
            return self.quantity
        assert self.percentage is not None
        amount = int(float(capacity.value()) * self.percentage)
        return Quantity(Fraction(amount), QuantityFormat.BINARY_SI)


def parse_threshold(signal: str, text: str) -> EvictionThreshold | None:
    """Parse one ``evictionHard`` entry; ``None`` for the ignored "0%" and "100%".

    Raises ``ValueSyntaxError`` with the eviction manager's message.
    """
    if signal not in EVICTION_SIGNALS:
        raise ValueSyntaxError(f"unsupported eviction signal {signal}")
    if text.endswith("%"):
        if text in ("0%", "100%"):
            return None
        number = text.rstrip("%")
        try:
            if "_" in number or number != number.strip():
                raise ValueError(number)
            value = _float32(float(number))
        except (ValueError, OverflowError):
            raise ValueSyntaxError(
                f'strconv.ParseFloat: parsing "{number}": invalid syntax'
            ) from None
        percentage = _float32(value / 100)
        if percentage < 0:
            raise ValueSyntaxError(f"eviction percentage threshold {signal} must be >= 0%: {text}")
        # Upstream compares the fraction against 100, not 1; kept as written there.
        if percentage > 100:
            raise ValueSyntaxError(
                f"eviction percentage threshold {signal} must be <= 100%: {text}"
            )
        return EvictionThreshold(signal, percentage=percentage)
    try:
        quantity = Quantity.parse(text)
    except QuantityError as err:
        raise ValueSyntaxError(err.reason) from None
    if quantity.sign() <= 0:
        raise ValueSyntaxError(f"eviction threshold {signal} must be positive: {quantity}")
    return EvictionThreshold(signal, quantity=quantity)
