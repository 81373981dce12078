"""The built-in kinds the server serves, each as upstream defines it: names, scope, verbs,
subresources, strategies (defaulting, preparation, validation with upstream's messages),
field selectors and kubectl's table columns.

:data:`BUILTIN_RESOURCES` lists them; :func:`builtin_resources` builds the same list with the
crd package's rules plugged into CustomResourceDefinitions (this package never imports it).

What a REST layer calls beside the strategies: ``admission.admit_pod`` (the default admission
chain on new Pods), ``scheduling.admit_priority_class`` and ``SYSTEM_PRIORITY_CLASSES`` (the
classes created at start), ``pod.bind_pod`` (``pods/binding``), ``events.to_core_event`` /
``to_events_v1`` (one store for both Event APIs, as upstream).
"""

from __future__ import annotations

from typing import Final

from numaplane.apiserver.kinds.apiextensions import CRDHooks, crd_resource_info
from numaplane.apiserver.kinds.batch import (
    JOB_PRINTER,
    JOB_STATUS_STRATEGY,
    JOB_STRATEGY,
    job_fields,
)
from numaplane.apiserver.kinds.cluster import (
    NAMESPACE_PRINTER,
    NAMESPACE_STATUS_STRATEGY,
    NAMESPACE_STRATEGY,
    NODE_PRINTER,
    NODE_STATUS_STRATEGY,
    NODE_STRATEGY,
    namespace_fields,
    node_fields,
)
from numaplane.apiserver.kinds.config import (
    CONFIG_MAP_PRINTER,
    CONFIG_MAP_STRATEGY,
    SECRET_PRINTER,
    SECRET_STRATEGY,
    SERVICE_ACCOUNT_PRINTER,
    SERVICE_ACCOUNT_STRATEGY,
    secret_fields,
)
from numaplane.apiserver.kinds.coordination import LEASE_PRINTER, LEASE_STRATEGY
from numaplane.apiserver.kinds.events import (
    CORE_EVENT_PRINTER,
    CORE_EVENT_STRATEGY,
    EVENTS_V1_PRINTER,
    EVENTS_V1_STRATEGY,
    core_event_fields,
    events_v1_fields,
    to_core_event,
    to_events_v1,
)
from numaplane.apiserver.kinds.pod import POD_STATUS_STRATEGY, POD_STRATEGY, pod_fields
from numaplane.apiserver.kinds.pod_table import POD_PRINTER
from numaplane.apiserver.kinds.printing import DEFAULT_PRINTER, cluster_fields, namespaced_fields
from numaplane.apiserver.kinds.rbac import (
    BINDING_PRINTER,
    CLUSTER_ROLE_BINDING_STRATEGY,
    CLUSTER_ROLE_STRATEGY,
    ROLE_BINDING_STRATEGY,
    ROLE_PRINTER,
    ROLE_STRATEGY,
)
from numaplane.apiserver.kinds.reviews import (
    ACCESS_REVIEW_STRATEGY,
    RULES_REVIEW_STRATEGY,
    SELF_SUBJECT_REVIEW_STRATEGY,
)
from numaplane.apiserver.kinds.scheduling import PRIORITY_CLASS_PRINTER, PRIORITY_CLASS_STRATEGY
from numaplane.apiserver.resource import ResourceInfo

__all__ = ["BUILTIN_RESOURCES", "CRDHooks", "builtin_resources"]

_NO_DELETECOLLECTION: Final = ("create", "delete", "get", "list", "patch", "update", "watch")
_CREATE_ONLY: Final = ("create",)

_RBAC: Final = "rbac.authorization.k8s.io"

_FIXED: Final[tuple[ResourceInfo, ...]] = (
    ResourceInfo(
        "",
        "v1",
        "namespaces",
        "Namespace",
        False,
        NAMESPACE_STRATEGY,
        NAMESPACE_PRINTER,
        namespace_fields,
        short_names=("ns",),
        verbs=_NO_DELETECOLLECTION,
        subresources=("status",),
        status_strategy=NAMESPACE_STATUS_STRATEGY,
        storage_version="v1",
    ),
    ResourceInfo(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        POD_STRATEGY,
        POD_PRINTER,
        pod_fields,
        short_names=("po",),
        categories=("all",),
        subresources=("status", "binding", "log"),
        status_strategy=POD_STATUS_STRATEGY,
        storage_version="v1",
    ),
    ResourceInfo(
        "",
        "v1",
        "nodes",
        "Node",
        False,
        NODE_STRATEGY,
        NODE_PRINTER,
        node_fields,
        short_names=("no",),
        subresources=("status",),
        status_strategy=NODE_STATUS_STRATEGY,
        storage_version="v1",
    ),
    ResourceInfo(
        "",
        "v1",
        "secrets",
        "Secret",
        True,
        SECRET_STRATEGY,
        SECRET_PRINTER,
        secret_fields,
        storage_version="v1",
    ),
    ResourceInfo(
        "",
        "v1",
        "configmaps",
        "ConfigMap",
        True,
        CONFIG_MAP_STRATEGY,
        CONFIG_MAP_PRINTER,
        namespaced_fields,
        short_names=("cm",),
        storage_version="v1",
    ),
    ResourceInfo(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        True,
        SERVICE_ACCOUNT_STRATEGY,
        SERVICE_ACCOUNT_PRINTER,
        namespaced_fields,
        short_names=("sa",),
        subresources=("token",),
        storage_version="v1",
    ),
    ResourceInfo(
        "",
        "v1",
        "events",
        "Event",
        True,
        CORE_EVENT_STRATEGY,
        CORE_EVENT_PRINTER,
        core_event_fields,
        short_names=("ev",),
        storage_version="v1",
    ),
    ResourceInfo(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        True,
        EVENTS_V1_STRATEGY,
        EVENTS_V1_PRINTER,
        events_v1_fields,
        short_names=("ev",),
        storage_version="v1",
        # Upstream keeps one store for both Event APIs; a REST layer that does the same
        # stores core-shaped objects under "events" and converts on the way in and out.
        extra={
            "storage_resource": "events",
            "to_storage": to_core_event,
            "from_storage": to_events_v1,
        },
    ),
    ResourceInfo(
        "batch",
        "v1",
        "jobs",
        "Job",
        True,
        JOB_STRATEGY,
        JOB_PRINTER,
        job_fields,
        categories=("all",),
        subresources=("status",),
        status_strategy=JOB_STATUS_STRATEGY,
        storage_version="v1",
    ),
    ResourceInfo(
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        True,
        LEASE_STRATEGY,
        LEASE_PRINTER,
        namespaced_fields,
        storage_version="v1",
    ),
    ResourceInfo(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        False,
        PRIORITY_CLASS_STRATEGY,
        PRIORITY_CLASS_PRINTER,
        cluster_fields,
        short_names=("pc",),
        storage_version="v1",
    ),
    ResourceInfo(
        _RBAC,
        "v1",
        "roles",
        "Role",
        True,
        ROLE_STRATEGY,
        ROLE_PRINTER,
        namespaced_fields,
        storage_version="v1",
    ),
    ResourceInfo(
        _RBAC,
        "v1",
        "clusterroles",
        "ClusterRole",
        False,
        CLUSTER_ROLE_STRATEGY,
        ROLE_PRINTER,
        cluster_fields,
        storage_version="v1",
    ),
    ResourceInfo(
        _RBAC,
        "v1",
        "rolebindings",
        "RoleBinding",
        True,
        ROLE_BINDING_STRATEGY,
        BINDING_PRINTER,
        namespaced_fields,
        storage_version="v1",
    ),
    ResourceInfo(
        _RBAC,
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        False,
        CLUSTER_ROLE_BINDING_STRATEGY,
        BINDING_PRINTER,
        cluster_fields,
        storage_version="v1",
    ),
    ResourceInfo(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        False,
        ACCESS_REVIEW_STRATEGY,
        DEFAULT_PRINTER,
        cluster_fields,
        verbs=_CREATE_ONLY,
        storage_version="v1",
    ),
    ResourceInfo(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        False,
        RULES_REVIEW_STRATEGY,
        DEFAULT_PRINTER,
        cluster_fields,
        verbs=_CREATE_ONLY,
        storage_version="v1",
    ),
    ResourceInfo(
        "authentication.k8s.io",
        "v1",
        "selfsubjectreviews",
        "SelfSubjectReview",
        False,
        SELF_SUBJECT_REVIEW_STRATEGY,
        DEFAULT_PRINTER,
        cluster_fields,
        verbs=_CREATE_ONLY,
        storage_version="v1",
    ),
)


def builtin_resources(crd_hooks: CRDHooks | None = None) -> tuple[ResourceInfo, ...]:
    """Every built-in resource; CustomResourceDefinitions validate through ``crd_hooks``
    (the crd package's ``validate_crd`` and ``crd_status``)."""
    return (*_FIXED, crd_resource_info(crd_hooks))


#: Every built-in resource, CustomResourceDefinitions with no definition rules plugged in.
BUILTIN_RESOURCES: Final = builtin_resources()
