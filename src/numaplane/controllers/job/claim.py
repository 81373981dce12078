"""Which pods a Job controls (upstream's ``getPodsForJob`` with ``PodControllerRefManager``):
an index of the informer's pods by controlling Job, the pods a Job's selector no longer matches
released, matching orphans adopted with the tracking finalizer, after a fresh read shows the Job
is not being deleted."""

from __future__ import annotations

from numaplane.api.selectors import SelectorError, label_selector_from_dict
from numaplane.controllers.job.pods import adopt_patch
from numaplane.controllers.job.podstate import (
    TRACKING_FINALIZER,
    controller_ref,
    deleting,
    meta,
    uid,
)
from numaplane.controllers.job.runtime import Obj
from numaplane.kube import ApiError, KubeClient, KubeError


def _pod_key(pod: Obj) -> str:
    return f"{meta(pod).get('namespace') or ''}/{meta(pod).get('name') or ''}"


class PodIndex:
    """Pods by the uid of the Job that controls them, and orphans by namespace, kept by the
    pod handlers: a sync reads its Job's pods without scanning every pod of the cluster."""

    def __init__(self) -> None:
        self._owned: dict[str, dict[str, Obj]] = {}
        self._orphaned: dict[str, dict[str, Obj]] = {}

    def add(self, pod: Obj) -> None:
        """Index ``pod`` (as it is now)."""
        ref = controller_ref(pod)
        if ref is not None:
            self._owned.setdefault(str(ref.get("uid") or ""), {})[_pod_key(pod)] = pod
        else:
            self._orphaned.setdefault(str(meta(pod).get("namespace") or ""), {})[_pod_key(pod)] = (
                pod
            )

    def remove(self, pod: Obj) -> None:
        """Forget ``pod`` (as it was when indexed)."""
        ref = controller_ref(pod)
        if ref is not None:
            bucket = self._owned.get(str(ref.get("uid") or ""))
        else:
            bucket = self._orphaned.get(str(meta(pod).get("namespace") or ""))
        if bucket is not None:
            bucket.pop(_pod_key(pod), None)

    def owned_by(self, job_uid: str) -> list[Obj]:
        """The pods whose controller reference names ``job_uid``."""
        return list(self._owned.get(job_uid, {}).values())

    def orphans_in(self, namespace: str) -> list[Obj]:
        """The pods of ``namespace`` without a controller."""
        return list(self._orphaned.get(namespace, {}).values())


async def _can_adopt(client: KubeClient, job: Obj) -> bool:
    # RecheckDeletionTimestamp: an uncached read, so a Job being deleted adopts nothing.
    try:
        fresh = await client.get(
            "batch/v1", "jobs", str(meta(job).get("name")), meta(job).get("namespace")
        )
    except ApiError:
        return False
    return uid(fresh) == uid(job) and not deleting(fresh)


async def _adopt(client: KubeClient, job: Obj, pod: Obj) -> Obj | None:
    try:
        patched = await client.patch(
            "v1",
            "pods",
            str(meta(pod).get("name")),
            adopt_patch(job, pod),
            meta(pod).get("namespace"),
            patch_type="strategic",
        )
    except ApiError as err:
        if err.is_not_found or err.code in (409, 422):
            return None  # gone, or no longer the same pod
        raise
    finalizers = meta(patched).setdefault("finalizers", [])
    if TRACKING_FINALIZER not in finalizers:
        finalizers.append(TRACKING_FINALIZER)
    return patched


async def _release(client: KubeClient, job: Obj, pod: Obj) -> None:
    patch = {
        "metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid(job)}], "uid": uid(pod)}
    }
    try:
        await client.patch(
            "v1",
            "pods",
            str(meta(pod).get("name")),
            patch,
            meta(pod).get("namespace"),
            patch_type="strategic",
        )
    except ApiError as err:
        if not (err.is_not_found or err.code in (409, 422)):
            raise


async def claim_pods(client: KubeClient, index: PodIndex, job: Obj) -> list[Obj]:
    """``getPodsForJob``: the pods the Job controls and its selector still matches (the others
    released), plus the matching orphans it adopts (with the tracking finalizer)."""
    try:
        selector = label_selector_from_dict((job.get("spec") or {}).get("selector"))
    except SelectorError as err:
        raise KubeError(f"couldn't convert Job selector: {err}") from None
    namespace = str(meta(job).get("namespace") or "")
    claimed: list[Obj] = []
    for pod in index.owned_by(uid(job)):
        if meta(pod).get("namespace") != namespace:
            continue
        if selector.matches(meta(pod).get("labels") or {}) or deleting(job):
            claimed.append(pod)
        elif not deleting(pod):
            await _release(client, job, pod)
    candidates = [
        p
        for p in index.orphans_in(namespace)
        if not deleting(p)
        and not selector.empty()
        and selector.matches(meta(p).get("labels") or {})
    ]
    if candidates and not deleting(job) and await _can_adopt(client, job):
        for pod in candidates:
            adopted = await _adopt(client, job, pod)
            if adopted is not None:
                claimed.append(adopted)
    return claimed
