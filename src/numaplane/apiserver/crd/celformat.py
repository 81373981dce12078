"""CEL's ``format`` library (k8s.io/apiserver/pkg/cel/library/format.go): ``format.<name>()``,
``format.named(name)`` and ``validate(s)``, answering an optional list of apimachinery's
messages."""

from __future__ import annotations

import re
from typing import Any, Final

from celpy import celtypes

from numaplane.apiserver.crd.celtypes_k8s import Optional

_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_FORMATS: Final[dict[str, tuple[str, int, str]]] = {
    "dns1123Label": (
        _LABEL,
        63,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
        "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    "dns1123Subdomain": (
        rf"{_LABEL}(\.{_LABEL})*",
        253,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    "dns1035Label": (
        r"[a-z]([-a-z0-9]*[a-z0-9])?",
        63,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
        "with an alphabetic character, and end with an alphanumeric character (e.g. "
        "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ),
    "labelValue": (
        r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
        63,
        "a valid label must be an empty string or consist of alphanumeric characters, '-', "
        "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
        "or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ),
    "uuid": (
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        -1,
        "does not match the UUID format",
    ),
}


class FormatValue:
    """A named format of ``format.<name>()`` / ``format.named(name)``."""

    def __init__(self, name: str) -> None:
        """``name`` is one of the known formats."""
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FormatValue) and self.name == other.name

    __hash__ = None  # type: ignore[assignment]


def format_named(_receiver: Any, name: Any = None) -> Any:
    """``format.named('dns1123Label')``: an optional format (none when unknown). Called as a
    method of the ``format`` identifier, so the receiver is ignored."""
    key = str(name if name is not None else _receiver)
    return Optional(FormatValue(key) if key in _FORMATS else None)


def format_of(name: str) -> Any:
    """The function behind ``format.<name>()``."""

    def build(*_args: Any) -> FormatValue:
        return FormatValue(name)

    return build


def format_validate(fmt: Any, text: Any) -> Any:
    """``fmt.validate(s)``: ``optional.of([messages])`` when ``s`` does not match, else
    ``optional.none()``."""
    pattern, limit, message = _FORMATS[fmt.name]
    value = str(text)
    problems: list[Any] = []
    if limit >= 0 and len(value) > limit:
        problems.append(celtypes.StringType(f"must be no more than {limit} characters"))
    if re.fullmatch(pattern, value) is None:
        problems.append(celtypes.StringType(message))
    return Optional(celtypes.ListType(problems) if problems else None)


#: The ``format.<name>()`` functions.
FORMAT_FUNCTIONS: Final = {name: format_of(name) for name in _FORMATS}
