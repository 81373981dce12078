"""Installing Kueue's CustomResourceDefinitions on a cluster, as Kueue's installation manifest
does with ``kubectl apply``: each CRD is created when missing and replaced when it differs (a
newer numaplane brings newer definitions), then waited for until ``Established``."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any, Final

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError
from numaplane.kueue.crds import kueue_crds
from numaplane.kueue.errors import KueueError

log = logging.getLogger(__name__)

CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
CRDS: Final = "customresourcedefinitions"


def _established(crd: Mapping[str, Any]) -> bool:
    for condition in (crd.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Established":
            return bool(condition.get("status") == "True")
    return False


async def _apply(client: KubeClient, crd: dict[str, Any]) -> dict[str, Any]:
    name = str(crd["metadata"]["name"])
    try:
        current = await client.get(CRD_API_VERSION, CRDS, name)
    except ApiError as err:
        if not err.is_not_found:
            raise
        try:
            created = await client.create(CRD_API_VERSION, CRDS, crd)
            log.info("created CustomResourceDefinition %s", name)
            return created
        except ApiError as again:
            if not again.is_conflict:
                raise
            current = await client.get(CRD_API_VERSION, CRDS, name)
    if current.get("spec") == crd.get("spec"):
        return current
    body = {**crd, "metadata": {**crd["metadata"], **_kept(current)}}
    updated = await client.update(CRD_API_VERSION, CRDS, body)
    log.info("updated CustomResourceDefinition %s", name)
    return updated


def _kept(current: Mapping[str, Any]) -> dict[str, Any]:
    meta = current.get("metadata") or {}
    return {"resourceVersion": meta.get("resourceVersion")}


async def install_kueue_crds(client: KubeClient, *, timeout: float = 30.0) -> list[str]:
    """Create or update every Kueue CRD and wait until each is Established; their names.
    :class:`KueueError` when one does not become Established in ``timeout`` seconds."""
    names = []
    for crd in kueue_crds():
        applied = await _apply(client, crd)
        name = str(crd["metadata"]["name"])
        deadline = time.monotonic() + timeout
        delay = 0.05
        while not _established(applied):
            if time.monotonic() > deadline:
                raise KueueError(f"CustomResourceDefinition {name}: not Established")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
            applied = await client.get(CRD_API_VERSION, CRDS, name)
        names.append(name)
    return names
