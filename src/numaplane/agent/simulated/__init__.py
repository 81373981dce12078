"""Simulated nodes: many Nodes in one process, each deciding with the real node engine and
running nothing (like KWOK, but the admission is the kubelet's).

``numaplane agent --simulate --kubeconfig K --node-name NAME --nodes N --machine M -c KUBELET``
registers Nodes ``NAME-0`` ... ``NAME-(N-1)`` labelled ``numaplane.io/simulated: "true"``, with
their Leases and NodeResourceTopologies; a pod bound to one of them is admitted or rejected by
that node's Topology, CPU, Memory and Device Managers, "runs" for its
``numaplane.io/simulated-duration`` and succeeds.
"""

from numaplane.agent.simulated.clock import Clock, WallClock
from numaplane.agent.simulated.nodes import SIMULATED_LABEL, node_names
from numaplane.agent.simulated.pods import DURATION_ANNOTATION
from numaplane.agent.simulated.simulator import (
    SimulatedNodes,
    SimulatedOptions,
    run_simulated_nodes,
)

__all__ = [
    "DURATION_ANNOTATION",
    "SIMULATED_LABEL",
    "Clock",
    "SimulatedNodes",
    "SimulatedOptions",
    "WallClock",
    "node_names",
    "run_simulated_nodes",
]
