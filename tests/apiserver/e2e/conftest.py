"""End to end: a real ``numaplane apiserver`` process on loopback, driven with kubectl (the
client users have) and the official ``kubernetes`` Python client.

One server serves a whole test module (starting one takes a second or two); every test works in
namespaces or names of its own so tests stay independent of their order.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.testing.apiserver import RunningApiServer, running_apiserver

KUBECTL = shutil.which("kubectl")


@dataclass(frozen=True)
class Kubectl:
    """kubectl bound to one kubeconfig."""

    kubeconfig: Path

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run ``kubectl ARGS``; with ``check``, a non-zero exit fails the test with stderr."""
        assert KUBECTL is not None
        done = subprocess.run(
            [KUBECTL, "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} failed ({done.returncode}): {done.stderr}")
        return done

    def out(self, *args: str, stdin: str | None = None) -> str:
        """The standard output of a successful ``kubectl ARGS``."""
        return self.run(*args, stdin=stdin).stdout

    def json(self, *args: str) -> Any:
        """``kubectl ARGS -o json``, decoded."""
        return json.loads(self.out(*args, "-o", "json"))

    def start(self, *args: str) -> subprocess.Popen[str]:
        """``kubectl ARGS`` in the background (a wait or a watch); the caller ends it."""
        assert KUBECTL is not None
        return subprocess.Popen(
            [KUBECTL, "--kubeconfig", str(self.kubeconfig), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def fails(self, *args: str, stdin: str | None = None) -> str:
        """The standard error of a ``kubectl ARGS`` that must fail."""
        done = self.run(*args, stdin=stdin, check=False)
        assert done.returncode != 0, f"kubectl {' '.join(args)} succeeded: {done.stdout}"
        return done.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    """A real API server for this module, in a subprocess, stopped after it."""
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    with running_apiserver(tmp_path_factory.mktemp("apiserver")) as handle:
        yield handle


@pytest.fixture(scope="module")
def kubectl(server: RunningApiServer) -> Kubectl:
    """kubectl with the server's admin kubeconfig."""
    return Kubectl(server.kubeconfig)
