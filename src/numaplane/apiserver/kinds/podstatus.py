"""The ``pods/status`` rules (``podStatusStrategy`` and ``ValidatePodStatusUpdate``): what a
kubelet (numaplane's agent included) may report, with upstream's messages."""

from __future__ import annotations

import ipaddress
from typing import Any, Final

from numaplane.apiserver.errors import FieldError, forbidden_field, invalid_value
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_int,
    as_list,
    as_str,
    name_is_dns_subdomain,
    validate_immutable,
)

Object = dict[str, Any]

_IP_MESSAGE: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def prepare_pod_status_update(new: Object, old: Object) -> None:
    """The QoS class is set at creation; a status write that drops it gets it back (old
    kubelets dropped it on rejected pods)."""
    status = new.setdefault("status", {})
    old_qos = as_dict(old.get("status")).get("qosClass")
    if isinstance(status, dict) and not status.get("qosClass") and old_qos:
        status["qosClass"] = old_qos


def _state_transitions(new: Object, old: Object) -> list[FieldError]:
    # A container that may not restart stays terminated (ValidateContainerStateTransition).
    policy = as_str(as_dict(old.get("spec")).get("restartPolicy"))
    if policy == "Always":
        return []
    errors: list[FieldError] = []
    new_statuses = [
        as_dict(s) for s in as_list(as_dict(new.get("status")).get("containerStatuses"))
    ]
    old_statuses = as_list(as_dict(old.get("status")).get("containerStatuses"))
    for i, item in enumerate(old_statuses):
        old_status = as_dict(item)
        terminated = as_dict(old_status.get("state")).get("terminated")
        if not isinstance(terminated, dict):
            continue
        if as_int(terminated.get("exitCode")) != 0 and policy == "OnFailure":
            continue
        for status in new_statuses:
            still = as_dict(status.get("state")).get("terminated")
            if status.get("name") == old_status.get("name") and not isinstance(still, dict):
                errors.append(
                    forbidden_field(
                        f"status.containerStatuses[{i}].state",
                        "may not be transitioned to non-terminated state",
                    )
                )
    return errors


def _valid_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _validate_ips(status: Object, key: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, item in enumerate(as_list(status.get(key))):
        ip = as_str(as_dict(item).get("ip"))
        if not _valid_ip(ip):
            errors.append(invalid_value(f"status.{key}[{i}]", ip, _IP_MESSAGE))
    return errors


def validate_pod_status_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePodStatusUpdate``'s checks: the nominated node a node name, the QoS class
    unchanged, containers that may not restart staying terminated, valid pod and host IPs."""
    status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
    errors: list[FieldError] = []
    nominated = as_str(status.get("nominatedNodeName"))
    if nominated and nominated != as_str(old_status.get("nominatedNodeName")):
        errors.extend(
            invalid_value("status.nominatedNodeName", nominated, m)
            for m in name_is_dns_subdomain(nominated, False)
        )
    errors.extend(
        validate_immutable(status.get("qosClass"), old_status.get("qosClass"), "status.qosClass")
    )
    errors.extend(_state_transitions(new, old))
    errors.extend(_validate_ips(status, "podIPs"))
    errors.extend(_validate_ips(status, "hostIPs"))
    return errors
