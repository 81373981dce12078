"""coordination.k8s.io/v1 Lease (``pkg/registry/coordination/lease``): leader election and
node heartbeats."""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value
from numaplane.apiserver.kinds.meta import IS_NEGATIVE, as_dict, as_str, name_is_dns_subdomain
from numaplane.apiserver.kinds.printing import name_age_printer
from numaplane.apiserver.kinds.strategy import KindStrategy
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]


def validate_lease(lease: Object) -> list[FieldError]:
    """``ValidateLeaseSpec``: a positive duration, non-negative transitions."""
    spec = as_dict(lease.get("spec"))
    errors: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errors.append(
            invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0")
        )
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errors.append(invalid_value("spec.leaseTransitions", transitions, IS_NEGATIVE))
    return errors


def validate_lease_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateLeaseUpdate``: the new lease valid."""
    return validate_lease(new)


LEASE_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
    validator=validate_lease,
    update_validator=validate_lease_update,
)

LEASE_PRINTER: Final = name_age_printer(
    (
        TableColumn("Holder", "string", "", "The holder of the lease."),
        lambda lease: as_str(as_dict(lease.get("spec")).get("holderIdentity")),
    ),
)
