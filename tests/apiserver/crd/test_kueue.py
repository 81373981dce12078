"""The upstream Kueue CRDs (``../shared/kueue``): every version served, every CEL rule compiled
and evaluated, the examples valid, and the rules users hit refused with their messages."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from celpy import celtypes

from numaplane.apiserver.crd import cel, celvalues, crd_resource_infos, crd_status, validate_crd
from numaplane.apiserver.crd.schema import Node, parse
from numaplane.apiserver.errors import invalid
from numaplane.apiserver.resource import ResourceInfo

pytestmark = pytest.mark.shared_kueue

GROUP = "kueue.x-k8s.io"


# The C loader when built (the Kueue CRDs are large; the pure-Python loader takes seconds).
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_crds(kueue_dir: Path) -> list[dict[str, Any]]:
    return [
        yaml.load(p.read_text(), Loader=LOADER) for p in sorted((kueue_dir / "crds").glob("*.yaml"))
    ]


@pytest.fixture(scope="module")
def crds(kueue_dir: Path) -> list[dict[str, Any]]:
    """The Kueue CRDs, read once."""
    return load_crds(kueue_dir)


@pytest.fixture(scope="module")
def infos(crds: list[dict[str, Any]]) -> dict[tuple[str, str], ResourceInfo]:
    """Every served version of every Kueue CRD, by (kind, version)."""
    out: dict[tuple[str, str], ResourceInfo] = {}
    for crd in crds:
        for info in crd_resource_infos(crd):
            out[(info.kind, info.version)] = info
    return out


def sample(node: Node) -> Any:
    """A value with every field of ``node`` set (so every rule has something to read)."""
    raw = node.raw
    if raw.get("enum"):
        return copy.deepcopy(raw["enum"][0])
    if node.int_or_string:
        return 1
    if node.type == "object" or node.properties or node.additional is not None:
        out = {name: sample(sub) for name, sub in node.properties.items()}
        if node.additional is not None:
            out["k"] = sample(node.additional)
        return out
    if node.type == "array":
        return [sample(node.items)] if node.items is not None else []
    if node.type == "string":
        return "2024-01-01T00:00:00Z" if raw.get("format") == "date-time" else "a"
    if node.type == "integer":
        return 1
    if node.type == "number":
        return 1.0
    if node.type == "boolean":
        return True
    return {}


def test_every_version_is_served_with_its_names(crds: list[dict[str, Any]]) -> None:
    for crd in crds:
        spec = crd["spec"]
        served = [v["name"] for v in spec["versions"] if v["served"]]
        infos = crd_resource_infos(crd)
        assert [i.version for i in infos] == served
        storage = next(v["name"] for v in spec["versions"] if v["storage"])
        for info in infos:
            assert info.resource == spec["names"]["plural"]
            assert info.storage_version == storage
            assert info.namespaced == (spec["scope"] == "Namespaced")


def test_every_rule_compiles_and_evaluates(crds: list[dict[str, Any]]) -> None:
    evaluated = 0
    for crd in crds:
        for version in crd["spec"]["versions"]:
            root = parse(version["schema"]["openAPIV3Schema"])
            for node in root.walk():
                for raw in node.rules:
                    rule = cel.compile_rule(raw)
                    assert rule.error == "", (crd["metadata"]["name"], raw["rule"])
                    assert rule.program is not None
                    value = celvalues.to_cel(node, sample(node), resource=node is root)
                    activation = {"self": value}
                    if rule.transition:
                        activation["oldSelf"] = value
                    result = rule.program.evaluate(activation)
                    assert isinstance(result, celtypes.BoolType), raw["rule"]
                    evaluated += 1
    assert evaluated > 39


@pytest.mark.parametrize(
    "example",
    [
        "getting-started/quick-start-setup.yaml",
        "admin/single-clusterqueue-setup.yaml",
        "admin/minimal-cq.yaml",
        "multikueue/multikueue-setup.yaml",
    ],
)
def test_examples_are_valid(
    kueue_dir: Path, infos: dict[tuple[str, str], ResourceInfo], example: str
) -> None:
    checked = 0
    for doc in yaml.load_all((kueue_dir / "examples" / example).read_text(), Loader=LOADER):
        group, _, version = str(doc["apiVersion"]).rpartition("/")
        if group != GROUP:
            continue
        info = infos[(doc["kind"], version)]
        obj = copy.deepcopy(doc)
        if info.namespaced:
            obj["metadata"].setdefault("namespace", "default")
        assert info.extra["prune"](obj) == []
        info.strategy.default(obj)
        assert info.strategy.validate(obj) == []
        checked += 1
    assert checked > 0


def cluster_queue(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "default-flavor",
                        "resources": [
                            {"name": "cpu", "nominalQuota": 9},
                            {"name": "memory", "nominalQuota": "36Gi"},
                        ],
                    }
                ],
            }
        ],
    }
    base.update(spec)
    return {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": base,
    }


def workload(queue: str = "q", reserved: bool = False) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "default"},
        "spec": {
            "queueName": queue,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ],
        },
    }
    if reserved:
        obj["status"] = {
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ]
        }
    return obj


def flavor(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "rf"},
        "spec": spec,
    }


def with_flavors(obj: dict[str, Any], resources: list[str]) -> dict[str, Any]:
    obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"] = [
        {"name": r, "nominalQuota": 1} for r in resources
    ]
    return obj


@dataclass(frozen=True)
class RuleCase:
    name: str
    kind: str
    new: dict[str, Any]
    old: dict[str, Any] | None
    message: str  # "" when the object is valid


RULE_CASES = [
    RuleCase("covered resources match", "ClusterQueue", cluster_queue(), None, ""),
    RuleCase(
        "flavors must match coveredResources",
        "ClusterQueue",
        with_flavors(cluster_queue(), ["cpu"]),
        None,
        'ClusterQueue.kueue.x-k8s.io "cq" is invalid: spec.resourceGroups[0]: Invalid value: '
        '"object": flavors must have the same number of resources as the coveredResources',
    ),
    RuleCase(
        "borrowWithinCohort needs reclaimWithinCohort",
        "ClusterQueue",
        cluster_queue(
            preemption={
                "reclaimWithinCohort": "Never",
                "borrowWithinCohort": {"policy": "LowerPriority"},
            }
        ),
        None,
        'ClusterQueue.kueue.x-k8s.io "cq" is invalid: spec.preemption: Invalid value: "object": '
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
    ),
    RuleCase(
        "borrowWithinCohort with reclaim allowed",
        "ClusterQueue",
        cluster_queue(
            preemption={
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "LowerPriority"},
            }
        ),
        None,
        "",
    ),
    RuleCase(
        "borrowingLimit without cohort",
        "ClusterQueue",
        (
            lambda o: (
                o["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(
                    borrowingLimit=1
                ),
                o,
            )[1]
        )(cluster_queue()),
        None,
        'ClusterQueue.kueue.x-k8s.io "cq" is invalid: spec: Invalid value: "object": '
        "borrowingLimit must be nil when cohort is empty",
    ),
    RuleCase(
        "borrowingLimit with cohort",
        "ClusterQueue",
        (
            lambda o: (
                o["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(
                    borrowingLimit=1
                ),
                o,
            )[1]
        )(cluster_queue(cohortName="team")),
        None,
        "",
    ),
    RuleCase(
        "queueName change before quota reservation",
        "Workload",
        workload("other"),
        workload("q"),
        "",
    ),
    RuleCase(
        "queueName immutable while quota reserved",
        "Workload",
        workload("other", reserved=True),
        workload("q", reserved=True),
        'Workload.kueue.x-k8s.io "wl" is invalid: <nil>: Invalid value: "object": queueName is '
        "immutable while workload quota reserved",
    ),
    RuleCase(
        "toleration operator",
        "ResourceFlavor",
        flavor(tolerations=[{"key": "k", "operator": "Bogus"}]),
        None,
        'ResourceFlavor.kueue.x-k8s.io "rf" is invalid: spec.tolerations: Invalid value: '
        "\"array\": supported toleration values: 'Equal'(default), 'Exists'",
    ),
    RuleCase(
        "toleration without key needs Exists",
        "ResourceFlavor",
        flavor(tolerations=[{"operator": "Equal", "value": "v"}]),
        None,
        'ResourceFlavor.kueue.x-k8s.io "rf" is invalid: spec.tolerations: Invalid value: '
        "\"array\": operator must be Exists when 'key' is empty, which means 'match all values "
        "and all keys'",
    ),
    RuleCase(
        "valid tolerations",
        "ResourceFlavor",
        flavor(
            tolerations=[
                {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                {"operator": "Exists"},
                {"key": "t", "effect": "NoExecute", "tolerationSeconds": 5},
            ]
        ),
        None,
        "",
    ),
    RuleCase(
        "tolerationSeconds needs NoExecute",
        "ResourceFlavor",
        flavor(tolerations=[{"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        None,
        'ResourceFlavor.kueue.x-k8s.io "rf" is invalid: spec.tolerations: Invalid value: '
        "\"array\": effect must be 'NoExecute' when 'tolerationSeconds' is set",
    ),
    RuleCase(
        "topologyName needs nodeLabels",
        "ResourceFlavor",
        flavor(topologyName="t", nodeLabels={}),
        None,
        'ResourceFlavor.kueue.x-k8s.io "rf" is invalid: spec: Invalid value: "object": at least '
        "one nodeLabel is required when topology is set",
    ),
    RuleCase(
        # The rule reads nodeLabels without has(): cel-go's error for the absent field, then
        # the rule's message, as upstream reports an evaluation error.
        "topologyName without nodeLabels",
        "ResourceFlavor",
        flavor(topologyName="t"),
        None,
        'ResourceFlavor.kueue.x-k8s.io "rf" is invalid: spec: Invalid value: "object": no such '
        "key: nodeLabels evaluating rule: at least one nodeLabel is required when topology is set",
    ),
    RuleCase(
        "topologyName immutable once set",
        "ResourceFlavor",
        flavor(topologyName="u", nodeLabels={"a": "b"}),
        flavor(topologyName="t", nodeLabels={"a": "b"}),
        'ResourceFlavor.kueue.x-k8s.io "rf" is invalid: spec: Invalid value: "object": '
        "topologyName is immutable when topologyName is set",
    ),
    RuleCase(
        "topologyName may be set later",
        "ResourceFlavor",
        flavor(topologyName="u", nodeLabels={"a": "b"}),
        flavor(nodeLabels={"a": "b"}),
        "",
    ),
]


@pytest.mark.parametrize("case", RULE_CASES, ids=lambda c: c.name)
def test_rules_users_hit(infos: dict[tuple[str, str], ResourceInfo], case: RuleCase) -> None:
    info = infos[(case.kind, "v1beta2")]
    new = copy.deepcopy(case.new)
    info.strategy.default(new)
    if case.old is None:
        errors = info.strategy.validate(new)
    else:
        old = copy.deepcopy(case.old)
        info.strategy.default(old)
        errors = info.strategy.validate_update(new, old)
    if not case.message:
        assert errors == []
        return
    assert str(invalid(GROUP, case.kind, new["metadata"]["name"], errors)) == case.message


def test_immutable_field_rule_skipped_on_create(infos: dict[tuple[str, str], ResourceInfo]) -> None:
    info = infos[("LocalQueue", "v1beta2")]
    old: dict[str, Any] = {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": {"clusterQueue": "a"},
    }
    assert info.strategy.validate(copy.deepcopy(old)) == []
    new = copy.deepcopy(old)
    new["spec"]["clusterQueue"] = "b"
    assert [str(e) for e in info.strategy.validate_update(new, old)] == [
        'spec.clusterQueue: Invalid value: "string": field is immutable'
    ]


def test_every_definition_is_accepted_and_established(crds: list[dict[str, Any]]) -> None:
    for crd in crds:
        assert validate_crd(crd) == [], crd["metadata"]["name"]
        status = crd_status(crd, now="2024-01-01T00:00:00Z")
        established = [c for c in status["conditions"] if c["type"] == "Established"]
        assert established[0]["status"] == "True"
        applied_again = copy.deepcopy(crd)
        applied_again["status"] = status
        assert validate_crd(applied_again, applied_again) == []
