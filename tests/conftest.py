"""Shared pytest configuration: the real-capture and upstream-Kueue groups, and where the shared
material lives.

The captures in ``../shared/topologies`` are third-party files the repository never holds. Every
test that reads them carries the ``shared_captures`` marker (tests that use the
``topologies_dir`` fixture get it here); when the directory is absent, the whole group is
skipped from one place with one reason, so ``-ra`` reports a single line instead of one line
per test. The ``shared_kueue`` group (tests using ``kueue_dir``: the upstream Kueue CRDs and
examples in ``../shared/kueue``) works the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from numaplane.testing.fixtures import shared_kueue_dir, shared_topologies_dir

# No per-example time limit: tests assert behaviour, never speed (a loaded 2-core machine would
# turn hypothesis' default 200 ms deadline into failures unrelated to the code under test).
settings.register_profile("numaplane", deadline=None)
settings.load_profile("numaplane")

SHARED_CAPTURES = "shared_captures"
CAPTURES_MISSING = (
    "../shared/topologies not found (set NUMAPLANE_SHARED_TOPOLOGIES to use a copy): "
    "real-capture tests skipped"
)
SHARED_KUEUE = "shared_kueue"
KUEUE_MISSING = (
    "../shared/kueue not found (set NUMAPLANE_SHARED_KUEUE to use a copy): "
    "upstream Kueue CRD and example tests skipped"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put every test that uses ``topologies_dir`` in the real-capture group and every test that
    uses ``kueue_dir`` in the upstream-Kueue group."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "topologies_dir" in fixtures:
            item.add_marker(SHARED_CAPTURES)
        if "kueue_dir" in fixtures:
            item.add_marker(SHARED_KUEUE)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip the real-capture group when the captures are absent.

    Runs before pytest's own skip marks (an empty parameter set over the capture names is one),
    and always skips from this line: ``-ra`` folds skips by location and reason, so the whole
    group reports as one line.
    """
    if item.get_closest_marker(SHARED_CAPTURES) is not None and shared_topologies_dir() is None:
        pytest.skip(CAPTURES_MISSING)
    if item.get_closest_marker(SHARED_KUEUE) is not None and shared_kueue_dir() is None:
        pytest.skip(KUEUE_MISSING)


@pytest.fixture(scope="session")
def topologies_dir() -> Path:
    """``../shared/topologies`` (hwloc captures and XML exports); the group's gate skips first."""
    found = shared_topologies_dir()
    if found is None:  # pragma: no cover - pytest_runtest_setup skipped the test already
        pytest.skip(CAPTURES_MISSING)
    return found


@pytest.fixture(scope="session")
def kueue_dir() -> Path:
    """``../shared/kueue`` (upstream CRDs and examples); the group's gate skips first."""
    found = shared_kueue_dir()
    if found is None:  # pragma: no cover - pytest_runtest_setup skipped the test already
        pytest.skip(KUEUE_MISSING)
    return found
