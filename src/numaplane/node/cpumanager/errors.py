"""Errors of the CPU manager.

Only ``SMTAlignmentError`` carries an admission reason; every other allocation failure is a
plain ``NodeError`` that admission reports as ``UnexpectedAdmissionError``, as upstream does.
"""

from __future__ import annotations

from numaplane.node.errors import AdmissionError

SMT_ALIGNMENT_ERROR = "SMTAlignmentError"


class SMTAlignmentError(AdmissionError):
    """``full-pcpus-only`` could not be honoured (upstream ``SMTAlignmentError``).

    Either the request is not a multiple of the threads per core, or (``caused_by_physical_cpus``)
    fewer CPUs remain on whole free cores than requested.
    """

    reason = SMT_ALIGNMENT_ERROR

    def __init__(
        self,
        requested_cpus: int,
        cpus_per_core: int,
        available_physical_cpus: int = 0,
        caused_by_physical_cpus: bool = False,
    ) -> None:
        self.requested_cpus = requested_cpus
        self.cpus_per_core = cpus_per_core
        self.available_physical_cpus = available_physical_cpus
        self.caused_by_physical_cpus = caused_by_physical_cpus
        if caused_by_physical_cpus:
            message = (
                "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                f"{available_physical_cpus}, requested CPUs = {requested_cpus}, "
                f"CPUs per core = {cpus_per_core}"
            )
        else:
            message = (
                f"SMT Alignment Error: requested {requested_cpus} cpus not multiple cpus per "
                f"core = {cpus_per_core}"
            )
        super().__init__(message, SMT_ALIGNMENT_ERROR)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SMTAlignmentError):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[int, int, int, bool]:
        return (
            self.requested_cpus,
            self.cpus_per_core,
            self.available_physical_cpus,
            self.caused_by_physical_cpus,
        )
