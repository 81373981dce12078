"""Shared helpers of the CRD tests: the fixture CRD and its served resources."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from numaplane.apiserver.crd import crd_resource_infos
from numaplane.apiserver.resource import ResourceInfo

DATA = Path(__file__).resolve().parents[2] / "data" / "crds"


def widget_crd() -> dict[str, Any]:
    """``tests/data/crds/widgets.yaml`` (a fresh copy each call)."""
    loaded: dict[str, Any] = yaml.safe_load((DATA / "widgets.yaml").read_text())
    return copy.deepcopy(loaded)


def widget_info(version: str = "v1") -> ResourceInfo:
    """The served resource of ``version`` of the fixture CRD."""
    return next(i for i in crd_resource_infos(widget_crd()) if i.version == version)


def widget(**spec: Any) -> dict[str, Any]:
    """A valid Widget named ``w`` in ``default`` with ``spec`` merged over ``color: red``."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"color": "red", **spec},
    }
