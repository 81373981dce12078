"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's
``tools/leaderelection`` semantics, so that two controller processes never both act.

- A candidate tries to acquire the Lease every ``retry_period`` (with client-go's 1.2 jitter).
  It may take it when nobody holds it (``holderIdentity`` empty or the Lease absent), when it
  holds it itself, or when the holder's record has not *changed* for ``lease_duration`` as
  observed on the candidate's own clock: a candidate trusts its local observation time, never
  the ``renewTime`` written by another machine's clock (client-go's tolerance to clock skew).
- Taking it from another holder sets ``acquireTime`` and increments ``leaseTransitions``;
  renewing keeps both and sets ``renewTime``. Every write is a conditional update on the
  Lease's resourceVersion, so of two candidates racing only one wins.
- The leader renews every ``retry_period``; when it cannot renew for ``renew_deadline`` it has
  lost the lease: its work (``lead``) is cancelled and :meth:`LeaderElector.run` returns.
- With ``release_on_cancel`` the leader, when stopped, clears ``holderIdentity`` (and sets a
  1 s ``leaseDurationSeconds``) so that a successor need not wait out the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError, KubeError

log = logging.getLogger(__name__)

#: client-go's ``JitterFactor``: a retry waits between 1x and 2.2x ``retry_period``.
JITTER_FACTOR = 1.2


def micro_time(when: float) -> str:
    """``when`` as a metav1.MicroTime (``2006-01-02T15:04:05.000000Z``)."""
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """One candidate for the Lease ``namespace/name``, known as ``identity``."""

    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Callable[[], float] = time.time,
        release_on_cancel: bool = False,
        on_new_leader: Callable[[str], None] | None = None,
    ) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renew_deadline must be greater than retry_period*1.2")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self._clock = clock
        self._on_new_leader = on_new_leader
        self._observed_spec: dict[str, Any] | None = None
        self._observed_lease: dict[str, Any] | None = None
        self._observed_time = 0.0
        self._reported_leader: str | None = None

    @property
    def leader(self) -> str:
        """The holder last observed (``""``: none)."""
        spec = self._observed_spec or {}
        return str(spec.get("holderIdentity") or "")

    @property
    def is_leader(self) -> bool:
        """This candidate holds the lease as last observed."""
        return self.leader == self.identity

    async def run(self, lead: Callable[[], Awaitable[None]]) -> None:
        """Block until the lease is acquired, run ``lead()`` while it is held; cancel it when
        leadership is lost, then return. Cancelling ``run`` stops ``lead()`` too (and releases
        the lease with ``release_on_cancel``)."""
        await self._acquire()
        work = asyncio.ensure_future(lead())
        renewing = asyncio.ensure_future(self._renew())
        try:
            await asyncio.wait({work, renewing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, renewing):
                task.cancel()
            for task in (work, renewing):
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if self.release_on_cancel and self.is_leader:
                await self._release()
        if renewing.done() and not renewing.cancelled():
            log.info("%s/%s: %s lost the lease", self.namespace, self.name, self.identity)

    # ----- acquire and renew -----

    async def _acquire(self) -> None:
        log.info(
            "%s: attempting to acquire leader lease %s/%s", self.identity, self.namespace, self.name
        )
        while True:
            if await self._try_once(self.retry_period):
                log.info("%s: acquired lease %s/%s", self.identity, self.namespace, self.name)
                return
            await asyncio.sleep(self.retry_period * (1 + random.random() * JITTER_FACTOR))

    async def _renew(self) -> None:
        """Renew every ``retry_period``; return when a renewal did not succeed within
        ``renew_deadline``."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.retry_period)
            deadline = loop.time() + self.renew_deadline
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    return
                if await self._try_once(left):
                    break
                await asyncio.sleep(min(self.retry_period, max(deadline - loop.time(), 0)))

    async def _try_once(self, timeout: float) -> bool:
        try:
            return await asyncio.wait_for(self._try_acquire_or_renew(), timeout)
        except (TimeoutError, KubeError, OSError) as err:
            log.info(
                "%s: error retrieving or updating lease %s/%s: %s",
                self.identity,
                self.namespace,
                self.name,
                err,
            )
            return False

    def _observe(self, lease: dict[str, Any]) -> None:
        spec = dict(lease.get("spec") or {})
        if spec != self._observed_spec:
            self._observed_spec = spec
            self._observed_time = self._clock()
        self._observed_lease = lease
        self._report()

    def _report(self) -> None:
        leader = self.leader
        if leader != self._reported_leader:
            self._reported_leader = leader
            if self._on_new_leader is not None and leader:
                self._on_new_leader(leader)

    async def _try_acquire_or_renew(self) -> bool:
        now = self._clock()
        record = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, int(self.lease_duration)),
            "acquireTime": micro_time(now),
            "renewTime": micro_time(now),
            "leaseTransitions": 0,
        }
        try:
            lease = await self.client.get(
                "coordination.k8s.io/v1", "leases", self.name, self.namespace
            )
        except ApiError as err:
            if not err.is_not_found:
                raise
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": record,
            }
            try:
                created = await self.client.create(
                    "coordination.k8s.io/v1", "leases", body, self.namespace
                )
            except ApiError as create_err:
                if create_err.is_conflict:
                    return False  # another candidate created it first
                raise
            self._observe(created)
            return True

        self._observe(lease)
        old = lease.get("spec") or {}
        holder = str(old.get("holderIdentity") or "")
        if holder and holder != self.identity:
            # The lease is valid while the holder's record changed within leaseDuration, as
            # observed by this candidate's clock.
            duration = float(old.get("leaseDurationSeconds") or self.lease_duration)
            if self._observed_time + duration > now:
                return False
        if holder == self.identity:
            record["acquireTime"] = old.get("acquireTime") or record["acquireTime"]
            record["leaseTransitions"] = int(old.get("leaseTransitions") or 0)
        else:
            record["leaseTransitions"] = int(old.get("leaseTransitions") or 0) + 1
        updated = {**lease, "spec": {**old, **record}}
        try:
            result = await self.client.update(
                "coordination.k8s.io/v1", "leases", updated, self.namespace
            )
        except ApiError as err:
            if err.is_conflict:
                return False  # someone else wrote it since our read
            raise
        self._observe(result)
        return True

    async def _release(self) -> None:
        lease = self._observed_lease
        if lease is None:
            return
        now = micro_time(self._clock())
        spec = {
            **(lease.get("spec") or {}),
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
        }
        # Shield the write: release runs while the caller is being cancelled.
        with contextlib.suppress(KubeError, OSError, asyncio.CancelledError, TimeoutError):
            result = await asyncio.shield(
                self.client.update(
                    "coordination.k8s.io/v1", "leases", {**lease, "spec": spec}, self.namespace
                )
            )
            self._observe(result)
