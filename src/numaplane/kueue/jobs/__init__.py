"""Job integrations: a batch/v1 Job (and optionally a plain Pod) ⇄ its Workload."""
