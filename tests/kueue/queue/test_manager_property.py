"""Random sequences of queue events against a reference model: a pending workload is never lost
and never queued twice, counts always match, and heads only come from where they should."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.kueue.api.model import STRICT_FIFO, Workload
from numaplane.kueue.queue import REQUEUE_NO_FIT, QueueManager
from numaplane.testing.fakeclock import FakeClock

from .helpers import cq, lq, wl

CQS = ("a", "b", "c")
#: LocalQueue → ClusterQueue; "lq-x" points at a queue that never exists.
LQS = {"lq-a": "a", "lq-b": "b", "lq-c": "c", "lq-x": "missing"}
RESERVED = {"QuotaReserved": ("True", "QuotaReserved", "", 0.0)}


@dataclass
class Model:
    """What the manager should hold."""

    lq_exists: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(LQS, True))
    lq_stopped: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(LQS, False))
    #: pending workloads not popped → their LocalQueue
    pending: dict[str, str] = field(default_factory=dict)
    #: popped heads, by key
    inflight: dict[str, Workload] = field(default_factory=dict)

    def feeds(self, lq_name: str) -> str | None:
        if not self.lq_exists[lq_name] or self.lq_stopped[lq_name]:
            return None
        target = LQS[lq_name]
        return target if target in CQS else None


ops = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 11), st.sampled_from(sorted(LQS)), st.integers(0, 3)),
    st.tuples(st.just("reserve"), st.integers(0, 11)),
    st.tuples(st.just("delete"), st.integers(0, 11)),
    st.tuples(st.just("cycle"), st.lists(st.booleans(), min_size=3, max_size=3)),
    st.tuples(st.just("qi"), st.sampled_from(CQS)),
    st.tuples(st.just("lq-stop"), st.sampled_from(sorted(LQS)), st.booleans()),
    st.tuples(st.just("lq-delete"), st.sampled_from(sorted(LQS))),
    st.tuples(st.just("lq-create"), st.sampled_from(sorted(LQS))),
)


def check(m: QueueManager, model: Model) -> None:
    seen: set[str] = set()
    for name in CQS:
        keys = [w.key for w in m.pending_workloads(name)]
        assert len(keys) == len(set(keys)), "queued twice in one ClusterQueue"
        assert not seen & set(keys), "queued in two ClusterQueues"
        seen |= set(keys)
        want = {k for k, q in model.pending.items() if model.feeds(q) == name}
        assert set(keys) == want, name
        active, parked = m.pending_counts(name)
        assert active + parked == len(keys)
    for lq_name in LQS:
        filed = sum(1 for q in model.pending.values() if q == lq_name)
        want_count = filed if model.lq_exists[lq_name] else 0
        assert m.local_queue_pending("ns", lq_name) == want_count, lq_name


@settings(max_examples=150)
@given(st.lists(ops, max_size=60), st.booleans())
def test_random_event_sequences_keep_the_queues_consistent(
    steps: list[tuple[object, ...]], strict: bool
) -> None:
    clock = FakeClock(1_767_225_600.0)
    m = QueueManager(clock.now)
    for queue_name in CQS:
        m.upsert_cluster_queue(
            cq(
                queue_name,
                strategy=STRICT_FIFO if strict and queue_name == "a" else "BestEffortFIFO",
            )
        )
    for name, target in LQS.items():
        m.upsert_local_queue(lq(name, target))
    model = Model()
    current: dict[str, Workload] = {}
    for step in steps:
        kind = step[0]
        if kind == "add":
            _, i, lq_name, prio = step
            w = wl(f"w{i}", queue=str(lq_name), priority=int(str(prio)), t=float(str(i)))
            m.upsert_workload(w)
            current[w.key] = w
            model.inflight.pop(w.key, None)
            model.pending[w.key] = str(lq_name)
        elif kind in ("reserve", "delete"):
            key = f"ns/w{step[1]}"
            if kind == "reserve" and key in current:
                m.upsert_workload(replace(current[key], conditions=RESERVED))
            else:
                m.delete_workload(key)
            model.pending.pop(key, None)
            model.inflight.pop(key, None)
            current.pop(key, None)
        elif kind == "cycle":
            heads = m.heads()
            assert len({h.key for h in heads}) == len(heads)
            for h in heads:
                assert h.key in model.pending, "a head must be a pending, non-popped workload"
                assert model.feeds(model.pending[h.key]) is not None
                model.inflight[h.key] = h
                del model.pending[h.key]
            flags = step[1]
            assert isinstance(flags, list)
            for h, give_back in zip(heads, flags, strict=False):
                if give_back:
                    m.requeue(h, immediate=False, reason=REQUEUE_NO_FIT)
                    model.pending[h.key] = h.queue_name
                    del model.inflight[h.key]
        elif kind == "qi":
            m.queue_inadmissible([str(step[1])])
        elif kind == "lq-stop":
            _, lq_name, stopped = step
            if model.lq_exists[str(lq_name)]:
                stop = "Hold" if stopped else "None"
                m.upsert_local_queue(lq(str(lq_name), LQS[str(lq_name)], stop=stop))
                model.lq_stopped[str(lq_name)] = bool(stopped)
        elif kind == "lq-delete":
            m.delete_local_queue("ns", str(step[1]))
            model.lq_exists[str(step[1])] = False
        elif kind == "lq-create":
            name = str(step[1])
            stop = "Hold" if model.lq_stopped[name] else "None"
            m.upsert_local_queue(lq(name, LQS[name], stop=stop))
            model.lq_exists[name] = True
        check(m, model)
