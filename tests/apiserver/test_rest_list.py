"""List and watch as kube-apiserver serves them: selectors, pagination and continue tokens, the
resourceVersion rules, watch events across selector transitions, bookmarks and 410."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.rest_listopts import CONTINUE_EXPIRED, decode_continue, encode_continue
from tests.apiserver.rest_support import (
    CONFIGMAPS,
    CTX,
    NAMESPACES,
    PODS,
    obj,
    raises,
    raises_now,
    run_cluster,
)

pytestmark = pytest.mark.timeout(120)


def labelled(name: str, **labels: str) -> dict[str, Any]:
    """A ConfigMap with ``labels``."""
    cm = obj("ConfigMap", name)
    cm["metadata"]["labels"] = labels
    return cm


async def seed(cluster: Cluster) -> None:
    """Five ConfigMaps a..e, labelled by tier."""
    for name, tier in (("a", "web"), ("b", "db"), ("c", "web"), ("d", "cache"), ("e", "web")):
        await cluster.create(CTX, CONFIGMAPS, "default", labelled(name, tier=tier))


def names(result_body: dict[str, Any]) -> list[str]:
    return [o["metadata"]["name"] for o in result_body["items"]]


@dataclass(frozen=True)
class SelectorCase:
    name: str
    labels: str
    fields: str
    expected: tuple[str, ...]


SELECTORS = [
    SelectorCase("equals", "tier=web", "", ("a", "c", "e")),
    SelectorCase("not-equals", "tier!=web", "", ("b", "d")),
    SelectorCase("in", "tier in (db,cache)", "", ("b", "d")),
    SelectorCase("notin", "tier notin (web)", "", ("b", "d")),
    SelectorCase("exists", "tier", "", ("a", "b", "c", "d", "e")),
    SelectorCase("not-exists", "!tier", "", ()),
    SelectorCase("field-name", "", "metadata.name=c", ("c",)),
    SelectorCase("field-and-label", "tier=web", "metadata.name!=a", ("c", "e")),
]


@pytest.mark.parametrize("case", SELECTORS, ids=[c.name for c in SELECTORS])
def test_list_selectors(tmp_path: Path, case: SelectorCase) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        result = cluster.list(
            CTX, CONFIGMAPS, "default", label_selector=case.labels, field_selector=case.fields
        )
        assert tuple(names(result.body)) == case.expected
        assert result.body["kind"] == "ConfigMapList"
        assert result.body["apiVersion"] == "v1"
        # Items of a built-in list carry no kind/apiVersion of their own, as upstream.
        assert all("kind" not in item for item in result.body["items"])

    run_cluster(tmp_path, body)


@dataclass(frozen=True)
class ListErrorCase:
    name: str
    options: dict[str, Any]
    code: int
    message: str


LIST_ERRORS = [
    ListErrorCase(
        "unknown-field-label", {"field_selector": "spec.nope=1"}, 400,
        "field label not supported: spec.nope",
    ),
    ListErrorCase(
        "match-without-rv", {"resource_version_match": "NotOlderThan"}, 422,
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
    ),
    ListErrorCase(
        "exact-zero", {"resource_version": "0", "resource_version_match": "Exact"}, 422,
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    ),
    ListErrorCase(
        "match-without-rv-and-unknown", {"resource_version_match": "Newest"}, 422,
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided, "
        'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", '
        '"NotOlderThan", ""]',
    ),
    ListErrorCase(
        "unknown-match", {"resource_version": "1", "resource_version_match": "Newest"}, 422,
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: '
        '"Newest": supported values: "Exact", "NotOlderThan", ""',
    ),
    ListErrorCase(
        "continue-with-rv", {"continue_": encode_continue(3, "a\x00"), "resource_version": "5"},
        400, "specifying resource version is not allowed when using continue",
    ),
    ListErrorCase(
        "bad-continue", {"continue_": "ab%%"}, 400,
        "continue key is not valid: illegal base64 data at input byte 2",
    ),
    ListErrorCase(
        "foreign-continue", {"continue_": "e30"}, 400,
        "continue key is not valid: server does not recognize this encoded version",
    ),
    ListErrorCase(
        "too-large-rv", {"resource_version": "999999"}, 504, "Too large resource version: 999999",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", LIST_ERRORS, ids=[c.name for c in LIST_ERRORS])
def test_list_errors(tmp_path: Path, case: ListErrorCase) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        error = raises_now(lambda: cluster.list(CTX, CONFIGMAPS, "default", **case.options))
        assert error.code == case.code
        assert error.message.startswith(case.message)

    run_cluster(tmp_path, body)


def test_pagination_walks_a_consistent_snapshot(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        first = cluster.list(CTX, CONFIGMAPS, "default", limit=2).body
        assert names(first) == ["a", "b"]
        assert first["metadata"]["remainingItemCount"] == 3
        snapshot_rv = first["metadata"]["resourceVersion"]
        # Changes after the first page do not show in later pages.
        await cluster.delete(CTX, CONFIGMAPS, "default", "c", {})
        await cluster.create(CTX, CONFIGMAPS, "default", labelled("bb"))
        second = cluster.list(
            CTX, CONFIGMAPS, "default", limit=2, continue_=first["metadata"]["continue"]
        ).body
        assert names(second) == ["c", "d"]
        assert second["metadata"]["resourceVersion"] == snapshot_rv
        third = cluster.list(
            CTX, CONFIGMAPS, "default", limit=2, continue_=second["metadata"]["continue"]
        ).body
        assert names(third) == ["e"]
        assert "continue" not in third["metadata"]

    run_cluster(tmp_path, body)


def test_pagination_across_namespaces(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, NAMESPACES, "", obj("Namespace", "a-b", namespace=""))
        await cluster.create(CTX, CONFIGMAPS, "a-b", obj("ConfigMap", "x", namespace="a-b"))
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "y"))
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "z"))
        seen = []
        token = ""
        while True:
            page = cluster.list(CTX, CONFIGMAPS, "", limit=1, continue_=token).body
            seen += [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in page["items"]]
            token = page["metadata"].get("continue", "")
            if not token:
                break
        assert seen == [("a-b", "x"), ("default", "y"), ("default", "z")]

    run_cluster(tmp_path, body)


def test_continue_after_compaction_is_410_with_a_fresh_token(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        first = cluster.list(CTX, CONFIGMAPS, "default", limit=2).body
        await cluster.create(CTX, CONFIGMAPS, "default", labelled("f"))
        await cluster.store.compact(cluster.store.current_rv())
        error = raises_now(
            lambda: cluster.list(
                CTX, CONFIGMAPS, "default", limit=2, continue_=first["metadata"]["continue"]
            )
        )
        assert (error.code, error.reason, error.message) == (410, "Expired", CONTINUE_EXPIRED)
        fresh = error.status()["metadata"]["continue"]
        assert decode_continue(fresh)[0] == -1
        rest = cluster.list(CTX, CONFIGMAPS, "default", limit=10, continue_=fresh).body
        assert names(rest) == ["c", "d", "e", "f"]

    run_cluster(tmp_path, body)


def test_exact_resource_version_lists_history(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        rv = cluster.list(CTX, CONFIGMAPS, "default").body["metadata"]["resourceVersion"]
        await cluster.delete(CTX, CONFIGMAPS, "default", "a", {})
        old = cluster.list(
            CTX, CONFIGMAPS, "default", resource_version=rv, resource_version_match="Exact"
        ).body
        assert names(old) == ["a", "b", "c", "d", "e"]
        now = cluster.list(CTX, CONFIGMAPS, "default", resource_version=rv).body
        assert names(now) == ["b", "c", "d", "e"]

    run_cluster(tmp_path, body)


async def take(stream: AsyncIterator[tuple[str, dict[str, Any]]], n: int) -> list[tuple[str, str]]:
    """The first ``n`` events as ``(type, name)``."""
    out = []
    async for kind, body in stream:
        out.append((kind, body["metadata"].get("name", "")))
        if len(out) == n:
            break
    return out


def test_watch_turns_selector_transitions_into_added_and_deleted(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        start = str(cluster.store.current_rv())
        stream = cluster.watch(
            CTX, CONFIGMAPS, "default", label_selector="tier=web", resource_version=start
        )
        cm = (await cluster.create(CTX, CONFIGMAPS, "default", labelled("x", tier="db"))).body
        moved = copy.deepcopy(cm)
        moved["metadata"]["labels"] = {"tier": "web"}
        moved = (await cluster.update(CTX, CONFIGMAPS, "default", "x", moved)).body
        touched = copy.deepcopy(moved)
        touched["data"] = {"k": "v"}
        touched = (await cluster.update(CTX, CONFIGMAPS, "default", "x", touched)).body
        away = copy.deepcopy(touched)
        away["metadata"]["labels"] = {"tier": "db"}
        await cluster.update(CTX, CONFIGMAPS, "default", "x", away)
        await cluster.create(CTX, CONFIGMAPS, "default", labelled("y", tier="web"))
        await cluster.delete(CTX, CONFIGMAPS, "default", "y", {})
        events = [await anext(stream) for _ in range(5)]
        assert [(k, o["metadata"]["name"]) for k, o in events] == [
            ("ADDED", "x"),
            ("MODIFIED", "x"),
            ("DELETED", "x"),
            ("ADDED", "y"),
            ("DELETED", "y"),
        ]
        # Leaving the selection: the last matching state, at the event's resourceVersion.
        left = events[2][1]
        assert left["metadata"]["labels"] == {"tier": "web"}
        assert int(left["metadata"]["resourceVersion"]) > int(
            touched["metadata"]["resourceVersion"]
        )

    run_cluster(tmp_path, body)


def test_watch_from_empty_resource_version_starts_with_the_state(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        stream = cluster.watch(CTX, CONFIGMAPS, "default", label_selector="tier=web")
        assert await take(stream, 3) == [("ADDED", "a"), ("ADDED", "c"), ("ADDED", "e")]

    run_cluster(tmp_path, body)


def test_watch_from_compacted_resource_version_is_one_error_event(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        await cluster.store.compact(cluster.store.current_rv())
        events = [e async for e in cluster.watch(CTX, CONFIGMAPS, "default", resource_version="1")]
        assert len(events) == 1
        kind, status = events[0]
        assert kind == "ERROR"
        assert (status["code"], status["reason"]) == (410, "Expired")
        assert status["message"].startswith("too old resource version: 1")

    run_cluster(tmp_path, body)


def test_watch_bookmarks_carry_the_latest_resource_version(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        rv = cluster.store.current_rv()
        stream = cluster.watch(
            CTX, PODS, "default", resource_version=str(rv), allow_bookmarks=True,
            bookmark_interval_s=0.01,
        )  # fmt: skip
        kind, bookmark = await anext(stream)
        assert kind == "BOOKMARK"
        assert bookmark == {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": str(rv)},
        }
        await stream.aclose()  # type: ignore[attr-defined]

    run_cluster(tmp_path, body)


def test_watch_bad_selector_is_refused_at_once(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        error = raises_now(lambda: cluster.watch(CTX, CONFIGMAPS, "default", label_selector="a in"))
        assert error.code == 400

    run_cluster(tmp_path, body)


def test_get_missing_is_not_found(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        error = raises_now(lambda: cluster.get(CTX, CONFIGMAPS, "default", "nope"))
        assert (error.code, error.reason, error.message) == (
            404,
            "NotFound",
            'configmaps "nope" not found',
        )
        assert error.details == {"name": "nope", "group": "", "kind": "configmaps"}

    run_cluster(tmp_path, body)


def test_delete_missing_is_not_found(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        error = await raises(cluster.delete(CTX, CONFIGMAPS, "default", "nope", {}))
        assert error.code == 404

    run_cluster(tmp_path, body)


def test_watch_with_initial_events_ends_them_with_a_bookmark(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await seed(cluster)
        rv = cluster.store.current_rv()
        stream = cluster.watch(
            CTX, CONFIGMAPS, "default", label_selector="tier=web", allow_bookmarks=True,
            resource_version_match="NotOlderThan", send_initial_events=True,
        )  # fmt: skip
        events = [await anext(stream) for _ in range(4)]
        assert [(k, o["metadata"].get("name", "")) for k, o in events[:3]] == [
            ("ADDED", "a"),
            ("ADDED", "c"),
            ("ADDED", "e"),
        ]
        kind, bookmark = events[3]
        assert kind == "BOOKMARK"
        assert bookmark["metadata"] == {
            "resourceVersion": str(rv),
            "annotations": {"k8s.io/initial-events-end": "true"},
        }
        await cluster.create(CTX, CONFIGMAPS, "default", labelled("f", tier="web"))
        assert (await anext(stream))[0] == "ADDED"
        await stream.aclose()  # type: ignore[attr-defined]

    run_cluster(tmp_path, body)


def test_watch_options_are_validated(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        error = raises_now(
            lambda: cluster.watch(CTX, CONFIGMAPS, "default", resource_version_match="Exact")
        )
        assert (error.code, error.message) == (
            422,
            'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: '
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, "
            'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
        )

    run_cluster(tmp_path, body)
