"""core/v1 Namespace and Node: the cluster-scoped core kinds (``pkg/registry/core/namespace``,
``pkg/registry/core/node``), with their status subresources, tables and field sets.
"""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value
from numaplane.apiserver.kinds.meta import (
    STANDARD_FINALIZERS,
    as_dict,
    as_list,
    as_str,
    is_qualified_name,
    is_valid_label_value,
    metadata,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_immutable,
)
from numaplane.apiserver.kinds.podspec import validate_taint_effect
from numaplane.apiserver.kinds.printing import (
    AGE_COLUMN,
    NAME_COLUMN,
    NONE,
    UNKNOWN,
    Printer,
    age,
    go_bool,
    meta_fields,
    name_age_printer,
    name_of,
)
from numaplane.apiserver.kinds.strategy import KindStrategy, StatusStrategy, carry_over
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]

#: The label every namespace carries with its own name (``kubernetes.io/metadata.name``).
NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
KUBERNETES_FINALIZER: Final = "kubernetes"
NAMESPACE_PHASES: Final = ("Active", "Terminating")


# --- Namespace --------------------------------------------------------------------------------


def default_namespace(ns: Object) -> None:
    """``SetDefaults_Namespace``: phase Active, and the ``kubernetes.io/metadata.name`` label
    (on every write, so it always tells the name)."""
    status = ns.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Active"
    meta = ns.setdefault("metadata", {})
    name = as_str(meta.get("name"))
    if name:
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels[NAMESPACE_NAME_LABEL] = name


def prepare_namespace_create(ns: Object) -> None:
    """Status Active, the ``kubernetes`` finalizer in ``spec.finalizers`` (namespace deletion
    empties the namespace before the object goes), and the name label again: a generated
    name was not known when defaulting ran (upstream's ``Canonicalize``)."""
    ns["status"] = {"phase": "Active"}
    spec = ns.setdefault("spec", {})
    finalizers = spec.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = spec["finalizers"] = []
    if KUBERNETES_FINALIZER not in finalizers:
        finalizers.append(KUBERNETES_FINALIZER)
    default_namespace(ns)


def prepare_namespace_update(new: Object, old: Object) -> None:
    """``spec.finalizers`` change only through ``namespaces/finalize``."""
    spec = new.setdefault("spec", {})
    carry_over(spec, as_dict(old.get("spec")), "finalizers")


def _validate_spec_finalizers(ns: Object) -> list[FieldError]:
    # ValidateNamespace: each of spec.finalizers qualified, unprefixed ones standard; the path
    # carries no index, as upstream's.
    errors: list[FieldError] = []
    for name in as_list(as_dict(ns.get("spec")).get("finalizers")):
        text = as_str(name)
        errors.extend(invalid_value("spec.finalizers", text, m) for m in is_qualified_name(text))
        if "/" not in text and text not in STANDARD_FINALIZERS:
            errors.append(
                invalid_value(
                    "spec.finalizers",
                    text,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errors


def validate_namespace_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateNamespaceUpdate``: the object-meta rules only (spec.finalizers are kept)."""
    return []


def validate_namespace_status(new: Object, old: Object) -> list[FieldError]:
    """``ValidateNamespaceStatusUpdate``: a phase from the known set; Terminating only while
    being deleted."""
    phase = as_str(as_dict(new.get("status")).get("phase"))
    errors: list[FieldError] = []
    deleting = bool(metadata(new).get("deletionTimestamp"))
    if not deleting and phase != "Active":
        errors.append(
            invalid_value(
                "status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"
            )
        )
    elif deleting and phase != "Terminating":
        errors.append(
            invalid_value(
                "status.Phase",
                phase,
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        )
    return errors


NAMESPACE_STRATEGY: Final = KindStrategy(
    namespaced=False,
    name_rule=name_is_dns_label,
    defaulter=default_namespace,
    create_preparer=prepare_namespace_create,
    update_preparer=prepare_namespace_update,
    validator=_validate_spec_finalizers,
    update_validator=validate_namespace_update,
    status_key="status",
)

NAMESPACE_STATUS_STRATEGY: Final = StatusStrategy(NAMESPACE_STRATEGY, validate_namespace_status)


def namespace_fields(ns: Object) -> dict[str, str]:
    """``NamespaceToSelectableFields``: ``status.phase`` (and the legacy ``name``)."""
    fields = meta_fields(ns, False)
    fields["status.phase"] = as_str(as_dict(ns.get("status")).get("phase"))
    fields["name"] = fields["metadata.name"]
    return fields


NAMESPACE_PRINTER: Final = name_age_printer(
    (
        TableColumn("Status", "string", "", "The status of the namespace"),
        lambda ns: as_str(as_dict(ns.get("status")).get("phase")),
    )
)


# --- Node -------------------------------------------------------------------------------------


def default_node(node: Object) -> None:
    """``SetDefaults_NodeStatus``: allocatable defaults to capacity."""
    status = node.get("status")
    if (
        isinstance(status, dict)
        and "allocatable" not in status
        and isinstance(status.get("capacity"), dict)
    ):
        status["allocatable"] = dict(status["capacity"])


def validate_node(node: Object) -> list[FieldError]:
    """``ValidateNode``'s checks users meet: taints (key, value, effect, unique by key and
    effect)."""
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(as_list(as_dict(node.get("spec")).get("taints"))):
        taint = as_dict(taint)
        at = f"spec.taints[{i}]"
        key = as_str(taint.get("key"))
        errors.extend(invalid_value(f"{at}.key", key, m) for m in is_qualified_name(key))
        value = as_str(taint.get("value"))
        errors.extend(invalid_value(f"{at}.value", value, m) for m in is_valid_label_value(value))
        effect = as_str(taint.get("effect"))
        errors.extend(validate_taint_effect(effect, False, f"{at}.effect"))
        if (key, effect) in seen:
            errors.append(invalid_value(at, taint, "taints must be unique by key and effect pair"))
        seen.add((key, effect))
    return errors


def validate_node_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateNodeUpdate``: podCIDR and providerID may be set once, never changed."""
    errors = validate_node(new)
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    for key in ("podCIDR", "providerID"):
        if as_str(old_spec.get(key)):
            errors.extend(validate_immutable(spec.get(key), old_spec.get(key), f"spec.{key}"))
    return errors


NODE_STRATEGY: Final = KindStrategy(
    namespaced=False,
    name_rule=name_is_dns_subdomain,
    defaulter=default_node,
    validator=validate_node,
    update_validator=validate_node_update,
    status_key="status",
)

NODE_STATUS_STRATEGY: Final = StatusStrategy(NODE_STRATEGY)


def node_fields(node: Object) -> dict[str, str]:
    """``NodeToSelectableFields``: ``spec.unschedulable``."""
    fields = meta_fields(node, False)
    fields["spec.unschedulable"] = go_bool(as_dict(node.get("spec")).get("unschedulable"))
    return fields


NODE_COLUMNS: Final = (
    NAME_COLUMN,
    TableColumn("Status", "string", "", "The status of the node"),
    TableColumn("Roles", "string", "", "The roles of the node"),
    AGE_COLUMN,
    TableColumn("Version", "string", "", "Kubelet Version reported by the node."),
    TableColumn("Internal-IP", "string", "", "List of addresses reachable to the node.", 1),
    TableColumn("External-IP", "string", "", "List of addresses reachable to the node.", 1),
    TableColumn("OS-Image", "string", "", "OS Image reported by the node from /etc/os-release.", 1),
    TableColumn("Kernel-Version", "string", "", "Kernel Version reported by the node.", 1),
    TableColumn(
        "Container-Runtime", "string", "", "ContainerRuntime Version reported by the node.", 1
    ),
)


def node_roles(node: Object) -> list[str]:
    """``findNodeRoles``: ``node-role.kubernetes.io/<role>`` label keys and the value of
    ``kubernetes.io/role``, sorted."""
    roles = set()
    for key, value in as_dict(metadata(node).get("labels")).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key.removeprefix("node-role.kubernetes.io/")
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and as_str(value):
            roles.add(as_str(value))
    return sorted(roles)


def _address(node: Object, kind: str) -> str:
    for address in as_list(as_dict(node.get("status")).get("addresses")):
        if as_dict(address).get("type") == kind:
            return as_str(as_dict(address).get("address"))
    return NONE


def node_row(node: Object, now: float) -> list[Any]:
    """``printNode``: Ready/NotReady/Unknown (+ SchedulingDisabled), roles, age, kubelet
    version, then addresses and system info."""
    status = as_dict(node.get("status"))
    states = []
    for condition in as_list(status.get("conditions")):
        condition = as_dict(condition)
        if condition.get("type") == "Ready":
            states = ["Ready" if condition.get("status") == "True" else "NotReady"]
    if not states:
        states = ["Unknown"]
    if as_dict(node.get("spec")).get("unschedulable") is True:
        states.append("SchedulingDisabled")
    info = as_dict(status.get("nodeInfo"))
    return [
        name_of(node),
        ",".join(states),
        ",".join(node_roles(node)) or NONE,
        age(node, now),
        as_str(info.get("kubeletVersion")),
        _address(node, "InternalIP"),
        _address(node, "ExternalIP"),
        as_str(info.get("osImage")) or UNKNOWN,
        as_str(info.get("kernelVersion")) or UNKNOWN,
        as_str(info.get("containerRuntimeVersion")) or UNKNOWN,
    ]


NODE_PRINTER: Final = Printer(NODE_COLUMNS, node_row)
