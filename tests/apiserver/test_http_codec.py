"""Bodies in and out as kube-apiserver treats them: Accept negotiation, decode errors worded as
upstream's transformDecodeError, the endpoint's apiVersion/kind check, the 415 and 406 answers."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
import yaml

from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.http_codec import (
    DISCOVERY_TARGETS,
    JSON,
    RESOURCE_TARGETS,
    YAML,
    Negotiated,
    Target,
    decode_object,
    decode_options,
    encode,
    go_json_error,
    negotiate,
    summarize,
)

KUBECTL_GET = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
    "g=meta.k8s.io,application/json"
)
KUBECTL_DISCOVERY = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json;q=0.9"
)


@dataclass(frozen=True)
class NegotiateCase:
    name: str
    accept: str
    want: Negotiated | None  # None: 406
    discovery: bool = False
    stream: bool = False


TABLE_V1 = Target("Table", "meta.k8s.io", "v1")
NEGOTIATE_CASES = (
    NegotiateCase("empty is json", "", Negotiated(JSON)),
    NegotiateCase("plain json", "application/json", Negotiated(JSON)),
    NegotiateCase("any", "*/*", Negotiated(JSON)),
    NegotiateCase("yaml", "application/yaml", Negotiated(YAML)),
    NegotiateCase("kubectl get asks for a table", KUBECTL_GET, Negotiated(JSON, TABLE_V1)),
    NegotiateCase(
        "table v1beta1 only",
        "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        Negotiated(JSON, Target("Table", "meta.k8s.io", "v1beta1")),
    ),
    NegotiateCase(
        "protobuf first falls back to json",
        "application/vnd.kubernetes.protobuf, */*",
        Negotiated(JSON),
    ),
    NegotiateCase("protobuf only", "application/vnd.kubernetes.protobuf", None),
    NegotiateCase("table of an unknown group", "application/json;as=Table;v=v1;g=x.io", None),
    NegotiateCase(
        "quality orders clauses",
        "application/json;q=0.5,application/yaml",
        Negotiated(YAML),
    ),
    NegotiateCase(
        "aggregated discovery",
        KUBECTL_DISCOVERY,
        Negotiated(JSON, Target("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2")),
        discovery=True,
    ),
    NegotiateCase(
        "aggregated discovery is no resource target", KUBECTL_DISCOVERY, Negotiated(JSON)
    ),
    NegotiateCase("stream=watch outside a watch", "application/json;stream=watch", None),
    NegotiateCase(
        "stream=watch on a watch", "application/json;stream=watch", Negotiated(JSON), stream=True
    ),
)


@pytest.mark.parametrize("case", NEGOTIATE_CASES, ids=[c.name for c in NEGOTIATE_CASES])
def test_negotiate(case: NegotiateCase) -> None:
    targets = DISCOVERY_TARGETS if case.discovery else RESOURCE_TARGETS
    if case.want is None:
        with pytest.raises(StatusError) as caught:
            negotiate(case.accept, targets, stream=case.stream)
        assert caught.value.code == 406
        assert caught.value.reason == "NotAcceptable"
        assert caught.value.message == (
            "only the following media types are accepted: application/json, application/yaml"
        )
    else:
        assert negotiate(case.accept, targets, stream=case.stream) == case.want


@dataclass(frozen=True)
class DecodeCase:
    name: str
    body: bytes
    message: str  # "" : accepted
    content_type: str = "application/json"
    code: int = 400


DECODE_CASES = (
    DecodeCase(
        "malformed json",
        b'{"kind": x}',
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character 'x' looking for beginning of value "
        '({"kind": x})',
    ),
    DecodeCase(
        "truncated json",
        b'{"kind": "ConfigMap", "metadata": {"name": "aaaaaaaaaaa"',
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: unexpected end of JSON input "
        '({"kind": "ConfigMap", "metadat ...)',
    ),
    DecodeCase(
        "not an object",
        b"[1]",
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: json: cannot unmarshal array into Go value of type "
        'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
        '"json:\\"kind,omitempty\\"" } (5b315d)',
    ),
    DecodeCase(
        "empty body",
        b"",
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: unexpected end of JSON input (<empty>)",
    ),
    DecodeCase(
        "malformed yaml",
        b"a: [b\n",
        "the object provided is unrecognized (must be of type ConfigMap): error converting "
        "YAML to JSON: yaml: line 2: expected ',' or ']', but got '<stream end>' (613a205b620a)",
        content_type="application/yaml",
    ),
    DecodeCase(
        "another kind",
        b'{"apiVersion": "v1", "kind": "Secret"}',
        'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to '
        "(core.ConfigMap): unknown conversion",
    ),
    DecodeCase(
        "unknown kind",
        b'{"apiVersion": "v1", "kind": "Foo"}',
        'Foo in version "v1" cannot be handled as a ConfigMap: no kind "Foo" is registered for '
        'version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
    ),
    DecodeCase(
        "same kind at another registered version",
        b'{"apiVersion": "example.io/v2", "kind": "ConfigMap"}',
        "the API version in the data (example.io/v2) does not match the expected API version (v1)",
    ),
    DecodeCase(
        "unsupported content type",
        b"{}",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf",
        content_type="text/plain",
        code=415,
    ),
    DecodeCase("kind and apiVersion defaulted", b'{"metadata": {"name": "a"}}', ""),
    DecodeCase(
        "yaml body",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        "",
        content_type="application/yaml; charset=utf-8",
    ),
)


def _known(group: str, version: str, kind: str) -> bool:
    return (group, version, kind) in {
        ("", "v1", "ConfigMap"),
        ("", "v1", "Secret"),
        ("example.io", "v2", "ConfigMap"),
    }


@pytest.mark.parametrize("case", DECODE_CASES, ids=[c.name for c in DECODE_CASES])
def test_decode_object(case: DecodeCase) -> None:
    def decode() -> dict[str, object]:
        return decode_object(
            case.body,
            case.content_type,
            group="",
            version="v1",
            kind="ConfigMap",
            kind_known=_known,
        )

    if not case.message:
        obj = decode()
        assert obj["apiVersion"] == "v1"
        assert obj["kind"] == "ConfigMap"
        assert obj["metadata"] == {"name": "a"}
        return
    with pytest.raises(StatusError) as caught:
        decode()
    assert caught.value.message == case.message
    assert caught.value.code == case.code


@dataclass(frozen=True)
class GoErrorCase:
    name: str
    text: str
    want: str


GO_ERROR_CASES = (
    GoErrorCase("missing value", "{", "unexpected end of JSON input"),
    GoErrorCase(
        "bad key", "{a}", "invalid character 'a' looking for beginning of object key string"
    ),
    GoErrorCase("missing colon", '{"a" 1}', "invalid character '1' after object key"),
    GoErrorCase(
        "missing comma", '{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"
    ),
    GoErrorCase("array element", "[1 2]", "invalid character '2' after array element"),
    GoErrorCase("trailing data", "{} x", "invalid character 'x' after top-level value"),
    # Go's quoteChar escapes what strconv.Quote escapes, and names the escape's letter.
    GoErrorCase("backslash", "\\", "invalid character '\\\\' looking for beginning of value"),
    GoErrorCase("tab in string", '"a\tb"', "invalid character '\\t' in string literal"),
    GoErrorCase("bad escape", '"\\q"', "invalid character 'q' in string escape code"),
    GoErrorCase("open at trailing blanks", '{"a": 1 ', "unexpected end of JSON input"),
)


@pytest.mark.parametrize("case", GO_ERROR_CASES, ids=[c.name for c in GO_ERROR_CASES])
def test_go_json_error(case: GoErrorCase) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(case.text)
    assert go_json_error(caught.value) == case.want


def test_summarize_hexes_what_is_no_object() -> None:
    assert summarize(b"x" * 40) == "78" * 30 + " ..."
    assert summarize(b"{" + b"a" * 40) == "{" + "a" * 29 + " ..."


def test_decode_options_empty_and_yaml() -> None:
    assert decode_options(b"", "", "DeleteOptions") == {}
    assert decode_options(b"propagationPolicy: Orphan\n", "application/yaml", "DeleteOptions") == {
        "propagationPolicy": "Orphan"
    }


def test_encode_yaml_round_trips() -> None:
    obj = {"kind": "ConfigMap", "data": {"a": "1"}}
    assert json.loads(encode(obj)) == obj
    assert yaml.safe_load(encode(obj, YAML)) == obj
