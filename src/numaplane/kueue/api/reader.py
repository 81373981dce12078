"""Typed reading of a Kueue object's JSON fields: each accessor applies the field's default and
turns a wrong type or an unparsable value into one :class:`~numaplane.kueue.errors.KueueObjectError`
naming the kind, the object and the field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.api.quantity import Quantity, QuantityError
from numaplane.kueue.api.conditions import parse_time
from numaplane.kueue.errors import KueueObjectError
from numaplane.kueue.resources import resource_value


class FieldReader:
    """Typed access to one object's fields; every complaint names the object."""

    __slots__ = ("kind", "name")

    def __init__(self, kind: str, obj: Any) -> None:
        self.kind = kind
        self.name = "<unnamed>"
        if not isinstance(obj, Mapping):
            raise KueueObjectError(kind, self.name, "", f"expected an object, not {json_type(obj)}")
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if isinstance(name, str) and name:
            namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
            self.name = f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name

    def fail(self, field: str, reason: str) -> KueueObjectError:
        """The error for ``field`` of this object."""
        return KueueObjectError(self.kind, self.name, field, reason)

    def mapping(self, value: Any, field: str) -> Mapping[str, Any]:
        """``value`` as an object (None reads as empty)."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(field, f"expected an object, not {json_type(value)}")
        return value

    def sequence(self, value: Any, field: str) -> Sequence[Any]:
        """``value`` as a list (None reads as empty)."""
        if value is None:
            return ()
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise self.fail(field, f"expected a list, not {json_type(value)}")
        return value

    def string(self, value: Any, field: str, default: str = "") -> str:
        """``value`` as a string (None reads as ``default``)."""
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, not {json_type(value)}")
        return value

    def optional_integer(self, value: Any, field: str) -> int | None:
        """``value`` as an integer, or None."""
        if value is None:
            return None
        return self.integer(value, field, 0)

    def integer(self, value: Any, field: str, default: int) -> int:
        """``value`` as an integer (None reads as ``default``)."""
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected an integer, not {json_type(value)}")
        return value

    def boolean(self, value: Any, field: str, default: bool) -> bool:
        """``value`` as a boolean (None reads as ``default``)."""
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(field, f"expected a boolean, not {json_type(value)}")
        return value

    def choice(self, value: Any, field: str, allowed: frozenset[str], default: str) -> str:
        """``value`` as one of ``allowed`` (None or "" read as ``default``)."""
        text = self.string(value, field) or default
        if text not in allowed:
            wanted = ", ".join(f'"{a}"' for a in sorted(allowed))
            raise self.fail(field, f'unsupported value "{text}": supported values: {wanted}')
        return text

    def quantity(self, value: Any, field: str) -> Quantity:
        """``value`` as a quantity."""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.fail(field, f"expected a quantity, not {json_type(value)}")
        if isinstance(value, float):
            # JSON numbers decode as floats when they carry a fraction; the API accepts them.
            value = repr(value) if not value.is_integer() else int(value)
        try:
            return Quantity.parse(value)
        except QuantityError as exc:
            raise self.fail(field, str(exc)) from None

    def amount(self, resource: str, value: Any, field: str) -> int:
        """``value`` as Kueue's integer for ``resource``."""
        return resource_value(resource, self.quantity(value, field))

    def resource_list(self, value: Any, field: str) -> dict[str, Quantity]:
        """A ``{resource: quantity}`` object."""
        return {
            str(name): self.quantity(q, f"{field}.{name}")
            for name, q in self.mapping(value, field).items()
        }

    def string_map(self, value: Any, field: str) -> dict[str, str]:
        """A ``{string: string}`` object (labels, node selectors)."""
        out: dict[str, str] = {}
        for key, item in self.mapping(value, field).items():
            out[str(key)] = self.string(item, f"{field}.{key}")
        return out

    def objects(self, value: Any, field: str) -> tuple[Mapping[str, Any], ...]:
        """A list of objects (taints, tolerations, selector terms)."""
        items = self.sequence(value, field)
        return tuple(self.mapping(item, f"{field}[{i}]") for i, item in enumerate(items))


def json_type(value: Any) -> str:
    """The JSON type name of ``value`` for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Sequence):
        return "list"
    return type(value).__name__


def metadata(r: FieldReader, obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``metadata`` of ``obj``, which must carry a name."""
    meta = r.mapping(obj.get("metadata"), "metadata")
    if not r.string(meta.get("name"), "metadata.name"):
        raise r.fail("metadata.name", "required")
    return meta


def spec_of(r: FieldReader, obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec`` of ``obj`` (empty when absent)."""
    return r.mapping(obj.get("spec"), "spec")


def time_field(r: FieldReader, value: Any, field: str) -> float:
    """A ``metav1.Time`` field in seconds since the epoch (0.0 when absent)."""
    text = r.string(value, field)
    try:
        return parse_time(text)
    except ValueError:
        raise r.fail(field, f"not an RFC 3339 time: {text!r}") from None
