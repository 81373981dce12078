"""The slice of the Kubernetes Pod that numaplane reasons about.

(Over 400 lines: the QoS class and the effective requests read the same containers, init
containers, sidecars and pod-level resources, and must change together when upstream does.)

Values are frozen dataclasses. Two rules are computed here the way Kubernetes computes them:

* the QoS class (``ComputePodQOS`` in ``pkg/apis/core/v1/helper/qos``), which decides whether the
  CPU and Memory Managers pin anything at all, and
* the pod's effective requests (``PodRequests`` in ``component-helpers/resource``), where
  restartable ("sidecar") init containers keep running next to the init containers after them and
  next to the app containers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from types import MappingProxyType

from numaplane.api.quantity import Quantity

__all__ = [
    "QOS_RESOURCES",
    "Container",
    "Pod",
    "QOSClass",
    "ResourceRequirements",
    "aggregate_container_resources",
    "compute_qos",
    "default_pod_resources",
    "is_pod_level_resource",
    "is_pod_level_resources_set",
    "resource_qos",
]

#: The only resources that count towards QoS (upstream ``supportedQoSComputeResources``).
QOS_RESOURCES = frozenset({"cpu", "memory"})

_HUGEPAGES_PREFIX = "hugepages-"


def is_pod_level_resource(name: str) -> bool:
    """Whether pod-level ``spec.resources`` may set ``name`` (``IsSupportedPodLevelResource``)."""
    return name in ("cpu", "memory") or name.startswith(_HUGEPAGES_PREFIX)


_EMPTY: Mapping[str, Quantity] = MappingProxyType({})


class QOSClass(StrEnum):
    """A pod's quality-of-service class, spelled as in ``status.qosClass``."""

    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def _freeze(values: Mapping[str, Quantity] | None) -> Mapping[str, Quantity]:
    if not values:
        return _EMPTY
    return MappingProxyType(dict(values))


def _freeze_text(values: Mapping[str, str] | None) -> Mapping[str, str]:
    if not values:
        return MappingProxyType({})
    return MappingProxyType(dict(values))


def _coerce(values: Mapping[str, str | int | Quantity]) -> dict[str, Quantity]:
    return {name: Quantity.of(value) for name, value in values.items()}


def _add_into(total: dict[str, Quantity], values: Mapping[str, Quantity]) -> None:
    for name, quantity in values.items():
        total[name] = total[name] + quantity if name in total else quantity


def _max_into(total: dict[str, Quantity], values: Mapping[str, Quantity]) -> None:
    for name, quantity in values.items():
        if name not in total or quantity > total[name]:
            total[name] = quantity


@dataclass(frozen=True)
class ResourceRequirements:
    """A container's (or pod's) ``resources``: requests and limits per resource name."""

    requests: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)
    limits: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        # Read-only views so a frozen value cannot be changed through its maps.
        object.__setattr__(self, "requests", _freeze(self.requests))
        object.__setattr__(self, "limits", _freeze(self.limits))

    def __hash__(self) -> int:
        return hash((frozenset(self.requests.items()), frozenset(self.limits.items())))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceRequirements):
            return NotImplemented
        return dict(self.requests) == dict(other.requests) and dict(self.limits) == dict(
            other.limits
        )

    def with_defaulted_requests(self) -> ResourceRequirements:
        """Requests filled in from limits where unset, as API admission defaults them."""
        requests = dict(self.requests)
        for name, limit in self.limits.items():
            requests.setdefault(name, limit)
        return ResourceRequirements(requests, self.limits)

    def is_empty(self) -> bool:
        """Whether neither requests nor limits are set."""
        return not self.requests and not self.limits


@dataclass(frozen=True)
class Container:
    """One container (app or init) of a pod."""

    name: str
    resources: ResourceRequirements = field(default_factory=ResourceRequirements)
    restart_policy: str | None = None
    image: str = ""
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    working_dir: str | None = None

    @property
    def is_restartable(self) -> bool:
        """Whether this is a restartable ("sidecar") init container (restartPolicy Always)."""
        return self.restart_policy == "Always"

    def requests_of(self, resource: str) -> Quantity:
        """The request for ``resource``, zero when unset."""
        return self.resources.requests.get(resource, Quantity.zero())

    def limits_of(self, resource: str) -> Quantity:
        """The limit for ``resource``, zero when unset."""
        return self.resources.limits.get(resource, Quantity.zero())

    @classmethod
    def of(
        cls,
        name: str,
        requests: Mapping[str, str | int | Quantity] | None = None,
        limits: Mapping[str, str | int | Quantity] | None = None,
        restart_policy: str | None = None,
    ) -> Container:
        """A container from plain values, e.g. ``Container.of("c", {"cpu": "2"}, {"cpu": 2})``.

        Requests and limits are taken exactly as given (no defaulting from limits): this builds
        the object as the kubelet receives it, which is how upstream tests describe pods.
        """
        resources = ResourceRequirements(_coerce(requests or {}), _coerce(limits or {}))
        return cls(name=name, resources=resources, restart_policy=restart_policy)


def resource_qos(resources: ResourceRequirements) -> QOSClass:
    """The QoS class one set of requirements (a container's, or the pod level's) stands for.

    For cpu and for memory, the request must equal the limit (an unset value counts as zero);
    if both are zero for both resources the set is BestEffort, if both are set for both it is
    Guaranteed, and anything else is Burstable.
    """
    if resources.is_empty():
        return QOSClass.BEST_EFFORT
    found: QOSClass | None = None
    for name in sorted(QOS_RESOURCES):
        request = resources.requests.get(name, Quantity.zero())
        limit = resources.limits.get(name, Quantity.zero())
        if request != limit:
            return QOSClass.BURSTABLE
        this = QOSClass.BEST_EFFORT if request.is_zero() else QOSClass.GUARANTEED
        if found is not None and found is not this:
            return QOSClass.BURSTABLE
        found = this
    return found if found is not None else QOSClass.BEST_EFFORT


def compute_qos(
    containers: Iterable[Container], pod_resources: ResourceRequirements | None = None
) -> QOSClass:
    """The QoS class Kubernetes computes (``ComputePodQOS``).

    When pod-level resources are present they alone decide. Otherwise every init and app
    container is classified on its own (see :func:`resource_qos`): one Burstable container, or a
    mix of Guaranteed and BestEffort containers, makes the pod Burstable; otherwise the pod takes
    the class all its containers share (BestEffort for a pod without containers).
    """
    if pod_resources is not None:
        return resource_qos(pod_resources)
    pod_qos: QOSClass | None = None
    for container in containers:
        qos = resource_qos(container.resources)
        if qos is QOSClass.BURSTABLE:
            return qos
        if pod_qos is not None and pod_qos is not qos:
            return QOSClass.BURSTABLE
        pod_qos = qos
    return pod_qos if pod_qos is not None else QOSClass.BEST_EFFORT


def aggregate_container_resources(
    init_containers: Iterable[Container],
    containers: Iterable[Container],
    pick: Callable[[Container], Mapping[str, Quantity]],
) -> dict[str, Quantity]:
    """What a pod's containers need together, per resource (``AggregateContainerRequests``).

    ``pick`` chooses what to add up (a container's requests, or its limits). App containers and
    restartable init containers (sidecars) run together, so theirs add up. A regular init
    container runs alone next to the sidecars started before it, so it needs its own amount plus
    theirs. The result is the larger of the two, per resource.
    """
    total: dict[str, Quantity] = {}
    for container in containers:
        _add_into(total, pick(container))
    sidecars: dict[str, Quantity] = {}
    init_peak: dict[str, Quantity] = {}
    for container in init_containers:
        if container.is_restartable:
            _add_into(total, pick(container))
            _add_into(sidecars, pick(container))
            _max_into(init_peak, sidecars)
        else:
            need = dict(pick(container))
            _add_into(need, sidecars)
            _max_into(init_peak, need)
    _max_into(total, init_peak)
    return total


@dataclass(frozen=True)
class Pod:
    """A pod: identity, containers and the few spec fields numaplane uses.

    ``status_qos_class`` is the QoS class recorded in the pod's status; when set it wins over the
    computed class, as upstream ``GetPodQOS`` does. ``resources`` holds pod-level resources
    (``spec.resources``) and ``overhead`` the RuntimeClass overhead (``spec.overhead``).
    ``container_ids`` maps a container name to the runtime's ID of it (``containerd://<id>``, from
    ``status.containerStatuses``): what the kubelet's container map knows, needed to migrate a
    CPU manager checkpoint of the V1 layout.
    """

    name: str
    uid: str
    namespace: str = "default"
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    restart_policy: str = "Always"
    status_qos_class: QOSClass | None = None
    resources: ResourceRequirements | None = None
    overhead: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)
    termination_grace_period_seconds: int = 30
    labels: Mapping[str, str] = field(default_factory=lambda: _freeze_text(None))
    annotations: Mapping[str, str] = field(default_factory=lambda: _freeze_text(None))
    node_name: str | None = None
    container_ids: Mapping[str, str] = field(default_factory=lambda: _freeze_text(None))

    def __post_init__(self) -> None:
        object.__setattr__(self, "containers", tuple(self.containers))
        object.__setattr__(self, "init_containers", tuple(self.init_containers))
        object.__setattr__(self, "overhead", _freeze(self.overhead))
        object.__setattr__(self, "labels", _freeze_text(self.labels))
        object.__setattr__(self, "annotations", _freeze_text(self.annotations))
        object.__setattr__(self, "container_ids", _freeze_text(self.container_ids))

    def __hash__(self) -> int:
        return hash((self.uid, self.namespace, self.name, self.containers, self.init_containers))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pod):
            return NotImplemented
        return (
            self.name == other.name
            and self.uid == other.uid
            and self.namespace == other.namespace
            and self.containers == other.containers
            and self.init_containers == other.init_containers
            and self.restart_policy == other.restart_policy
            and self.status_qos_class == other.status_qos_class
            and self.resources == other.resources
            and dict(self.overhead) == dict(other.overhead)
            and self.termination_grace_period_seconds == other.termination_grace_period_seconds
            and dict(self.labels) == dict(other.labels)
            and dict(self.annotations) == dict(other.annotations)
            and self.node_name == other.node_name
            and dict(self.container_ids) == dict(other.container_ids)
        )

    @cached_property
    def qos_class(self) -> QOSClass:
        """The recorded QoS class if any, else the one Kubernetes computes (cached: a pod is
        immutable, and every manager asks for every container)."""
        if self.status_qos_class is not None:
            return self.status_qos_class
        return self.computed_qos_class()

    def computed_qos_class(self) -> QOSClass:
        """The QoS class computed from requests and limits, ignoring ``status_qos_class``."""
        return compute_qos(self.all_containers(), self.resources)

    def all_containers(self) -> tuple[Container, ...]:
        """Init containers (in order) followed by app containers."""
        return self.init_containers + self.containers

    @cached_property
    def has_pod_level_resources(self) -> bool:
        """Whether ``spec.resources`` sets a request or limit of a resource pod-level resources
        support (upstream ``IsPodLevelResourcesSet``): cpu, memory or a huge page size (cached:
        a pod is immutable, and the CPU policy asks for every container)."""
        return is_pod_level_resources_set(self.resources)

    @cached_property
    def container_names(self) -> frozenset[str]:
        """The names of every init and app container (cached: a pod is immutable)."""
        return frozenset(c.name for c in self.all_containers())

    def container(self, name: str) -> Container:
        """The init or app container called ``name``; raises ``KeyError`` when there is none."""
        for candidate in self.all_containers():
            if candidate.name == name:
                return candidate
        raise KeyError(f"pod {self.namespace}/{self.name} has no container {name!r}")

    @property
    def key(self) -> str:
        """``namespace/name``, how people name a pod."""
        return f"{self.namespace}/{self.name}"

    def effective_requests(self, *, pod_level_resources: bool = True) -> dict[str, Quantity]:
        """The requests per resource the scheduler and kubelet count (``PodRequests``).

        The containers' aggregate (see :func:`aggregate_container_resources`), with pod-level
        requests replacing it for the resources they set, plus the pod overhead.
        ``pod_level_resources`` is the PodLevelResources feature gate: off, pod-level requests
        are skipped (``SkipPodLevelResources``).
        """
        total = self.aggregate_container_requests()
        if pod_level_resources and self.resources is not None:
            for name, quantity in self.resources.requests.items():
                if is_pod_level_resource(name):
                    total[name] = quantity
        _add_into(total, self.overhead)
        return total

    def aggregate_container_requests(self) -> dict[str, Quantity]:
        """What the containers request together, ignoring pod-level resources and overhead."""
        return aggregate_container_resources(
            self.init_containers, self.containers, lambda c: c.resources.requests
        )

    def aggregate_container_limits(self) -> dict[str, Quantity]:
        """What the containers are limited to together (``AggregateContainerLimits``)."""
        return aggregate_container_resources(
            self.init_containers, self.containers, lambda c: c.resources.limits
        )

    @classmethod
    def of(
        cls,
        uid: str,
        containers: Iterable[Container] = (),
        init_containers: Iterable[Container] = (),
        qos: QOSClass | str | None = None,
        name: str | None = None,
        namespace: str = "default",
    ) -> Pod:
        """A pod for tests and simulations; ``name`` defaults to the uid."""
        return cls(
            name=name if name is not None else uid,
            uid=uid,
            namespace=namespace,
            containers=tuple(containers),
            init_containers=tuple(init_containers),
            status_qos_class=QOSClass(qos) if qos is not None else None,
        )


def is_pod_level_resources_set(resources: ResourceRequirements | None) -> bool:
    """Whether pod-level ``resources`` set any resource :func:`is_pod_level_resource` accepts
    (upstream ``IsPodLevelResourcesSet``); an empty or absent ``spec.resources`` sets none."""
    if resources is None:
        return False
    return any(is_pod_level_resource(name) for name in (*resources.requests, *resources.limits))


def default_pod_resources(resources: ResourceRequirements, pod: Pod) -> ResourceRequirements:
    """Pod-level resources completed as the API server defaults them (``SetDefaults_Pod``).

    Applied after container requests were defaulted from their limits, in upstream's order:

    1. hugepages limits the pod level leaves unset (and does not request) take the containers'
       aggregate limit, once the pod level sets anything at all;
    2. when the pod level sets limits, each unset cpu or memory request takes the containers'
       aggregate request if some container requests it, and any limited resource still
       unrequested takes its pod-level limit;
    3. when the pod level sets requests but no limits, each cpu or memory limit takes the
       containers' aggregate limit if every container sets that limit.
    """
    requests = dict(resources.requests)
    limits = dict(resources.limits)
    # Of the pod-level resources only cpu and memory may be overcommitted, hence default here.
    overcommittable = QOS_RESOURCES
    container_limits = pod.aggregate_container_limits()
    if requests or limits:
        for name, limit in container_limits.items():
            if name.startswith("hugepages-") and name not in requests:
                limits.setdefault(name, limit)
    if limits:
        for name, request in pod.aggregate_container_requests().items():
            if name in overcommittable:
                requests.setdefault(name, request)
        for name, limit in limits.items():
            if is_pod_level_resource(name):
                requests.setdefault(name, limit)
    elif any(is_pod_level_resource(name) for name in requests):
        every = pod.all_containers()
        for name, limit in container_limits.items():
            if name in overcommittable and all(name in c.resources.limits for c in every):
                limits.setdefault(name, limit)
    return ResourceRequirements(requests, limits)
