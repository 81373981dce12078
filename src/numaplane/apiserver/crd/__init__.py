"""CustomResourceDefinitions: the served resources of a CRD (:func:`crd_resource_infos`), the
CRD's own validation and status (:func:`validate_crd`, :func:`crd_status`), and the pieces
(structural schema, validation, pruning, defaulting, CEL rules, printer columns) they use.
Pure functions over JSON dicts; no I/O.
"""

from __future__ import annotations

from numaplane.apiserver.crd.apiextensions import default_crd, validate_crd
from numaplane.apiserver.crd.definition import crd_resource_infos
from numaplane.apiserver.crd.pruning import prune
from numaplane.apiserver.crd.status import crd_status

__all__ = ["crd_resource_infos", "crd_status", "default_crd", "prune", "validate_crd"]
