"""The merge of filtered single-numa-node lists (read off per node) equals upstream's walk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import POLICY_SINGLE_NUMA_NODE, merge_filtered
from numaplane.node.topologymanager.policy_options import PolicyOptions
from numaplane.testing.exhaustive import HintMerger


@st.composite
def filtered_inputs(draw: st.DrawFn) -> tuple[NUMAInfo, list[list[TopologyHint]]]:
    """A machine (possibly with gaps in its node ids) and lists of what the single-numa-node
    filter leaves: preferred hints that are "any" or one node (sometimes a node the machine
    does not have), and possibly empty lists."""
    nodes = sorted(draw(st.sets(st.integers(0, 7), min_size=1, max_size=6)))
    hint = st.one_of(
        st.just(TopologyHint(None, True)),
        st.sampled_from([*nodes, 8]).map(lambda n: TopologyHint(BitMask(n), True)),
    )
    lists = draw(st.lists(st.lists(hint, max_size=4), max_size=4))
    return NUMAInfo(tuple(nodes)), lists


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(filtered_inputs())
def test_single_node_merge_equals_the_walk(
    case: tuple[NUMAInfo, list[list[TopologyHint]]],
) -> None:
    info, lists = case
    fast = merge_filtered(info, lists, POLICY_SINGLE_NUMA_NODE, PolicyOptions(), with_ties=True)
    walk = HintMerger(info, lists, POLICY_SINGLE_NUMA_NODE, PolicyOptions())
    assert (fast.hint, fast.single_node_ties) == walk.merge_with_single_numa_ties()
