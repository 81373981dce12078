"""Which worker clusters a reserved Workload is copied to (SPEC §3.5): ``AllAtOnce`` (every
connected cluster of the config), ``Incremental`` (upstream
``pkg/controller/workloaddispatcher/incrementaldispatcher.go``: rounds of ``stepSize`` clusters
in config order, a new round every 5 minutes) and external (some other controller writes
``status.nominatedClusterNames``; MultiKueue only follows it).

Pure: the incremental rounds live in a :class:`DispatchState` the controller owns and passes
in (in memory, lost on restart, as upstream's map).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from numaplane.kueue.configvalues import DISPATCHER_ALL_AT_ONCE, DISPATCHER_INCREMENTAL
from numaplane.kueue.multikueue.constants import (
    ERR_NO_MORE_WORKERS,
    INCREMENTAL_ROUND_S,
    INCREMENTAL_STEP_SIZE,
)

__all__ = [
    "DISPATCHER_ALL_AT_ONCE",
    "DISPATCHER_INCREMENTAL",
    "DispatchState",
    "Nomination",
    "Round",
    "all_at_once",
    "effective_step_size",
    "incremental",
    "next_clusters",
]


@dataclass(frozen=True, slots=True)
class Round:
    """One incremental round of a workload: when it started and the nominations it wrote."""

    started: float
    nominated: tuple[str, ...]


@dataclass(slots=True)
class DispatchState:
    """The incremental dispatcher's rounds, by workload ``namespace/name``."""

    rounds: dict[str, Round] = field(default_factory=dict)

    def forget(self, key: str) -> None:
        """Drop the round of ``key`` (workload gone, finished or no longer reserved)."""
        self.rounds.pop(key, None)


@dataclass(frozen=True, slots=True)
class Nomination:
    """A dispatcher's answer: the ``nominatedClusterNames`` the workload should carry, whether
    that differs from what it carries (a status write), when to look again, and an error that
    the controller retries with backoff (the nominations stay as they are)."""

    nominated: tuple[str, ...]
    changed: bool
    requeue_after: float | None = None
    error: str | None = None


def all_at_once(available: Iterable[str], current: Sequence[str]) -> Nomination:
    """``AllAtOnce``: every available cluster, sorted by name; written only when the set
    differs from ``current`` (order does not count)."""
    nominated = tuple(sorted(set(available)))
    return Nomination(nominated, sorted(set(current)) != list(nominated))


def effective_step_size(step_size: int | None, *, config_gate: bool = True) -> int:
    """``incrementalDispatcherConfig.stepSize`` when feature gate
    ``MultiKueueIncrementalDispatcherConfig`` is on (beta, default on) and the value is set
    and positive; otherwise upstream's fixed 3."""
    if not config_gate or step_size is None or step_size < 1:
        return INCREMENTAL_STEP_SIZE
    return step_size


def next_clusters(
    config_clusters: Sequence[str],
    nominated: Sequence[str],
    step_size: int,
    *,
    respect_config_order: bool = True,
) -> tuple[str, ...]:
    """The next ``step_size`` clusters of the config not nominated yet: in config order
    (feature gate ``MultiKueueIncrementalDispatcherRespectConfigOrder``, on since 0.19), or
    by name with the gate off."""
    already = set(nominated)
    remaining = [c for c in dict.fromkeys(config_clusters) if c not in already]
    if not respect_config_order:
        remaining.sort()
    return tuple(remaining[:step_size])


def incremental(
    key: str,
    config_clusters: Sequence[str],
    current: Sequence[str],
    state: DispatchState,
    now: float,
    *,
    step_size: int = INCREMENTAL_STEP_SIZE,
    round_s: float = INCREMENTAL_ROUND_S,
    respect_config_order: bool = True,
) -> Nomination:
    """One step of the incremental dispatcher for workload ``key``: while its round runs,
    nothing (look again when it ends); otherwise append the next clusters to ``current``
    and start a round (recorded in ``state``), or report ``no more workers to nominate``.

    A round whose nominations are no longer all on the workload (its write was lost, or an
    eviction cleared them) counts as over, so a lost write does not stall the workload for a
    whole round. Connectivity is not looked at, as upstream."""
    current = tuple(current)
    held = state.rounds.get(key)
    if held is not None and set(held.nominated) <= set(current):
        elapsed = now - held.started
        if elapsed < round_s:
            return Nomination(current, False, requeue_after=round_s - elapsed)
    more = next_clusters(
        config_clusters, current, step_size, respect_config_order=respect_config_order
    )
    if not more:
        return Nomination(current, False, error=ERR_NO_MORE_WORKERS)
    nominated = current + more
    state.rounds[key] = Round(now, nominated)
    return Nomination(nominated, True, requeue_after=round_s)
