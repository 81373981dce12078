"""The admission steps of writes (upstream's default admission plugins and the controllers
whose work a write must see at once): pod admission (ServiceAccount, Priority,
DefaultTolerationSeconds), PriorityClass admission, the default account of a new namespace,
the token of a service-account Secret, a CRD's status, and the refusal of creates under a
terminating CRD."""

from __future__ import annotations

import contextlib
import dataclasses

from numaplane.apiserver import errors
from numaplane.apiserver.crd import crd_status
from numaplane.apiserver.kinds.admission import admit_pod
from numaplane.apiserver.kinds.kueuejob import (
    ADMISSION_CHECKS,
    CLUSTER_QUEUES,
    DEFAULT_LOCAL_QUEUE,
    LOCAL_QUEUES,
    MULTIKUEUE_CONTROLLER,
    admission_check_names,
    default_kueue_job,
    default_managed_by,
    queue_name,
)
from numaplane.apiserver.kinds.scheduling import admit_priority_class
from numaplane.apiserver.registry import CRD_RESOURCE
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import (
    Object,
    RequestContext,
    generate_name,
    meta,
    now_rfc3339,
)
from numaplane.apiserver.rest_core import ClusterCore
from numaplane.apiserver.storage import ObjectKey

PRIORITY_CLASSES = "priorityclasses.scheduling.k8s.io"


class AdmissionSteps(ClusterCore):
    """What a write runs beside the strategy (see the module docstring)."""

    #: Kueue's Job webhook in the create path (``--kueue-job-defaulting``).
    kueue_job_defaulting: bool = False

    def _admit(self, info: ResourceInfo, namespace: str, obj: Object, old: Object | None) -> None:
        """The default admission plugins that change or refuse objects: ServiceAccount,
        Priority and DefaultTolerationSeconds on new pods, Priority on PriorityClasses."""
        if info.group_resource == "pods" and old is None:
            account_name = obj.get("spec", {}).get("serviceAccountName") or "default"
            account = self.store.get_latest(ObjectKey("serviceaccounts", namespace, account_name))
            admit_pod(
                obj,
                namespace,
                service_account=account,
                priority_classes=self.store.list(PRIORITY_CLASSES)[0],
                token_volume_suffix=generate_name("")[-5:],
            )
        elif info.group_resource == PRIORITY_CLASSES:
            admit_priority_class(obj, self.store.list(PRIORITY_CLASSES)[0], old is None)
        elif info.group_resource == "jobs.batch" and old is None and self.kueue_job_defaulting:
            queue = self.store.get_latest(ObjectKey(LOCAL_QUEUES, namespace, DEFAULT_LOCAL_QUEUE))
            default_kueue_job(obj, default_local_queue=queue is not None)
            if self._multikueue_queue(namespace, queue_name(obj)):
                default_managed_by(obj)

    def _multikueue_queue(self, namespace: str, local_queue: str) -> bool:
        """Whether LocalQueue ``local_queue`` leads to a ClusterQueue with a MultiKueue
        AdmissionCheck (what Kueue's Job webhook asks its caches before defaulting
        ``managedBy``); False when any link is missing."""
        if not local_queue:
            return False
        lq = self.store.get_latest(ObjectKey(LOCAL_QUEUES, namespace, local_queue))
        cq_name = ((lq or {}).get("spec") or {}).get("clusterQueue")
        if not cq_name:
            return False
        cq = self.store.get_latest(ObjectKey(CLUSTER_QUEUES, "", str(cq_name)))
        if cq is None:
            return False
        for name in admission_check_names(cq):
            check = self.store.get_latest(ObjectKey(ADMISSION_CHECKS, "", name))
            if ((check or {}).get("spec") or {}).get("controllerName") == MULTIKUEUE_CONTROLLER:
                return True
        return False

    async def _default_service_account(self, ctx: RequestContext, ns: Object) -> None:
        """The service-account controller's ``default`` account of a new namespace, created at
        once (so that a pod created right after the namespace finds it)."""
        info = self.registry.lookup("", "v1", "serviceaccounts")
        name = ns.get("metadata", {}).get("name", "")
        if info is None or self.store.get_latest(ObjectKey("serviceaccounts", name, "default")):
            return
        account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}
        with contextlib.suppress(errors.StatusError):
            await self.create(dataclasses.replace(ctx, field_manager=""), info, name, account)

    def _crd_status(self, crd: Object) -> None:
        """What the naming and establishing controllers write: accepted names (unless another
        CRD of the group holds them), ``Established``, ``storedVersions``."""
        others, _ = self.store.list(CRD_RESOURCE)
        crd["status"] = crd_status(crd, now=now_rfc3339(), others=others)

    def _fill_token_secret(self, secret: Object) -> None:
        """The tokens controller's work, done at once so that a reader never sees a
        ``kubernetes.io/service-account-token`` Secret without its token."""
        if self.token_issuer is None:
            return
        if secret.get("type") != "kubernetes.io/service-account-token":
            return
        if (secret.get("data") or {}).get("token"):
            return
        metadata = meta(secret)
        annotations = metadata.get("annotations") or {}
        sa_name = annotations.get("kubernetes.io/service-account.name", "")
        sa = self.store.get_latest(
            ObjectKey("serviceaccounts", metadata.get("namespace", ""), sa_name)
        )
        if sa is None:
            return
        filled = self.token_issuer.fill_secret(secret, sa)
        secret.clear()
        secret.update(filled)
        meta(secret).setdefault("annotations", {})["kubernetes.io/service-account.uid"] = sa[
            "metadata"
        ].get("uid", "")

    def _refuse_terminating_crd(self, info: ResourceInfo, verb: str) -> None:
        crd = self.registry.crd_for(info.group_resource)
        if crd is not None and crd.get("metadata", {}).get("deletionTimestamp"):
            error = errors.method_not_supported(info.group_resource, verb)
            error.message = f"{verb} not allowed while custom resource definition is terminating"
            raise error
