"""Where a MultiKueueCluster's kubeconfig comes from: a Secret in Kueue's namespace (key
``kubeconfig``) or a file (checked against the allowed prefix), read and checked by
:mod:`numaplane.kueue.multikueue.kubeconfig`; and the ``stat`` stamp a file poll compares."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from numaplane.kube.config import KubeConfig
from numaplane.kueue.multikueue import kubeconfig as kc

Obj = dict[str, Any]
#: What a file poll compares: (mtime, ctime, size, inode), or None for no file.
FileStamp = tuple[int, int, int, int] | None


def kubeconfig_location(cluster: Obj) -> tuple[str, str] | None:
    """``(location, locationType)`` of a MultiKueueCluster's kubeconfig (v1beta2
    ``spec.clusterSource.kubeConfig``, v1beta1 ``spec.kubeConfig``), or None."""
    spec = cluster.get("spec") or {}
    ref = (spec.get("clusterSource") or {}).get("kubeConfig") or spec.get("kubeConfig")
    if not ref:
        return None
    return str(ref.get("location") or ""), str(ref.get("locationType") or kc.LOCATION_SECRET)


def uses_cluster_profile(cluster: Obj) -> bool:
    """Whether a MultiKueueCluster names a ClusterProfile instead of a kubeconfig."""
    spec = cluster.get("spec") or {}
    source = spec.get("clusterSource") or {}
    return bool(source.get("clusterProfileRef") or spec.get("clusterProfileRef"))


def file_stamp(path: str) -> FileStamp:
    """What changes when ``path`` is written, replaced or removed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def load_cluster_config(
    cluster: Obj,
    secret: Callable[[str], Obj | None],
    *,
    namespace: str,
    validate_paths: bool = True,
    path_prefix: str = kc.DEFAULT_PATH_PREFIX,
) -> KubeConfig:
    """The checked kubeconfig of MultiKueueCluster ``cluster`` (``secret(name)`` looks a Secret
    of ``namespace`` up), or :class:`~numaplane.kueue.multikueue.kubeconfig.KubeconfigRejected`
    with upstream's reason and message."""
    location = kubeconfig_location(cluster)
    if location is None:
        if uses_cluster_profile(cluster):
            # ClusterProfiles need FG MultiKueueClusterProfile (alpha, off), which numaplane
            # does not implement.
            raise kc.KubeconfigRejected(
                kc.REASON_CLUSTER_PROFILE_DISABLED,
                "MultiKueueClusterProfile feature gate is disabled",
            )
        raise kc.KubeconfigRejected(kc.REASON_BAD_KUBECONFIG, "kubeconfig reference is nil")
    where, kind = location
    if kind != kc.LOCATION_PATH:
        text = kc.kubeconfig_from_secret(secret(where), where)
        return kc.parse_worker_kubeconfig(text, source=f"secret {namespace}/{where}")
    path = kc.resolve_kubeconfig_path(where, validate=validate_paths, prefix=path_prefix)
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError as err:
        raise kc.KubeconfigRejected(
            kc.REASON_BAD_KUBECONFIG, kc.os_error_message("open", path, err)
        ) from None
    return kc.parse_worker_kubeconfig(text, source=path)
