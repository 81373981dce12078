"""The kubelet's predicate admit handler, run after the Topology Manager (spec §14).

Upstream ``lifecycle/predicate.go`` with the scheduler's ``noderesources`` fit check it calls:

* node allocatable is ``capacity - kubeReserved - systemReserved - hard eviction thresholds``
  per resource, and for ``memory`` also minus every pre-allocated huge page pool (all sizes),
  as node status reports it (:func:`node_allocatable`);
* the pod's requests are its effective requests (``PodRequests``) in the scheduler's units,
  with every *extended* resource the node does not report dropped first
  (``removeMissingExtendedResources``): such a pod is admitted, and the device manager ignores
  resources no plugin registered (:func:`fit_requests`);
* the fit check runs ``cpu``, ``memory``, ``ephemeral-storage``, then the scalar resources
  (extended, ``hugepages-*``, ``kubernetes.io/``-prefixed, attachable volumes), and the kubelet
  reports only the first failure: reason ``OutOf<resource>``, message ``Node didn't have enough
  resource: <resource>, requested: R, used: U, capacity: C`` (:func:`first_insufficient`).
  Upstream walks the scalar resources in Go map order; numaplane sorts them by name.

Not modelled: the pod-count check (numaplane's configuration has no ``maxPods``), and
``ephemeral-storage`` and other resources the node does not report (numaplane's machines report
none), which are not checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from numaplane.api.pod import Pod
from numaplane.api.quantity import Quantity
from numaplane.api.resourcenames import NATIVE_NAMESPACE, is_extended_resource_name
from numaplane.node.requests import CPU, HUGEPAGES_PREFIX, MEMORY, scheduler_units

EPHEMERAL_STORAGE = "ephemeral-storage"
OUT_OF_PREFIX = "OutOf"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_FIRST = (CPU, MEMORY, EPHEMERAL_STORAGE)


def is_scalar_resource(name: str) -> bool:
    """Whether the fit check counts ``name`` beyond cpu, memory and ephemeral storage
    (upstream ``IsScalarResourceName``)."""
    return (
        is_extended_resource_name(name)
        or name.startswith(HUGEPAGES_PREFIX)
        or NATIVE_NAMESPACE in name
        or name.startswith(_ATTACHABLE_VOLUMES_PREFIX)
    )


def node_allocatable(
    capacity: Mapping[str, Quantity], reservation: Mapping[str, Quantity]
) -> dict[str, Quantity]:
    """Node allocatable as node status reports it: capacity minus the reservation (floored at
    zero), and ``memory`` also minus the capacity of every huge page size."""
    out: dict[str, Quantity] = {}
    for name, total in capacity.items():
        value = total - reservation.get(name, Quantity.zero())
        out[name] = value if value > Quantity.zero() else Quantity.zero()
    if MEMORY in out:
        memory = out[MEMORY]
        for name, total in capacity.items():
            if name.startswith(HUGEPAGES_PREFIX):
                memory = memory - total
        out[MEMORY] = memory if memory > Quantity.zero() else Quantity.zero()
    return out


def fit_requests(
    pod: Pod, requests: Mapping[str, int], reports: Callable[[str], bool]
) -> Mapping[str, int]:
    """``requests`` (the pod's, from ``scheduler_requests``) without the extended resources
    the node does not report (``reports``: whether node allocatable lists a resource)."""
    missing = [
        name
        for name in requests
        if "/" in name and is_extended_resource_name(name) and not reports(name)
    ]
    if not missing:
        return requests
    out: dict[str, int] = {}
    for name, amount in requests.items():
        if name in missing:
            # Dropped from the containers' requests only: an overhead for it still counts.
            overhead = pod.overhead.get(name)
            if overhead is None or overhead.sign() <= 0:
                continue
            amount = scheduler_units(name, overhead)
        out[name] = amount
    return out


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """The first resource the pod does not fit (upstream ``InsufficientResourceError``)."""

    resource: str
    requested: int
    used: int
    capacity: int

    @property
    def reason(self) -> str:
        """``OutOf<resource>`` (``OutOfcpu``, ``OutOfmemory``, ``OutOfexample.com/gpu``)."""
        return f"{OUT_OF_PREFIX}{self.resource}"

    @property
    def message(self) -> str:
        """Upstream's message, word for word (capacity is allocatable)."""
        return (
            f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
            f"used: {self.used}, capacity: {self.capacity}"
        )


def check_order(requests: Mapping[str, int]) -> list[str]:
    """The requested resources the fit check looks at, in its order."""
    return [name for name in _FIRST if name in requests] + _scalar_names(requests)


def _scalar_names(requests: Mapping[str, int]) -> list[str]:
    return sorted(name for name in requests if name not in _FIRST and is_scalar_resource(name))


def first_insufficient(
    requests: Mapping[str, int],
    used: Mapping[str, int],
    allocatable: Mapping[str, int],
) -> InsufficientResource | None:
    """The first resource whose request exceeds ``allocatable - used``, in :func:`check_order`.

    A cpu, memory or ephemeral-storage figure the node does not report is not checked (not
    modelled); a scalar resource it does not report has zero allocatable.
    """
    for name in _FIRST:
        amount = requests.get(name)
        capacity = allocatable.get(name)
        # Not reported by the node: not modelled, not checked.
        if amount is not None and capacity is not None:
            in_use = used.get(name, 0)
            if amount > capacity - in_use:
                return InsufficientResource(name, amount, in_use, capacity)
    for name in _scalar_names(requests):
        capacity = allocatable.get(name, 0)
        amount = requests[name]
        in_use = used.get(name, 0)
        if amount > capacity - in_use:
            return InsufficientResource(name, amount, in_use, capacity)
    return None
