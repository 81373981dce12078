"""The string formats schema validation checks (apiextensions' supported formats; a format not
listed is not checked, as upstream strips unknown formats before validating)."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import uuid
from collections.abc import Callable
from datetime import date, datetime
from typing import Final


def _date_time(value: str) -> bool:
    text = value.replace("z", "Z")
    if not re.fullmatch(
        r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", text
    ):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T").replace("t", "T"))
    except ValueError:
        return False
    return True


def _date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) is not None


def _byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _uuid(version: int | None) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        if not re.fullmatch(
            r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}",
            value,
        ):
            return False
        return version is None or uuid.UUID(value).version == version

    return check


def _ip(version: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False

    return check


def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


_HOSTNAME: Final = re.compile(
    r"^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}"
    r"[a-zA-Z0-9])?)*\.?$"
)
_DURATION: Final = re.compile(r"^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h|d|w))+$")

#: The string formats validated, by name (apiextensions' ``supportedFormats``).
FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "date-time": _date_time,
    "datetime": _date_time,
    "date": _date,
    "byte": _byte,
    "uuid": _uuid(None),
    "uuid3": _uuid(3),
    "uuid4": _uuid(4),
    "uuid5": _uuid(5),
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "cidr": _cidr,
    "hostname": lambda v: len(v) <= 255 and _HOSTNAME.match(v) is not None,
    "email": lambda v: re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", v) is not None,
    "mac": lambda v: re.fullmatch(r"(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}", v) is not None,
    "duration": lambda v: v in ("0", "") or _DURATION.match(v) is not None,
    "password": lambda _v: True,
}
