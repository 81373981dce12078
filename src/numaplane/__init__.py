"""numaplane: the kubelet's NUMA-aware resource managers, in Python.

Predict (``numaplane admit``), enforce (the node agent) and simulate the decisions of the
kubelet's Topology, CPU, Memory and Device Managers. See ``DESIGN.md`` for the layers.
"""

__version__ = "0.1.0"
