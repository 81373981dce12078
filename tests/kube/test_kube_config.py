"""Kubeconfig loading: contexts, inline and file credentials, KUBECONFIG merging, and one-line
errors naming the file and the field."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.kube import KubeconfigError, load_kubeconfig, load_kubeconfig_text


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(
    *,
    server: str = "https://127.0.0.1:6443/clusters/w1",
    cluster: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    current: str = "ctx",
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user if user is not None else {"token": "t0k"}}],
        "contexts": [
            {"name": "ctx", "context": {"cluster": "c", "user": "u", **(context or {})}},
            {"name": "other", "context": {"cluster": "c", "user": "u", "namespace": "o"}},
        ],
        "current-context": current,
    }


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def test_current_context_inline_data_and_path_prefix(tmp_path: Path) -> None:
    doc = kubeconfig(
        cluster={"certificate-authority-data": b64(b"CA")},
        user={"client-certificate-data": b64(b"CERT"), "client-key-data": b64(b"KEY")},
        context={"namespace": "team"},
    )
    config = load_kubeconfig(write(tmp_path / "kc", doc))
    assert config.server == "https://127.0.0.1:6443/clusters/w1"
    assert (config.ca_pem, config.client_cert_pem, config.client_key_pem) == (
        b"CA",
        b"CERT",
        b"KEY",
    )
    assert (config.namespace, config.context, config.token) == ("team", "ctx", None)


def test_files_are_relative_to_the_kubeconfig_and_a_context_can_be_named(tmp_path: Path) -> None:
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "ca.crt").write_bytes(b"CAFILE")
    (tmp_path / "token").write_text("from-file\n")
    doc = kubeconfig(cluster={"certificate-authority": "pki/ca.crt"}, user={"tokenFile": "token"})
    config = load_kubeconfig(write(tmp_path / "kc", doc), context="other")
    assert config.ca_pem == b"CAFILE"
    assert config.token == "from-file"
    assert config.namespace == "o"


def test_text_reads_as_the_file_does_and_errors_name_its_source(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(b"CAFILE")
    doc = kubeconfig(cluster={"certificate-authority": "ca.crt"})
    path = write(tmp_path / "kc", doc)
    from_text = load_kubeconfig_text(path.read_text(), str(path))
    assert from_text == load_kubeconfig(path)
    assert from_text.ca_pem == b"CAFILE"
    with pytest.raises(KubeconfigError) as err:
        load_kubeconfig_text(yaml.safe_dump(kubeconfig(current="nope")), "secret ns/w1")
    assert str(err.value) == "secret ns/w1: contexts: context 'nope' not found"


def test_kubeconfig_env_merges_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = write(tmp_path / "a", {"current-context": "ctx"})
    second = write(tmp_path / "b", kubeconfig(current="other"))
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'absent'}:{second}")
    config = load_kubeconfig()
    assert (config.context, config.namespace, config.token) == ("ctx", "default", "t0k")


@dataclass(frozen=True)
class BadCase:
    name: str
    doc: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    message: str = ""


BAD = [
    BadCase("not yaml", text="a: [", message="not YAML"),
    BadCase("not a mapping", text="- 1\n", message="not a kubeconfig (expected a mapping)"),
    BadCase(
        "no current context",
        kubeconfig(current=""),
        message="current-context: no context chosen and none current",
    ),
    BadCase("unknown context", kubeconfig(current="nope"), message="contexts: context 'nope'"),
    BadCase(
        "unknown cluster",
        kubeconfig(context={"cluster": "zz"}),
        message="contexts[ctx].cluster: cluster 'zz' not found",
    ),
    BadCase(
        "server not a URL",
        kubeconfig(server="127.0.0.1:6443"),
        message="clusters[c].cluster.server: not an http(s) URL: '127.0.0.1:6443'",
    ),
    BadCase(
        "bad base64",
        kubeconfig(cluster={"certificate-authority-data": "!!"}),
        message="clusters[c].cluster.certificate-authority-data: not valid base64",
    ),
    BadCase(
        "missing file",
        kubeconfig(cluster={"certificate-authority": "nope.crt"}),
        message="clusters[c].cluster.certificate-authority: cannot read",
    ),
    BadCase(
        "exec plugin",
        kubeconfig(user={"exec": {"command": "x"}}),
        message="users[u].user.exec: not supported",
    ),
    BadCase(
        "cert without key",
        kubeconfig(user={"client-certificate-data": b64(b"C")}),
        message="users[u].user.client-key: required with the other half of the pair",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_bad_kubeconfig_is_one_line_naming_file_and_field(tmp_path: Path, case: BadCase) -> None:
    path = tmp_path / "kc"
    if case.text is not None:
        path.write_text(case.text)
    else:
        write(path, case.doc)
    with pytest.raises(KubeconfigError) as err:
        load_kubeconfig(path)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: ")
    assert case.message in text


def test_unreadable_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="absent: cannot read"):
        load_kubeconfig(tmp_path / "absent")
