"""The bootstrap RBAC policy is reconciled on every start, as kube-apiserver's: a default
object that lost a rule or a subject gets it back, unless annotated ``autoupdate: "false"``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from numaplane.testing.apiserver import RunningApiServer, running_apiserver

pytestmark = pytest.mark.timeout(180)

RBAC = "/apis/rbac.authorization.k8s.io/v1"
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"


def _get(server: RunningApiServer, path: str) -> dict[str, Any]:
    code, body = server.get(path)
    assert code == 200, body
    obj: dict[str, Any] = json.loads(body)
    return obj


def _put(server: RunningApiServer, path: str, obj: dict[str, Any]) -> None:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(obj).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    context = server.credentials.ssl_context()
    try:
        with urllib.request.urlopen(request, context=context, timeout=10.0) as resp:
            assert resp.status == 200
    except urllib.error.HTTPError as err:
        raise AssertionError(f"PUT {path}: {err.code} {err.read()!r}") from err


def _drop_first_rule(server: RunningApiServer, name: str, autoupdate: str | None = None) -> Any:
    """Remove ``name``'s first rule (and set its autoupdate annotation); the rule removed."""
    path = f"{RBAC}/clusterroles/{name}"
    role = _get(server, path)
    removed = role["rules"].pop(0)
    if autoupdate is not None:
        role["metadata"]["annotations"][AUTOUPDATE] = autoupdate
    _put(server, path, role)
    assert not _covered(removed, _get(server, path)["rules"])
    return removed


def _covered(rule: dict[str, Any], rules: list[dict[str, Any]]) -> bool:
    """Whether every (group, resource, verb) of ``rule`` is in some rule of ``rules`` (a restored
    rule comes back broken down, one group, resource and verb a rule, as upstream adds it)."""
    held = {
        (g, r, v)
        for held_rule in rules
        for g in held_rule.get("apiGroups", [])
        for r in held_rule.get("resources", [])
        for v in held_rule["verbs"]
    }
    return all(
        (g, r, v) in held
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    )


def test_restart_restores_what_a_default_object_lost_unless_protected(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_apiserver(data) as server:
        view_rule = _drop_first_rule(server, "view")
        edit_rule = _drop_first_rule(server, "edit", autoupdate="false")
        binding_path = f"{RBAC}/clusterrolebindings/system:discovery"
        binding = _get(server, binding_path)
        binding["subjects"] = []
        _put(server, binding_path, binding)
    with running_apiserver(data) as server:
        view = _get(server, f"{RBAC}/clusterroles/view")
        edit = _get(server, f"{RBAC}/clusterroles/edit")
        binding = _get(server, binding_path)
    assert _covered(view_rule, view["rules"])
    assert view["metadata"]["annotations"][AUTOUPDATE] == "true"
    assert not _covered(edit_rule, edit["rules"])
    assert edit["metadata"]["annotations"][AUTOUPDATE] == "false"
    assert [s["name"] for s in binding["subjects"]] == ["system:authenticated"]
