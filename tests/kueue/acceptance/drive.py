"""Driving :class:`~numaplane.testing.kueue.FakeKueueApi` the way the acceptance tests need:
counted rounds (a waiting preemptor or a StrictFIFO head that does not fit is tried every cycle,
as upstream's are, so such a queue never settles) and the job integration's quota release."""

from __future__ import annotations

from collections.abc import Iterable

from numaplane.kueue import workload as workload_rules
from numaplane.testing.kueue import FakeKueueApi


def rounds(api: FakeKueueApi, count: int) -> None:
    """``count`` scheduling cycles a second apart, the controllers before and after each."""
    for _ in range(count):
        api.advance(1)
        api.reconcile()
        api.cycle()
        api.reconcile()


def release(api: FakeKueueApi, keys: Iterable[str]) -> None:
    """What the job integration does once an evicted workload's job is inactive: its quota is
    released (``QuotaReserved=False``, no admission, ``Requeued``)."""
    for key in keys:
        raw = api.get("Workload", key)
        assert raw is not None, key
        api.update({**raw, "status": workload_rules.release_quota(raw, api.now)}, status=True)
