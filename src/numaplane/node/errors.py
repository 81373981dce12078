"""Errors of the node engine, with the kubelet's admission reasons.

``AdmissionError`` is what upstream models as an error with a ``Type()`` method: admission turns
it into a rejection with ``reason`` = that type and ``message`` = ``str(err)``. Every other
``NodeError`` raised by a resource manager surfaces, as upstream, as
``UnexpectedAdmissionError`` with "Allocate failed due to <err>, which is unexpected".
"""

from __future__ import annotations

from numaplane.errors import NumaplaneError


class NodeError(NumaplaneError):
    """A plain error of the node engine (upstream: an ``error`` without ``Type()``)."""


class AdmissionError(NodeError):
    """An error that carries a kubelet admission reason (upstream: has ``Type()``)."""

    reason: str = "UnexpectedAdmissionError"

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class TopologyAffinityError(AdmissionError):
    """The merged hint does not satisfy the policy (upstream ``TopologyAffinityError``)."""

    reason = "TopologyAffinityError"

    def __init__(self) -> None:
        super().__init__("Resources cannot be allocated with Topology locality")


class ConfigurationError(NodeError):
    """A manager cannot be built or started with the given configuration or state."""


UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"


def admit_result_of(err: BaseException) -> tuple[str, str]:
    """``(reason, message)`` the kubelet reports for an allocation error (``GetPodAdmitResult``)."""
    if isinstance(err, AdmissionError):
        return err.reason, str(err)
    return UNEXPECTED_ADMISSION_ERROR, f"Allocate failed due to {err}, which is unexpected"
