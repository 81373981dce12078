"""The cache: assumed pods count at once and leave when their bind fails; a pod bound to a node
not seen yet counts once the node appears; an ended pod frees its node."""

from __future__ import annotations

from numaplane.controllers.scheduler.cache import Cache
from numaplane.controllers.scheduler.podinfo import pod_info

from .helpers import node_obj, pod_obj


def test_assumed_pod_counts_until_forgotten() -> None:
    cache = Cache()
    cache.set_node(node_obj("n", cpu="4"))
    pod = pod_info(pod_obj("p", cpu="3"))
    assert cache.assume(pod, "n")
    assert cache.nodes["n"].requested["cpu"] == 3000
    cache.forget(pod)
    assert cache.nodes["n"].requested["cpu"] == 0
    assert pod.uid not in cache.pod_node


def test_pod_bound_to_an_unknown_node_counts_when_it_appears() -> None:
    cache = Cache()
    pod = pod_info(pod_obj("p", cpu="3"))
    cache.add_assigned(pod, "late")
    cache.set_node(node_obj("late", cpu="4"))
    assert cache.nodes["late"].requested["cpu"] == 3000
    assert cache.pod_node[pod.uid] == "late"


def test_ended_pod_frees_its_node_and_is_remembered() -> None:
    cache = Cache()
    cache.set_node(node_obj("n", cpu="4"))
    pod = pod_info(pod_obj("p", cpu="3"))
    cache.add_assigned(pod, "n")
    assert cache.remove_assigned(pod.uid)
    assert cache.nodes["n"].requested["cpu"] == 0
    assert cache.ended(pod.uid)
    assert not cache.remove_assigned(pod.uid), "nothing left to free"


def test_node_update_reports_only_changes_filters_read() -> None:
    cache = Cache()
    assert cache.set_node(node_obj("n"))
    heartbeat = node_obj("n")
    heartbeat["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert not cache.set_node(heartbeat)
    assert cache.set_node(node_obj("n", labels={"pool": "x"}))
