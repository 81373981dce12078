"""Resource amounts as Kueue counts them: whole integers, CPU in millicores and every other
resource in its base unit (upstream's ``resources.ResourceValue``), printed back as quantities
(``resources.ResourceQuantityString``) in the messages users read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, Final

from numaplane.api.quantity import Quantity, QuantityFormat

CPU: Final = "cpu"
_BINARY: Final = frozenset({"memory", "ephemeral-storage"})

#: A (flavor, resource) pair: the unit of quota.
FlavorResource = tuple[str, str]


def resource_value(resource: str, quantity: Quantity | str | int) -> int:
    """The integer Kueue compares for ``quantity`` of ``resource`` (CPU in millicores, rounded
    up as ``MilliValue`` does; anything else in base units, rounded up as ``Value`` does)."""
    q = Quantity.of(quantity)
    return q.milli_value() if resource == CPU else q.value()


def resource_quantity(resource: str, value: int) -> Quantity:
    """The quantity for an integer amount: CPU from millicores (decimal SI); ``memory``,
    ``ephemeral-storage`` and ``hugepages-*`` in binary SI; anything else decimal SI."""
    if resource == CPU:
        return Quantity(Fraction(value, 1000), QuantityFormat.DECIMAL_SI)
    if resource in _BINARY or resource.startswith("hugepages-"):
        return Quantity(Fraction(value), QuantityFormat.BINARY_SI)
    return Quantity(Fraction(value), QuantityFormat.DECIMAL_SI)


def resource_quantity_string(resource: str, value: int) -> str:
    """``resource_quantity(...)`` as text, as Kueue prints amounts in its messages."""
    return str(resource_quantity(resource, value))


def requests_of(resources: Mapping[str, Any] | None) -> dict[str, int]:
    """A ``{name: quantity}`` mapping (as in a pod's ``resources.requests``) in Kueue's integers."""
    return {name: resource_value(name, q) for name, q in (resources or {}).items()}


def add_into(total: dict[str, int], more: Mapping[str, int], times: int = 1) -> None:
    """``total += more × times``, resource by resource."""
    for name, value in more.items():
        total[name] = total.get(name, 0) + value * times


def sum_requests(parts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The resource-by-resource sum of ``parts``."""
    total: dict[str, int] = {}
    for part in parts:
        add_into(total, part)
    return total
