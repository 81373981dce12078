"""Stale-state cleanup shared by the CPU, memory and device managers.

Upstream's CPU and memory managers run ``removeStaleState`` before hints and allocation: every
container that holds resources but belongs to no active pod (the pods the kubelet runs, plus the
pod being admitted) is released. The device manager's ``UpdateAllocatedDevices`` does the same
per pod. ``ActivePods`` is how a manager learns the active pods: a callable answering, for each
active pod's UID, the names of its init and app containers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from numaplane.api.pod import Pod

ActiveContainers = Mapping[str, frozenset[str]]
"""Pod UID -> names of the pod's init and app containers."""

ActivePods = Callable[[], ActiveContainers]
"""Answers the active pods' containers (upstream ``ActivePodsFunc``, by UID and name)."""


def active_containers(pods: Iterable[Pod]) -> dict[str, frozenset[str]]:
    """The containers of ``pods`` by pod UID (pods sharing a UID pool their names)."""
    active: dict[str, frozenset[str]] = {}
    for pod in pods:
        names = active.get(pod.uid)
        active[pod.uid] = pod.container_names if names is None else names | pod.container_names
    return active


def stale_containers(
    held: Mapping[str, Iterable[str]], active: ActiveContainers
) -> list[tuple[str, str]]:
    """``(pod UID, container name)`` of every held container outside ``active``, in the order
    of ``held``."""
    get = active.get
    stale: list[tuple[str, str]] = []
    for pod_uid, containers in held.items():
        names = get(pod_uid)
        if names is None:
            stale.extend((pod_uid, name) for name in containers)
        elif not names.issuperset(containers):
            stale.extend((pod_uid, name) for name in containers if name not in names)
    return stale


def stale_pods(held: frozenset[str], active: ActiveContainers) -> list[str]:
    """UIDs of the held pods that are not active, sorted."""
    stale = held.difference(active)
    return sorted(stale) if stale else []
