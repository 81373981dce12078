"""Worker kubeconfigs as upstream's MultiKueueCluster reconciler takes or refuses them: the
insecure settings (reason ``InsecureKubeConfig``), the Secret's key, and the path rules under
``/etc/multikueue/kubeconfigs`` (reason ``BadKubeConfig``), each with upstream's message."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.kueue.multikueue.kubeconfig import (
    REASON_BAD_KUBECONFIG,
    REASON_INSECURE_KUBECONFIG,
    KubeconfigRejected,
    is_valid_server,
    kubeconfig_from_secret,
    os_error_message,
    parse_worker_kubeconfig,
    resolve_kubeconfig_path,
)

CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n").decode()


def worker(
    *,
    server: str = "https://127.0.0.1:6443/clusters/worker1",
    cluster: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
    extra_clusters: tuple[dict[str, Any], ...] = (),
    extra_users: tuple[dict[str, Any], ...] = (),
) -> str:
    """A worker kubeconfig as Kueue's documentation makes it (CA data and a token)."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "w",
                "cluster": {"server": server, "certificate-authority-data": CA, **(cluster or {})},
            },
            *extra_clusters,
        ],
        "users": [
            {"name": "sa", "user": user if user is not None else {"token": "abc"}},
            *extra_users,
        ],
        "contexts": [{"name": "ctx", "context": {"cluster": "w", "user": "sa"}}],
        "current-context": "ctx",
    }
    return yaml.safe_dump(doc)


@dataclass(frozen=True)
class Refused:
    name: str
    text: str
    message: str
    reason: str = REASON_INSECURE_KUBECONFIG


REFUSED = [
    Refused("token file", worker(user={"tokenFile": "/var/run/token"}), "tokenFile is not allowed"),
    Refused(
        "token file of another user",
        worker(extra_users=({"name": "x", "user": {"tokenFile": "t"}},)),
        "tokenFile is not allowed",
    ),
    Refused(
        "insecure skip tls verify",
        worker(cluster={"insecure-skip-tls-verify": True}),
        "insecure TLS verification is not allowed for cluster w",
    ),
    Refused(
        "certificate authority file",
        worker(cluster={"certificate-authority": "/etc/ca.crt"}),
        "certificate-authority file paths are not allowed, use certificate-authority-data "
        "for cluster w",
    ),
    Refused(
        "empty server of an unused cluster",
        worker(extra_clusters=({"name": "other", "cluster": {"server": ""}},)),
        "server URL is required for cluster other",
    ),
    Refused(
        "basic auth", worker(user={"username": "u", "password": "p"}), "basic auth is not allowed"
    ),
    Refused(
        "exec plugin",
        worker(user={"exec": {"command": "/bin/sh", "apiVersion": "v1"}}),
        "exec plugins are not allowed",
    ),
    Refused(
        "auth provider",
        worker(user={"auth-provider": {"name": "gcp"}}),
        "auth providers are not allowed",
    ),
    Refused(
        "server host neither ip nor dns",
        worker(server="https://bad_host!:6443"),
        "untrusted server endpoint",
    ),
    Refused(
        "empty",
        "",
        "invalid configuration: no configuration has been provided, "
        "try setting KUBERNETES_MASTER environment variable",
    ),
    Refused(
        "not yaml",
        "clusters: [",
        "failed to parse kubeconfig(apiconfig): ",
    ),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c.name for c in REFUSED])
def test_insecure_kubeconfigs_are_refused_with_upstreams_message(case: Refused) -> None:
    with pytest.raises(KubeconfigRejected) as caught:
        parse_worker_kubeconfig(case.text, source="secret kueue-system/w")
    assert caught.value.reason == case.reason
    assert caught.value.message.startswith(case.message)
    assert not caught.value.not_found


def test_a_token_kubeconfig_gives_the_server_ca_and_token() -> None:
    config = parse_worker_kubeconfig(worker(), source="secret kueue-system/w")
    assert config.server == "https://127.0.0.1:6443/clusters/worker1"
    assert config.token == "abc"
    assert config.ca_pem is not None
    assert config.ca_pem.startswith(b"-----BEGIN CERTIFICATE-----")


def test_a_missing_context_is_refused_naming_the_source() -> None:
    text = worker().replace("current-context: ctx", "current-context: nope")
    with pytest.raises(KubeconfigRejected) as caught:
        parse_worker_kubeconfig(text, source="secret kueue-system/w")
    assert caught.value.reason == REASON_INSECURE_KUBECONFIG
    assert "secret kueue-system/w" in caught.value.message
    assert "'nope' not found" in caught.value.message


@dataclass(frozen=True)
class Server:
    name: str
    url: str
    valid: bool


SERVERS = [
    Server("ipv4 with port and path", "https://127.0.0.1:6443/clusters/w1", True),
    Server("dns name", "https://worker-1.example.com", True),
    Server("upper case dns", "https://Worker.Example.COM:443", True),
    Server("ipv6", "https://[::1]:6443", True),
    Server("underscore", "https://bad_host:6443", False),
    Server("empty", "", False),
    Server("no scheme", "127.0.0.1:6443", False),
]


@pytest.mark.parametrize("case", SERVERS, ids=[c.name for c in SERVERS])
def test_server_hosts(case: Server) -> None:
    assert is_valid_server(case.url) is case.valid


@dataclass(frozen=True)
class SecretCase:
    name: str
    secret: dict[str, Any] | None
    message: str
    not_found: bool = False


SECRETS = [
    SecretCase("missing", None, 'Secret "testing-secret" not found', not_found=True),
    SecretCase(
        "no key",
        {"data": {"other": ""}},
        'key "kubeconfig" not found in secret "testing-secret"',
    ),
]


@pytest.mark.parametrize("case", SECRETS, ids=[c.name for c in SECRETS])
def test_secret_refusals(case: SecretCase) -> None:
    with pytest.raises(KubeconfigRejected) as caught:
        kubeconfig_from_secret(case.secret, "testing-secret")
    assert caught.value.reason == REASON_BAD_KUBECONFIG
    assert caught.value.message == case.message
    assert caught.value.not_found is case.not_found


def test_secret_data_is_decoded() -> None:
    data = {"kubeconfig": base64.b64encode(b"kind: Config\n").decode()}
    assert kubeconfig_from_secret({"data": data}, "s") == "kind: Config\n"


@dataclass(frozen=True)
class PathCase:
    name: str
    path: str  # "{prefix}" and "{tmp}" are replaced
    message: str = ""  # "" = accepted
    files: tuple[str, ...] = ()  # created under tmp
    links: tuple[tuple[str, str], ...] = field(default=())  # (link, target) under tmp


PATHS = [
    PathCase("inside", "{prefix}/w1.kubeconfig", files=("prefix/w1.kubeconfig",)),
    PathCase(
        "outside",
        "{tmp}/elsewhere.kubeconfig",
        'kubeconfig path is not under the allowed prefix: "{tmp}/elsewhere.kubeconfig" '
        'is not under "{prefix}"',
        files=("elsewhere.kubeconfig",),
    ),
    PathCase(
        "relative",
        "relative/w1.kubeconfig",
        "kubeconfig path is not under the allowed prefix: path must be absolute",
    ),
    PathCase(
        "dot dot",
        "../{prefix}/w1.kubeconfig",
        'kubeconfig path is not under the allowed prefix: path contains ".."',
    ),
    PathCase(
        "dot dot escaping the prefix",
        "{prefix}/../elsewhere.kubeconfig",
        'kubeconfig path is not under the allowed prefix: "{tmp}/elsewhere.kubeconfig" '
        'is not under "{prefix}"',
        files=("elsewhere.kubeconfig",),
    ),
    PathCase(
        "symlink out of the prefix",
        "{prefix}/link.kubeconfig",
        'kubeconfig path is not under the allowed prefix: "{tmp}/elsewhere.kubeconfig" '
        'is not under "{prefix}"',
        files=("elsewhere.kubeconfig",),
        links=(("prefix/link.kubeconfig", "elsewhere.kubeconfig"),),
    ),
    PathCase(
        "sibling directory sharing the prefix's name",
        "{prefix}-other/w1.kubeconfig",
        'kubeconfig path is not under the allowed prefix: "{prefix}-other/w1.kubeconfig" '
        'is not under "{prefix}"',
        files=("prefix-other/w1.kubeconfig",),
    ),
    PathCase(
        "missing file",
        "{prefix}/missing.kubeconfig",
        "cannot resolve kubeconfig path symlinks: lstat {prefix}/missing.kubeconfig: "
        "no such file or directory",
    ),
    PathCase("empty", "", "kubeconfig path must not be empty"),
]


@pytest.mark.parametrize("case", PATHS, ids=[c.name for c in PATHS])
def test_kubeconfig_paths(case: PathCase, tmp_path: Path) -> None:
    tmp = tmp_path.resolve()
    prefix = tmp / "prefix"
    prefix.mkdir()
    for name in case.files:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text("kind: Config\n")
    for link, target in case.links:
        (tmp / link).symlink_to(tmp / target)
    path = case.path.format(prefix=prefix, tmp=tmp)
    if not case.message:
        assert resolve_kubeconfig_path(path, prefix=str(prefix)) == path
        return
    with pytest.raises(KubeconfigRejected) as caught:
        resolve_kubeconfig_path(path, prefix=str(prefix))
    assert caught.value.reason == REASON_BAD_KUBECONFIG
    assert caught.value.message == case.message.format(prefix=prefix, tmp=tmp)


def test_without_validation_any_path_is_taken_as_given() -> None:
    assert resolve_kubeconfig_path("../x", validate=False) == "../x"


def test_a_missing_prefix_directory_admits_nothing(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigRejected) as caught:
        resolve_kubeconfig_path(f"{tmp_path}/none/w1", prefix=f"{tmp_path}/none")
    assert "is not under" in caught.value.message


def test_os_errors_read_as_go_prints_them(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as caught:
        missing.read_text()
    assert os_error_message("open", str(missing), caught.value) == (
        f"open {missing}: no such file or directory"
    )
