"""The NUMA plugin's zone-level part: the stranded-CPU score and the estimate for a node whose
NodeResourceTopology has no snapshot (scheduler-plugins' NodeResourceTopologyMatch
``single-numa-node`` fit). ``numa``'s module doc defines both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.api.quantity import Quantity
from numaplane.controllers.scheduler.podinfo import PodInfo
from numaplane.errors import NumaplaneError
from numaplane.node.requests import CPU, MEMORY, scheduler_units

__all__ = [
    "PASS",
    "SINGLE_NUMA_NODE",
    "Prediction",
    "estimate",
    "score",
    "stranded",
    "unit",
    "zones_of",
]

SINGLE_NUMA_NODE: Final = "single-numa-node"


@dataclass(frozen=True)
class Prediction:
    """The NUMA filter's answer for one pod on one node: ``reason`` empty when it fits;
    ``score`` the NUMA score (0..100)."""

    reason: str
    score: int


PASS: Final = Prediction("", 0)


def stranded(free_per_zone: list[int], unit: int) -> int:
    """CPUs left that no further pod of ``unit`` exclusive CPUs can use (see the module doc)."""
    if unit <= 0:
        return 0
    return sum(f % unit for f in free_per_zone)


def unit(pod: PodInfo, scope: str) -> int:
    """The pod's exclusive-CPU unit under ``scope``: its smallest exclusive container, or
    under scope ``pod`` their sum; 0 without exclusive CPUs."""
    if not pod.exclusive_cpus:
        return 0
    return sum(pod.exclusive_cpus) if scope == "pod" else min(pod.exclusive_cpus)


def score(free: list[int], unit: int, cpus: int) -> int:
    """The NUMA score: ``100 * (cpus - stranded) // cpus``, 0 without a unit."""
    if unit <= 0 or cpus <= 0:
        return 0
    return 100 * (cpus - min(cpus, stranded(free, unit))) // cpus


def _units(name: str, value: object) -> int | None:
    try:
        return scheduler_units(name, Quantity.parse(str(value)))
    except NumaplaneError:
        return None


def estimate(pod: PodInfo, policy: str, scope: str, zones_in: list[dict[str, int]]) -> Prediction:
    """scheduler-plugins' ``single-numa-node`` zone fit of ``pod`` and the NUMA score."""
    if policy != SINGLE_NUMA_NODE or not zones_in:
        return PASS
    zones = [dict(z) for z in zones_in]
    spec = pod.obj.get("spec") or {}
    if scope == "pod":
        fit = _fit(zones, _requests_of(pod.requests, pod.guaranteed, zones))
        if fit is None:
            return Prediction("cannot align pod", 0)
        _take(zones[fit], _requests_of(pod.requests, pod.guaranteed, zones))
    else:
        for c in spec.get("initContainers") or []:
            if _fit(zones, _container_requests(c, pod.guaranteed, zones)) is None:
                return Prediction("cannot align init container", 0)
        for c in spec.get("containers") or []:
            need = _container_requests(c, pod.guaranteed, zones)
            fit = _fit(zones, need)
            if fit is None:
                return Prediction("cannot align container", 0)
            _take(zones[fit], need)
    free = [z.get(CPU, 0) // 1000 for z in zones]
    cpus = sum(z.get(CPU, 0) for z in zones_in) // 1000
    return Prediction("", score(free, unit(pod, scope), cpus))


def zones_of(obj: dict[str, Any]) -> list[dict[str, int]]:
    """Each ``Node`` zone's ``available`` resources, in scheduler units."""
    zones: list[dict[str, int]] = []
    for zone in obj.get("zones") or []:
        if zone.get("type", "Node") != "Node":
            continue
        available: dict[str, int] = {}
        for res in zone.get("resources") or []:
            name = str(res.get("name"))
            value = _units(name, res.get("available", 0))
            if value is not None:
                available[name] = value
        zones.append(available)
    return zones


def _numa_resource(name: str, guaranteed: bool, zones: list[dict[str, int]]) -> bool:
    if name in (CPU, MEMORY):
        return guaranteed
    return name.startswith("hugepages-") or any(name in z for z in zones)


def _requests_of(
    requests: Mapping[str, int], guaranteed: bool, zones: list[dict[str, int]]
) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, amount in requests.items():
        if amount <= 0 or not _numa_resource(name, guaranteed, zones):
            continue
        if name == CPU and amount % 1000:
            # Fractional cpu stays in the shared pool: not NUMA-bound.
            continue
        out[name] = amount
    return out


def _container_requests(
    container: dict[str, Any], guaranteed: bool, zones: list[dict[str, int]]
) -> dict[str, int]:
    raw = (container.get("resources") or {}).get("requests") or {}
    parsed = {name: _units(name, value) for name, value in raw.items()}
    return _requests_of({k: v for k, v in parsed.items() if v is not None}, guaranteed, zones)


def _fit(zones: list[dict[str, int]], need: Mapping[str, int]) -> int | None:
    for i, zone in enumerate(zones):
        if all(zone.get(name, 0) >= amount for name, amount in need.items()):
            return i
    return None


def _take(zone: dict[str, int], need: Mapping[str, int]) -> None:
    for name, amount in need.items():
        zone[name] = zone.get(name, 0) - amount
