"""Two kube-controller-manager controllers about what a pod trusts and presents, run by
:class:`~numaplane.apiserver.garbagecollector.Controllers`:

- the root CA publisher (``pkg/controller/certificates/rootcacertpublisher``): a ConfigMap
  ``kube-root-ca.crt`` holding the cluster CA (``data["ca.crt"]``) in every namespace, which
  the ``kube-api-access`` projected volume of every pod reads. It is created when missing,
  and its ``data`` and description annotation are put back when someone changes them (other
  annotations, labels and ``binaryData`` are left alone, as upstream leaves them); it is not
  created in a terminating namespace (the create is refused there);
- the tokens controller's cleanup (``pkg/controller/serviceaccount/tokens_controller.go``):
  a ``kubernetes.io/service-account-token`` Secret whose ServiceAccount (by name, and by uid
  when the Secret names one) does not exist is deleted, with the Secret's uid as a
  precondition.

Both read the latest state from the store and write through the REST verbs, so a step may run
any number of times.
"""

from __future__ import annotations

import contextlib
from typing import Final

from numaplane.apiserver import errors
from numaplane.apiserver.lifecycle import CONTROLLER, served_info
from numaplane.apiserver.rest_common import Object, clone, meta
from numaplane.apiserver.rest_core import ClusterCore
from numaplane.apiserver.storage import ObjectKey

ROOT_CA_CONFIGMAP: Final = "kube-root-ca.crt"
ROOT_CA_KEY: Final = "ca.crt"
DESCRIPTION_ANNOTATION: Final = "kubernetes.io/description"
#: Upstream's text, word for word (clients may show it).
DESCRIPTION: Final = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)
TOKEN_SECRET_TYPE: Final = "kubernetes.io/service-account-token"
SA_NAME_ANNOTATION: Final = "kubernetes.io/service-account.name"
SA_UID_ANNOTATION: Final = "kubernetes.io/service-account.uid"


def token_secret_account(secret: Object) -> tuple[str, str] | None:
    """The ServiceAccount (name, uid; the uid may be empty) a token Secret belongs to, or
    None when ``secret`` is not a token Secret naming one (upstream's queue key refuses
    those, so the controller never acts on them)."""
    if secret.get("type") != TOKEN_SECRET_TYPE:
        return None
    annotations = secret.get("metadata", {}).get("annotations") or {}
    name = str(annotations.get(SA_NAME_ANNOTATION) or "")
    if not name:
        return None
    return name, str(annotations.get(SA_UID_ANNOTATION) or "")


def account_matches(account: Object | None, uid: str) -> bool:
    """Whether ``account`` exists and, when ``uid`` is given, has that uid (upstream's
    ``getServiceAccount``: a ServiceAccount re-created under the same name is another one)."""
    if account is None:
        return False
    return not uid or account.get("metadata", {}).get("uid") == uid


class RootCAAndTokens:
    """The root CA publisher and the token Secret cleanup of one cluster; the publisher does
    nothing when ``root_ca`` is None (a cluster opened without a CA, as some tests do)."""

    def __init__(self, cluster: ClusterCore, root_ca: bytes | None) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.root_ca = root_ca

    async def publish_root_ca(self, namespace: str) -> None:
        """``syncNamespace`` of the publisher: create ``kube-root-ca.crt`` in ``namespace``
        or put its data and description back."""
        if self.root_ca is None:
            return
        info = served_info(self.cluster, "configmaps")
        if info is None:
            return
        data = {ROOT_CA_KEY: self.root_ca.decode()}
        current = self.store.get_latest(ObjectKey("configmaps", namespace, ROOT_CA_CONFIGMAP))
        if current is None:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": ROOT_CA_CONFIGMAP,
                    "namespace": namespace,
                    "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
                },
                "data": data,
            }
            # A namespace gone or terminating refuses the create (NotFound, or Forbidden with
            # the NamespaceTerminating cause), which upstream does not retry either.
            with contextlib.suppress(errors.StatusError):
                await self.cluster.create(CONTROLLER, info, namespace, body)
            return
        annotations = current.get("metadata", {}).get("annotations") or {}
        if current.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
            return
        new = clone(current)
        new["data"] = data
        metadata = meta(new)
        metadata["annotations"] = {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}
        # A conflict means a newer write, whose event queues this step again.
        with contextlib.suppress(errors.StatusError):
            await self.cluster.update(CONTROLLER, info, namespace, ROOT_CA_CONFIGMAP, new)

    async def sync_token_secret(self, key: ObjectKey) -> None:
        """``syncSecret`` of the tokens controller: delete the token Secret at ``key`` when
        its ServiceAccount does not exist (looked up live, as upstream does before deleting)."""
        secret = self.store.get_latest(key)
        if secret is None:
            return
        account = token_secret_account(secret)
        if account is None:
            return
        name, uid = account
        found = self.store.get_latest(ObjectKey("serviceaccounts", key.namespace, name))
        if account_matches(found, uid):
            return
        await self._delete_token(key, str(secret.get("metadata", {}).get("uid", "")))

    async def delete_tokens_of(self, namespace: str, name: str, uid: str) -> None:
        """``syncServiceAccount`` for a deleted ServiceAccount: delete the token Secrets that
        name it (by name, and by uid where a Secret names one)."""
        found = self.store.get_latest(ObjectKey("serviceaccounts", namespace, name))
        if found is not None and found.get("metadata", {}).get("uid") == uid:
            return  # still there (the event was stale)
        for secret in self.store.list("secrets", namespace)[0]:
            account = token_secret_account(secret)
            if account is None or account[0] != name or account[1] not in ("", uid):
                continue
            metadata = secret.get("metadata", {})
            key = ObjectKey("secrets", namespace, str(metadata.get("name", "")))
            await self._delete_token(key, str(metadata.get("uid", "")))

    async def _delete_token(self, key: ObjectKey, uid: str) -> None:
        info = served_info(self.cluster, "secrets")
        if info is None:
            return
        options: Object = {"preconditions": {"uid": uid}} if uid else {}
        # NotFound: already gone; Conflict: the uid precondition failed (another Secret now
        # has the name). Upstream retries neither.
        with contextlib.suppress(errors.StatusError):
            await self.cluster.delete(CONTROLLER, info, key.namespace, key.name, options)
