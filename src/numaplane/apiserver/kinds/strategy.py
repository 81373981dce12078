"""The strategy shape every built-in kind shares (upstream's ``rest.RESTCreateStrategy``,
``RESTUpdateStrategy`` and the status strategies), filled per kind with plain functions.

Generation: a kind that tracks it (``tracks_generation``) gets ``metadata.generation = 1`` in
:meth:`KindStrategy.prepare_for_create`; on update the REST layer asks
:meth:`KindStrategy.bumps_generation` and increments it, as upstream's strategies do in
``PrepareForUpdate``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numaplane.apiserver.errors import FieldError
from numaplane.apiserver.kinds.meta import (
    NameRule,
    metadata,
    validate_object_meta,
    validate_object_meta_update,
)

Object = dict[str, Any]
Mutator = Callable[[Object], None]
UpdateMutator = Callable[[Object, Object], None]
Validator = Callable[[Object], list[FieldError]]
UpdateValidator = Callable[[Object, Object], list[FieldError]]


def _no_change(obj: Object) -> None:
    """Nothing to default or prepare."""


def _no_update_change(new: Object, old: Object) -> None:
    """Nothing to carry over."""


def _no_errors(obj: Object) -> list[FieldError]:
    return []


def _no_update_errors(new: Object, old: Object) -> list[FieldError]:
    return []


def carry_over(new: Object, old: Object, key: str) -> None:
    """Set ``new[key]`` to a copy of ``old[key]`` (removed when ``old`` has none): what an
    endpoint may not change stays as stored. ``old`` is shared, so it is copied, never linked."""
    if key in old:
        new[key] = copy.deepcopy(old[key])
    else:
        new.pop(key, None)


@dataclass(frozen=True)
class KindStrategy:
    """A built-in kind's strategy for its main resource.

    ``validator`` / ``update_validator`` add the kind's own checks after the object-meta ones
    (``update_validator`` usually runs the create checks too, as upstream's ``ValidateXUpdate``).
    ``meta_rules`` off leaves metadata to the kind's validators (core/v1 Events, as upstream).
    ``status_key`` names the part a ``status`` subresource owns (kept from the stored object on
    updates of the main resource); ``spec_keys`` the parts whose change bumps the generation.
    """

    namespaced: bool
    name_rule: NameRule
    defaulter: Mutator = _no_change
    create_preparer: Mutator = _no_change
    update_preparer: UpdateMutator = _no_update_change
    validator: Validator = _no_errors
    update_validator: UpdateValidator = _no_update_errors
    status_key: str | None = None
    tracks_generation: bool = False
    spec_keys: tuple[str, ...] = ("spec",)
    kube_finalizers: bool = True
    meta_rules: bool = True

    def default(self, obj: Object) -> None:
        """The scheme's defaulting."""
        self.defaulter(obj)

    def prepare_for_create(self, obj: Object) -> None:
        """Generation 1 for kinds that track it, then the kind's own preparation."""
        if self.tracks_generation:
            obj.setdefault("metadata", {})["generation"] = 1
        self.create_preparer(obj)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        """Keep the stored status (a kind with a status subresource), then the kind's own
        preparation."""
        if self.status_key is not None:
            carry_over(new, old, self.status_key)
        self.update_preparer(new, old)

    def validate(self, obj: Object) -> list[FieldError]:
        """Object meta (names by the kind's rule) and the kind's own checks."""
        if not self.meta_rules:
            return self.validator(obj)
        errors = validate_object_meta(
            obj, self.namespaced, self.name_rule, kube_finalizers=self.kube_finalizers
        )
        return errors + self.validator(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        """Object meta update rules and the kind's own update checks."""
        errors = (
            validate_object_meta_update(new, old, kube_finalizers=self.kube_finalizers)
            if self.meta_rules
            else []
        )
        return errors + self.update_validator(new, old)

    def bumps_generation(self, new: Object, old: Object) -> bool:
        """A generation-tracking kind's spec changed."""
        if not self.tracks_generation:
            return False
        return any(new.get(key) != old.get(key) for key in self.spec_keys)


@dataclass(frozen=True)
class StatusStrategy:
    """The ``status`` subresource of a kind: only ``status`` changes, the rest of the object
    stays as stored (``keep_keys`` top-level parts, ``keep_meta`` metadata fields, as upstream's
    ``PrepareForUpdate`` of each status strategy)."""

    main: KindStrategy
    status_validator: UpdateValidator = _no_update_errors
    keep_keys: tuple[str, ...] = ("spec",)
    keep_meta: tuple[str, ...] = ()
    status_preparer: UpdateMutator = _no_update_change

    def default(self, obj: Object) -> None:
        """The kind's defaulting (the scheme defaults every decoded object)."""
        self.main.default(obj)

    def prepare_for_create(self, obj: Object) -> None:
        """Nothing: a status endpoint never creates."""

    def prepare_for_update(self, new: Object, old: Object) -> None:
        """Everything but ``status`` (and what metadata the kind lets status writers set)
        comes from the stored object."""
        for key in self.keep_keys:
            carry_over(new, old, key)
        meta = new.setdefault("metadata", {})
        old_meta = metadata(old)
        for key in self.keep_meta:
            carry_over(meta, old_meta, key)
        self.status_preparer(new, old)

    def validate(self, obj: Object) -> list[FieldError]:
        """Never called on create; the main resource's checks."""
        return self.main.validate(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        """Object meta update rules and the kind's status checks."""
        errors = validate_object_meta_update(new, old, kube_finalizers=self.main.kube_finalizers)
        return errors + self.status_validator(new, old)

    def bumps_generation(self, new: Object, old: Object) -> bool:
        """Status writes never bump the generation."""
        return False
