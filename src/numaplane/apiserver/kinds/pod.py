"""core/v1 Pod: defaulting, QoS, create/update rules, the status and binding subresources and
the fields selectors test (``pkg/registry/core/pod``); the table kubectl prints is
:mod:`numaplane.apiserver.kinds.pod_table`.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from numaplane.api.pod import QOS_RESOURCES, Container, compute_qos
from numaplane.apiserver import errors
from numaplane.apiserver.errors import FieldError, invalid_value, not_supported, required
from numaplane.apiserver.jsoncopy import json_copy
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_int,
    as_list,
    as_str,
    inclusive_range_error,
    metadata,
    name_is_dns_subdomain,
)
from numaplane.apiserver.kinds.podspec import parse_quantity, validate_pod_spec
from numaplane.apiserver.kinds.podspec_defaults import (
    default_pod_spec,
    default_requests_from_limits,
)
from numaplane.apiserver.kinds.podstatus import (
    prepare_pod_status_update,
    validate_pod_status_update,
)
from numaplane.apiserver.kinds.printing import (
    meta_fields,
)
from numaplane.apiserver.kinds.strategy import KindStrategy, StatusStrategy, carry_over

Object = dict[str, Any]

SCHEDULING_GATED: Final = "SchedulingGated"
_MAX_INT32: Final = 2**31 - 1
UPDATABLE_SPEC_FIELDS: Final = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)


def _spec(obj: Object) -> dict[str, Any]:
    return as_dict(obj.get("spec"))


def _mirror_ips(status: Object, single: str, plural: str) -> None:
    # v1 keeps the first of the plural list in the singular field (and fills the list from a
    # lone singular value), as upstream's conversion does.
    ips = as_list(status.get(plural))
    if ips:
        status[single] = as_str(as_dict(ips[0]).get("ip"))
    elif as_str(status.get(single)):
        status[plural] = [{"ip": status[single]}]


def default_pod(pod: Object) -> None:
    """``SetDefaults_Pod`` + ``SetDefaults_PodSpec``: requests from limits, enableServiceLinks,
    dnsPolicy, restartPolicy, securityContext, terminationGracePeriodSeconds, schedulerName,
    and the containers' and volumes' defaults; the v1 mirrors (podIP/podIPs, hostIP/hostIPs,
    serviceAccount/serviceAccountName)."""
    status = pod.get("status")
    if isinstance(status, dict):
        _mirror_ips(status, "podIP", "podIPs")
        _mirror_ips(status, "hostIP", "hostIPs")
    spec = pod.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    for key in ("initContainers", "containers"):
        for container in as_list(spec.get(key)):
            if isinstance(container, dict):
                default_requests_from_limits(container)
    spec.setdefault("enableServiceLinks", True)
    default_pod_spec(spec)


def pod_qos_class(pod: Object) -> str:
    """The QoS class upstream records in ``status.qosClass`` (``ComputePodQOS``)."""
    spec = _spec(pod)
    containers = []
    for key in ("initContainers", "containers"):
        for item in as_list(spec.get(key)):
            container = as_dict(item)
            resources = as_dict(container.get("resources"))
            picked = []
            for part in ("requests", "limits"):
                values = {}
                for name, value in as_dict(resources.get(part)).items():
                    if name in QOS_RESOURCES:
                        values[name] = parse_quantity(value, "Pod")
                picked.append(values)
            containers.append(Container.of(as_str(container.get("name")), picked[0], picked[1]))
    return str(compute_qos(containers))


def prepare_pod_create(pod: Object) -> None:
    """Status reset to phase Pending with the QoS class; a gated pod gets its PodScheduled
    condition (``SchedulingGated``); a negative grace period reads as 1 (as upstream)."""
    spec = pod.setdefault("spec", {})
    status: Object = {"phase": "Pending", "qosClass": pod_qos_class(pod)}
    if as_list(spec.get("schedulingGates")):
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": SCHEDULING_GATED,
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastProbeTime": None,
                "lastTransitionTime": None,
            }
        ]
    pod["status"] = status
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0:
        spec["terminationGracePeriodSeconds"] = 1


def validate_pod(pod: Object) -> list[FieldError]:
    """``ValidatePodCreate``'s spec part (metadata is the strategy's)."""
    return validate_pod_spec(pod.get("spec"), "spec", "Pod")


def _diff(old: object, new: object, path: str, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            _diff(old.get(key), new.get(key), f"{path}.{key}", out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}[{i}]", out)
    elif old != new:
        out.append(f"  {path}: {errors.go_value(old)} -> {errors.go_value(new)}")


def _munged_spec(new: Object, old: Object) -> Object:
    """The new spec with every field a pod update may change taken from the old one, so that
    what remains different is what may not change."""
    munged = copy.deepcopy(new)
    for key in ("containers", "initContainers"):
        for mine, theirs in zip(as_list(munged.get(key)), as_list(old.get(key)), strict=False):
            if isinstance(mine, dict) and isinstance(theirs, dict):
                carry_over(mine, theirs, "image")
    # Deadline, tolerations, scheduling gates (and a gated pod's node selector) have rules of
    # their own, checked apart; here they count as unchanged.
    carry_over(munged, old, "activeDeadlineSeconds")
    carry_over(munged, old, "tolerations")
    old_grace = old.get("terminationGracePeriodSeconds")
    if (
        isinstance(old_grace, int)
        and old_grace < 0
        and munged.get("terminationGracePeriodSeconds") == 1
    ):
        carry_over(munged, old, "terminationGracePeriodSeconds")
    carry_over(munged, old, "schedulingGates")
    if as_list(old.get("schedulingGates")):
        carry_over(munged, old, "nodeSelector")
    return munged


def _only_added_tolerations(new: object, old: object) -> bool:
    # Every old toleration is still there, its tolerationSeconds aside.
    def sans_seconds(toleration: object) -> dict[str, Any]:
        return {k: v for k, v in as_dict(toleration).items() if k != "tolerationSeconds"}

    kept = [sans_seconds(t) for t in as_list(new)]
    return all(sans_seconds(t) in kept for t in as_list(old))


def validate_pod_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePodUpdate``: the new pod valid, containers neither added nor removed, the
    deadline only shortened, and nothing in the spec changed but images, the deadline, added
    tolerations, removed scheduling gates and a negative grace period turned to 1."""
    errors_ = validate_pod(new)
    spec, old_spec = _spec(new), _spec(old)
    if len(as_list(spec.get("containers"))) != len(as_list(old_spec.get("containers"))):
        errors_.append(
            FieldError(
                "FieldValueForbidden",
                "spec.containers",
                detail="pod updates may not add or remove containers",
            )
        )
        return errors_
    deadline, old_deadline = (
        spec.get("activeDeadlineSeconds"),
        old_spec.get("activeDeadlineSeconds"),
    )
    if deadline is not None:
        value = as_int(deadline)
        if not 0 <= value <= _MAX_INT32:
            errors_.append(
                invalid_value(
                    "spec.activeDeadlineSeconds", value, inclusive_range_error(0, _MAX_INT32)
                )
            )
            return errors_
        if old_deadline is not None and as_int(old_deadline) < value:
            errors_.append(
                invalid_value(
                    "spec.activeDeadlineSeconds",
                    value,
                    "must be less than or equal to previous value",
                )
            )
            return errors_
    elif old_deadline is not None:
        errors_.append(
            invalid_value(
                "spec.activeDeadlineSeconds",
                None,
                "must not update from a positive integer to nil value",
            )
        )
    if not _only_added_tolerations(spec.get("tolerations"), old_spec.get("tolerations")):
        errors_.append(
            FieldError(
                "FieldValueForbidden",
                "spec.tolerations",
                detail="existing toleration can not be modified except its tolerationSeconds",
            )
        )
    if as_list(old_spec.get("schedulingGates")):
        new_selector = as_dict(spec.get("nodeSelector"))
        for key, value in as_dict(old_spec.get("nodeSelector")).items():
            if new_selector.get(key) != value:
                errors_.append(
                    FieldError(
                        "FieldValueForbidden",
                        "spec.nodeSelector",
                        detail="only additions to spec.nodeSelector are allowed (no mutations "
                        "or deletions)",
                    )
                )
                break
    for i, gate in enumerate(as_list(spec.get("schedulingGates"))):
        if gate not in as_list(old_spec.get("schedulingGates")):
            errors_.append(
                FieldError(
                    "FieldValueForbidden",
                    f"spec.schedulingGates[{i}]",
                    detail="only deletion is allowed, but found new scheduling gate "
                    f"'{as_str(as_dict(gate).get('name'))}'",
                )
            )
    munged = _munged_spec(spec, old_spec)
    if munged != old_spec:
        lines: list[str] = []
        _diff(old_spec, munged, "spec", lines)
        errors_.append(
            FieldError(
                "FieldValueForbidden",
                "spec",
                detail="pod updates may not change fields other than "
                + ",".join(UPDATABLE_SPEC_FIELDS)
                + "\n"
                + "\n".join(lines),
            )
        )
    return errors_


POD_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
    defaulter=default_pod,
    create_preparer=prepare_pod_create,
    validator=validate_pod,
    update_validator=validate_pod_update,
    status_key="status",
)

#: ``pods/status``: the spec and the owner references stay as stored (old kubelets corrupt
#: owner references, hence upstream keeps them).
POD_STATUS_STRATEGY: Final = StatusStrategy(
    POD_STRATEGY,
    validate_pod_status_update,
    keep_meta=("ownerReferences",),
    status_preparer=prepare_pod_status_update,
)


def pod_fields(pod: Object) -> dict[str, str]:
    """``PodToSelectableFields``."""
    spec, status = _spec(pod), as_dict(pod.get("status"))
    ips = as_list(status.get("podIPs"))
    pod_ip = as_str(as_dict(ips[0]).get("ip")) if ips else ""
    fields = meta_fields(pod, True)
    fields.update(
        {
            "spec.nodeName": as_str(spec.get("nodeName")),
            "spec.restartPolicy": as_str(spec.get("restartPolicy")),
            "spec.schedulerName": as_str(spec.get("schedulerName")),
            "spec.serviceAccountName": as_str(spec.get("serviceAccountName")),
            "spec.hostNetwork": "true" if spec.get("hostNetwork") is True else "false",
            "status.phase": as_str(status.get("phase")),
            "status.podIP": pod_ip,
            "status.nominatedNodeName": as_str(status.get("nominatedNodeName")),
        }
    )
    return fields


# --- binding ----------------------------------------------------------------------------------


def validate_binding(binding: Object) -> list[FieldError]:
    """``ValidatePodBinding``: the target is a Node (kind empty or ``Node``) with a name."""
    target = as_dict(binding.get("target"))
    errors_: list[FieldError] = []
    kind = as_str(target.get("kind"))
    if kind and kind != "Node":
        errors_.append(not_supported("target.kind", kind, ("Node", "<empty>")))
    if not as_str(target.get("name")):
        errors_.append(required("target.name"))
    return errors_


def bind_pod(pod: Object, binding: Object, url_name: str) -> Object:
    """A copy of ``pod`` bound as ``pods/binding`` does: ``spec.nodeName`` set, the binding's
    annotations added, PodScheduled True. Raises upstream's errors: a name mismatch (400), an
    invalid binding (422), a pod being deleted, already bound or still gated (409)."""
    name = as_str(metadata(binding).get("name"))
    if name != url_name:
        raise errors.bad_request("name in URL does not match name in Binding object")
    problems = validate_binding(binding)
    if problems:
        raise errors.invalid("", "Binding", name, problems)
    meta = metadata(pod)
    spec = _spec(pod)
    if meta.get("deletionTimestamp"):
        why = f"pod {url_name} is being deleted, cannot be assigned to a host"
        raise errors.conflict("pods/binding", url_name, why)
    if as_str(spec.get("nodeName")):
        why = f'pod {url_name} is already assigned to node "{as_str(spec.get("nodeName"))}"'
        raise errors.conflict("pods/binding", url_name, why)
    if as_list(spec.get("schedulingGates")):
        raise errors.conflict(
            "pods/binding", url_name, f"pod {url_name} has non-empty .spec.schedulingGates"
        )
    bound = json_copy(pod)
    bound.setdefault("spec", {})["nodeName"] = as_str(as_dict(binding.get("target")).get("name"))
    annotations = as_dict(metadata(binding).get("annotations"))
    if annotations:
        bound.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
    status = bound.setdefault("status", {})
    conditions = [
        c for c in as_list(status.get("conditions")) if as_dict(c).get("type") != "PodScheduled"
    ]
    previous = next(
        (
            as_dict(c)
            for c in as_list(status.get("conditions"))
            if as_dict(c).get("type") == "PodScheduled"
        ),
        {},
    )
    scheduled = {**previous, "type": "PodScheduled", "status": "True"}
    scheduled.pop("reason", None)
    scheduled.pop("message", None)
    status["conditions"] = [*conditions, scheduled]
    return bound
