"""Node selection: which of several nodes a pod is sent to before the kubelet decides.

Two rules, named as on the command line:

- ``first-fit``: the scheduler's view. The pod goes to the first node (trace order) whose
  allocatable resources still hold the pod's requests next to those of the pods it runs; that
  node's kubelet then admits or rejects it, and a rejected pod is not retried elsewhere. No
  node fitting is a rejection with reason ``Unschedulable``.
- ``numa-aware``: a scheduler that knows the Topology Manager. Among the nodes whose
  allocatable resources fit, in trace order, the first whose kubelet admits the pod keeps it (a
  kubelet rejection leaves nothing behind, so trying is free of side effects). When every
  fitting node rejects, the pod is rejected with the first node's reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from numaplane.api.pod import Pod
from numaplane.node.admission import Admission

__all__ = ["NODE_SELECTION", "UNSCHEDULABLE", "Candidate", "SelectFn", "first_fit", "numa_aware"]

UNSCHEDULABLE = "Unschedulable"


@dataclass
class Candidate:
    """A node as the scheduler sees it: allocatable and requested amounts per resource.

    Amounts are integers: millicores for ``cpu``, whole units otherwise.
    """

    name: str
    allocatable: dict[str, int]
    used: dict[str, int] = field(default_factory=dict)

    def fits(self, requests: Mapping[str, int]) -> bool:
        """Whether ``requests`` fit next to what the node's pods already request."""
        allocatable = self.allocatable
        used = self.used
        for name, amount in requests.items():
            cap = allocatable.get(name)
            if cap is None:
                # Unknown extended resources and hugepages fit nowhere; other native
                # resources (ephemeral-storage, ...) are outside the model.
                if "/" in name or name.startswith("hugepages-"):
                    return False
                continue
            if used.get(name, 0) + amount > cap:
                return False
        return True

    def take(self, requests: Mapping[str, int]) -> None:
        """Count an admitted pod's requests."""
        for name, amount in requests.items():
            self.used[name] = self.used.get(name, 0) + amount

    def give_back(self, requests: Mapping[str, int]) -> None:
        """Forget a released pod's requests."""
        for name, amount in requests.items():
            self.used[name] = self.used.get(name, 0) - amount


class AdmitFn(Protocol):
    """Runs the kubelet admission of ``pod`` on node number ``index``."""

    def __call__(self, index: int, pod: Pod) -> Admission: ...


SelectFn = Callable[
    [Sequence[Candidate], Pod, Mapping[str, int], AdmitFn],
    tuple[int | None, Admission | None],
]
"""``(candidates, pod, requests, admit) -> (node index or None, the deciding admission)``.

A ``None`` admission means no node fitted (``Unschedulable``)."""


def first_fit(
    candidates: Sequence[Candidate], pod: Pod, requests: Mapping[str, int], admit: AdmitFn
) -> tuple[int | None, Admission | None]:
    """The first node whose resources fit decides (see the module doc)."""
    for index, candidate in enumerate(candidates):
        if candidate.fits(requests):
            return index, admit(index, pod)
    return None, None


def numa_aware(
    candidates: Sequence[Candidate], pod: Pod, requests: Mapping[str, int], admit: AdmitFn
) -> tuple[int | None, Admission | None]:
    """The first fitting node whose kubelet admits the pod (see the module doc)."""
    first: tuple[int, Admission] | None = None
    for index, candidate in enumerate(candidates):
        if not candidate.fits(requests):
            continue
        result = admit(index, pod)
        if result.admitted:
            return index, result
        if first is None:
            first = (index, result)
    if first is None:
        return None, None
    return first


NODE_SELECTION: Mapping[str, SelectFn] = {"first-fit": first_fit, "numa-aware": numa_aware}
