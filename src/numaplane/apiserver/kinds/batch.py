"""batch/v1 Job: defaulting (``pkg/apis/batch/v1/defaults.go``), the generated selector and
template labels, validation with the immutable template (``pkg/apis/batch/validation``), the
status subresource, the table and the field set (``pkg/registry/batch/job``).

(Over 400 lines: the generated selector, the spec rules and the immutable-template update rules are
one validation upstream; the table reads the same fields.)
"""

from __future__ import annotations

import copy
from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value, not_supported, required
from numaplane.apiserver.kinds.jobpolicy import validate_job_policies
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_int,
    as_list,
    as_str,
    is_dns1123_label,
    metadata,
    name_is_dns_subdomain,
    validate_immutable,
    validate_labels,
    validate_nonnegative,
)
from numaplane.apiserver.kinds.podspec import validate_pod_template
from numaplane.apiserver.kinds.podspec_defaults import default_pod_template
from numaplane.apiserver.kinds.printing import (
    AGE_COLUMN,
    NAME_COLUMN,
    Printer,
    age,
    container_cells,
    format_label_selector,
    human_duration,
    meta_fields,
    name_of,
    parse_time,
    since,
)
from numaplane.apiserver.kinds.strategy import KindStrategy, StatusStrategy
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]

JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL: Final = "job-name"
CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL: Final = "controller-uid"
COMPLETION_MODES: Final = ("NonIndexed", "Indexed")
MAX_PARALLELISM_INDEXED: Final = 100_000
_MAX_INT32: Final = 2**31 - 1
_JOB_RESTART_POLICIES: Final = ("OnFailure", "Never")


def _spec(obj: Object) -> dict[str, Any]:
    return as_dict(obj.get("spec"))


def default_job(job: Object) -> None:
    """``SetDefaults_Job``: completions and parallelism 1 when neither is set, backoffLimit 6
    (MaxInt32 with a per-index limit), the job's labels from the template's when it has none,
    completionMode NonIndexed, suspend false, manualSelector false, podReplacementPolicy, pod
    failure policy statuses, and the template's pod spec defaults."""
    spec = job.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = _MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    template = spec.get("template")
    template_labels = as_dict(as_dict(template).get("metadata")).get("labels")
    meta = job.setdefault("metadata", {})
    if isinstance(template_labels, dict) and not as_dict(meta.get("labels")):
        meta["labels"] = copy.deepcopy(template_labels)
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    policy = spec.get("podFailurePolicy")
    for rule in as_list(as_dict(policy).get("rules")):
        for pattern in as_list(as_dict(rule).get("onPodConditions")):
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if policy is not None else "TerminatingOrFailed"
    if isinstance(template, dict):
        default_pod_template(template)


def prepare_job_create(job: Object) -> None:
    """Status cleared (generation 1 is the strategy's)."""
    job["status"] = {}


def generate_selector(job: Object) -> None:
    """``generateSelector``: unless the selector is manual, the template gets the job-name and
    controller-uid labels (legacy and ``batch.kubernetes.io/`` ones) it lacks, and the selector
    matches ``batch.kubernetes.io/controller-uid``. Needs ``metadata.uid`` set, as upstream
    runs it in ``Validate`` after the uid is assigned."""
    spec = job.setdefault("spec", {})
    if spec.get("manualSelector") is True:
        return
    meta = metadata(job)
    name, uid = as_str(meta.get("name")), as_str(meta.get("uid"))
    template = spec.setdefault("template", {})
    template_meta = template.setdefault("metadata", {})
    labels = template_meta.get("labels")
    if not isinstance(labels, dict):
        labels = template_meta["labels"] = {}
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID_LABEL, uid)


def _selector_matches(selector: object, labels: dict[str, Any]) -> bool:
    sel = as_dict(selector)
    for key, value in as_dict(sel.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for expr in as_list(sel.get("matchExpressions")):
        expr = as_dict(expr)
        key, op = as_str(expr.get("key")), as_str(expr.get("operator"))
        values = as_list(expr.get("values"))
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _validate_has_label(labels: dict[str, Any], key: str, expected: str) -> list[FieldError]:
    path = f"spec.template.metadata.labels[{key}]"
    if key not in labels:
        return [required(path, expected)]
    if labels[key] != expected:
        return [invalid_value(path, labels, f"must be '{expected}'")]
    return []


def _validate_generated_selector(job: Object) -> list[FieldError]:
    spec = _spec(job)
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return []
    meta = metadata(job)
    uid, name = as_str(meta.get("uid")), as_str(meta.get("name"))
    errors: list[FieldError] = []
    if not uid:
        errors.append(required("metadata.uid"))
    labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    errors.extend(_validate_has_label(labels, LEGACY_CONTROLLER_UID_LABEL, uid))
    errors.extend(_validate_has_label(labels, LEGACY_JOB_NAME_LABEL, name))
    errors.extend(_validate_has_label(labels, CONTROLLER_UID_LABEL, uid))
    errors.extend(_validate_has_label(labels, JOB_NAME_LABEL, name))
    if not _selector_matches(spec.get("selector"), {CONTROLLER_UID_LABEL: uid}):
        errors.append(
            invalid_value("spec.selector", spec.get("selector"), "`selector` not auto-generated")
        )
    return errors


def _validate_label_selector(selector: object, path: str) -> list[FieldError]:
    sel = as_dict(selector)
    errors = validate_labels(sel.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(as_list(sel.get("matchExpressions"))):
        expr = as_dict(expr)
        at = f"{path}.matchExpressions[{i}]"
        op = as_str(expr.get("operator"))
        values = as_list(expr.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                errors.append(
                    required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errors.append(
                    FieldError(
                        "FieldValueForbidden",
                        f"{at}.values",
                        detail="may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errors.append(invalid_value(f"{at}.operator", op, "not a valid selector operator"))
    return errors


def validate_job_spec(spec: object, path: str = "spec") -> list[FieldError]:
    """``ValidateJobSpec``: non-negative counts, completion mode, the pod template (restart
    policy OnFailure or Never), a selector that matches the template's labels."""
    spec = as_dict(spec)
    errors: list[FieldError] = []
    for key in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ):
        if spec.get(key) is not None:
            errors.extend(validate_nonnegative(as_int(spec.get(key)), f"{path}.{key}"))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in COMPLETION_MODES:
            errors.append(not_supported(f"{path}.completionMode", mode, COMPLETION_MODES))
        if mode == "Indexed":
            if spec.get("completions") is None:
                errors.append(required(f"{path}.completions", "when completion mode is Indexed"))
            parallelism = spec.get("parallelism")
            if parallelism is not None and as_int(parallelism) > MAX_PARALLELISM_INDEXED:
                errors.append(
                    invalid_value(
                        f"{path}.parallelism",
                        parallelism,
                        f"must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion "
                        "mode is Indexed",
                    )
                )
    template = as_dict(spec.get("template"))
    errors.extend(validate_pod_template(template, f"{path}.template", "Job"))
    restart = as_str(as_dict(template.get("spec")).get("restartPolicy"))
    if restart not in _JOB_RESTART_POLICIES:
        errors.append(
            not_supported(f"{path}.template.spec.restartPolicy", restart, _JOB_RESTART_POLICIES)
        )
    errors.extend(validate_job_policies(spec, path))
    selector = spec.get("selector")
    if selector is None:
        errors.append(required(f"{path}.selector"))
    else:
        errors.extend(_validate_label_selector(selector, f"{path}.selector"))
        labels = as_dict(as_dict(template.get("metadata")).get("labels"))
        if not _selector_matches(selector, labels):
            errors.append(
                invalid_value(
                    f"{path}.template.metadata.labels",
                    labels,
                    "`selector` does not match template `labels`",
                )
            )
    return errors


def validate_job(job: Object) -> list[FieldError]:
    """``jobStrategy.Validate``: the selector generated (unless manual), then ``ValidateJob``
    (the generated labels present, the spec valid, an Indexed job's last pod hostname a DNS
    label)."""
    generate_selector(job)
    return _validate_job_body(job)


def _validate_job_body(job: Object) -> list[FieldError]:
    # ValidateJob proper; an update validates this without regenerating the selector, so a
    # generated label removed by the update is reported, as upstream does.
    errors = _validate_generated_selector(job)
    spec = _spec(job)
    errors.extend(validate_job_spec(spec))
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0:
        name = as_str(metadata(job).get("name"))
        hostname = f"{name}-{completions - 1}"
        if is_dns1123_label(hostname):
            errors.append(
                invalid_value(
                    "metadata.name",
                    name,
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return errors


def _mutable_scheduling(old: Object) -> bool:
    # A suspended job that never started may get new scheduling directives (Kueue relies on
    # it to place a job where its quota is): JobMutableNodeSchedulingDirectives.
    return _spec(old).get("suspend") is True and not as_dict(old.get("status")).get("startTime")


def validate_job_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateJobUpdate``: the new job valid; completions (unless an Indexed job changes it
    with parallelism), selector, template (scheduling directives excepted while suspended and
    never started), completionMode, podFailurePolicy, backoffLimitPerIndex, managedBy and
    successPolicy immutable."""
    errors = _validate_job_body(new)
    spec, old_spec = _spec(new), _spec(old)
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and completions is not None:
        if completions != old_spec.get("completions") and completions != spec.get("parallelism"):
            errors.append(
                invalid_value(
                    "spec.completions",
                    completions,
                    "can only be modified in tandem with spec.parallelism",
                )
            )
    else:
        errors.extend(
            validate_immutable(completions, old_spec.get("completions"), "spec.completions")
        )
    errors.extend(
        validate_immutable(spec.get("selector"), old_spec.get("selector"), "spec.selector")
    )
    template = as_dict(spec.get("template"))
    old_template = copy.deepcopy(as_dict(old_spec.get("template")))
    if _mutable_scheduling(old):
        old_meta = old_template.setdefault("metadata", {})
        new_meta = as_dict(template.get("metadata"))
        old_pod = old_template.setdefault("spec", {})
        new_pod = as_dict(template.get("spec"))
        for meta_key in ("labels", "annotations"):
            _copy_key(old_meta, new_meta, meta_key)
        for pod_key in ("nodeSelector", "tolerations", "schedulingGates", "affinity"):
            _copy_key(old_pod, new_pod, pod_key)
    errors.extend(validate_immutable(template, old_template, "spec.template"))
    for key in (
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ):
        errors.extend(validate_immutable(spec.get(key), old_spec.get(key), f"spec.{key}"))
    return errors


def _copy_key(target: dict[str, Any], source: dict[str, Any], key: str) -> None:
    if key in source:
        target[key] = copy.deepcopy(source[key])
    else:
        target.pop(key, None)


def validate_job_status_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateJobStatus``' counters: active, succeeded, failed, terminating, ready are
    non-negative."""
    status = as_dict(new.get("status"))
    errors: list[FieldError] = []
    for key in ("active", "succeeded", "failed", "terminating", "ready"):
        if status.get(key) is not None:
            errors.extend(validate_nonnegative(as_int(status.get(key)), f"status.{key}"))
    return errors


JOB_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
    defaulter=default_job,
    create_preparer=prepare_job_create,
    validator=validate_job,
    update_validator=validate_job_update,
    status_key="status",
    tracks_generation=True,
)

JOB_STATUS_STRATEGY: Final = StatusStrategy(JOB_STRATEGY, validate_job_status_update)


def job_fields(job: Object) -> dict[str, str]:
    """``JobToSelectableFields``: ``status.successful`` (the succeeded count)."""
    fields = meta_fields(job, True)
    fields["status.successful"] = str(as_int(as_dict(job.get("status")).get("succeeded")))
    return fields


JOB_COLUMNS: Final = (
    NAME_COLUMN,
    TableColumn("Status", "string", "", "Status of the job."),
    TableColumn("Completions", "string", "", "The number of pods which reached phase Succeeded."),
    TableColumn("Duration", "string", "", "Time required to complete the job."),
    AGE_COLUMN,
    TableColumn("Containers", "string", "", "Names of each container in the template.", 1),
    TableColumn("Images", "string", "", "Images referenced by each container in the template.", 1),
    TableColumn(
        "Selector", "string", "", "A label query over pods that should match the pod count.", 1
    ),
)


def _has_condition(job: Object, kind: str) -> bool:
    return any(
        as_dict(c).get("type") == kind and as_dict(c).get("status") == "True"
        for c in as_list(as_dict(job.get("status")).get("conditions"))
    )


def job_row(job: Object, now: float) -> list[Any]:
    """``printJob``: status (Complete, Failed, Terminating, Suspended, FailureTarget,
    SuccessCriteriaMet, Running), completions, duration, age, containers, images, selector."""
    spec, status = _spec(job), as_dict(job.get("status"))
    if _has_condition(job, "Complete"):
        state = "Complete"
    elif _has_condition(job, "Failed"):
        state = "Failed"
    elif metadata(job).get("deletionTimestamp"):
        state = "Terminating"
    elif _has_condition(job, "Suspended"):
        state = "Suspended"
    elif _has_condition(job, "FailureTarget"):
        state = "FailureTarget"
    elif _has_condition(job, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    succeeded = as_int(status.get("succeeded"))
    parallelism = as_int(spec.get("parallelism"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{as_int(spec.get('completions'))}"
    elif parallelism > 1:
        completions = f"{succeeded}/1 of {parallelism}"
    else:
        completions = f"{succeeded}/1"
    started = parse_time(status.get("startTime"))
    finished = parse_time(status.get("completionTime"))
    if started is None:
        duration = ""
    elif finished is None:
        duration = since(status.get("startTime"), now)
    else:
        duration = human_duration(finished - started)
    names, images = container_cells(as_dict(spec.get("template")).get("spec"))
    selector = format_label_selector(spec.get("selector"))
    return [name_of(job), state, completions, duration, age(job, now), names, images, selector]


JOB_PRINTER: Final = Printer(JOB_COLUMNS, job_row)
