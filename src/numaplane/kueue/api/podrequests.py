"""A pod's requests as Kueue charges them: upstream's ``PodRequests`` (``pkg/resources/
podrequests.go`` over ``k8s.io/component-helpers`` ``PodRequests``) after
``UseLimitsAsMissingRequestsInPod`` and ``DefaultPodLevelRequests`` (``pkg/workload/
resources.go``): container limits stand in for missing container requests, and a pod-level
limit for a pod-level request only where no container requests that resource.

Quantities are summed exactly and turned into Kueue's integers once, at the end, as upstream
converts the summed ``ResourceList``: two containers of ``0.5m`` CPU are charged ``1m``, not
``2m``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from numaplane.api.quantity import Quantity
from numaplane.kueue.api.reader import FieldReader
from numaplane.kueue.resources import resource_value

_ALWAYS: Final = "Always"

#: Resources a pod-level ``resources.requests`` may set (component-helpers
#: ``IsSupportedPodLevelResource``: cpu, memory and hugepages).
_POD_LEVEL: Final = frozenset({"cpu", "memory"})


def _pod_level_supported(name: str) -> bool:
    return name in _POD_LEVEL or name.startswith("hugepages-")


def _add(total: dict[str, Quantity], more: Mapping[str, Quantity]) -> None:
    for name, q in more.items():
        have = total.get(name)
        total[name] = q if have is None else have + q


def _max_into(total: dict[str, Quantity], other: Mapping[str, Quantity]) -> None:
    for name, q in other.items():
        have = total.get(name)
        if have is None or have < q:
            total[name] = q


def _container_requests(
    r: FieldReader, container: Mapping[str, Any], path: str
) -> dict[str, Quantity]:
    resources = r.mapping(container.get("resources"), f"{path}.resources")
    requests = r.resource_list(resources.get("requests"), f"{path}.resources.requests")
    limits = r.resource_list(resources.get("limits"), f"{path}.resources.limits")
    for name, q in limits.items():
        # UseLimitsAsMissingRequestsInPod: a limit stands in for a request left unset.
        requests.setdefault(name, q)
    zero = Quantity.zero()
    # chargeableRequests: a negative request is charged as zero (the name stays).
    return {name: (q if q.sign() >= 0 else zero) for name, q in requests.items()}


def pod_requests(
    pod_spec: Mapping[str, Any], *, kind: str = "Pod", name: str = ""
) -> dict[str, int]:
    """The requests of one pod of ``pod_spec`` in Kueue's integers: upstream ``PodRequests``
    (containers summed, each init container taken as a floor together with the restartable
    init containers before it, sidecars added to the sum, pod-level requests replacing the
    container total for cpu/memory/hugepages, overhead added)."""
    r = FieldReader(kind, {"metadata": {"name": name}})
    return pod_spec_requests(r, pod_spec, "spec")


def pod_spec_requests(r: FieldReader, spec: Mapping[str, Any], path: str) -> dict[str, int]:
    """``pod_requests`` of the pod spec at ``path`` of the object ``r`` reads."""
    total: dict[str, Quantity] = {}
    containers = r.objects(spec.get("containers"), f"{path}.containers")
    for i, container in enumerate(containers):
        _add(total, _container_requests(r, container, f"{path}.containers[{i}]"))
    sidecars: dict[str, Quantity] = {}
    init_floor: dict[str, Quantity] = {}
    for i, container in enumerate(r.objects(spec.get("initContainers"), f"{path}.initContainers")):
        cpath = f"{path}.initContainers[{i}]"
        requests = _container_requests(r, container, cpath)
        if r.string(container.get("restartPolicy"), f"{cpath}.restartPolicy") == _ALWAYS:
            # A sidecar runs beside the app containers and beside every later init container.
            _add(total, requests)
            _add(sidecars, requests)
            _max_into(init_floor, sidecars)
        else:
            running = dict(requests)
            _add(running, sidecars)
            _max_into(init_floor, running)
    _max_into(total, init_floor)
    pod_resources = r.mapping(spec.get("resources"), f"{path}.resources")
    pod_level = r.resource_list(pod_resources.get("requests"), f"{path}.resources.requests")
    for name, q in r.resource_list(pod_resources.get("limits"), f"{path}.resources.limits").items():
        # DefaultPodLevelRequests: a missing pod-level request takes the containers' aggregate
        # (cpu, memory: nothing changes then) and only otherwise the pod-level limit.
        if name in total and not name.startswith("hugepages-"):
            continue
        pod_level.setdefault(name, q)
    for name, q in pod_level.items():
        if not _pod_level_supported(name):
            continue
        if q.sign() >= 0:
            total[name] = q
        else:
            # A negative pod-level request is dropped; the name stays charged at zero.
            total.setdefault(name, Quantity.zero())
    overhead = r.resource_list(spec.get("overhead"), f"{path}.overhead")
    zero = Quantity.zero()
    _add(total, {name: (q if q.sign() >= 0 else zero) for name, q in overhead.items()})
    # FloorToZero after the conversion: no request is negative.
    return {name: max(resource_value(name, q), 0) for name, q in total.items()}
