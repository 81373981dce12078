"""The simulator: traces, the admission engine, the exact optimum and the report.

Submodules are imported on demand (``numaplane.sim.bound`` needs OR-Tools, ``numaplane.sim.report``
matplotlib), so importing this package costs nothing.
"""
