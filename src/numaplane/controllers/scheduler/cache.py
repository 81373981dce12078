"""The scheduler's cache: nodes, the pods assigned to them (bound, and assumed: bound by this
scheduler but not yet seen bound by the informer), their NUMA views, and the pods that ended.

As upstream's cache, an assumed pod counts on its node from the moment it is chosen, so the
next decision already sees it; it stays counted when the informer confirms the binding, and
leaves when its bind fails, the pod is deleted, or it ends (Succeeded/Failed).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.numa import NumaNode
from numaplane.controllers.scheduler.podinfo import PodInfo

__all__ = ["Cache"]

#: How many ended pod uids are remembered (a snapshot may still list them).
ENDED_MEMORY: Final = 100_000


class Cache:
    """See the module doc."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.numa: dict[str, NumaNode] = {}
        self._nrts: dict[str, dict[str, Any]] = {}
        #: Node of every assigned pod, by uid.
        self.pod_node: dict[str, str] = {}
        self.assumed: set[str] = set()
        #: Pods bound to a node not seen yet, by node name (counted once it appears).
        self._waiting: dict[str, dict[str, PodInfo]] = {}
        #: When each ended pod was seen ending, and each assigned pod seen bound, in the pod
        #: watch's order (``sequence``; 0 before ``start_sequence``: the initial list has no
        #: order, and everything in it came before what the watch shows after).
        self._ended: OrderedDict[str, int] = OrderedDict()
        self._bound_at: dict[str, int] = {}
        self._sequence = 0
        self._sequencing = False

    # -- ended pods ---------------------------------------------------------------------

    def ended(self, uid: str) -> bool:
        """The pod ``uid`` was seen deleted or terminal."""
        return uid in self._ended

    def start_sequence(self) -> None:
        """The pod watch's initial list is done: number what it shows from now on."""
        self._sequencing = True

    def _next(self) -> int:
        if not self._sequencing:
            return 0
        self._sequence += 1
        return self._sequence

    def watch_order(self, uid: str) -> tuple[float, float]:
        """When the pod watch showed ``uid`` bound and ended (``inf``: not yet), comparable
        with other pods': the order in which the node admitted and freed them."""
        bound = self._bound_at.get(uid)
        ended = self._ended.get(uid)
        return (
            float("inf") if bound is None else float(bound),
            float("inf") if ended is None else float(ended),
        )

    def _mark_ended(self, uid: str) -> None:
        self._ended[uid] = self._next()
        if len(self._ended) > ENDED_MEMORY:
            self._ended.popitem(last=False)

    # -- nodes --------------------------------------------------------------------------

    def set_node(self, obj: dict[str, Any]) -> bool:
        """Add or update a Node; whether the change may let pending pods fit."""
        name = str(obj["metadata"]["name"])
        info = self.nodes.get(name)
        if info is None:
            self.nodes[name] = NodeInfo(obj)
            numa = self.numa.setdefault(name, NumaNode(name))
            nrt = self._nrts.get(name)
            if nrt is not None:
                numa.set_nrt(nrt, {}, self.ended, self.watch_order)
            for pod in self._waiting.pop(name, {}).values():
                self.add_assigned(pod, name)
            return True
        return info.set_node(obj)

    def remove_node(self, name: str) -> None:
        """The Node was deleted (its pods stay known by uid until they go)."""
        self.nodes.pop(name, None)

    def set_nrt(self, obj: dict[str, Any]) -> bool:
        """Add or update a NodeResourceTopology; whether the NUMA answers may change."""
        name = str(obj["metadata"]["name"])
        self._nrts[name] = obj
        numa = self.numa.setdefault(name, NumaNode(name))
        node = self.nodes.get(name)
        assigned = node.pods if node is not None else {}
        return numa.set_nrt(obj, assigned, self.ended, self.watch_order)

    def remove_nrt(self, name: str) -> None:
        """The NodeResourceTopology was deleted."""
        self._nrts.pop(name, None)
        numa = self.numa.get(name)
        if numa is not None:
            numa.clear()

    # -- pods ---------------------------------------------------------------------------

    def assume(self, pod: PodInfo, node_name: str, *, check_numa: bool = True) -> bool:
        """Count ``pod`` on ``node_name`` before its binding is written; whether the node's
        replica admitted it (never bind when not). ``check_numa=False`` (the NUMA filter off)
        keeps the replica up to date but binds whatever it answers."""
        numa = self.numa.get(node_name)
        if numa is not None and not numa.assume(pod) and check_numa:
            return False
        self.nodes[node_name].add_pod(pod)
        self.pod_node[pod.uid] = node_name
        self.assumed.add(pod.uid)
        return True

    def forget(self, pod: PodInfo) -> None:
        """The bind of an assumed pod failed: it no longer counts anywhere."""
        self.assumed.discard(pod.uid)
        self._remove(pod.uid)

    def confirm(self, uid: str, node_name: str) -> None:
        """The pod watch shows the binding of the assumed pod ``uid`` to ``node_name``."""
        self.assumed.discard(uid)
        self._bound_at[uid] = self._next()
        numa = self.numa.get(node_name)
        if numa is not None:
            numa.confirm(uid)

    def add_assigned(self, pod: PodInfo, node_name: str) -> None:
        """The informer shows ``pod`` bound to ``node_name`` (confirming an assumption, or a pod
        bound by someone else, which the replica admits now, in the order seen)."""
        current = self.pod_node.get(pod.uid)
        if current == node_name:
            if pod.uid in self.assumed:
                self.confirm(pod.uid, node_name)
            return
        self.assumed.discard(pod.uid)
        self._bound_at[pod.uid] = self._next()
        if current is not None:
            self._remove(pod.uid)
        node = self.nodes.get(node_name)
        if node is None:
            self._waiting.setdefault(node_name, {})[pod.uid] = pod
            return
        numa = self.numa.get(node_name)
        if numa is not None:
            numa.bound_elsewhere(pod)
        node.add_pod(pod)
        self.pod_node[pod.uid] = node_name

    def remove_assigned(self, uid: str) -> bool:
        """The pod ended or was deleted: free what it held; whether it held anything."""
        self._mark_ended(uid)
        for waiting in self._waiting.values():
            waiting.pop(uid, None)
        self.assumed.discard(uid)
        return self._remove(uid)

    def _remove(self, uid: str) -> bool:
        self._bound_at.pop(uid, None)
        node_name = self.pod_node.pop(uid, None)
        if node_name is None:
            return False
        node = self.nodes.get(node_name)
        if node is not None:
            node.remove_pod(uid)
        numa = self.numa.get(node_name)
        if numa is not None:
            numa.forget(uid)
        return True
