"""The affinity store and upstream's container-id bookkeeping."""

from __future__ import annotations

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.store import AffinityStore

HINT = TopologyHint(BitMask(1), True)


def test_missing_affinity_is_the_empty_hint() -> None:
    """Nothing stored reads as ``{any, not preferred}``."""
    assert AffinityStore().get_affinity("p", "c") == TopologyHint(None, False)


def test_remove_container_drops_empty_pod() -> None:
    """The pod entry goes with its last container."""
    store = AffinityStore()
    store.set_affinity("p", "a", HINT)
    store.set_affinity("p", "b", HINT)
    store.remove_container("p", "a")
    assert store.snapshot() == {"p": {"b": HINT}}
    store.remove_container("p", "b")
    assert store.snapshot() == {}


def test_remove_by_id_spares_a_restarted_container() -> None:
    """A (pod, container) remapped to a new id keeps its hint when the old id goes."""
    store = AffinityStore()
    store.set_affinity("p", "c", HINT)
    store.add_container("p", "c", "id-1")
    store.add_container("p", "c", "id-2")
    store.remove_container_id("id-1")
    assert store.get_affinity("p", "c") == HINT
    store.remove_container_id("id-2")
    assert not store.has_affinity("p", "c")
    store.remove_container_id("unknown")


def test_remove_pod_forgets_everything() -> None:
    """Hints and container ids of the pod both go."""
    store = AffinityStore()
    store.set_affinity("p", "c", HINT)
    store.add_container("p", "c", "id")
    store.remove_pod("p")
    assert store.snapshot() == {}
    store.set_affinity("p", "c", HINT)
    store.remove_container_id("id")  # the id was forgotten with the pod: no effect
    assert store.get_affinity("p", "c") == HINT


def test_find_affinity_is_none_only_when_nothing_is_stored() -> None:
    """``find_affinity`` answers ``has_affinity`` and ``get_affinity`` in one look-up."""
    store = AffinityStore()
    store.set_affinity("p", "a", HINT)
    assert store.find_affinity("p", "a") == HINT
    assert store.find_affinity("p", "b") is None
    assert store.find_affinity("q", "a") is None
