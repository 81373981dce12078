"""Kubernetes resource quantities ("500m", "1Gi", "12e-3"), held exactly.

A quantity is a rational number kept as a :class:`fractions.Fraction`; nothing passes through a
float, so ``1Gi`` minus ``1073741823`` is exactly one byte. Parsing follows the grammar of
``k8s.io/apimachinery/pkg/api/resource`` and the canonical text follows ``Quantity.String()``:
the value keeps the family of suffix it was written with (binary, decimal SI or decimal
exponent), which is what kubelet messages such as "requested: 1Gi" show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from functools import total_ordering
from typing import Final

from numaplane.errors import NumaplaneError

__all__ = ["Quantity", "QuantityError", "QuantityFormat"]


class QuantityError(NumaplaneError):
    """A quantity string does not follow the Kubernetes grammar."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"invalid quantity {text!r}: {reason}")


class QuantityFormat(Enum):
    """The suffix family a quantity is written in, kept so ``str()`` answers in kind."""

    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


# Upstream first splits number from suffix with this (permissive) expression, then checks each.
_PATTERN_TEXT: Final = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_SPLIT: Final = re.compile(_PATTERN_TEXT.strip("^$"))
_NUMBER: Final = re.compile(r"(?P<sign>[+-]?)(?P<digits>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_EXPONENT: Final = re.compile(r"[eE](?P<exponent>[+-]?[0-9]+)")

_DECIMAL_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final[dict[str, int]] = {
    "Ki": 10,
    "Mi": 20,
    "Gi": 30,
    "Ti": 40,
    "Pi": 50,
    "Ei": 60,
}
_EXPONENT_TO_DECIMAL: Final = {exp: suffix for suffix, exp in _DECIMAL_SUFFIXES.items()}
_POWER_TO_BINARY: Final = {exp: suffix for suffix, exp in _BINARY_SUFFIXES.items()}

# Upstream rounds parsed values up to nano units (resource.Nano); anything finer is lost.
_NANO: Final = Fraction(1, 10**9)
# Upstream caps binary quantities at the largest int64.
_MAX_BINARY: Final = Fraction(2**63 - 1)
# Upstream takes any int32 exponent; a bound keeps exact arithmetic cheap.
_MAX_EXPONENT: Final = 1000


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def _round_to_nano(amount: Fraction) -> Fraction:
    nanos = amount / _NANO
    if nanos.denominator == 1:
        return amount
    rounded = _ceil(nanos) if nanos > 0 else -_ceil(-nanos)
    return rounded * _NANO


@total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """An exact, immutable Kubernetes quantity.

    Equality, hashing and ordering look at the numeric value only: ``1Gi`` equals
    ``1073741824`` although the two print differently.
    """

    amount: Fraction
    format: QuantityFormat = field(default=QuantityFormat.DECIMAL_SI)

    def __post_init__(self) -> None:
        # Keep the upstream invariant: a whole number of nano units, rounded away from zero.
        amount = self.amount if type(self.amount) is Fraction else Fraction(self.amount)
        # Whole numbers (nearly every quantity) are whole numbers of nano units already.
        if amount.denominator != 1 and (amount / _NANO).denominator != 1:
            amount = _round_to_nano(amount)
        object.__setattr__(self, "amount", amount)

    @classmethod
    def parse(cls, text: str | int) -> Quantity:
        """Read a quantity from its Kubernetes text (or a plain integer).

        Raises :class:`QuantityError` naming the input and the reason when it is malformed.
        """
        if isinstance(text, bool):
            raise QuantityError(str(text), "a boolean is not a quantity")
        if isinstance(text, int):
            return cls(Fraction(text), QuantityFormat.DECIMAL_SI)
        if not isinstance(text, str):
            raise QuantityError(repr(text), f"expected a string or an integer, not {type(text)}")
        if text == "":
            raise QuantityError(text, "quantities must not be empty")
        split = _SPLIT.fullmatch(text)
        if split is None:
            raise QuantityError(
                text, f"quantities must match the regular expression '{_PATTERN_TEXT}'"
            )
        number_text, suffix = split.group(1), split.group(2)
        match = _NUMBER.fullmatch(number_text)
        if match is None:
            raise QuantityError(text, f"unable to parse numeric part {number_text!r}")
        number = Fraction(match["digits"])
        if match["sign"] == "-":
            number = -number
        if suffix in _BINARY_SUFFIXES:
            amount = number * (2 ** _BINARY_SUFFIXES[suffix])
            fmt = QuantityFormat.BINARY_SI
        elif suffix in _DECIMAL_SUFFIXES:
            amount = number * Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
            fmt = QuantityFormat.DECIMAL_SI
        else:
            exponent_match = _EXPONENT.fullmatch(suffix)
            if exponent_match is None:
                raise QuantityError(text, f"unable to parse the suffix {suffix!r}")
            exponent = int(exponent_match["exponent"])
            if abs(exponent) > _MAX_EXPONENT:
                raise QuantityError(text, f"the exponent must lie within ±{_MAX_EXPONENT}")
            amount = number * Fraction(10) ** exponent
            fmt = QuantityFormat.DECIMAL_EXPONENT
        # Upstream keeps nano precision and rounds anything finer up, away from zero.
        amount = _round_to_nano(amount)
        if fmt is QuantityFormat.BINARY_SI:
            if abs(amount) > _MAX_BINARY:
                amount = _MAX_BINARY if amount > 0 else -_MAX_BINARY
            if 0 < abs(amount) < 1:
                # As upstream: a fraction of one printed in binary would only confuse.
                fmt = QuantityFormat.DECIMAL_SI
        return cls(amount, fmt)

    @classmethod
    def zero(cls) -> Quantity:
        """The quantity 0 (decimal SI)."""
        if cls is Quantity:
            return _ZERO  # immutable: one instance serves every caller
        return cls(Fraction(0), QuantityFormat.DECIMAL_SI)

    @classmethod
    def of(cls, value: str | int | Quantity) -> Quantity:
        """Coerce a string, an integer or a quantity to a quantity."""
        if isinstance(value, Quantity):
            return value
        return cls.parse(value)

    def value(self) -> int:
        """The value rounded up to an integer, like Go's ``Quantity.Value()``."""
        return _ceil(self.amount)

    def milli_value(self) -> int:
        """The value in thousandths rounded up, like Go's ``Quantity.MilliValue()``."""
        amount = self.amount
        return -((-amount.numerator * 1000) // amount.denominator)

    def is_zero(self) -> bool:
        """Whether the value is exactly zero."""
        # A Fraction's denominator is positive: the numerator alone decides (and is cheaper
        # than a Fraction comparison).
        return self.amount.numerator == 0

    def sign(self) -> int:
        """-1, 0 or 1 after the sign of the value."""
        numerator = self.amount.numerator
        return (numerator > 0) - (numerator < 0)

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        # Like upstream Add: the left operand's format wins unless it is zero.
        fmt = self.format if not self.is_zero() else other.format
        return Quantity(self.amount + other.amount, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = self.format if not self.is_zero() else other.format
        return Quantity(self.amount - other.amount, fmt)

    def __neg__(self) -> Quantity:
        return Quantity(-self.amount, self.format)

    def __mul__(self, factor: int) -> Quantity:
        if isinstance(factor, bool) or not isinstance(factor, int):
            return NotImplemented
        return Quantity(self.amount * factor, self.format)

    __rmul__ = __mul__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount == other.amount

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount < other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __str__(self) -> str:
        return _canonical(self.amount, self.format)


_ZERO: Final = Quantity(Fraction(0), QuantityFormat.DECIMAL_SI)


def _canonical(amount: Fraction, fmt: QuantityFormat) -> str:
    """Render like upstream ``CanonicalizeBytes``.

    Binary quantities that are whole numbers of at least 1024 print with the largest binary suffix
    that keeps the mantissa an integer (none when that is not a whole number of Ki); every other
    value prints as an integer mantissa with a decimal suffix whose exponent is a multiple of three
    (or ``eN`` in the exponent format), choosing the largest such exponent.
    """
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    magnitude = abs(amount)
    if fmt is QuantityFormat.BINARY_SI and magnitude.denominator == 1 and magnitude >= 1024:
        mantissa = magnitude.numerator
        power = 0
        while power < 60 and mantissa % 1024 == 0:
            mantissa //= 1024
            power += 10
        # Not a whole number of Ki: upstream prints the bare integer (there is no 2^0 suffix).
        return f"{sign}{mantissa}{_POWER_TO_BINARY.get(power, '')}"
    elif fmt is QuantityFormat.BINARY_SI:
        fmt = QuantityFormat.DECIMAL_SI
    # Express the value as mantissa * 10**exponent with an integer mantissa, exponent >= -9.
    exponent = -9
    scaled = magnitude / _NANO
    mantissa = _ceil(scaled)
    # Strip zeros three at a time so the exponent stays a multiple of three.
    while mantissa % 1000 == 0 and (exponent < 18 or fmt is QuantityFormat.DECIMAL_EXPONENT):
        mantissa //= 1000
        exponent += 3
    if fmt is QuantityFormat.DECIMAL_EXPONENT:
        suffix = "" if exponent == 0 else f"e{exponent}"
    else:
        suffix = _EXPONENT_TO_DECIMAL[exponent]
    return f"{sign}{mantissa}{suffix}"
