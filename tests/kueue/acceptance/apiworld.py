"""The acceptance tables through the API: objects created with :class:`numaplane.kube.KubeClient`
on a logical cluster of a real ``numaplane apiserver``, the Kueue CRDs installed first, then
``numaplane kueue`` started as a process against it, and the decisions read back from the
Workloads it wrote."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from numaplane.kube import ApiError, KubeClient, load_kubeconfig
from numaplane.kueue.constants import API_VERSION
from numaplane.kueue.crds import kueue_crds
from numaplane.testing.apiserver import ENTRY

Obj = dict[str, Any]
T = TypeVar("T")

#: How long ``numaplane kueue`` may take to reach a state the table states (it decides within a
#: cycle or two of starting; this bounds a broken run, it is not a speed requirement).
SETTLE_TIMEOUT_S = 90.0

PLURALS = {
    "ResourceFlavor": "resourceflavors",
    "ClusterQueue": "clusterqueues",
    "Cohort": "cohorts",
    "LocalQueue": "localqueues",
    "Workload": "workloads",
    "AdmissionCheck": "admissionchecks",
    "WorkloadPriorityClass": "workloadpriorityclasses",
}


class ApiWorld:
    """A client of one logical cluster; every method opens its own connection."""

    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig

    def call(self, body: Callable[[KubeClient], Awaitable[T]]) -> T:
        """Run ``body`` with a connected client."""

        async def main() -> T:
            async with KubeClient(load_kubeconfig(self.kubeconfig)) as client:
                return await body(client)

        return asyncio.run(main())

    def install_crds(self) -> None:
        """Create Kueue's CRDs and wait until Workloads are served."""

        async def body(client: KubeClient) -> None:
            for crd in kueue_crds():
                await client.create("apiextensions.k8s.io/v1", "customresourcedefinitions", crd)
            deadline = time.monotonic() + 60
            while True:
                try:
                    await client.list(API_VERSION, "workloads", limit=1)
                    return
                except ApiError:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.1)

        self.call(body)

    def create(self, obj: Obj, status: Obj | None = None) -> Obj:
        """Create ``obj`` (any Kueue kind or a Namespace); with ``status``, write it through
        the status subresource next. The object as the server answered last."""

        async def body(client: KubeClient) -> Obj:
            kind = str(obj["kind"])
            meta = obj.get("metadata") or {}
            namespace = meta.get("namespace")
            send = {k: v for k, v in obj.items() if k != "status"}
            send["metadata"] = {
                k: v for k, v in meta.items() if k not in ("creationTimestamp", "uid")
            }
            if kind == "Namespace":
                return await client.create("v1", "namespaces", send)
            plural = PLURALS[kind]
            created = await client.create(API_VERSION, plural, send, namespace)
            if status is None:
                return created
            return await client.update(
                API_VERSION, plural, {**created, "status": status}, namespace, subresource="status"
            )

        return self.call(body)

    def workloads(self) -> list[Obj]:
        """Every Workload of the cluster."""

        async def body(client: KubeClient) -> list[Obj]:
            items, _ = await client.list_all(API_VERSION, "workloads")
            return items

        return self.call(body)

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        """One object."""

        async def body(client: KubeClient) -> Obj:
            return await client.get(API_VERSION, PLURALS[kind], name, namespace)

        return self.call(body)

    def write_status(self, obj: Obj, status: Obj) -> Obj:
        """Replace ``obj``'s status (conditional on its resourceVersion)."""

        async def body(client: KubeClient) -> Obj:
            namespace = obj["metadata"].get("namespace")
            kind = str(obj.get("kind") or "Workload")
            return await client.update(
                API_VERSION,
                PLURALS[kind],
                {**obj, "status": status},
                namespace,
                subresource="status",
            )

        return self.call(body)

    def wait_for(
        self,
        done: Callable[[list[Obj]], bool],
        process: subprocess.Popen[bytes],
        timeout_s: float = SETTLE_TIMEOUT_S,
        *,
        each: Callable[[list[Obj]], None] | None = None,
    ) -> list[Obj]:
        """The Workloads once ``done`` holds for them (or as they are when ``process``, the
        Kueue deciding, exited or the deadline passed, for the test's assertion to show);
        ``each`` runs on every look that is not the last (what another controller does)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.workloads()
            if done(found) or process.poll() is not None or time.monotonic() > deadline:
                return found
            if each is not None:
                each(found)
            time.sleep(0.2)


@contextmanager
def kueue_process(kubeconfig: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``numaplane kueue --kubeconfig KUBECONFIG --no-leader-elect`` for the ``with`` block,
    its output in ``log``; SIGTERM after (SIGKILL if it hangs)."""
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                ENTRY,
                "kueue",
                "--kubeconfig",
                str(kubeconfig),
                "--no-leader-elect",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
