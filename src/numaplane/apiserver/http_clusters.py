"""What the server installs in each logical cluster it opens, joining the REST layer to
authentication and authorization: the ServiceAccount token issuer (TokenRequest and the tokens
controller's Secret filling), the self-review APIs (``kubectl auth can-i`` / ``whoami``), the
unknown-field finder of strict field validation, the cluster's RBAC authorizer, and the
bootstrap RBAC policy reconciled on every start.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numaplane.apiserver import errors
from numaplane.apiserver.auth.bootstrap import bootstrap_policy, reconcile
from numaplane.apiserver.auth.escalation import check_escalation
from numaplane.apiserver.auth.rbac import RBACAuthorizer
from numaplane.apiserver.auth.reviews import (
    self_subject_access_review,
    self_subject_review,
    self_subject_rules_review,
)
from numaplane.apiserver.auth.serviceaccount import TokenSigner
from numaplane.apiserver.auth.tokenrequest import fill_service_account_token_secret, issue_token
from numaplane.apiserver.openapi_fields import unknown_fields
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.rest_common import RequestContext
from numaplane.apiserver.storage import ObjectKey
from numaplane.apiserver.user import MASTERS_GROUP, UserInfo

Object = dict[str, Any]
Lookup = Callable[[str, str, str], Object | None]

RBAC_RESOURCES = (
    "roles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "clusterroles.rbac.authorization.k8s.io",
    "clusterrolebindings.rbac.authorization.k8s.io",
)
#: Who the server acts as when it writes its own objects (the bootstrap policy).
SYSTEM_USER = UserInfo("system:apiserver", (MASTERS_GROUP, "system:authenticated"))
#: Tries per default object when another writer races the reconciliation (upstream's
#: ``retry.RetryOnConflict`` with the default backoff: five steps).
BOOTSTRAP_RETRIES = 5


class LazyLookup:
    """``lookup(group_resource, namespace, name)`` over a cluster set once it is open."""

    def __init__(self) -> None:
        self.cluster: Cluster | None = None

    def __call__(self, group_resource: str, namespace: str, name: str) -> Object | None:
        if self.cluster is None:
            return None
        return self.cluster.store.get(ObjectKey(group_resource, namespace, name))


class ClusterTokenIssuer:
    """The REST layer's ``TokenIssuer`` for one logical cluster: tokens name the cluster, so a
    token of one cluster never authenticates in another."""

    def __init__(self, signer: TokenSigner, cluster: str, ca_pem: bytes, lookup: Lookup):
        self.signer = signer
        self.cluster = cluster
        self.ca_pem = ca_pem
        self.lookup = lookup

    def fill_secret(self, secret: Object, service_account: Object) -> Object:
        """The tokens controller's filling of a ``kubernetes.io/service-account-token``."""
        namespace = str((secret.get("metadata") or {}).get("namespace", ""))
        return fill_service_account_token_secret(
            secret,
            service_account,
            self.ca_pem,
            namespace,
            signer=self.signer,
            cluster=self.cluster,
        )

    def token_request(self, service_account: Object, request: Object) -> Object:
        """``serviceaccounts/NAME/token``."""
        meta = service_account.get("metadata") or {}
        return issue_token(
            self.signer,
            self.cluster,
            str(meta.get("namespace", "")),
            str(meta.get("name", "")),
            request,
            self.lookup,
        )


def cluster_authorizer(cluster: Cluster) -> RBACAuthorizer:
    """The RBAC authorizer over ``cluster``'s RBAC objects, recompiled only when they change."""
    store = cluster.store

    def list_objects(group_resource: str) -> list[Object]:
        return store.list(group_resource)[0]

    def revision() -> int:
        # A hash of the RBAC objects' count and newest resourceVersion per resource: writes of
        # other kinds (nearly all of them) leave the compiled policy in place.
        marks = []
        for resource in RBAC_RESOURCES:
            items = store.list(resource)[0]
            newest = max((int(o["metadata"].get("resourceVersion", 0)) for o in items), default=0)
            marks.append((len(items), newest))
        return hash(tuple(marks))

    return RBACAuthorizer(list_objects, revision)


def install_reviews(cluster: Cluster, authorizer: RBACAuthorizer) -> None:
    """Serve the self-review APIs of ``cluster`` (create-only, nothing stored)."""

    async def access(ctx: RequestContext, body: Object) -> Object:
        return self_subject_access_review(ctx.user, body, authorizer)

    async def rules(ctx: RequestContext, body: Object) -> Object:
        return self_subject_rules_review(ctx.user, body, authorizer)

    async def whoami(ctx: RequestContext, body: Object) -> Object:
        return self_subject_review(ctx.user, body)

    cluster.virtual_creates["selfsubjectaccessreviews.authorization.k8s.io"] = access
    cluster.virtual_creates["selfsubjectrulesreviews.authorization.k8s.io"] = rules
    cluster.virtual_creates["selfsubjectreviews.authentication.k8s.io"] = whoami


async def ensure_bootstrap_policy(cluster: Cluster) -> None:
    """Reconcile the default ClusterRoles and ClusterRoleBindings on every start, as
    kube-apiserver's bootstrap hook (``storage_rbac.go``) does: create what is missing, add back
    the rules, selectors, subjects, labels and annotations a default object lost (unless it is
    annotated ``autoupdate: "false"``), recreate a binding whose roleRef changed."""
    ctx = RequestContext(user=SYSTEM_USER, field_manager="kube-apiserver")
    for group_resource, obj in bootstrap_policy():
        plural, _, api_group = group_resource.partition(".")
        info = cluster.registry.lookup(api_group, "v1", plural)
        if info is None:
            continue
        # Upstream retries each object on a conflict (another writer between read and update).
        for _ in range(BOOTSTRAP_RETRIES):
            try:
                await _reconcile_one(cluster, ctx, info, obj)
            except errors.StatusError as err:
                if err.reason in ("Conflict", "AlreadyExists", "NotFound"):
                    continue
                raise
            break


async def _reconcile_one(
    cluster: Cluster, ctx: RequestContext, info: ResourceInfo, expected: Object
) -> None:
    name = expected["metadata"]["name"]
    existing = cluster.store.get(ObjectKey(info.group_resource, "", name))
    if existing is None:
        await cluster.create(ctx, info, "", copy.deepcopy(expected))
        return
    outcome = reconcile(expected, existing)
    if outcome is None:
        return
    if outcome.action == "recreate":
        uid = existing["metadata"].get("uid", "")
        await cluster.delete(ctx, info, "", name, {"preconditions": {"uid": uid}})
        await cluster.create(ctx, info, "", copy.deepcopy(outcome.object))
        return
    await cluster.update(ctx, info, "", name, copy.deepcopy(outcome.object))


def refuse_escalation(
    user: UserInfo, obj: Object, authorizer: RBACAuthorizer, old: Object | None
) -> None:
    """Upstream's RBAC escalation check on a create or update of a Role, ClusterRole or
    binding: raise its 403 when ``user`` would gain rights it does not hold."""
    refusal = check_escalation(user, obj, authorizer, old)
    if refusal is not None:
        raise refusal


async def open_cluster(
    name: str, data_dir: Path, signer: TokenSigner, ca_pem: bytes
) -> tuple[Cluster, RBACAuthorizer]:
    """Open logical cluster ``name`` with everything the server installs in it."""
    lookup = LazyLookup()
    issuer = ClusterTokenIssuer(signer, name, ca_pem, lookup)
    cluster = await Cluster.open(
        name, data_dir, token_issuer=issuer, unknown_fields=unknown_fields, root_ca=ca_pem
    )
    lookup.cluster = cluster
    authorizer = cluster_authorizer(cluster)
    install_reviews(cluster, authorizer)
    try:
        await ensure_bootstrap_policy(cluster)
    except BaseException:
        await cluster.close()
        raise
    return cluster, authorizer
