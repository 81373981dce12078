"""numaplane.cli."""
