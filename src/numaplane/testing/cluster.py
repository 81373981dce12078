"""A real ``numaplane up`` in a subprocess, for tests and benchmarks: started on a free loopback
port with a data directory, waited for until its API server answers ``/readyz`` (and, when
asked, until the expected Nodes are Ready), stopped with SIGTERM (SIGKILL if it hangs).

It is :mod:`numaplane.testing.apiserver`'s handle with ``up`` as the process: ``up`` prints the
same ``serving https://...`` line once its API server is ready, and its children die with it
(even on SIGKILL), so :meth:`~RunningCluster.stop` and :meth:`~RunningCluster.kill` act on the
whole cluster.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from numaplane.testing.apiserver import (
    ENTRY,
    STARTUP_TIMEOUT_S,
    ApiServerStartError,
    RunningApiServer,
    launch,
)

#: How long Nodes may take to register and turn Ready once the API server is up.
NODES_TIMEOUT_S = 120.0


@dataclass
class RunningCluster(RunningApiServer):
    """A cluster started by :func:`running_cluster`; ``process`` is ``numaplane up``."""

    def component_log(self, name: str) -> str:
        """What the component ``name`` (``apiserver``, ``controllers``, ``agent``, ``sim``...)
        printed so far."""
        try:
            return (self.data_dir / "logs" / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""

    def all_logs(self) -> str:
        """``up``'s output and every component's log, for a failing test's message."""
        parts = [f"== up\n{self.log()}"]
        for path in sorted((self.data_dir / "logs").glob("*.log")):
            parts.append(f"== {path.stem}\n{path.read_text(errors='replace')[-4000:]}")
        return "\n".join(parts)

    def nodes(self) -> list[dict[str, Any]]:
        """The cluster's Node objects."""
        code, body = self.get("/api/v1/nodes")
        if code != 200:
            return []
        items: list[dict[str, Any]] = json.loads(body).get("items") or []
        return items

    def ready_nodes(self) -> list[str]:
        """The names of the Nodes whose Ready condition is True."""
        ready = []
        for node in self.nodes():
            conditions = (node.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
                ready.append(str(node["metadata"]["name"]))
        return ready

    def wait_nodes_ready(self, count: int, timeout_s: float = NODES_TIMEOUT_S) -> list[str]:
        """Wait until at least ``count`` Nodes are Ready; their names. Raises
        :class:`ApiServerStartError` with every log when they are not in time or ``up``
        exited."""
        deadline = time.monotonic() + timeout_s
        while True:
            ready = self.ready_nodes()
            if len(ready) >= count:
                return ready
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise ApiServerStartError(
                    f"{len(ready)}/{count} nodes Ready ({ready}); up "
                    f"{'exited' if self.process.poll() is not None else 'still running'}:\n"
                    f"{self.all_logs()}"
                )
            time.sleep(0.2)


def start_cluster(
    data_dir: Path,
    *,
    simulated_nodes: int = 0,
    machine: str | Sequence[str] = (),
    node: str = "none",
    kubelet_config: Path | None = None,
    extra_args: Sequence[str] = (),
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    kueue: bool = True,
) -> RunningCluster:
    """Start ``numaplane up --data-dir DATA_DIR --port 0 --node NODE`` (with
    ``--simulated-nodes`` and one ``--machine`` per shape when given; ``--no-kueue`` when
    ``kueue`` is false) and wait until its API server is ready. The caller must
    :meth:`~RunningCluster.stop` it (or use :func:`running_cluster`); Nodes register after
    this returns
    (:meth:`~RunningCluster.wait_nodes_ready`)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "up.log"
    machines = [machine] if isinstance(machine, str) else list(machine)
    argv = [
        sys.executable,
        "-c",
        ENTRY,
        "up",
        "--data-dir",
        str(data_dir),
        "--port",
        "0",
        "--node",
        node,
        *(("--simulated-nodes", str(simulated_nodes)) if simulated_nodes else ()),
        *(arg for m in machines for arg in ("--machine", m)),
        *(("-c", str(kubelet_config)) if kubelet_config is not None else ()),
        *(() if kueue else ("--no-kueue",)),
        *extra_args,
    ]
    server = launch(argv, data_dir, log_path, (), startup_timeout_s)
    return RunningCluster(**{f.name: getattr(server, f.name) for f in fields(server)})


@contextlib.contextmanager
def running_cluster(
    data_dir: Path,
    *,
    simulated_nodes: int = 0,
    machine: str | Sequence[str] = (),
    node: str = "none",
    kubelet_config: Path | None = None,
    extra_args: Sequence[str] = (),
    kueue: bool = True,
) -> Iterator[RunningCluster]:
    """A started cluster for the ``with`` block, stopped (SIGTERM) after it."""
    cluster = start_cluster(
        data_dir,
        simulated_nodes=simulated_nodes,
        machine=machine,
        node=node,
        kubelet_config=kubelet_config,
        extra_args=extra_args,
        kueue=kueue,
    )
    try:
        yield cluster
    finally:
        cluster.stop()
