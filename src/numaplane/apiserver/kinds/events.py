"""Events: core/v1 Event and events.k8s.io/v1 Event (``pkg/registry/core/event``,
``ValidateEventCreate`` / ``ValidateEventUpdate``), their tables and field sets.

Upstream stores both as one resource; :func:`to_core_event` and :func:`to_events_v1` convert
between the two shapes for a REST layer that keeps them together.
"""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value, required
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_int,
    as_str,
    is_dns1123_subdomain,
    is_qualified_name,
    metadata,
    name_is_dns_subdomain,
    validate_immutable,
    validate_object_meta,
    validate_object_meta_update,
)
from numaplane.apiserver.kinds.printing import (
    Printer,
    meta_fields,
    name_of,
    since,
)
from numaplane.apiserver.kinds.strategy import KindStrategy
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]

REPORTING_INSTANCE_LIMIT: Final = 128
ACTION_LIMIT: Final = 128
REASON_LIMIT: Final = 128
NOTE_LIMIT: Final = 1024
EVENT_TYPES: Final = ("Normal", "Warning")

# events.k8s.io/v1 field <-> core/v1 field (upstream's conversion).
_RENAMES: Final = (
    ("regarding", "involvedObject"),
    ("related", "related"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
)


def to_core_event(event: Object) -> Object:
    """An events.k8s.io/v1 Event in the core/v1 shape."""
    core = {k: v for k, v in event.items() if k not in {new for new, _ in _RENAMES}}
    for new, old in _RENAMES:
        if new in event:
            core[old] = event[new]
    core["apiVersion"] = "v1"
    return core


def to_events_v1(event: Object) -> Object:
    """A core/v1 Event in the events.k8s.io/v1 shape."""
    out = {k: v for k, v in event.items() if k not in {old for _, old in _RENAMES}}
    for new, old in _RENAMES:
        if old in event:
            out[new] = event[old]
    out["apiVersion"] = "events.k8s.io/v1"
    return out


def _validate_legacy(
    event: Object, controller_field: str, names: dict[str, str]
) -> list[FieldError]:
    """``legacyValidateEvent`` on a core-shaped event; ``names`` maps core field names to the
    request's (``involvedObject`` -> ``regarding``, ``message`` -> ``note``)."""
    errors: list[FieldError] = []
    namespace = as_str(metadata(event).get("namespace"))
    involved = as_dict(event.get("involvedObject"))
    involved_ns = as_str(involved.get("namespace"))
    ns_path = f"{names.get('involvedObject', 'involvedObject')}.namespace"
    if not event.get("eventTime"):
        if not involved_ns:
            if namespace not in ("", "default"):
                errors.append(invalid_value(ns_path, involved_ns, "does not match event.namespace"))
        elif namespace != involved_ns:
            errors.append(invalid_value(ns_path, involved_ns, "does not match event.namespace"))
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            errors.append(invalid_value(ns_path, involved_ns, "does not match event.namespace"))
        controller = as_str(event.get("reportingComponent"))
        if not controller:
            errors.append(required(controller_field))
        errors.extend(
            invalid_value(controller_field, controller, m) for m in is_qualified_name(controller)
        )
        for key, limit, path in (
            ("reportingInstance", REPORTING_INSTANCE_LIMIT, "reportingInstance"),
            ("action", ACTION_LIMIT, "action"),
            ("reason", REASON_LIMIT, "reason"),
        ):
            value = as_str(event.get(key))
            if not value:
                errors.append(required(path))
            if len(value) > limit:
                errors.append(invalid_value(path, "", f"can have at most {limit} characters"))
        if len(as_str(event.get("message"))) > NOTE_LIMIT:
            path = names.get("message", "message")
            errors.append(invalid_value(path, "", f"can have at most {NOTE_LIMIT} characters"))
    errors.extend(invalid_value("namespace", namespace, m) for m in is_dns1123_subdomain(namespace))
    return errors


def validate_core_event(event: Object) -> list[FieldError]:
    """A core/v1 Event: legacy validation only (upstream keeps old clients working)."""
    return _validate_legacy(event, "reportingComponent", {})


_V1_NAMES: Final = {"involvedObject": "regarding", "message": "note"}


def validate_events_v1(event: Object) -> list[FieldError]:
    """An events.k8s.io/v1 Event: legacy rules plus the strict ones (object meta, eventTime,
    type Normal or Warning, deprecated fields unset, series)."""
    core = to_core_event(event)
    errors = _validate_legacy(core, "reportingController", _V1_NAMES)
    errors.extend(validate_object_meta(event, True, name_is_dns_subdomain))
    series = as_dict(event.get("series"))
    if series:
        if as_int(series.get("count")) < 2:
            errors.append(invalid_value("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errors.append(required("series.lastObservedTime"))
    if not event.get("eventTime"):
        errors.append(required("eventTime"))
    kind = as_str(event.get("type"))
    if kind not in EVENT_TYPES:
        errors.append(invalid_value("type", "", f"has invalid value: {kind}"))
    for key in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp"):
        if event.get(key):
            errors.append(invalid_value(key, "", "needs to be unset"))
    if as_int(event.get("deprecatedCount")):
        errors.append(invalid_value("deprecatedCount", "", "needs to be unset"))
    source = as_dict(event.get("deprecatedSource"))
    if as_str(source.get("component")) or as_str(source.get("host")):
        errors.append(invalid_value("deprecatedSource", "", "needs to be unset"))
    return errors


_IMMUTABLE_AFTER_CREATE: Final = (
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
    "type",
)


def validate_core_event_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateEventUpdate`` for core/v1: the create rules (legacy only)."""
    return validate_core_event(new)


def validate_events_v1_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateEventUpdate`` for events.k8s.io/v1: object meta rules, the create rules, and
    what an event reported may not change."""
    errors = validate_object_meta_update(new, old)
    errors.extend(validate_events_v1(new))
    core_new = to_core_event(new)
    core_old = to_core_event(old)
    back = {old_name: new_name for new_name, old_name in _RENAMES}
    for key in _IMMUTABLE_AFTER_CREATE:
        errors.extend(validate_immutable(core_new.get(key), core_old.get(key), back.get(key, key)))
    return errors


def default_core_event(event: Object) -> None:
    """The fields a core/v1 Event always carries in JSON (no ``omitempty`` upstream):
    ``reportingComponent`` and ``reportingInstance`` empty, ``eventTime`` null."""
    event.setdefault("reportingComponent", "")
    event.setdefault("reportingInstance", "")
    event.setdefault("eventTime", None)


CORE_EVENT_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
    defaulter=default_core_event,
    validator=validate_core_event,
    update_validator=validate_core_event_update,
    meta_rules=False,
)

EVENTS_V1_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
    validator=validate_events_v1,
    update_validator=validate_events_v1_update,
    meta_rules=False,
)


def core_event_fields(event: Object) -> dict[str, str]:
    """The event field set: ``involvedObject.*``, ``reason``, ``reportingComponent``,
    ``source`` (the component, else the reporting controller) and ``type``."""
    involved = as_dict(event.get("involvedObject"))
    controller = as_str(event.get("reportingComponent"))
    fields = meta_fields(event, True)
    for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
        fields[f"involvedObject.{key}"] = as_str(involved.get(key))
    fields["reason"] = as_str(event.get("reason"))
    fields["reportingComponent"] = controller
    fields["source"] = as_str(as_dict(event.get("source")).get("component")) or controller
    fields["type"] = as_str(event.get("type"))
    return fields


def events_v1_fields(event: Object) -> dict[str, str]:
    """The same fields under events.k8s.io/v1 names (``regarding.*``,
    ``reportingController``, ``deprecatedSource``)."""
    core = core_event_fields(to_core_event(event))
    fields = {}
    for key, value in core.items():
        if key.startswith("involvedObject."):
            fields["regarding." + key.removeprefix("involvedObject.")] = value
        elif key == "reportingComponent":
            fields["reportingController"] = value
        elif key == "source":
            fields["deprecatedSource"] = value
        else:
            fields[key] = value
    return fields


EVENT_COLUMNS: Final = (
    TableColumn(
        "Last Seen",
        "string",
        "",
        "The time at which the most recent occurrence of this event was recorded.",
    ),
    TableColumn(
        "Type",
        "string",
        "",
        "Type of this event (Normal, Warning), new types could be added in the future",
    ),
    TableColumn(
        "Reason",
        "string",
        "",
        "This should be a short, machine understandable string that gives the reason for the "
        "transition into the object's current status.",
    ),
    TableColumn("Object", "string", "", "The object that this event is about."),
    TableColumn(
        "Subobject", "string", "", "The subobject of the object that this event is about.", 1
    ),
    TableColumn(
        "Source",
        "string",
        "",
        "The component reporting this event. Should be a short machine understandable string.",
        1,
    ),
    TableColumn(
        "Message", "string", "", "A human-readable description of the status of this operation."
    ),
    TableColumn(
        "First Seen",
        "string",
        "",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        1,
    ),
    TableColumn("Count", "integer", "", "The number of times this event has occurred.", 1),
    TableColumn("Name", "string", "name", "Name must be unique within a namespace.", 1),
)


def core_event_row(event: Object, now: float) -> list[Any]:
    """``printEvent``: last seen, type, reason, ``kind/name``, subobject, source, message,
    first seen, count, name."""
    first = since(event.get("firstTimestamp"), now)
    if not event.get("firstTimestamp"):
        first = since(event.get("eventTime"), now)
    last = since(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    count = as_int(event.get("count"))
    series = event.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = as_int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = as_dict(event.get("involvedObject"))
    kind = as_str(involved.get("kind")).lower()
    target = f"{kind}/{as_str(involved.get('name'))}" if as_str(involved.get("name")) else kind
    source = as_dict(event.get("source"))
    component = as_str(source.get("component")) or as_str(event.get("reportingComponent"))
    instance = as_str(source.get("host")) or as_str(event.get("reportingInstance"))
    return [
        last,
        as_str(event.get("type")),
        as_str(event.get("reason")),
        target,
        as_str(involved.get("fieldPath")),
        f"{component}, {instance}" if instance else component,
        as_str(event.get("message")).strip(),
        first,
        count,
        name_of(event),
    ]


def events_v1_row(event: Object, now: float) -> list[Any]:
    """The same row for an events.k8s.io/v1 Event (upstream prints both through core)."""
    return core_event_row(to_core_event(event), now)


CORE_EVENT_PRINTER: Final = Printer(EVENT_COLUMNS, core_event_row)
EVENTS_V1_PRINTER: Final = Printer(EVENT_COLUMNS, events_v1_row)
