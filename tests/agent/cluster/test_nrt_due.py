"""When a node publishes its NodeResourceTopology after changes (``nrt_due``): after a quiet
period, at the latest a maximum delay after the first change, never before the least interval."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.agent.cluster.pacing import nrt_due


@dataclass(frozen=True)
class DueCase:
    name: str
    earliest: float
    first_change: float | None
    last_change: float
    expected: float


# quiet 1 s, max delay 10 s throughout.
CASES = (
    DueCase("at start or a retry: at the earliest", 5.0, None, 0.0, 5.0),
    DueCase("one change: a quiet second after it", 0.0, 100.0, 100.0, 101.0),
    DueCase("changes keep coming: the quiet period follows the last", 0.0, 100.0, 104.5, 105.5),
    DueCase("a busy node: no later than the max delay after the first", 0.0, 100.0, 109.8, 110.0),
    DueCase("never before the least interval after the last write", 102.0, 100.0, 100.0, 102.0),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nrt_due(case: DueCase) -> None:
    due = nrt_due(case.earliest, case.first_change, case.last_change, quiet=1.0, max_delay=10.0)
    assert due == case.expected
