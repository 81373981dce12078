"""numaplane.api."""
