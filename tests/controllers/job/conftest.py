"""One real ``numaplane apiserver`` for the package's integration tests (each test works in a
namespace of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from numaplane.testing.apiserver import running_apiserver


@pytest.fixture(scope="package")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The admin kubeconfig of a server started for the package."""
    with running_apiserver(tmp_path_factory.mktemp("apiserver") / "data") as server:
        yield server.kubeconfig
