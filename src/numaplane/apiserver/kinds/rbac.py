"""rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding, ClusterRoleBinding
(``pkg/apis/rbac/validation``, ``pkg/apis/rbac/v1/defaults.go``, their printers).
"""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value, not_supported, required
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_list,
    as_str,
    name_is_dns_subdomain,
    validate_labels,
    validate_path_segment_name,
)
from numaplane.apiserver.kinds.printing import (
    AGE_COLUMN,
    AGE_DESCRIPTION,
    NAME_COLUMN,
    Printer,
    age,
    created_at,
    name_of,
)
from numaplane.apiserver.kinds.strategy import KindStrategy
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]

RBAC_GROUP: Final = "rbac.authorization.k8s.io"
SUBJECT_KINDS: Final = ("ServiceAccount", "User", "Group")


def _default_subjects(obj: Object) -> None:
    for subject in as_list(obj.get("subjects")):
        is_user_or_group = isinstance(subject, dict) and subject.get("kind") in ("User", "Group")
        if is_user_or_group and not subject.get("apiGroup"):
            subject["apiGroup"] = RBAC_GROUP


def default_binding(binding: Object) -> None:
    """``SetDefaults_Subject`` and the role reference's group: User and Group subjects and the
    roleRef default to ``rbac.authorization.k8s.io``."""
    role_ref = binding.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = RBAC_GROUP
    _default_subjects(binding)


def validate_policy_rule(rule: object, namespaced: bool, path: str) -> list[FieldError]:
    """``ValidatePolicyRule``."""
    rule = as_dict(rule)
    errors: list[FieldError] = []
    if not as_list(rule.get("verbs")):
        errors.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = as_list(rule.get("nonResourceURLs"))
    if urls:
        if namespaced:
            errors.append(
                invalid_value(
                    f"{path}.nonResourceURLs",
                    urls,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if (
            as_list(rule.get("apiGroups"))
            or as_list(rule.get("resources"))
            or as_list(rule.get("resourceNames"))
        ):
            errors.append(
                invalid_value(
                    f"{path}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errors
    if not as_list(rule.get("apiGroups")):
        errors.append(
            required(f"{path}.apiGroups", "resource rules must supply at least one api group")
        )
    if not as_list(rule.get("resources")):
        errors.append(
            required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return errors


def _validate_rules(role: Object, namespaced: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, rule in enumerate(as_list(role.get("rules"))):
        errors.extend(validate_policy_rule(rule, namespaced, f"rules[{i}]"))
    return errors


def validate_role(role: Object) -> list[FieldError]:
    """``ValidateRole``: every rule valid, namespaced (no non-resource URLs)."""
    return _validate_rules(role, True)


def validate_cluster_role(role: Object) -> list[FieldError]:
    """``ValidateClusterRole``: every rule valid; an aggregation rule names selectors."""
    errors = _validate_rules(role, False)
    aggregation = role.get("aggregationRule")
    if isinstance(aggregation, dict):
        selectors = as_list(aggregation.get("clusterRoleSelectors"))
        if not selectors:
            errors.append(
                required(
                    "aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                )
            )
        for i, selector in enumerate(selectors):
            errors.extend(
                validate_labels(
                    as_dict(selector).get("matchLabels"),
                    f"aggregationRule.clusterRoleSelectors[{i}].matchLabels",
                )
            )
    return errors


def validate_subject(subject: object, namespaced: bool, path: str) -> list[FieldError]:
    """``ValidateRoleBindingSubject``."""
    subject = as_dict(subject)
    errors: list[FieldError] = []
    name = as_str(subject.get("name"))
    if not name:
        errors.append(required(f"{path}.name"))
    kind = as_str(subject.get("kind"))
    group = as_str(subject.get("apiGroup"))
    if kind == "ServiceAccount":
        if name:
            errors.extend(
                invalid_value(f"{path}.name", name, m) for m in name_is_dns_subdomain(name, False)
            )
        if group:
            errors.append(not_supported(f"{path}.apiGroup", group, ("",)))
        if not namespaced and not as_str(subject.get("namespace")):
            errors.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != RBAC_GROUP:
            errors.append(not_supported(f"{path}.apiGroup", group, (RBAC_GROUP,)))
    else:
        errors.append(not_supported(f"{path}.kind", kind, SUBJECT_KINDS))
    return errors


def _validate_binding(binding: Object, namespaced: bool) -> list[FieldError]:
    role_ref = as_dict(binding.get("roleRef"))
    errors: list[FieldError] = []
    group = as_str(role_ref.get("apiGroup"))
    if group != RBAC_GROUP:
        errors.append(not_supported("roleRef.apiGroup", group, (RBAC_GROUP,)))
    kind = as_str(role_ref.get("kind"))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if kind not in kinds:
        errors.append(not_supported("roleRef.kind", kind, kinds))
    name = as_str(role_ref.get("name"))
    if not name:
        errors.append(required("roleRef.name"))
    else:
        errors.extend(
            invalid_value("roleRef.name", name, m) for m in validate_path_segment_name(name, False)
        )
    for i, subject in enumerate(as_list(binding.get("subjects"))):
        errors.extend(validate_subject(subject, namespaced, f"subjects[{i}]"))
    return errors


def validate_role_binding(binding: Object) -> list[FieldError]:
    """``ValidateRoleBinding``."""
    return _validate_binding(binding, True)


def validate_cluster_role_binding(binding: Object) -> list[FieldError]:
    """``ValidateClusterRoleBinding``."""
    return _validate_binding(binding, False)


def _role_ref_immutable(new: Object, old: Object) -> list[FieldError]:
    if new.get("roleRef") != old.get("roleRef"):
        return [invalid_value("roleRef", new.get("roleRef"), "cannot change roleRef")]
    return []


ROLE_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=validate_path_segment_name,
    validator=validate_role,
    update_validator=lambda new, old: validate_role(new),
)
CLUSTER_ROLE_STRATEGY: Final = KindStrategy(
    namespaced=False,
    name_rule=validate_path_segment_name,
    validator=validate_cluster_role,
    update_validator=lambda new, old: validate_cluster_role(new),
)
ROLE_BINDING_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=validate_path_segment_name,
    defaulter=default_binding,
    validator=validate_role_binding,
    update_validator=lambda new, old: validate_role_binding(new) + _role_ref_immutable(new, old),
)
CLUSTER_ROLE_BINDING_STRATEGY: Final = KindStrategy(
    namespaced=False,
    name_rule=validate_path_segment_name,
    defaulter=default_binding,
    validator=validate_cluster_role_binding,
    update_validator=lambda new, old: (
        validate_cluster_role_binding(new) + _role_ref_immutable(new, old)
    ),
)


def _created_at(obj: Object, now: float) -> list[Any]:
    return [name_of(obj), created_at(obj)]


#: Roles and ClusterRoles print their creation time, not an age (``printRole``).
ROLE_PRINTER: Final = Printer(
    (NAME_COLUMN, TableColumn("Created At", "string", "", AGE_DESCRIPTION)), _created_at
)


def subjects_strings(subjects: object) -> tuple[list[str], list[str], list[str]]:
    """``SubjectsStrings``: users, groups and ``namespace/name`` service accounts."""
    users, groups, accounts = [], [], []
    for subject in as_list(subjects):
        subject = as_dict(subject)
        kind, name = as_str(subject.get("kind")), as_str(subject.get("name"))
        if kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
        elif kind == "ServiceAccount":
            accounts.append(f"{as_str(subject.get('namespace'))}/{name}")
    return users, groups, accounts


def binding_row(binding: Object, now: float) -> list[Any]:
    """``printRoleBinding`` / ``printClusterRoleBinding``."""
    role_ref = as_dict(binding.get("roleRef"))
    users, groups, accounts = subjects_strings(binding.get("subjects"))
    return [
        name_of(binding),
        f"{as_str(role_ref.get('kind'))}/{as_str(role_ref.get('name'))}",
        age(binding, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]


BINDING_PRINTER: Final = Printer(
    (
        NAME_COLUMN,
        TableColumn("Role", "string", "", "Role is the role that this binding refers to."),
        AGE_COLUMN,
        TableColumn("Users", "string", "", "Users in the roleBinding", 1),
        TableColumn("Groups", "string", "", "Groups in the roleBinding", 1),
        TableColumn("ServiceAccounts", "string", "", "ServiceAccounts in the roleBinding", 1),
    ),
    binding_row,
)
