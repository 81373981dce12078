"""The field manager of a write that names none: the prefix of the client's ``User-Agent``, as
upstream's ``managerOrUserAgent``/``prefixFromUserAgent``, recorded in ``managedFields``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.apiserver.http_options import manager_or_user_agent, prefix_from_user_agent
from tests.apiserver.test_http_server import CM, Env, run

pytestmark = pytest.mark.timeout(120)


@dataclass(frozen=True)
class AgentCase:
    name: str
    user_agent: str
    want: str


AGENT_CASES = (
    AgentCase("python client", "OpenAPI-Generator/31.0.0/python", "OpenAPI-Generator"),
    AgentCase("kubectl", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc", "kubectl"),
    AgentCase("no slash", "curl", "curl"),
    AgentCase("empty", "", ""),
    AgentCase("leading slash", "/x/y", ""),
    AgentCase("spaces kept", "my tool (v2)/1", "my tool (v2)"),
    AgentCase("unprintable dropped", "a\tb\x7fc\u200bd/1", "abcd"),
    AgentCase("cut at 128 bytes", "x" * 200, "x" * 128),
    AgentCase("cut before a character that does not fit", "x" * 127 + "é/1", "x" * 127),
    AgentCase("multibyte fits", "x" * 126 + "é/1", "x" * 126 + "é"),
    AgentCase("invalid utf-8 is U+FFFD", "a\udcffb/1", "a\ufffdb"),
)


@pytest.mark.parametrize("case", AGENT_CASES, ids=[c.name for c in AGENT_CASES])
def test_prefix_from_user_agent(case: AgentCase) -> None:
    assert prefix_from_user_agent(case.user_agent) == case.want


def test_an_explicit_field_manager_wins_over_the_agent() -> None:
    assert manager_or_user_agent("mine", "OpenAPI-Generator/31.0.0/python") == "mine"
    assert manager_or_user_agent("", "OpenAPI-Generator/31.0.0/python") == "OpenAPI-Generator"


PYTHON_CLIENT = {"User-Agent": "OpenAPI-Generator/31.0.0/python"}


def test_writes_without_field_manager_are_managed_by_the_agent(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        # Labels to own: a manager that would own nothing gets no entry (upstream).
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"app": "x"}},
        }
        async with env.admin.post(env.url + CM, json=body, headers=PYTHON_CLIENT) as resp:
            assert resp.status == 201
            created = await resp.json()
        assert [(e["manager"], e["operation"]) for e in created["metadata"]["managedFields"]] == [
            ("OpenAPI-Generator", "Update")
        ]
        patch = {"data": {"k": "v"}}
        headers = {"User-Agent": "other-tool/1.0", "Content-Type": "application/merge-patch+json"}
        async with env.admin.patch(env.url + CM + "/a", json=patch, headers=headers) as resp:
            assert resp.status == 200
            patched = await resp.json()
        owners = {e["manager"]: e["fieldsV1"] for e in patched["metadata"]["managedFields"]}
        assert set(owners) == {"OpenAPI-Generator", "other-tool"}
        assert "f:data" in owners["other-tool"]
        apply_headers = {**PYTHON_CLIENT, "Content-Type": "application/apply-patch+yaml"}
        async with env.admin.patch(env.url + CM + "/a", json=body, headers=apply_headers) as resp:
            # Apply still needs an explicit fieldManager: the agent does not stand in for it.
            assert resp.status == 422
            assert "fieldManager: Required value" in (await resp.json())["message"]

    run(tmp_path, scenario)
