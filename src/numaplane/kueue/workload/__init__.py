"""Workload status rules: conditions, admission checks, eviction, requeueing, finishing."""
