"""scheduling.k8s.io/v1 PriorityClass (``pkg/registry/scheduling/priorityclass``): the two
system classes, the reserved ``system-`` prefix, immutable value and preemption policy, and
the Priority admission rule that turns a pod's class name into its priority.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from numaplane.apiserver.errors import FieldError, StatusError, forbidden_field, not_supported
from numaplane.apiserver.kinds.meta import (
    as_int,
    as_str,
    metadata,
    name_is_dns_subdomain,
    validate_immutable,
)
from numaplane.apiserver.kinds.printing import AGE_COLUMN, NAME_COLUMN, Printer, age, name_of
from numaplane.apiserver.kinds.strategy import KindStrategy
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]

SYSTEM_PREFIX: Final = "system-"
HIGHEST_USER_PRIORITY: Final = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY: Final = 2 * HIGHEST_USER_PRIORITY
PREEMPTION_POLICIES: Final = ("Never", "PreemptLowerPriority")
DEFAULT_PREEMPTION: Final = "PreemptLowerPriority"


def _system_class(name: str, value: int, description: str) -> Object:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": False,
        "description": description,
        "preemptionPolicy": DEFAULT_PREEMPTION,
    }


#: The classes kube-apiserver creates at start (its ``scheduling/bootstrap-system-priority-classes``
#: post-start hook); the REST layer creates them in every cluster.
SYSTEM_PRIORITY_CLASSES: Final = (
    _system_class(
        "system-node-critical",
        SYSTEM_CRITICAL_PRIORITY + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    _system_class(
        "system-cluster-critical",
        SYSTEM_CRITICAL_PRIORITY,
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
)


def default_priority_class(pc: Object) -> None:
    """``SetDefaults_PriorityClass``: preemptionPolicy PreemptLowerPriority."""
    if not pc.get("preemptionPolicy"):
        pc["preemptionPolicy"] = DEFAULT_PREEMPTION


def _known_system_class_error(pc: Object) -> str | None:
    name = as_str(metadata(pc).get("name"))
    for known in SYSTEM_PRIORITY_CLASSES:
        if as_str(known["metadata"]["name"]) == name:
            if as_int(pc.get("value")) != known["value"]:
                return f"value of {name} PriorityClass must be {known['value']}"
            if (pc.get("globalDefault") is True) != known["globalDefault"]:
                return f"globalDefault of {name} PriorityClass must be false"
            return None
    return f"{name} is not a known system priority class"


def validate_priority_class(pc: Object) -> list[FieldError]:
    """``ValidatePriorityClass``: ``system-`` names only for the known system classes (with
    their values), user values at most 1e9, a known preemption policy."""
    errors: list[FieldError] = []
    name = as_str(metadata(pc).get("name"))
    if name.startswith(SYSTEM_PREFIX):
        why = _known_system_class_error(pc)
        if why is not None:
            errors.append(
                forbidden_field(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system "
                    f"use only. error: {why}",
                )
            )
    elif as_int(pc.get("value")) > HIGHEST_USER_PRIORITY:
        errors.append(
            forbidden_field(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
            )
        )
    policy = pc.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        errors.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errors


def validate_priority_class_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePriorityClassUpdate``: value and preemption policy may not change."""
    errors = validate_priority_class(new)
    if new.get("value") != old.get("value"):
        errors.append(forbidden_field("value", "may not be changed in an update."))
    errors.extend(
        validate_immutable(
            new.get("preemptionPolicy"), old.get("preemptionPolicy"), "preemptionPolicy"
        )
    )
    return errors


PRIORITY_CLASS_STRATEGY: Final = KindStrategy(
    namespaced=False,
    name_rule=name_is_dns_subdomain,
    defaulter=default_priority_class,
    validator=validate_priority_class,
    update_validator=validate_priority_class_update,
)

PRIORITY_CLASS_COLUMNS: Final = (
    NAME_COLUMN,
    TableColumn("Value", "integer", "", "The integer value of this priority class."),
    TableColumn("Global-Default", "boolean", "", "Whether this priority class is the default."),
    AGE_COLUMN,
    TableColumn("PreemptionPolicy", "string", "", "The policy for preempting lower priority pods."),
)


def priority_class_row(pc: Object, now: float) -> list[Any]:
    """``printPriorityClass``."""
    return [
        name_of(pc),
        as_int(pc.get("value")),
        pc.get("globalDefault") is True,
        age(pc, now),
        as_str(pc.get("preemptionPolicy")) or DEFAULT_PREEMPTION,
    ]


PRIORITY_CLASS_PRINTER: Final = Printer(PRIORITY_CLASS_COLUMNS, priority_class_row)


def forbidden_pod(pod: Object, why: str) -> StatusError:
    """An admission plugin's 403 for ``pod``: ``pods "p" is forbidden: <why>``."""
    name = as_str(metadata(pod).get("name"))
    return StatusError(
        403,
        "Forbidden",
        f'pods "{name}" is forbidden: {why}',
        {"name": name, "group": "", "kind": "pods"},
    )


def admit_pod_priority(pod: Object, classes: Iterable[Object]) -> None:
    """The Priority admission plugin on a new pod: ``spec.priority`` and
    ``spec.preemptionPolicy`` from its class (or the global default class; priority 0 when
    there is none). Raises upstream's 403 for an unknown class or a conflicting value."""
    spec = pod.setdefault("spec", {})
    by_name = {as_str(metadata(c).get("name")): c for c in classes}
    class_name = as_str(spec.get("priorityClassName"))
    if class_name:
        chosen = by_name.get(class_name)
        if chosen is None:
            raise forbidden_pod(pod, f"no PriorityClass with name {class_name} was found")
    else:
        defaults = [c for c in by_name.values() if c.get("globalDefault") is True]
        # Upstream picks the lowest-valued default when several claim it.
        chosen = min(defaults, key=lambda c: as_int(c.get("value"))) if defaults else None
    if chosen is None:
        priority, policy = 0, DEFAULT_PREEMPTION
    else:
        priority = as_int(chosen.get("value"))
        policy = as_str(chosen.get("preemptionPolicy")) or DEFAULT_PREEMPTION
        if not class_name:
            spec["priorityClassName"] = as_str(metadata(chosen).get("name"))
    given = spec.get("priority")
    if given is not None and given != priority:
        raise forbidden_pod(
            pod,
            f"the integer value of priority ({given}) must not be provided in pod spec; priority "
            f"admission controller computed {priority} from the given PriorityClass name",
        )
    given_policy = spec.get("preemptionPolicy")
    if given_policy is not None and given_policy != policy:
        raise forbidden_pod(
            pod,
            f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod "
            f"spec; priority admission controller computed {policy} from the given "
            "PriorityClass name",
        )
    spec["priority"] = priority
    spec["preemptionPolicy"] = policy


def admit_priority_class(pc: Object, existing: Iterable[Object], creating: bool) -> None:
    """The Priority admission plugin on PriorityClass writes: only one class may be the global
    default (403 ``PriorityClass X is already marked as default. Only one default can
    exist``)."""
    if pc.get("globalDefault") is not True:
        return
    name = as_str(metadata(pc).get("name"))
    for other in existing:
        other_name = as_str(metadata(other).get("name"))
        if other.get("globalDefault") is True and (creating or other_name != name):
            raise StatusError(
                403,
                "Forbidden",
                f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: PriorityClass '
                f"{other_name} is already marked as default. Only one default can exist",
                {"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"},
            )
