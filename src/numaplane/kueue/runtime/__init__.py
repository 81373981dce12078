"""The I/O edge: informers feed the core, decisions are written through the Kubernetes API."""
