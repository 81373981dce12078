"""Orphan garbage collection (upstream ``remoteClient.runGC``): the remote Workloads a manager
created on a connected worker whose local Workload is gone, deleted with their Job."""

from __future__ import annotations

import logging
from collections.abc import Callable

from numaplane.kube.informer import object_key
from numaplane.kueue.runtime.multikueue.remote import RemoteCluster, remove_remote_objects

log = logging.getLogger(__name__)


async def collect_orphans(
    rc: RemoteCluster, is_local_gone: Callable[[str], bool], origin: str
) -> int:
    """Delete the remote Workloads of ``rc`` (those its informer holds: our origin label) whose
    local Workload ``ns/name`` is gone, each after its controlling batch/v1 Job when that Job
    carries our origin (a foreign Job is never touched); how many were deleted. A disconnected
    cluster is skipped."""
    client, workloads = rc.client, rc.workloads
    if not rc.connected or client is None or workloads is None:
        return 0
    deleted = 0
    for remote in workloads.list():
        key = object_key(remote)
        if not is_local_gone(key):
            continue
        meta = remote.get("metadata") or {}
        owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
        job = None
        if owner is not None and (owner.get("apiVersion"), owner.get("kind")) == (
            "batch/v1",
            "Job",
        ):
            job = str(owner.get("name") or "") or None
        log.info("multikueue cluster %s: collecting orphan %s", rc.name, key)
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        await remove_remote_objects(client, namespace, name, job, origin)
        deleted += 1
    return deleted
