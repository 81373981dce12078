"""Hypothesis strategies for Topology Manager values (shared by this package's tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint

MAX_NODES = 4

masks = st.integers(min_value=0, max_value=(1 << MAX_NODES) - 1).map(BitMask.from_int)
non_empty_masks = st.integers(min_value=1, max_value=(1 << MAX_NODES) - 1).map(BitMask.from_int)
any_masks = st.integers(min_value=0, max_value=(1 << 64) - 1).map(BitMask.from_int)

hints = st.builds(TopologyHint, st.one_of(st.none(), non_empty_masks), st.booleans())

resource_hints = st.one_of(st.none(), st.lists(hints, max_size=3))

provider_hints: st.SearchStrategy[ProviderHints] = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["cpu", "memory", "gpu"]), resource_hints, max_size=2),
)

providers = st.lists(provider_hints, max_size=3)
