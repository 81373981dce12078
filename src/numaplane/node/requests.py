"""A pod's requests in the units each part of the engine counts in, converted in one place.

Every manager reads a pod's ``resources`` differently, as upstream does, and this module holds
each of those readings so that none is written twice:

* the static CPU policy counts whole exclusive CPUs (``guaranteedCPUs``, ``podGuaranteedCPUs``);
* the static memory policy counts bytes of ``memory`` and ``hugepages-*`` from container
  *requests* (``getRequestedResources``, ``getPodRequestedResources``);
* the device manager counts devices from container *limits* (``getPodDeviceRequest``);
* the predicate admit handler counts the pod's effective requests in the scheduler's integer
  units: millicores for ``cpu``, whole units (bytes, devices) for everything else.

The pod-level formulas share one shape (``aggregate_container_resources`` in ``api.pod``):
sidecars (restartable init containers) run next to everything started after them, a regular
init container runs next to the sidecars started before it only.
"""

from __future__ import annotations

from collections.abc import Callable

from numaplane.api.pod import Container, Pod, QOSClass
from numaplane.api.quantity import Quantity
from numaplane.node.errors import NodeError

CPU = "cpu"
MEMORY = "memory"
"""The resource name of regular memory."""
HUGEPAGES_PREFIX = "hugepages-"
"""The prefix of hugepage resource names (``hugepages-2Mi``, ``hugepages-1Gi``)."""

_INT64_MAX = (1 << 63) - 1

__all__ = [
    "HUGEPAGES_PREFIX",
    "MEMORY",
    "MemoryRequestError",
    "container_device_requests",
    "guaranteed_cpus",
    "is_memory_resource",
    "memory_requests",
    "pod_device_requests",
    "pod_guaranteed_cpus",
    "pod_memory_requests",
    "scheduler_requests",
    "scheduler_units",
]


class MemoryRequestError(NodeError):
    """A memory request is not a whole number of bytes within int64 (upstream's message).

    The memory manager reports it as its own allocation error.
    """


def is_memory_resource(name: str) -> bool:
    """Whether the memory manager handles ``name``: ``memory`` or ``hugepages-<size>``."""
    return name == MEMORY or name.startswith(HUGEPAGES_PREFIX)


# -- CPU manager -------------------------------------------------------------------------------


def guaranteed_cpus(pod: Pod, container: Container) -> int:
    """Exclusive CPUs the container gets: its whole CPU request in a Guaranteed pod, else 0
    (upstream ``guaranteedCPUs``).

    Pods with pod-level resources (cpu, memory or huge pages) stay on the shared pool, for hints
    and allocation alike: upstream's static policy skips them unless both the PodLevelResources
    and the (alpha) PodLevelResourceManagers gates are on, and numaplane does not model the
    latter.
    """
    if pod.qos_class != QOSClass.GUARANTEED or pod.has_pod_level_resources:
        return 0
    quantity = container.resources.requests.get(CPU)
    if quantity is None:
        return 0
    # "1500m" rounds up to 2 whole CPUs but is 1500 milli-CPUs: not integral, so shared.
    if quantity.value() * 1000 != quantity.milli_value():
        return 0
    return quantity.value()


def pod_guaranteed_cpus(pod: Pod) -> int:
    """Exclusive CPUs the whole pod needs at its peak (upstream ``podGuaranteedCPUs``).

    Containers without a CPU request are skipped; each container counts
    :func:`guaranteed_cpus`.
    """
    init_peak = 0
    sidecars = 0
    for container in pod.init_containers:
        if CPU not in container.resources.requests:
            continue
        cpus = guaranteed_cpus(pod, container)
        if container.is_restartable:
            sidecars += cpus
        else:
            init_peak = max(init_peak, sidecars + cpus)
    apps = sum(guaranteed_cpus(pod, c) for c in pod.containers if CPU in c.resources.requests)
    return max(init_peak, apps + sidecars)


# -- memory manager ----------------------------------------------------------------------------


def memory_requests(container: Container) -> dict[str, int]:
    """Bytes requested per memory resource (upstream ``getRequestedResources``).

    Raises ``MemoryRequestError`` when a request is not a whole number of bytes that fits
    an int64, with upstream's message.
    """
    requested: dict[str, int] = {}
    for name, quantity in container.resources.requests.items():
        if not is_memory_resource(name):
            continue
        exact = quantity.amount
        if exact.denominator != 1 or not -_INT64_MAX - 1 <= exact.numerator <= _INT64_MAX:
            raise MemoryRequestError("[memorymanager] failed to represent quantity as int64")
        requested[name] = exact.numerator
    return requested


def pod_memory_requests(pod: Pod) -> dict[str, int]:
    """What the pod needs at its peak, per memory resource (upstream
    ``getPodRequestedResources``).

    As upstream, only resources some app container requests appear in the result.
    """
    init_peak: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for container in pod.init_containers:
        for name, size in memory_requests(container).items():
            init_peak.setdefault(name, 0)
            if container.is_restartable:
                sidecars[name] = sidecars.get(name, 0) + size
            elif sidecars.get(name, 0) + size > init_peak[name]:
                init_peak[name] = sidecars.get(name, 0) + size
    apps: dict[str, int] = {}
    for container in pod.containers:
        for name, size in memory_requests(container).items():
            apps[name] = apps.get(name, 0) + size
    return {
        name: max(total + sidecars.get(name, 0), init_peak.get(name, 0))
        for name, total in apps.items()
    }


# -- device manager ----------------------------------------------------------------------------


def container_device_requests(
    container: Container, is_device_resource: Callable[[str], bool]
) -> dict[str, int]:
    """The container's device requests: its limits of device resources (requests = limits)."""
    return {
        name: quantity.value()
        for name, quantity in container.resources.limits.items()
        if is_device_resource(name)
    }


def pod_device_requests(pod: Pod, is_device_resource: Callable[[str], bool]) -> dict[str, int]:
    """The pod's device requests (upstream ``getPodDeviceRequest`` over ``PodLimits``).

    Without sidecars this is ``max(max over init containers, sum over app containers)``.
    """
    total = pod.aggregate_container_limits()
    return {name: q.value() for name, q in total.items() if is_device_resource(name)}


# -- predicate admit handler -------------------------------------------------------------------


def scheduler_units(resource: str, amount: Quantity) -> int:
    """``amount`` in the scheduler's integer units: millicores for ``cpu``, else ``Value()``."""
    return amount.milli_value() if resource == CPU else amount.value()


def scheduler_requests(pod: Pod, *, pod_level_resources: bool = True) -> dict[str, int]:
    """The pod's effective requests (``PodRequests``) in scheduler units, zero ones left out;
    ``pod_level_resources`` is the PodLevelResources feature gate."""
    return {
        name: scheduler_units(name, amount)
        for name, amount in pod.effective_requests(pod_level_resources=pod_level_resources).items()
        if amount.sign() > 0
    }
