"""The value types of Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library): quantity,
URL, IP, CIDR and named formats, with the functions over them, and the optional values
``optionalOldSelf`` binds. Errors are returned as ``CELEvalError`` values
worded as upstream's (``quantities must match the regular expression ...``)."""

from __future__ import annotations

import ipaddress
from fractions import Fraction
from typing import Any, Final
from urllib.parse import urlsplit

from celpy import celtypes
from celpy.evaluation import CELEvalError

from numaplane.api.quantity import Quantity, QuantityError

_QUANTITY_ERROR: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class Optional:
    """``optional.of(v)`` / ``optional.none()``: what ``oldSelf`` is under ``optionalOldSelf``."""

    def __init__(self, value: Any) -> None:
        """``value`` is ``None`` for an absent optional."""
        self.value = value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Optional):
            return bool(self.value == other.value)
        return False

    __hash__ = None  # type: ignore[assignment]


class QuantityValue:
    """A ``quantity`` value (equal by amount, as upstream's ``Quantity.Equal``)."""

    def __init__(self, quantity: Quantity) -> None:
        """Wrap a parsed quantity."""
        self.quantity = quantity

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuantityValue) and self.quantity.amount == other.quantity.amount

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return str(self.quantity)


def _parse_quantity(text: Any) -> Quantity | None:
    try:
        return Quantity.parse(str(text))
    except QuantityError:
        return None


def quantity(text: Any) -> Any:
    """``quantity('1.5Gi')``."""
    parsed = _parse_quantity(text)
    return CELEvalError(_QUANTITY_ERROR) if parsed is None else QuantityValue(parsed)


def is_quantity(text: Any) -> celtypes.BoolType:
    """``isQuantity('1.5Gi')``."""
    return celtypes.BoolType(_parse_quantity(text) is not None)


def q_sign(q: QuantityValue) -> celtypes.IntType:
    """``q.sign()``: -1, 0 or 1."""
    return celtypes.IntType(q.quantity.sign())


_INT64_MAX: Final = 2**63 - 1


def q_is_integer(q: QuantityValue) -> celtypes.BoolType:
    """``q.isInteger()``: a whole number that fits an int64."""
    amount = q.quantity.amount
    return celtypes.BoolType(amount.denominator == 1 and -(2**63) <= amount <= _INT64_MAX)


def q_as_integer(q: QuantityValue) -> Any:
    """``q.asInteger()``, an error when not an int64 whole number."""
    if not q_is_integer(q):
        return CELEvalError("cannot convert value to integer")
    return celtypes.IntType(int(q.quantity.amount))


def q_as_float(q: QuantityValue) -> celtypes.DoubleType:
    """``q.asApproximateFloat()``."""
    return celtypes.DoubleType(float(q.quantity.amount))


def _other(value: Any) -> Quantity:
    if isinstance(value, QuantityValue):
        return value.quantity
    return Quantity(Fraction(int(value)))


def q_add(q: QuantityValue, other: Any) -> QuantityValue:
    """``q.add(q2)`` or ``q.add(int)``."""
    return QuantityValue(q.quantity + _other(other))


def q_sub(q: QuantityValue, other: Any) -> QuantityValue:
    """``q.sub(q2)`` or ``q.sub(int)``."""
    return QuantityValue(q.quantity - _other(other))


def q_compare(q: QuantityValue, other: QuantityValue) -> celtypes.IntType:
    """``q.compareTo(q2)``: -1, 0 or 1."""
    left, right = q.quantity.amount, other.quantity.amount
    return celtypes.IntType((left > right) - (left < right))


def q_greater(q: QuantityValue, other: QuantityValue) -> celtypes.BoolType:
    """``q.isGreaterThan(q2)``."""
    return celtypes.BoolType(q.quantity.amount > other.quantity.amount)


def q_less(q: QuantityValue, other: QuantityValue) -> celtypes.BoolType:
    """``q.isLessThan(q2)``."""
    return celtypes.BoolType(q.quantity.amount < other.quantity.amount)


# ---- URL


class URLValue:
    """A ``url`` value: an absolute URI or an absolute path."""

    def __init__(self, text: str) -> None:
        """Keep the text and its parts."""
        self.text = text
        self.parts = urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URLValue) and self.text == other.text

    __hash__ = None  # type: ignore[assignment]


def _valid_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
        _ = parts.port
    except ValueError:
        return False
    if parts.scheme:
        return True
    return text.startswith("/")


def url(text: Any) -> Any:
    """``url('https://example.com/p')``."""
    if not _valid_url(str(text)):
        return CELEvalError(f"URL parse error during conversion from string: parse {text!r}")
    return URLValue(str(text))


def is_url(text: Any) -> celtypes.BoolType:
    """``isURL(s)``."""
    return celtypes.BoolType(_valid_url(str(text)))


def url_scheme(u: URLValue) -> celtypes.StringType:
    """``u.getScheme()``."""
    return celtypes.StringType(u.parts.scheme)


def url_host(u: URLValue) -> celtypes.StringType:
    """``u.getHost()``: host and port, IPv6 in brackets."""
    return celtypes.StringType(u.parts.netloc.rpartition("@")[2])


def url_hostname(u: URLValue) -> celtypes.StringType:
    """``u.getHostname()``: without port or brackets."""
    return celtypes.StringType(u.parts.hostname or "")


def url_port(u: URLValue) -> celtypes.StringType:
    """``u.getPort()``: the port text, empty when absent."""
    host = url_host(u)
    if host.startswith("["):
        _, _, rest = host.partition("]")
        return celtypes.StringType(rest.removeprefix(":"))
    return celtypes.StringType(host.partition(":")[2])


def url_path(u: URLValue) -> celtypes.StringType:
    """``u.getEscapedPath()``."""
    return celtypes.StringType(u.parts.path)


def url_query(u: URLValue) -> celtypes.MapType:
    """``u.getQuery()``: a map of key to the list of its values."""
    out: dict[Any, Any] = {}
    for pair in u.parts.query.split("&") if u.parts.query else ():
        key, _, value = pair.partition("=")
        out.setdefault(celtypes.StringType(key), celtypes.ListType()).append(
            celtypes.StringType(value)
        )
    return celtypes.MapType(out)


# ---- IP and CIDR


class IPValue:
    """An ``ip`` value."""

    def __init__(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        """Wrap an address."""
        self.address = address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IPValue) and self.address == other.address

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return str(self.address)


class CIDRValue:
    """A ``cidr`` value (the address as written and its prefix)."""

    def __init__(self, interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> None:
        """Wrap an interface (address plus prefix)."""
        self.interface = interface

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDRValue) and self.interface == other.interface

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return str(self.interface)


def _parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    # Upstream refuses IPv4-mapped IPv6 and zones, and leading zeros (netip.ParseAddr).
    if "%" in text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return None
    return address


def ip(text: Any) -> Any:
    """``ip('10.0.0.1')``."""
    address = _parse_ip(str(text))
    if address is None:
        return CELEvalError(f"IP Address {str(text)!r} parse error during conversion from string")
    return IPValue(address)


def is_ip(text: Any) -> celtypes.BoolType:
    """``isIP(s)``."""
    return celtypes.BoolType(_parse_ip(str(text)) is not None)


def ip_family(value: IPValue) -> celtypes.IntType:
    """``ip.family()``: 4 or 6."""
    return celtypes.IntType(value.address.version)


def ip_is_canonical(text: Any) -> celtypes.BoolType:
    """``ip.isCanonical(s)``: ``s`` is how the address prints."""
    address = _parse_ip(str(text))
    return celtypes.BoolType(address is not None and str(address) == str(text))


def ip_is_unspecified(value: IPValue) -> celtypes.BoolType:
    """``ip.isUnspecified()``."""
    return celtypes.BoolType(value.address.is_unspecified)


def ip_is_loopback(value: IPValue) -> celtypes.BoolType:
    """``ip.isLoopback()``."""
    return celtypes.BoolType(value.address.is_loopback)


def ip_is_link_local_multicast(value: IPValue) -> celtypes.BoolType:
    """``ip.isLinkLocalMulticast()``."""
    address = value.address
    if address.version == 4:
        return celtypes.BoolType(address in ipaddress.ip_network("224.0.0.0/24"))
    return celtypes.BoolType(address in ipaddress.ip_network("ff02::/16"))


def ip_is_link_local_unicast(value: IPValue) -> celtypes.BoolType:
    """``ip.isLinkLocalUnicast()``."""
    return celtypes.BoolType(value.address.is_link_local and not value.address.is_multicast)


def ip_is_global_unicast(value: IPValue) -> celtypes.BoolType:
    """``ip.isGlobalUnicast()`` (Go's net.IP.IsGlobalUnicast)."""
    address = value.address
    broadcast = address.version == 4 and str(address) == "255.255.255.255"
    return celtypes.BoolType(
        not (
            broadcast
            or address.is_unspecified
            or address.is_loopback
            or address.is_multicast
            or address.is_link_local
        )
    )


def _parse_cidr(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    if "/" not in text or "%" in text:
        return None
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        return None


def cidr(text: Any) -> Any:
    """``cidr('10.0.0.0/8')``."""
    parsed = _parse_cidr(str(text))
    if parsed is None:
        return CELEvalError(
            f"network address {str(text)!r} parse error during conversion from string"
        )
    return CIDRValue(parsed)


def is_cidr(text: Any) -> celtypes.BoolType:
    """``isCIDR(s)``."""
    return celtypes.BoolType(_parse_cidr(str(text)) is not None)


def cidr_ip(value: CIDRValue) -> IPValue:
    """``cidr.ip()``: the address as written."""
    return IPValue(value.interface.ip)


def cidr_contains_ip(value: CIDRValue, other: Any) -> Any:
    """``cidr.containsIP(ip or string)``."""
    address = other.address if isinstance(other, IPValue) else _parse_ip(str(other))
    if address is None:
        return CELEvalError(f"IP Address {str(other)!r} parse error during conversion from string")
    return celtypes.BoolType(address in value.interface.network)


def cidr_contains_cidr(value: CIDRValue, other: Any) -> Any:
    """``cidr.containsCIDR(cidr or string)``."""
    inner = other.interface if isinstance(other, CIDRValue) else _parse_cidr(str(other))
    if inner is None:
        return CELEvalError(
            f"network address {str(other)!r} parse error during conversion from string"
        )
    network = value.interface.network
    return celtypes.BoolType(
        inner.version == network.version and inner.network.subnet_of(network)  # type: ignore[arg-type]
    )


def cidr_prefix_length(value: CIDRValue) -> celtypes.IntType:
    """``cidr.prefixLength()``."""
    return celtypes.IntType(value.interface.network.prefixlen)


def cidr_masked(value: CIDRValue) -> CIDRValue:
    """``cidr.masked()``: the network address with its prefix."""
    return CIDRValue(ipaddress.ip_interface(str(value.interface.network)))
