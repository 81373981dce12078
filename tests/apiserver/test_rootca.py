"""The root CA publisher (``kube-root-ca.crt`` in every namespace) and the tokens
controller's cleanup of token Secrets whose ServiceAccount is gone, against a real store."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.rootca import DESCRIPTION, DESCRIPTION_ANNOTATION
from numaplane.apiserver.storage import ObjectKey
from tests.apiserver.rest_support import (
    BUILTINS,
    CONFIGMAPS,
    CTX,
    NAMESPACES,
    PODS,
    SECRETS,
    SERVICEACCOUNTS,
    obj,
    run_cluster,
)

pytestmark = pytest.mark.timeout(120)

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
ROOT = "kube-root-ca.crt"
TOKEN = "kubernetes.io/service-account-token"

Step = Callable[[Cluster], Awaitable[None]]


def root_ca_map(cluster: Cluster, namespace: str) -> dict[str, Any] | None:
    return cluster.store.get_latest(ObjectKey("configmaps", namespace, ROOT))


async def new_namespace(cluster: Cluster) -> None:
    await cluster.create(CTX, NAMESPACES, "", obj("Namespace", "team", namespace=""))


async def edit_map(cluster: Cluster, edit: Callable[[dict[str, Any]], None]) -> None:
    stored = root_ca_map(cluster, "team")
    assert stored is not None
    changed = copy.deepcopy(stored)
    edit(changed)
    await cluster.update(CTX, CONFIGMAPS, "team", ROOT, changed)


async def delete_map(cluster: Cluster) -> None:
    await cluster.delete(CTX, CONFIGMAPS, "team", ROOT, {})


def other_data(cm: dict[str, Any]) -> None:
    cm["data"] = {"ca.crt": "forged", "extra": "x"}
    cm["metadata"].setdefault("labels", {})["mine"] = "kept"


def no_description(cm: dict[str, Any]) -> None:
    cm["metadata"]["annotations"] = {"note": "kept"}


@dataclass(frozen=True)
class PublishCase:
    name: str
    steps: tuple[Step, ...]
    #: Extra metadata the restored ConfigMap keeps (labels or annotations a user added).
    kept_labels: dict[str, str] = field(default_factory=dict)
    kept_annotations: dict[str, str] = field(default_factory=dict)


async def change_data(cluster: Cluster) -> None:
    await edit_map(cluster, other_data)


async def drop_description(cluster: Cluster) -> None:
    await edit_map(cluster, no_description)


async def settle(cluster: Cluster) -> None:
    await cluster.settle()


PUBLISH = [
    PublishCase("created-with-the-namespace", (new_namespace,)),
    PublishCase("re-created-after-delete", (new_namespace, settle, delete_map)),
    PublishCase(
        "data-restored-labels-kept",
        (new_namespace, settle, change_data),
        kept_labels={"mine": "kept"},
    ),
    PublishCase(
        "description-restored-others-kept",
        (new_namespace, settle, drop_description),
        kept_annotations={"note": "kept"},
    ),
]


@pytest.mark.parametrize("case", PUBLISH, ids=[c.name for c in PUBLISH])
def test_root_ca_configmap_is_published(tmp_path: Path, case: PublishCase) -> None:
    async def body(cluster: Cluster) -> None:
        for step in case.steps:
            await step(cluster)
        await cluster.settle()
        cm = root_ca_map(cluster, "team")
        assert cm is not None
        assert cm["data"] == {"ca.crt": CA.decode()}
        annotations = cm["metadata"]["annotations"]
        assert annotations == {DESCRIPTION_ANNOTATION: DESCRIPTION, **case.kept_annotations}
        assert (cm["metadata"].get("labels") or {}) == case.kept_labels

    run_cluster(tmp_path, body, root_ca=CA)


def test_every_system_namespace_has_the_root_ca(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            cm = root_ca_map(cluster, ns)
            assert cm is not None, ns
            assert cm["data"]["ca.crt"] == CA.decode(), ns

    run_cluster(tmp_path, body, root_ca=CA)


def test_no_root_ca_without_a_ca(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await new_namespace(cluster)
        await cluster.settle()
        assert root_ca_map(cluster, "team") is None

    run_cluster(tmp_path, body)


def test_terminating_namespace_gets_no_new_root_ca(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await new_namespace(cluster)
        held = obj("Pod", "held", "team", spec={})
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await cluster.create(CTX, PODS, "team", held)
        await cluster.settle()
        assert root_ca_map(cluster, "team") is not None
        await cluster.delete(CTX, NAMESPACES, "", "team", {})
        await cluster.settle()
        # The namespace waits on the pod's finalizer; its ConfigMap was deleted with the
        # rest of the content and the publisher does not bring it back.
        ns = cluster.store.get_latest(ObjectKey("namespaces", "", "team"))
        assert ns is not None
        assert ns["status"]["phase"] == "Terminating"
        assert root_ca_map(cluster, "team") is None

    run_cluster(tmp_path, body, root_ca=CA)


def test_restart_publishes_in_namespaces_made_before(tmp_path: Path) -> None:
    run_cluster(tmp_path, new_namespace)

    async def body(cluster: Cluster) -> None:
        cm = root_ca_map(cluster, "team")
        assert cm is not None
        assert cm["data"]["ca.crt"] == CA.decode()

    run_cluster(tmp_path, body, root_ca=CA)


def token_secret(name: str, account: str | None, uid: str = "", kind: str = TOKEN) -> Any:
    annotations = {}
    if account is not None:
        annotations["kubernetes.io/service-account.name"] = account
    if uid:
        annotations["kubernetes.io/service-account.uid"] = uid
    body = obj("Secret", name, type=kind)
    if annotations:
        body["metadata"]["annotations"] = annotations
    return body


@dataclass(frozen=True)
class SecretSpec:
    """A Secret to create: ``account`` in its name annotation (None: none), ``uid``:
    ``"own"`` for the account's uid, another text as is, empty for no uid annotation."""

    name: str
    account: str | None
    uid: str = ""
    type: str = TOKEN


@dataclass(frozen=True)
class TokenCase:
    name: str
    accounts: tuple[str, ...]
    secrets: tuple[SecretSpec, ...]
    delete_accounts: tuple[str, ...]
    left: frozenset[str]


TOKENS = [
    TokenCase(
        "account-exists-kept",
        ("robot",),
        (SecretSpec("t", "robot"), SecretSpec("u", "robot", uid="own")),
        (),
        frozenset({"t", "u"}),
    ),
    TokenCase("account-missing-deleted", (), (SecretSpec("t", "ghost"),), (), frozenset()),
    TokenCase(
        "uid-of-another-account-deleted",
        ("robot",),
        (SecretSpec("t", "robot", uid="0000-stale"),),
        (),
        frozenset(),
    ),
    TokenCase(
        "not-a-token-kept",
        (),
        (SecretSpec("opaque", "ghost", type="Opaque"), SecretSpec("unnamed", None)),
        (),
        frozenset({"opaque", "unnamed"}),
    ),
    TokenCase(
        "account-deleted-its-tokens-go",
        ("robot", "other"),
        (
            SecretSpec("t", "robot"),
            SecretSpec("u", "robot", uid="own"),
            SecretSpec("keep", "other", uid="own"),
            SecretSpec("opaque", "robot", type="Opaque"),
        ),
        ("robot",),
        frozenset({"keep", "opaque"}),
    ),
]


async def create_case_objects(cluster: Cluster, case: TokenCase) -> None:
    uids: dict[str, str] = {}
    for account in case.accounts:
        created = await cluster.create(
            CTX, SERVICEACCOUNTS, "default", obj("ServiceAccount", account)
        )
        uids[account] = created.body["metadata"]["uid"]
    for spec in case.secrets:
        uid = uids.get(spec.account or "", "") if spec.uid == "own" else spec.uid
        await cluster.create(
            CTX, SECRETS, "default", token_secret(spec.name, spec.account, uid, spec.type)
        )


def secret_names(cluster: Cluster) -> frozenset[str]:
    return frozenset(s["metadata"]["name"] for s in cluster.store.list("secrets", "default")[0])


@pytest.mark.parametrize("case", TOKENS, ids=[c.name for c in TOKENS])
def test_token_secrets_of_missing_accounts_are_deleted(tmp_path: Path, case: TokenCase) -> None:
    async def body(cluster: Cluster) -> None:
        await create_case_objects(cluster, case)
        await cluster.settle()
        for account in case.delete_accounts:
            await cluster.delete(CTX, SERVICEACCOUNTS, "default", account, {})
        await cluster.settle()
        assert secret_names(cluster) == case.left

    run_cluster(tmp_path, body)


def test_restart_deletes_tokens_orphaned_while_stopped(tmp_path: Path) -> None:
    case = TOKENS[1]

    async def nothing(cluster: Cluster) -> None:
        del cluster

    run_cluster(tmp_path, nothing)  # the first start creates the namespace "default"

    async def stopped() -> None:
        cluster = await Cluster.open("test", tmp_path, builtins=BUILTINS, controllers=False)
        try:
            await create_case_objects(cluster, case)
            assert secret_names(cluster) == {"t"}
        finally:
            await cluster.close()

    asyncio.run(stopped())

    async def body(cluster: Cluster) -> None:
        assert secret_names(cluster) == case.left

    run_cluster(tmp_path, body)
