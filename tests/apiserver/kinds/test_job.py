"""batch/v1 Job: defaulting, generated selector, validation messages, the immutable template
(and the scheduling directives a suspended job may change), status, table and field set."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.errors import invalid
from numaplane.apiserver.kinds.batch import (
    JOB_PRINTER,
    JOB_STATUS_STRATEGY,
    JOB_STRATEGY,
    job_fields,
)

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
CREATED = "2023-11-14T22:10:00Z"
UID = "0f6f1c2e-1111-2222-3333-444455556666"


def job(name: str = "j", **spec: Any) -> dict[str, Any]:
    template = spec.pop(
        "template",
        {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}},
    )
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": UID,
            "creationTimestamp": CREATED,
        },
        "spec": {"template": template, **spec},
    }


def created(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    obj = copy.deepcopy(obj)
    JOB_STRATEGY.default(obj)
    JOB_STRATEGY.prepare_for_create(obj)
    errors = JOB_STRATEGY.validate(obj)
    return obj, [str(e) for e in errors]


def test_defaults_and_generated_selector() -> None:
    obj, errors = created(job())
    assert errors == []
    spec = obj["spec"]
    assert {k: v for k, v in spec.items() if k != "template"} == {
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "manualSelector": False,
        "podReplacementPolicy": "TerminatingOrFailed",
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}},
    }
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": UID,
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": UID,
        "job-name": "j",
    }
    assert obj["metadata"]["generation"] == 1
    assert obj["status"] == {}


@dataclass(frozen=True)
class DefaultCase:
    name: str
    spec: dict[str, Any]
    expected: dict[str, Any]


DEFAULTS = [
    DefaultCase("parallelism alone", {"parallelism": 3}, {"parallelism": 3, "completions": None}),
    DefaultCase("completions alone", {"completions": 5}, {"parallelism": 1, "completions": 5}),
    DefaultCase("per-index backoff", {"backoffLimitPerIndex": 1}, {"backoffLimit": 2**31 - 1}),
    DefaultCase(
        "pod failure policy",
        {
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            }
        },
        {
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {
                "rules": [
                    {
                        "action": "Ignore",
                        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                    }
                ]
            },
        },
    ),
]


@pytest.mark.parametrize("case", DEFAULTS, ids=lambda c: c.name)
def test_defaults(case: DefaultCase) -> None:
    obj = job(**copy.deepcopy(case.spec))
    JOB_STRATEGY.default(obj)
    assert {k: obj["spec"].get(k) for k in case.expected} == case.expected


def test_job_labels_come_from_the_template() -> None:
    obj = job(template={"metadata": {"labels": {"app": "x"}}, "spec": {}})
    JOB_STRATEGY.default(obj)
    assert obj["metadata"]["labels"] == {"app": "x"}


@dataclass(frozen=True)
class InvalidCase:
    name: str
    obj: dict[str, Any]
    message: str


INVALID = [
    InvalidCase(
        "restart policy Always",
        job(template={"spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
        'Job.batch "j" is invalid: spec.template.spec.restartPolicy: Unsupported value: '
        '"Always": supported values: "OnFailure", "Never"',
    ),
    InvalidCase(
        "negative parallelism",
        job(parallelism=-1),
        'Job.batch "j" is invalid: spec.parallelism: Invalid value: -1: must be greater than or '
        "equal to 0",
    ),
    InvalidCase(
        "indexed without completions",
        job(completionMode="Indexed", parallelism=2),
        'Job.batch "j" is invalid: spec.completions: Required value: when completion mode is '
        "Indexed",
    ),
    InvalidCase(
        "unknown completion mode",
        job(completionMode="Sometimes"),
        'Job.batch "j" is invalid: spec.completionMode: Unsupported value: "Sometimes": '
        'supported values: "NonIndexed", "Indexed"',
    ),
    InvalidCase(
        "manual selector not matching the template",
        job(
            manualSelector=True,
            selector={"matchLabels": {"app": "x"}},
        ),
        'Job.batch "j" is invalid: spec.template.metadata.labels: Invalid value: {}: '
        "`selector` does not match template `labels`",
    ),
    InvalidCase(
        "generated selector contradicted",
        job(selector={"matchLabels": {"batch.kubernetes.io/controller-uid": "other"}}),
        'Job.batch "j" is invalid: [spec.selector: Invalid value: '
        '{"matchLabels":{"batch.kubernetes.io/controller-uid":"other"}}: `selector` not '
        "auto-generated, spec.template.metadata.labels: Invalid value: "
        f'{{"batch.kubernetes.io/controller-uid":"{UID}","batch.kubernetes.io/job-name":"j",'
        f'"controller-uid":"{UID}","job-name":"j"}}: `selector` does not match template `labels`]',
    ),
    InvalidCase(
        "name too long for the job-name label",
        job(name="a" * 64),
        'Job.batch "'
        + "a" * 64
        + '" is invalid: [spec.template.labels: Invalid value: "'
        + "a" * 64
        + '": must be no more than 63 characters, spec.template.labels: Invalid value: "'
        + "a" * 64
        + '": must be no more than 63 characters]',
    ),
    InvalidCase(
        "indexed pod hostname too long",
        job(name="a" * 62, completionMode="Indexed", completions=10),
        'Job.batch "'
        + "a" * 62
        + '" is invalid: metadata.name: Invalid value: "'
        + "a" * 62
        + '": will not able to create pod with invalid DNS label: '
        + "a" * 62
        + "-9",
    ),
]


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c.name)
def test_invalid_jobs(case: InvalidCase) -> None:
    obj = copy.deepcopy(case.obj)
    JOB_STRATEGY.default(obj)
    errors = JOB_STRATEGY.validate(obj)
    name = obj["metadata"]["name"]
    assert invalid("batch", "Job", name, errors).message == case.message


def stored(**spec: Any) -> dict[str, Any]:
    obj, errors = created(job(**spec))
    assert errors == []
    obj["metadata"]["resourceVersion"] = "3"
    return obj


@dataclass(frozen=True)
class UpdateCase:
    name: str
    suspend: bool
    started: bool
    change: Any
    errors: tuple[str, ...]


def _node_selector(obj: dict[str, Any]) -> None:
    obj["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}


def _image(obj: dict[str, Any]) -> None:
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"


def _completions(obj: dict[str, Any]) -> None:
    obj["spec"]["completions"] = 4


def _parallelism(obj: dict[str, Any]) -> None:
    obj["spec"]["parallelism"] = 4


def _drop_job_name_label(obj: dict[str, Any]) -> None:
    del obj["spec"]["template"]["metadata"]["labels"]["job-name"]


UPDATES = [
    UpdateCase("parallelism may change", False, False, _parallelism, ()),
    UpdateCase(
        "completions immutable",
        False,
        False,
        _completions,
        ("spec.completions: Invalid value: 4: field is immutable",),
    ),
    UpdateCase(
        "suspended, never started: node selector may change", True, False, _node_selector, ()
    ),
    UpdateCase(
        "suspended but started: template immutable",
        True,
        True,
        _node_selector,
        ("spec.template: Invalid value: ",),
    ),
    UpdateCase(
        "running: image immutable", False, False, _image, ("spec.template: Invalid value: ",)
    ),
    UpdateCase(
        "a generated label removed is not put back",
        False,
        False,
        _drop_job_name_label,
        ("spec.template.metadata.labels[job-name]: Required value: j", "spec.template: "),
    ),
]


@pytest.mark.parametrize("case", UPDATES, ids=lambda c: c.name)
def test_job_update_rules(case: UpdateCase) -> None:
    old = stored(suspend=case.suspend)
    if case.started:
        old["status"] = {"startTime": CREATED}
    new = copy.deepcopy(old)
    case.change(new)
    JOB_STRATEGY.default(new)
    JOB_STRATEGY.prepare_for_update(new, old)
    errors = [str(e) for e in JOB_STRATEGY.validate_update(new, old)]
    assert len(errors) == len(case.errors)
    for error, expected in zip(errors, case.errors, strict=True):
        assert error.startswith(expected)
        assert error == expected or error.endswith("field is immutable")


def test_generation_and_status_subresource() -> None:
    old = stored()
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 2
    new["status"] = {"succeeded": 1}
    JOB_STRATEGY.prepare_for_update(new, old)
    assert new["status"] == {}
    assert JOB_STRATEGY.bumps_generation(new, old)
    status_write = copy.deepcopy(old)
    status_write["spec"]["parallelism"] = 9
    status_write["status"] = {"succeeded": -1}
    JOB_STATUS_STRATEGY.prepare_for_update(status_write, old)
    assert status_write["spec"] == old["spec"]
    assert [str(e) for e in JOB_STATUS_STRATEGY.validate_update(status_write, old)] == [
        "status.succeeded: Invalid value: -1: must be greater than or equal to 0"
    ]
    assert not JOB_STATUS_STRATEGY.bumps_generation(status_write, old)


@dataclass(frozen=True)
class RowCase:
    name: str
    spec: dict[str, Any]
    status: dict[str, Any]
    cells: list[Any]


SELECTOR = f"batch.kubernetes.io/controller-uid={UID}"
ROWS = [
    RowCase("new", {}, {}, ["j", "Running", "0/1", "", "3m20s", "c", "busybox", SELECTOR]),
    RowCase(
        "running for a minute",
        {"completions": 3},
        {"startTime": "2023-11-14T22:12:20Z", "succeeded": 1},
        ["j", "Running", "1/3", "60s", "3m20s", "c", "busybox", SELECTOR],
    ),
    RowCase(
        "complete",
        {},
        {
            "startTime": "2023-11-14T22:10:00Z",
            "completionTime": "2023-11-14T22:10:42Z",
            "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True"}],
        },
        ["j", "Complete", "1/1", "42s", "3m20s", "c", "busybox", SELECTOR],
    ),
    RowCase(
        "suspended, parallel without completions",
        {"completions": None, "parallelism": 4},
        {"conditions": [{"type": "Suspended", "status": "True"}]},
        ["j", "Suspended", "0/1 of 4", "", "3m20s", "c", "busybox", SELECTOR],
    ),
]


@pytest.mark.parametrize("case", ROWS, ids=lambda c: c.name)
def test_table_rows(case: RowCase) -> None:
    obj = stored()
    obj["spec"].update(case.spec)
    if obj["spec"].get("completions") is None:
        obj["spec"].pop("completions")
    obj["status"] = case.status
    assert JOB_PRINTER.row(obj, NOW) == case.cells


def test_field_set() -> None:
    obj = stored()
    obj["status"] = {"succeeded": 2}
    assert job_fields(obj) == {
        "metadata.name": "j",
        "metadata.namespace": "default",
        "status.successful": "2",
    }


@dataclass(frozen=True)
class PolicyCase:
    name: str
    spec: dict[str, Any]
    errors: tuple[str, ...]


POLICY_CASES = [
    PolicyCase("managed by MultiKueue", {"managedBy": "kueue.x-k8s.io/multikueue"}, ()),
    PolicyCase(
        "managedBy without a domain",
        {"managedBy": "multikueue"},
        (
            'spec.managedBy: Invalid value: "multikueue": must be a domain-prefixed path (such '
            'as "acme.io/foo")',
        ),
    ),
    PolicyCase(
        "managedBy too long",
        {"managedBy": "example.com/" + "x" * 60},
        ("spec.managedBy: Too long: may not be more than 63 bytes",),
    ),
    PolicyCase(
        "per-index backoff needs Indexed",
        {"backoffLimitPerIndex": 1},
        ("spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",),
    ),
    PolicyCase(
        "max failed indexes need per-index backoff",
        {"completionMode": "Indexed", "completions": 2, "maxFailedIndexes": 1},
        ("spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",),
    ),
    PolicyCase(
        "pod failure policy with OnFailure and an unknown action",
        {
            "podFailurePolicy": {"rules": [{"action": "Retry"}]},
            "template": {
                "spec": {
                    "restartPolicy": "OnFailure",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            },
        },
        (
            'spec.podFailurePolicy.rules[0].action: Unsupported value: "Retry": supported values: '
            '"Count", "FailIndex", "FailJob", "Ignore"',
            'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is '
            "supported when podFailurePolicy is specified",
        ),
    ),
]


@pytest.mark.parametrize("case", POLICY_CASES, ids=lambda c: c.name)
def test_job_policies(case: PolicyCase) -> None:
    _, errors = created(job(**copy.deepcopy(case.spec)))
    assert tuple(errors) == case.errors
