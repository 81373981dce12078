"""Kueue's error tree, rooted in :class:`numaplane.errors.NumaplaneError`."""

from __future__ import annotations

from numaplane.errors import InputError, NumaplaneError


class KueueError(NumaplaneError):
    """Base of every deliberate error of the Kueue subsystem."""


class KueueObjectError(KueueError):
    """A Kueue object (or Job) that cannot be read: ``str()`` names the object, the field and
    the reason in one line."""

    def __init__(self, kind: str, name: str, field: str, reason: str) -> None:
        self.kind = kind
        self.name = name
        self.field = field
        self.reason = reason
        super().__init__(f"{kind} {name}: {field}: {reason}")


class KueueConfigError(InputError, KueueError):
    """A Kueue ``Configuration`` file that is unusable (file, field, reason)."""
