"""numaplane.testing."""
