"""End to end: ``numaplane up`` (through :mod:`numaplane.testing.cluster`) driven with kubectl,
with the ``Kubectl`` helper of the API server's end-to-end tests."""

from __future__ import annotations

import pytest

from tests.apiserver.e2e.conftest import KUBECTL


@pytest.fixture(autouse=True)
def _needs_kubectl() -> None:
    """Every test here drives the cluster with kubectl."""
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
