"""Which flavor flavor assignment prefers (upstream ``flavorassigner``'s granular preemption
modes, ``isPreferred`` and ``shouldTryNextFlavor``): a flavor's outcome is a mode (NoFit, no
preemption candidates, Preempt, Reclaim, Fit) and a borrowing level; ``flavorFungibility``
decides whether the search stops at it and which of the tried flavors wins."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from numaplane.kueue.api.model import (
    PREEMPTION_OVER_BORROWING,
    TRY_NEXT_FLAVOR,
    FlavorFungibility,
)
from numaplane.kueue.scheduler.assignment import FlavorAssignmentMode, PreemptionPossibility


class GranularMode(IntEnum):
    """Upstream's granular ``preemptionMode`` of a flavor, worst first."""

    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4

    def public(self) -> FlavorAssignmentMode:
        """The mode users see (Fit, Preempt or NoFit)."""
        if self is GranularMode.NO_FIT:
            return FlavorAssignmentMode.NO_FIT
        if self is GranularMode.FIT:
            return FlavorAssignmentMode.FIT
        return FlavorAssignmentMode.PREEMPT

    def possibility(self) -> PreemptionPossibility | None:
        """What the preemption simulation found (None for Fit and NoFit)."""
        return _TO_POSSIBILITY.get(self)


_TO_POSSIBILITY: Final = {
    GranularMode.NO_CANDIDATES: PreemptionPossibility.NO_CANDIDATES,
    GranularMode.PREEMPT: PreemptionPossibility.PREEMPT,
    GranularMode.RECLAIM: PreemptionPossibility.RECLAIM,
}
FROM_POSSIBILITY: Final = {
    PreemptionPossibility.NO_CANDIDATES: GranularMode.NO_CANDIDATES,
    PreemptionPossibility.PREEMPT: GranularMode.PREEMPT,
    PreemptionPossibility.RECLAIM: GranularMode.RECLAIM,
}


@dataclass(frozen=True, slots=True)
class Granular:
    """A flavor's mode and borrowing level, as ``isPreferred`` compares them."""

    pmode: GranularMode
    borrow: int


WORST: Final = Granular(GranularMode.NO_FIT, sys.maxsize)
BEST: Final = Granular(GranularMode.FIT, 0)


def is_preferred(a: Granular, b: Granular, ff: FlavorFungibility) -> bool:
    """Upstream ``isPreferred``: ``a`` is better than ``b`` under the fungibility preference."""
    if a.pmode is GranularMode.NO_FIT:
        return False
    if b.pmode is GranularMode.NO_FIT:
        return True
    # A flavor without preemption candidates cannot admit now: it ranks below viable modes
    # whatever the preference says.
    a_none, b_none = a.pmode is GranularMode.NO_CANDIDATES, b.pmode is GranularMode.NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if ff.preference == PREEMPTION_OVER_BORROWING:
        if a.borrow != b.borrow:
            return a.borrow < b.borrow
        return a.pmode > b.pmode
    if a.pmode != b.pmode:
        return a.pmode > b.pmode
    return a.borrow < b.borrow


def should_try_next(mode: Granular, ff: FlavorFungibility) -> bool:
    """Upstream ``shouldTryNextFlavor``: keep looking past a flavor giving ``mode``."""
    if mode.pmode in (GranularMode.NO_FIT, GranularMode.NO_CANDIDATES):
        return True
    if (
        mode.pmode in (GranularMode.PREEMPT, GranularMode.RECLAIM)
        and ff.when_can_preempt == TRY_NEXT_FLAVOR
    ):
        return True
    return mode.borrow != 0 and ff.when_can_borrow == TRY_NEXT_FLAVOR
