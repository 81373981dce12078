"""The ``shared_kueue`` group: tests that read the upstream Kueue CRDs in ``../shared/kueue``.

The repository never holds those third-party files; when the directory is absent the whole
group is skipped from one place with one reason (as the ``shared_captures`` group is), and the
other CRD tests run on the small fixtures in ``tests/data/crds``. Both the CRD package's tests
(``crd/``) and the end-to-end tests (``e2e/``) belong to it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from numaplane.testing.fixtures import shared_kueue_dir

SHARED_KUEUE = "shared_kueue"
KUEUE_MISSING = (
    "../shared/kueue not found (set NUMAPLANE_SHARED_KUEUE to use a copy): Kueue CRD tests skipped"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put every test that uses the ``kueue_dir`` fixture in the ``shared_kueue`` group."""
    for item in items:
        if "kueue_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(SHARED_KUEUE)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip the group, from this one line, when ``../shared/kueue`` is absent."""
    if item.get_closest_marker(SHARED_KUEUE) is not None and shared_kueue_dir() is None:
        pytest.skip(KUEUE_MISSING)


@pytest.fixture(scope="session")
def kueue_dir() -> Path:
    """``../shared/kueue`` (CRDs and examples); the group's gate skips first when absent."""
    found = shared_kueue_dir()
    if found is None:  # pragma: no cover - pytest_runtest_setup skipped the test already
        pytest.skip(KUEUE_MISSING)
    return found
