"""The delay before a Job replaces failed pods, as upstream's ``backoff_utils.go``: per Job, the
failures since the last success and the time of the last failure; the delay after ``n``
consecutive failures is ``base · 2^(n-1)`` capped at ``cap``, counted from the last failure.

Upstream's constants are ``DefaultJobPodFailureBackOff`` (10 s) and ``MaxJobPodFailureBackOff``
(10 minutes in the current controller; the Job documentation still says six); both are
injectable here so tests need not wait.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from numaplane.controllers.job.podstate import finished_time

DEFAULT_BASE_S: Final = 10.0
DEFAULT_CAP_S: Final = 600.0


@dataclass(frozen=True)
class PodFailureBackoff:
    """The pod-failure backoff parameters."""

    base_s: float = DEFAULT_BASE_S
    cap_s: float = DEFAULT_CAP_S

    def delay(self, failures: int) -> float:
        """The full delay after ``failures`` consecutive failures (0 when none)."""
        if failures <= 0:
            return 0.0
        delay = self.base_s
        for _ in range(1, failures):
            delay *= 2
            if delay >= self.cap_s:
                return self.cap_s
        return delay

    def remaining(self, failures: int, last_failure: float | None, now: float) -> float:
        """``getRemainingTimeForFailuresCount``: how long is left of the delay at ``now``."""
        if failures <= 0 or last_failure is None:
            return 0.0
        elapsed = now - last_failure
        delay = self.delay(failures)
        return 0.0 if delay < elapsed else delay - elapsed


@dataclass(frozen=True)
class BackoffRecord:
    """``backoffRecord``: failures after the last success and when the last one happened."""

    key: str
    failures_after_last_success: int = 0
    last_failure_time: float | None = None


def next_record(
    previous: BackoffRecord,
    new_succeeded: Sequence[Mapping[str, Any]],
    new_failed: Sequence[Mapping[str, Any]],
) -> BackoffRecord:
    """``newBackoffRecord``: ``previous`` advanced by pods newly finished since it: failures
    add up; a success resets the count to the failures that finished after it."""
    if not new_succeeded and not new_failed:
        return previous
    failed_times = sorted(finished_time(p) for p in new_failed)
    if not new_succeeded:
        return replace(
            previous,
            failures_after_last_success=previous.failures_after_last_success + len(failed_times),
            last_failure_time=failed_times[-1],
        )
    last_success = max(finished_time(p) for p in new_succeeded)
    after = [t for t in failed_times if t > last_success]
    return replace(
        previous,
        failures_after_last_success=len(after),
        last_failure_time=after[-1] if after else None,
    )


class BackoffStore:
    """The records of every Job, by key (``backoffStore``), kept in memory as upstream does: a
    restarted controller starts them afresh."""

    def __init__(self) -> None:
        self._records: dict[str, BackoffRecord] = {}

    def new_record(
        self,
        key: str,
        new_succeeded: Sequence[Mapping[str, Any]],
        new_failed: Sequence[Mapping[str, Any]],
    ) -> BackoffRecord:
        """The record the Job would have after this sync (not stored yet)."""
        return next_record(self._records.get(key, BackoffRecord(key)), new_succeeded, new_failed)

    def update(self, record: BackoffRecord) -> None:
        """Keep ``record`` (after the status that counts its pods was written)."""
        self._records[record.key] = record

    def remove(self, key: str) -> None:
        """Forget the Job's record (finished or deleted)."""
        self._records.pop(key, None)
