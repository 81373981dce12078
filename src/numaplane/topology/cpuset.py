"""``CPUSet`` as the topology layer names it (defined in ``numaplane.cpuset``).

``CPUSet`` is a utility value below every layer (like upstream's ``k8s.io/utils/cpuset``), so
that ``numaplane.api`` (kubelet configuration) can use it too.
"""

from numaplane.cpuset import EMPTY, CPUSet, CPUSetParseError, format_cpu_list

__all__ = ["EMPTY", "CPUSet", "CPUSetParseError", "format_cpu_list"]
