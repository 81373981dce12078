"""A Workload is never admitted twice and quota is never exceeded: random sequences of creations,
deletions, priority changes, quota changes, finishes and quota releases (what a job integration
does once an evicted workload's job stopped) driven through the engine, checked after every step
against quota.md §2's algebra computed here from the Workloads' admissions alone.

Quota may legitimately end up above the limits when an administrator lowers a nominal quota
(Kueue never evicts for that), so the check is on what grew: a node of the quota tree whose usage
grew in a step is within its limit after it (the root within its subtree quota, any other node
with a borrowing limit within subtree quota + borrowing limit)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from numaplane.kueue import workload as workload_rules
from numaplane.kueue.resources import resource_value
from numaplane.testing.kueue import FakeKueueApi
from tests.kueue.acceptance.drive import rounds
from tests.kueue.acceptance.objects import Quota, cluster_queue, flavor, group, local_queue

pytestmark = pytest.mark.timeout(600)

Obj = dict[str, Any]
FR = tuple[str, str]
NS = "inv"
API = "kueue.x-k8s.io/v1beta2"


def cohort(name: str, parent: str = "", quotas: Iterable[Quota] = ()) -> Obj:
    """A Cohort, with quota of flavor ``f1`` when given."""
    spec: Obj = {}
    if parent:
        spec["parentName"] = parent
    rows = list(quotas)
    if rows:
        spec["resourceGroups"] = [group([("f1", rows)]).to_dict()]
    return {"apiVersion": API, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


# The tree: root (own quota 2) ⊃ team (borrowing limit 4) ⊃ {qa, qb}; root ⊃ qc; qd alone.
COHORTS = (
    cohort("root", quotas=[Quota("cpu", "2")]),
    cohort("team", "root", [Quota("cpu", "0", borrowing_limit="4")]),
)
QUEUES = {
    "qa": cluster_queue(
        "qa",
        [group([("f1", [Quota("cpu", "4", borrowing_limit="2")])])],
        cohort="team",
        within="LowerPriority",
        reclaim="Any",
    ),
    "qb": cluster_queue(
        "qb",
        [group([("f1", [Quota("cpu", "3", lending_limit="1")])])],
        cohort="team",
        reclaim="LowerPriority",
        borrow_within="LowerPriority",
    ),
    "qc": cluster_queue(
        "qc",
        [group([("f1", [Quota("cpu", "2")]), ("f2", [Quota("cpu", "2")])])],
        cohort="root",
        within="LowerOrNewerEqualPriority",
    ),
    "qd": cluster_queue("qd", [group([("f1", [Quota("cpu", "3")])])], within="LowerPriority"),
}
NAMES = tuple(QUEUES)


@dataclass(frozen=True)
class Op:
    """One step: ``verb`` with its arguments."""

    verb: str
    a: int = 0
    b: int = 0
    c: int = 0


#: Creations weigh most (sampled_from shrinks towards the first entry: a plain creation).
VERBS = ("create",) * 5 + ("delete", "priority", "quota", "finish", "release")
OPS = st.builds(
    Op, st.sampled_from(VERBS), st.integers(0, 99), st.integers(1, 4), st.integers(0, 3)
)


# --- quota.md §2, from the objects ----------------------------------------------------------------


def _quotas(spec: Mapping[str, Any]) -> dict[FR, tuple[int, int | None, int | None]]:
    out = {}
    for rg in spec.get("resourceGroups") or []:
        for fq in rg.get("flavors") or []:
            for rq in fq.get("resources") or []:
                res = rq["name"]
                bl = rq.get("borrowingLimit")
                ll = rq.get("lendingLimit")
                out[(fq["name"], res)] = (
                    resource_value(res, rq["nominalQuota"]),
                    None if bl is None else resource_value(res, bl),
                    None if ll is None else resource_value(res, ll),
                )
    return out


def cq_usage(workloads: Iterable[Obj]) -> dict[str, dict[FR, int]]:
    """Per ClusterQueue, the usage of the workloads that reserve quota (not finished)."""
    usage: dict[str, dict[FR, int]] = {}
    for wl in workloads:
        status = wl.get("status") or {}
        conds = {c["type"]: c["status"] for c in status.get("conditions") or []}
        admission = status.get("admission")
        if not admission or conds.get("QuotaReserved") != "True" or conds.get("Finished") == "True":
            continue
        into = usage.setdefault(admission["clusterQueue"], {})
        for psa in admission["podSetAssignments"]:
            for res, fl in psa["flavors"].items():
                value = resource_value(res, psa["resourceUsage"][res])
                into[(fl, res)] = into.get((fl, res), 0) + value
    return usage


def tree_usage(api: FakeKueueApi) -> dict[str, dict[FR, tuple[int, int, int | None, bool]]]:
    """Per node of the quota tree (``cq:NAME``, ``cohort:NAME``) and FlavorResource:
    (Usage, SubtreeQuota, borrowing limit, is root)."""
    cqs = {o["metadata"]["name"]: o for o in api.list("ClusterQueue")}
    cohorts = {o["metadata"]["name"]: o for o in api.list("Cohort")}
    usage = cq_usage(api.list("Workload"))
    children: dict[str, list[str]] = {}
    parent_of: dict[str, str] = {}
    for name, obj in cqs.items():
        parent = (obj.get("spec") or {}).get("cohortName") or ""
        if parent:
            children.setdefault(f"cohort:{parent}", []).append(f"cq:{name}")
            parent_of[f"cq:{name}"] = f"cohort:{parent}"
            cohorts.setdefault(parent, {"metadata": {"name": parent}, "spec": {}})
    for name, obj in cohorts.items():
        parent = (obj.get("spec") or {}).get("parentName") or ""
        if parent:
            children.setdefault(f"cohort:{parent}", []).append(f"cohort:{name}")
            parent_of[f"cohort:{name}"] = f"cohort:{parent}"
    frs = {fr for o in [*cqs.values(), *cohorts.values()] for fr in _quotas(o.get("spec") or {})}
    out: dict[str, dict[FR, tuple[int, int, int | None, bool]]] = {}

    def visit(node: str, fr: FR) -> tuple[int, int, int]:
        # (SubtreeQuota, localQuota, Usage)
        kind, name = node.split(":", 1)
        spec = (cqs[name] if kind == "cq" else cohorts[name]).get("spec") or {}
        nominal, bl, ll = _quotas(spec).get(fr, (0, None, None))
        subtree, used = nominal, 0
        if kind == "cq":
            used = usage.get(name, {}).get(fr, 0)
        for child in children.get(node, []):
            c_sub, c_local, c_used = visit(child, fr)
            subtree += c_sub - c_local
            used += max(0, c_used - c_local)
        local = max(0, subtree - ll) if ll is not None else 0
        out.setdefault(node, {})[fr] = (used, subtree, bl, node not in parent_of)
        return subtree, local, used

    roots = [f"cq:{n}" for n in cqs if f"cq:{n}" not in parent_of]
    roots += [f"cohort:{n}" for n in cohorts if f"cohort:{n}" not in parent_of]
    for fr in sorted(frs):
        for node in roots:
            visit(node, fr)
    return out


def check_limits(
    before: Mapping[str, Mapping[FR, Any]], after: Mapping[str, Mapping[FR, Any]]
) -> None:
    """Every node whose usage grew is within its limit."""
    for node, rows in after.items():
        for fr, (used, subtree, bl, is_root) in rows.items():
            if used <= before.get(node, {}).get(fr, (0,))[0]:
                continue
            if is_root:
                assert used <= subtree, (node, fr, used, subtree)
            elif bl is not None:
                assert used <= subtree + bl, (node, fr, used, subtree, bl)


# --- the run --------------------------------------------------------------------------------------


def _reserved(api: FakeKueueApi) -> set[str]:
    return {
        f"{w['metadata']['namespace']}/{w['metadata']['name']}"
        for w in api.list("Workload")
        if (w.get("status") or {}).get("admission")
    }


def _apply(api: FakeKueueApi, op: Op, serial: int) -> None:
    names = [f"{w['metadata']['namespace']}/{w['metadata']['name']}" for w in api.list("Workload")]
    pick = names[op.a % len(names)] if names else ""
    if op.verb == "create":
        name = f"w{serial:03d}"
        q = NAMES[op.a % len(NAMES)]
        api.create(
            {
                "apiVersion": API,
                "kind": "Workload",
                "metadata": {"namespace": NS, "name": name},
                "spec": {
                    "queueName": f"lq-{q}",
                    "priority": op.c,
                    "podSets": [
                        {
                            "name": "main",
                            "count": 1,
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"name": "c", "resources": {"requests": {"cpu": str(op.b)}}}
                                    ]
                                }
                            },
                        }
                    ],
                },
            }
        )
    elif op.verb == "delete" and pick:
        api.delete("Workload", pick)
    elif op.verb == "priority" and pick:
        raw = api.get("Workload", pick)
        assert raw is not None
        api.update({**raw, "spec": {**raw["spec"], "priority": op.c}})
    elif op.verb == "quota":
        name = NAMES[op.a % len(NAMES)]
        raw = api.get("ClusterQueue", name)
        assert raw is not None
        spec = raw["spec"]
        groups = spec["resourceGroups"]
        first = groups[0]["flavors"][0]["resources"][0]
        nominal = op.b + op.c - 1
        changed = {**first, "nominalQuota": str(nominal)}
        # The API refuses a lending limit above the nominal quota (upstream's validation):
        # an administrator lowers both.
        if "lendingLimit" in first and int(first["lendingLimit"]) > nominal:
            changed["lendingLimit"] = str(nominal)
        flavors = [{**groups[0]["flavors"][0], "resources": [changed]}, *groups[0]["flavors"][1:]]
        api.update({**raw, "spec": {**spec, "resourceGroups": [{**groups[0], "flavors": flavors}]}})
    elif op.verb == "finish" and pick:
        raw = api.get("Workload", pick)
        assert raw is not None
        if (raw.get("status") or {}).get("admission"):
            status = workload_rules.finish(raw, "Succeeded", "Job finished successfully", api.now)
            api.update({**raw, "status": status}, status=True)
    elif op.verb == "release":
        for raw in api.list("Workload"):
            conds = {
                c["type"]: c["status"] for c in (raw.get("status") or {}).get("conditions") or []
            }
            if conds.get("Evicted") == "True" and (raw.get("status") or {}).get("admission"):
                api.update(
                    {**raw, "status": workload_rules.release_quota(raw, api.now)}, status=True
                )


def _check_step(api: FakeKueueApi, start: int, reserved_before: set[str]) -> None:
    """No reservation write for a workload that already holds one, in the step's writes."""
    reserved = set(reserved_before)
    for write in api.applied[start:]:
        if write.kind != "Workload":
            continue
        if write.verb == "delete":
            reserved.discard(write.key)
            continue
        if write.assumed:
            assert write.key not in reserved, f"{write.key} admitted twice"
        if (write.obj.get("status") or {}).get("admission"):
            reserved.add(write.key)
        elif write.verb == "status":
            reserved.discard(write.key)


def _check_status(api: FakeKueueApi) -> None:
    """The ClusterQueues' reported reservations equal the workloads' own (no double count)."""
    usage = cq_usage(api.list("Workload"))
    for cq in api.list("ClusterQueue"):
        name = cq["metadata"]["name"]
        reported: dict[FR, int] = {}
        for row in (cq.get("status") or {}).get("flavorsReservation") or []:
            for res in row.get("resources") or []:
                value = resource_value(res["name"], res["total"])
                if value:
                    reported[(row["name"], res["name"])] = value
        assert reported == {fr: v for fr, v in usage.get(name, {}).items() if v}, name


def make_world() -> FakeKueueApi:
    """The fixed queues, empty."""
    api = FakeKueueApi()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for name in ("f1", "f2"):
        api.create(flavor(name))
    for obj in COHORTS:
        api.create(obj)
    for name, obj in QUEUES.items():
        api.create(obj)
        api.create(local_queue(NS, f"lq-{name}", name))
    api.settle()
    return api


@settings(max_examples=150)
@given(st.lists(OPS, min_size=5, max_size=40))
def test_never_admitted_twice_and_quota_never_exceeded(ops: list[Op]) -> None:
    api = make_world()
    for serial, op in enumerate(ops):
        _apply(api, op, serial)
        before = tree_usage(api)
        reserved_before = _reserved(api)
        start = len(api.applied)
        # Two rounds, not a settle: a preemptor waiting for its victims is tried every cycle.
        rounds(api, 2)
        _check_step(api, start, reserved_before)
        check_limits(before, tree_usage(api))
        _check_status(api)
    # What the sequence reached (``--hypothesis-show-statistics`` lists these).
    workloads = api.list("Workload")
    for kind in ("QuotaReserved", "Preempted", "Finished"):
        if any(
            c["type"] == kind and c["status"] == "True"
            for w in workloads
            for c in (w.get("status") or {}).get("conditions") or []
        ):
            event(kind)
