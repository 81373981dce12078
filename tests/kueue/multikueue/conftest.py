"""The INT harness's fixtures (see intworld): one API server per test module with three fresh
logical clusters for each of its tests, or three API servers, one per cluster."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator

import pytest

from numaplane.testing.apiserver import RunningApiServer, running_apiserver
from numaplane.testing.multikueue_int import WORKERS, Clusters, SeparateServers, cluster_names


@pytest.fixture(scope="module")
def int_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningApiServer, Iterator[int]]]:
    """One API server per test module (Kueue's Job defaulting on), with three logical clusters
    for each test of the module."""
    module = request.module
    tests = sum(1 for item in request.session.items if getattr(item, "module", None) is module)
    names = [name for index in range(1, tests + 1) for name in cluster_names(index)]
    data = tmp_path_factory.mktemp("multikueue-int") / "data"
    with running_apiserver(data, clusters=names, extra_args=["--kueue-job-defaulting"]) as srv:
        yield srv, itertools.count(1)


@pytest.fixture
def int_clusters(int_server: tuple[RunningApiServer, Iterator[int]]) -> Clusters:
    """Fresh logical clusters for this test."""
    server, counter = int_server
    return Clusters.numbered(server, next(counter))


@pytest.fixture(scope="module")
def separate_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeparateServers]:
    """A manager and two workers, each its own ``numaplane apiserver`` process (the manager's
    with Kueue's Job defaulting)."""
    root = tmp_path_factory.mktemp("multikueue-separate")
    with contextlib.ExitStack() as stack:
        manager = stack.enter_context(
            running_apiserver(root / "manager", extra_args=["--kueue-job-defaulting"])
        )
        first, second = (stack.enter_context(running_apiserver(root / w)) for w in WORKERS)
        yield SeparateServers((manager, first, second))
