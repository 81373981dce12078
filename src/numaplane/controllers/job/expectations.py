"""What the controller has asked of the API and not seen in its informers yet (upstream's
``ControllerExpectations`` and ``uidTrackingExpectations``): a Job whose creations or deletions
are still in flight is not managed again, so a burst of creates is never repeated from a stale
cache; pods whose finalizer removal is in flight are not counted twice.

All methods run on the event loop's thread (the informer handlers and the sync workers share
it), so no lock is needed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

#: ``ExpectationsTimeout``: an expectation never met (a lost watch event) stops blocking then.
EXPECTATIONS_TIMEOUT_S: Final = 300.0


@dataclass
class _Counts:
    add: int
    delete: int
    stamp: float


class ControllerExpectations:
    """Pending pod creations and deletions per Job key."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._counts: dict[str, _Counts] = {}

    def expect_creations(self, key: str, count: int) -> None:
        """``ExpectCreations``: ``count`` creations will be observed (replaces the record)."""
        self._counts[key] = _Counts(count, 0, self._clock())

    def expect_deletions(self, key: str, count: int) -> None:
        """``ExpectDeletions``: ``count`` deletions will be observed (replaces the record)."""
        self._counts[key] = _Counts(0, count, self._clock())

    def creation_observed(self, key: str) -> None:
        """``CreationObserved``: one creation seen (or given up)."""
        found = self._counts.get(key)
        if found is not None:
            found.add -= 1

    def deletion_observed(self, key: str) -> None:
        """``DeletionObserved``: one deletion seen (or given up)."""
        found = self._counts.get(key)
        if found is not None:
            found.delete -= 1

    def satisfied(self, key: str) -> bool:
        """``SatisfiedExpectations``: nothing pending, the record expired, or no record."""
        found = self._counts.get(key)
        if found is None:
            return True
        if found.add <= 0 and found.delete <= 0:
            return True
        return self._clock() - found.stamp > EXPECTATIONS_TIMEOUT_S

    def delete(self, key: str) -> None:
        """Forget the Job (deleted)."""
        self._counts.pop(key, None)


class FinalizerExpectations:
    """Pod uids whose tracking-finalizer removal was sent and not yet observed, per Job key."""

    def __init__(self) -> None:
        self._uids: dict[str, set[str]] = {}

    def expect_removed(self, key: str, uids: Iterable[str]) -> None:
        """``expectFinalizersRemoved``."""
        self._uids.setdefault(key, set()).update(uids)

    def removal_observed(self, key: str, uid: str) -> None:
        """``finalizerRemovalObserved``."""
        found = self._uids.get(key)
        if found is not None:
            found.discard(uid)
            if not found:
                del self._uids[key]

    def expected(self, key: str) -> frozenset[str]:
        """``getExpectedUIDs``: a snapshot."""
        return frozenset(self._uids.get(key, ()))

    def delete(self, key: str) -> None:
        """Forget the Job (deleted)."""
        self._uids.pop(key, None)
