"""The wire shape of a Pod manifest, as pydantic models, and one-line messages for their errors.

Private to ``numaplane.api.manifest``. The models hold the fields numaplane reads, typed as
strictly as the API server's decoder (a string field takes no number, an integer field no
string or boolean); unknown fields are ignored so real manifests load unchanged. A ``null``
value reads as absent. Values that need more than a type (quantities, fixed choices) are parsed
by validators whose errors carry the final message. Checks across fields (requests within
limits, unique container names, a container at all) belong to ``manifest``, after parsing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from numaplane.api.quantity import Quantity, QuantityError

RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
QOS_CLASSES: Final = ("Guaranteed", "Burstable", "BestEffort")
# Longest text quoted back in a message: the line must stay readable whatever was written.
_QUOTE_LIMIT: Final = 60


def describe(value: object) -> str:
    """A value as messages name it: ``a mapping``, ``int 42``, ``the boolean True``."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"the boolean {value}"
    return f"{type(value).__name__} {quote(value)}"


def quote(value: object) -> str:
    """``repr`` of a scalar, shortened past ``_QUOTE_LIMIT`` characters."""
    if isinstance(value, str) and len(value) > _QUOTE_LIMIT:
        value = value[:_QUOTE_LIMIT] + "..."
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<an integer of {value.bit_length()} bits>"
    text = repr(value)
    return text if len(text) <= _QUOTE_LIMIT + 5 else text[:_QUOTE_LIMIT] + "..."


def _fail(message: str) -> PydanticCustomError:
    # The message is passed as context: user text may hold braces the template would expand.
    return PydanticCustomError("numaplane", "{message}", {"message": message})


def _quantity(value: object) -> Quantity:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _fail(f"expected a quantity, got {describe(value)}")
    # YAML reads `cpu: 0.5` as a float; its shortest repr is the text that was written.
    text = repr(value) if isinstance(value, float) else str(value)
    try:
        quantity = Quantity.parse(text)
    except QuantityError as error:
        raise _fail(f"invalid quantity {quote(error.text)}: {error.reason}") from None
    if quantity.sign() < 0:
        raise _fail(f"must not be negative, got {quote(value)}")
    return quantity


def _resource_name(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise _fail("resource names must be non-empty strings")
    return value


def _one_of(choices: Sequence[str]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in choices:
            raise _fail(f"must be one of {', '.join(choices)}; got {quote(value)}")
        return value

    return check


QuantityValue = Annotated[Quantity, PlainValidator(_quantity)]
ResourceName = Annotated[str, PlainValidator(_resource_name)]
ResourceList = dict[ResourceName, QuantityValue]
RestartPolicy = Annotated[str, AfterValidator(_one_of(RESTART_POLICIES))]


class _Wire(BaseModel):
    model_config = ConfigDict(
        strict=True, extra="ignore", frozen=True, arbitrary_types_allowed=True
    )


class WireResources(_Wire):
    """``resources`` of a container or (pod-level) of a pod."""

    requests: ResourceList | None = None
    limits: ResourceList | None = None


class WireEnvVar(_Wire):
    """One ``env`` entry; ``valueFrom`` is only noticed (the kubelet resolves it)."""

    name: str | None = None
    value: str | None = None
    value_from: Any = Field(default=None, alias="valueFrom")


class WireContainer(_Wire):
    """An app or init container."""

    name: str | None = None
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[WireEnvVar] | None = None
    working_dir: str | None = Field(default=None, alias="workingDir")
    restart_policy: RestartPolicy | None = Field(default=None, alias="restartPolicy")
    resources: WireResources | None = None


class WireMetadata(_Wire):
    """``metadata``."""

    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class WireSpec(_Wire):
    """``spec``."""

    containers: list[WireContainer] | None = None
    init_containers: list[WireContainer] | None = Field(default=None, alias="initContainers")
    restart_policy: RestartPolicy | None = Field(default=None, alias="restartPolicy")
    termination_grace_period_seconds: Annotated[int, Field(ge=0)] | None = Field(
        default=None, alias="terminationGracePeriodSeconds"
    )
    node_name: str | None = Field(default=None, alias="nodeName")
    overhead: ResourceList | None = None
    resources: WireResources | None = None


class WireContainerStatus(_Wire):
    """One ``status.{init,}containerStatuses`` entry: only the runtime's container ID is read."""

    name: str | None = None
    container_id: str | None = Field(default=None, alias="containerID")


class WireStatus(_Wire):
    """``status``: the recorded QoS class and the containers' runtime IDs."""

    qos_class: Annotated[str, AfterValidator(_one_of(QOS_CLASSES))] | None = Field(
        default=None, alias="qosClass"
    )
    init_container_statuses: list[WireContainerStatus] | None = Field(
        default=None, alias="initContainerStatuses"
    )
    container_statuses: list[WireContainerStatus] | None = Field(
        default=None, alias="containerStatuses"
    )


class WirePod(_Wire):
    """A Pod manifest (``kind`` is checked before, by the manifest reader)."""

    metadata: WireMetadata | None = None
    spec: WireSpec | None = None
    status: WireStatus | None = None


# What a list field holds, for "expected ..., got ..." (keyed by the field's name in the file).
_LIST_OF: Final = {
    "containers": "a list of containers",
    "initContainers": "a list of containers",
    "command": "a list of strings",
    "args": "a list of strings",
    "env": "a list of variables",
}
_MAPPING_OF: Final = {"WireContainer": "a container (a mapping)"}


def field_path(loc: Sequence[str | int]) -> str:
    """A pydantic error location as a manifest field path: ``spec.containers[0].env[1].name``.

    Map keys are written as ``.key`` (``limits.example.com/gpu``); list indexes as ``[i]``.
    """
    path = ""
    parts = list(loc)
    for index, part in enumerate(parts):
        if part == "[key]":
            continue
        is_key = index + 1 < len(parts) and parts[index + 1] == "[key]"
        if isinstance(part, int) and not is_key:
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def error_message(error: ErrorDetails) -> str:
    """The one-line reason for a pydantic error on a manifest."""
    kind = error["type"]
    value = error.get("input")
    loc = error["loc"]
    if kind == "numaplane":
        return str(error.get("ctx", {}).get("message", error["msg"]))
    if kind == "missing":
        return "required field is missing"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        class_name = str(error.get("ctx", {}).get("class_name", ""))
        return f"expected {_MAPPING_OF.get(class_name, 'a mapping')}, got {describe(value)}"
    if kind == "list_type":
        owner = next((p for p in reversed(loc) if isinstance(p, str)), "")
        return f"expected {_LIST_OF.get(owner, 'a list')}, got {describe(value)}"
    if kind == "string_type" and loc and loc[-1] == "[key]":
        return f"keys must be strings, got {describe(value)}"
    if kind == "string_type":
        return f"expected a string, got {describe(value)}"
    if kind.startswith("int_"):
        return f"expected an integer, got {describe(value)}"
    if kind == "greater_than_equal":
        return f"must not be negative, got {quote(value)}"
    return str(error["msg"])
