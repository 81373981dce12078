"""The state one logical cluster's verbs share, and the hooks other parts of the server plug in.

:class:`ClusterCore` is the base of the verb mixins (``rest_write``, ``rest_read``,
``deletion``) that :class:`numaplane.apiserver.rest.Cluster` combines; it holds the store, the
registry and the hooks, and declares the few methods one mixin calls on another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numaplane.apiserver import errors
from numaplane.apiserver.registry import Registry
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import (
    Object,
    RequestContext,
    RestResult,
    TokenIssuer,
    VirtualCreate,
    clone,
    forbidden_reason,
)
from numaplane.apiserver.storage import ClusterStore, ObjectKey

UnknownFields = Callable[[ResourceInfo, Object], list[str]]

#: Resources whose PUT creates a missing object (their strategies' ``AllowCreateOnUpdate``).
CREATE_ON_UPDATE = frozenset(
    {
        "serviceaccounts",
        "events",
        "events.events.k8s.io",
        "leases.coordination.k8s.io",
        "roles.rbac.authorization.k8s.io",
        "rolebindings.rbac.authorization.k8s.io",
        "clusterroles.rbac.authorization.k8s.io",
        "clusterrolebindings.rbac.authorization.k8s.io",
    }
)

#: The namespace phase of one being deleted.
TERMINATING = "Terminating"


def no_unknown_fields(info: ResourceInfo, obj: Object) -> list[str]:
    """The default unknown-field finder: none (the server wires discovery's and the CRDs')."""
    del info, obj
    return []


class ClusterCore:
    """What every verb of one logical cluster reads: its ``name``, ``store`` and ``registry``,
    plus the hooks the server installs (token issuing, virtual resources such as access
    reviews, the unknown-field finder of built-in kinds)."""

    name: str
    store: ClusterStore
    registry: Registry
    token_issuer: TokenIssuer | None
    virtual_creates: dict[str, VirtualCreate]
    unknown_fields: UnknownFields

    async def create(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        body: Object,
        subresource: str = "",
        name: str = "",
    ) -> RestResult:
        """Create an object (``rest_write``)."""
        raise NotImplementedError

    async def _create_subresource(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        body: Object,
        subresource: str,
        name: str,
    ) -> RestResult:
        """Create on a subresource (``rest_sub``)."""
        raise NotImplementedError

    async def update(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        name: str,
        body: Object,
        subresource: str = "",
    ) -> RestResult:
        """Replace an object (``rest_write``)."""
        raise NotImplementedError

    async def delete(
        self, ctx: RequestContext, info: ResourceInfo, namespace: str, name: str, options: Object
    ) -> RestResult:
        """Delete an object (``deletion``)."""
        raise NotImplementedError

    async def _delete_stored(
        self, ctx: RequestContext, info: ResourceInfo, key: ObjectKey, expect_rv: int | None
    ) -> Object:
        """Remove an object from the store now (``deletion``)."""
        raise NotImplementedError

    def _unknown(self, info: ResourceInfo, obj: Object) -> list[str]:
        """The unknown fields of ``obj``: what a CRD's pruning would remove (found on a copy),
        else the hook's answer for a built-in kind."""
        prune = info.extra.get("prune")
        if callable(prune):
            found: list[str] = prune(clone(obj))
            return found
        return self.unknown_fields(info, obj)

    def _check_namespace_open(self, info: ResourceInfo, namespace: str, name: str) -> None:
        """The NamespaceLifecycle admission plugin on create: the namespace must exist and not
        be terminating."""
        if not info.namespaced:
            return
        ns = self.store.get_latest(ObjectKey("namespaces", "", namespace))
        if ns is None:
            raise errors.not_found("namespaces", namespace)
        if ns.get("metadata", {}).get("deletionTimestamp") or (
            ns.get("status", {}).get("phase") == TERMINATING
        ):
            why = (
                f"unable to create new content in namespace {namespace} "
                "because it is being terminated"
            )
            error = forbidden_reason(info.group_resource, name, why)
            details: dict[str, Any] = error.details or {}
            details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise error
