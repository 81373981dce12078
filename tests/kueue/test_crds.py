"""numaplane's own Kueue CRDs: valid definitions whose defaults give the parser upstream's
defaults; the same names, versions, subresources and printer columns as upstream's CRDs in
``../shared/kueue`` (their spec fields, defaults and enums too); and, against a real API server,
both sets install and ``kubectl get`` prints upstream's columns for either."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.apiserver.crd import crd_resource_infos, validate_crd
from numaplane.apiserver.resource import ResourceInfo
from numaplane.kueue.api import model
from numaplane.kueue.api.parse import parse_cluster_queue, parse_local_queue, parse_workload
from numaplane.kueue.crds import KUEUE_KINDS, kueue_crds
from numaplane.testing.apiserver import RunningApiServer, running_apiserver

KUBECTL = shutil.which("kubectl")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
GROUP = "kueue.x-k8s.io"


def ours() -> dict[str, dict[str, Any]]:
    return {crd["spec"]["names"]["kind"]: crd for crd in kueue_crds()}


def upstream(kueue_dir: Path) -> dict[str, dict[str, Any]]:
    crds = [yaml.load(p.read_text(), Loader=LOADER) for p in (kueue_dir / "crds").glob("*.yaml")]
    return {crd["spec"]["names"]["kind"]: crd for crd in crds}


def infos(kind: str, version: str = "v1beta2") -> ResourceInfo:
    found = [i for i in crd_resource_infos(ours()[kind]) if i.version == version]
    assert len(found) == 1
    return found[0]


def test_every_definition_is_valid() -> None:
    crds = kueue_crds()
    assert len(crds) == len(KUEUE_KINDS) == 11
    for crd in crds:
        assert validate_crd(crd) == [], crd["metadata"]["name"]
        assert crd["metadata"]["name"] == f"{crd['spec']['names']['plural']}.{GROUP}"


def test_callers_get_fresh_copies() -> None:
    first = kueue_crds()
    first[0]["spec"]["names"]["plural"] = "changed"
    assert kueue_crds()[0]["spec"]["names"]["plural"] != "changed"


def defaulted(kind: str, obj: dict[str, Any], version: str = "v1beta2") -> dict[str, Any]:
    info = infos(kind, version)
    out = copy.deepcopy(obj)
    assert info.extra["prune"](out) == []
    info.strategy.default(out)
    assert info.strategy.validate(out) == [], out
    return out


def test_server_defaults_are_upstream_defaults() -> None:
    cq = defaulted(
        "ClusterQueue",
        {
            "apiVersion": f"{GROUP}/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {},
        },
    )
    spec = cq["spec"]
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    assert spec["stopPolicy"] == "None"
    assert spec["preemption"] == {
        "reclaimWithinCohort": "Never",
        "withinClusterQueue": "Never",
        "borrowWithinCohort": {"policy": "Never"},
    }
    assert spec["flavorFungibility"] == {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "TryNextFlavor",
    }
    assert parse_cluster_queue(cq) == model.ClusterQueue(name="cq")
    lq = defaulted(
        "LocalQueue",
        {
            "apiVersion": f"{GROUP}/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "ns"},
            "spec": {"clusterQueue": "cq"},
        },
    )
    assert lq["spec"]["stopPolicy"] == "None"
    assert parse_local_queue(lq) == model.LocalQueue("ns", "lq", "cq")
    wl = defaulted(
        "Workload",
        {
            "apiVersion": f"{GROUP}/v1beta2",
            "kind": "Workload",
            "metadata": {"name": "w", "namespace": "ns"},
            "spec": {"queueName": "lq", "podSets": [{"template": {"spec": {"containers": []}}}]},
        },
    )
    assert wl["spec"]["active"] is True
    assert wl["spec"]["podSets"][0]["name"] == "main"
    assert wl["spec"]["podSets"][0]["count"] == 1
    assert parse_workload(wl).pod_sets == (model.PodSet("main", 1, {}),)


def test_enums_are_enforced() -> None:
    info = infos("ClusterQueue")
    obj = {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"queueingStrategy": "FIFO"},
    }
    info.strategy.default(obj)
    errors = info.strategy.validate(obj)
    assert [e.field for e in errors] == ["spec.queueingStrategy"]


def test_v1beta1_keeps_its_field_names() -> None:
    cq = defaulted(
        "ClusterQueue",
        {
            "apiVersion": f"{GROUP}/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {"cohort": "team", "flavorFungibility": {"whenCanBorrow": "Borrow"}},
        },
        version="v1beta1",
    )
    got = parse_cluster_queue(cq)
    assert got.cohort == "team"
    assert got.flavor_fungibility.when_can_borrow == model.MAY_STOP_SEARCH


# --- compared with upstream's CRDs --------------------------------------------------------------


def _names(crd: dict[str, Any]) -> dict[str, Any]:
    spec = crd["spec"]
    return {
        "name": crd["metadata"]["name"],
        "group": spec["group"],
        "scope": spec["scope"],
        "names": {k: spec["names"].get(k) for k in ("kind", "listKind", "plural", "singular")},
        "shortNames": sorted(spec["names"].get("shortNames") or ()),
        "categories": sorted(spec["names"].get("categories") or ()),
    }


def _version_view(version: dict[str, Any]) -> dict[str, Any]:
    columns = [
        {k: c.get(k) for k in ("name", "type", "jsonPath", "priority", "format")}
        for c in version.get("additionalPrinterColumns") or ()
    ]
    return {
        "served": version["served"],
        "storage": version["storage"],
        "status": "status" in (version.get("subresources") or {}),
        "columns": columns,
    }


def test_names_versions_and_columns_match_upstream(kueue_dir: Path) -> None:
    theirs = upstream(kueue_dir)
    mine = ours()
    assert sorted(mine) == sorted(theirs)
    for kind, crd in mine.items():
        assert _names(crd) == _names(theirs[kind]), kind
        want = {v["name"]: _version_view(v) for v in theirs[kind]["spec"]["versions"]}
        got = {v["name"]: _version_view(v) for v in crd["spec"]["versions"]}
        assert got == want, kind


def _spec_schema(crd: dict[str, Any], version: str) -> dict[str, Any]:
    entry = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    root: dict[str, Any] = entry["schema"]["openAPIV3Schema"]
    return (
        root
        if crd["spec"]["names"]["kind"] == "WorkloadPriorityClass"
        else root["properties"]["spec"]
    )


def _typed(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for name, sub in (schema.get("properties") or {}).items():
        yield f"{path}.{name}", sub
        yield from _typed(sub, f"{path}.{name}")
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _typed(items, f"{path}[]")


def _lookup(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
    node: dict[str, Any] | None = schema
    for part in path.strip(".").replace("[]", ".[]").split("."):
        if node is None:
            return None
        node = node.get("items") if part == "[]" else (node.get("properties") or {}).get(part)
    return node


def test_spec_fields_defaults_and_enums_match_upstream(kueue_dir: Path) -> None:
    theirs = upstream(kueue_dir)
    for kind, crd in ours().items():
        for version in ("v1beta1", "v1beta2"):
            mine = _spec_schema(crd, version)
            upstream_spec = _spec_schema(theirs[kind], version)
            # Every top-level field upstream has is one of ours (typed or kept as written).
            assert set(upstream_spec.get("properties", {})) <= set(mine["properties"]), (
                kind,
                version,
            )
            for path, sub in _typed(mine):
                theirs_sub = _lookup(upstream_spec, path)
                assert theirs_sub is not None, (kind, version, path)
                for key in ("default", "enum", "type"):
                    if key in sub and key in theirs_sub:
                        assert sub[key] == theirs_sub[key], (kind, version, path, key)
                    elif key in ("default", "enum"):
                        assert (key in sub) == (key in theirs_sub), (kind, version, path, key)


# --- against a real API server ------------------------------------------------------------------


def _kubectl(kubeconfig: Path, *args: str, stdin: str | None = None) -> str:
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _install(server: RunningApiServer, cluster: str, crds: list[dict[str, Any]]) -> Path:
    kubeconfig = server.cluster_kubeconfig(cluster)
    # Server-side, as Kueue's install instructions say: the Workload CRD is too large for the
    # last-applied annotation of a client-side apply.
    _kubectl(kubeconfig, "apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(crds))
    for crd in crds:
        _kubectl(
            kubeconfig,
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            f"crd/{crd['metadata']['name']}",
        )
    return kubeconfig


def _headers(output: str) -> list[list[str]]:
    # kubectl separates columns by two or more spaces; a header may contain one.
    return [
        re.split(r"\s{2,}", line.strip()) for line in output.splitlines() if line.startswith("NAME")
    ]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
def test_both_crd_sets_install_and_kubectl_prints_upstream_columns(
    kueue_dir: Path, tmp_path: Path
) -> None:
    setup = (kueue_dir / "examples" / "getting-started" / "quick-start-setup.yaml").read_text()
    workload = {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "default"},
        "spec": {
            "queueName": "user-queue",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ],
        },
    }
    printed: dict[str, list[list[str]]] = {}
    with running_apiserver(tmp_path / "data", clusters=("upstream", "ours")) as server:
        for cluster, crds in (
            ("upstream", list(upstream(kueue_dir).values())),
            ("ours", kueue_crds()),
        ):
            kubeconfig = _install(server, cluster, crds)
            _kubectl(kubeconfig, "apply", "-f", "-", stdin=setup)
            _kubectl(kubeconfig, "create", "-f", "-", stdin=yaml.safe_dump(workload))
            out = _kubectl(kubeconfig, "get", "clusterqueues,localqueues,workloads", "-A")
            printed[cluster] = _headers(out)
            wide = _kubectl(kubeconfig, "get", "cq", "-o", "wide")
            printed[cluster] += _headers(wide)
            # The short names resolve.
            assert "cluster-queue" in _kubectl(kubeconfig, "get", "cq", "-o", "name")
            assert "user-queue" in _kubectl(kubeconfig, "get", "lq", "-A", "-o", "name")
            assert "wl" in _kubectl(kubeconfig, "get", "kwl", "-A", "-o", "name")
    assert printed["ours"] == printed["upstream"]
    assert printed["ours"] == [
        ["NAME", "COHORT", "PENDING WORKLOADS"],
        ["NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        ["NAMESPACE", "NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"],
        ["NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
    ]
