"""Errors of machine discovery: every bad ``--machine`` input is one of these.

Each is an ``InputError``, so the CLI prints one line naming the input and exits 2.
"""

from __future__ import annotations

from numaplane.errors import InputError, escape_unprintable


class MachineInputError(InputError):
    """A ``--machine`` value cannot be turned into a machine.

    The input and the reason are echoed with control characters escaped (a newline typed into
    ``--machine`` shows as ``\\n``), so the message stays one line.
    """

    def __init__(self, source: str, reason: str, field: str | None = None) -> None:
        super().__init__(escape_unprintable(source), escape_unprintable(reason), field)


class UnknownMachineError(MachineInputError):
    """The value is no existing path, no synthetic shape and no preset name."""


class SysfsError(MachineInputError):
    """A directory is not a readable sysfs root (or holds unusable topology data)."""


class TarballError(MachineInputError):
    """A gathered-topology archive cannot be read or unpacked safely."""


class CaptureLimitError(MachineInputError):
    """A capture is larger than discovery reads (a file, the files in all, an archive, an id).

    ``source`` names the file or archive; the reason names the limit that was hit.
    """


class HwlocXMLError(MachineInputError):
    """An hwloc XML export is malformed or lacks what a machine needs."""


class SyntheticSpecError(MachineInputError):
    """A synthetic shape (``sockets=2,cores-per-numa=8,...``) is malformed."""
