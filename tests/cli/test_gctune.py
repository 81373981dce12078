"""The long-running clients' collector settings (``numaplane.cli.gctune``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from numaplane.cli.gctune import GEN0_THRESHOLD, tune_gc

#: CPython's default thresholds.
DEFAULTS = (700, 10, 10)


@pytest.fixture
def restored_thresholds() -> Iterator[tuple[int, int, int]]:
    """CPython's defaults for the test (a command run in-process by an earlier test may have
    tuned them already), and the thresholds found put back after it."""
    before = gc.get_threshold()
    gc.set_threshold(*DEFAULTS)
    try:
        yield DEFAULTS
    finally:
        gc.set_threshold(*before)


def test_tune_gc_raises_only_the_young_generation_threshold(
    restored_thresholds: tuple[int, int, int],
) -> None:
    tune_gc()
    assert gc.get_threshold() == (GEN0_THRESHOLD, *restored_thresholds[1:])
    assert restored_thresholds[0] < GEN0_THRESHOLD
