"""What the scheduler reads of a pod, parsed once from the API object (``PodInfo``).

The scheduler sees the same pod many times (every attempt, every node it is filtered against),
so everything a filter or score needs is computed here once: the requests in the scheduler's
units (``PodRequests``: max of init containers and the sum of app containers, plus overhead),
the node selector and required node affinity, the tolerations, and a resource signature that
keys the NUMA prediction cache (two pods with equal signatures get equal node-engine answers).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Final

import orjson

from numaplane.api.manifest import pod_from_dict, pod_uid
from numaplane.api.pod import Pod, QOSClass
from numaplane.api.quantity import Quantity
from numaplane.node.requests import CPU, MEMORY, scheduler_requests, scheduler_units

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "PODS",
    "PodInfo",
    "is_terminal",
    "pod_info",
]

PODS: Final = "pods"
"""The ``pods`` resource: every pod takes one of the node's pod slots."""

DEFAULT_MILLI_CPU_REQUEST: Final = 100
"""Upstream's ``DefaultMilliCPURequest``: what a container without a cpu request counts as when
scoring (never when filtering)."""

DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
"""Upstream's ``DefaultMemoryRequest`` (200 MB), as ``DEFAULT_MILLI_CPU_REQUEST``."""


def is_terminal(obj: dict[str, Any]) -> bool:
    """The pod has ended (``Succeeded`` or ``Failed``): it holds nothing any more."""
    phase = (obj.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed")


@dataclass(eq=False)
class PodInfo:
    """One pod as the scheduler sees it (see the module doc)."""

    obj: dict[str, Any]
    key: str
    uid: str
    pod: Pod
    requests: dict[str, int]
    #: cpu and memory as scoring counts them (upstream's non-zero requests).
    score_requests: tuple[int, int]
    node_selector: dict[str, str]
    required_terms: list[dict[str, Any]] | None
    tolerations: list[dict[str, Any]]
    priority: int
    signature: bytes
    #: ``signature`` plus everything else the filters read of the pod (selector, affinity,
    #: tolerations, preemption policy): equal keys get equal answers from an unchanged node.
    filter_key: bytes
    guaranteed: bool
    #: Exclusive CPUs per app container (integral cpu of a Guaranteed pod), for the NUMA score.
    exclusive_cpus: tuple[int, ...]
    #: Per memory resource, the largest request of one container (Guaranteed pods only).
    memory_needs: dict[str, int] = field(default_factory=dict)
    #: How many scheduling attempts failed so far (the backoff grows with it).
    attempts: int = 0
    #: The last FailedScheduling message written to the pod (not repeated when unchanged).
    last_message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        """The pod's namespace."""
        return str(self.obj["metadata"].get("namespace") or "default")

    @property
    def name(self) -> str:
        """The pod's name."""
        return str(self.obj["metadata"]["name"])


def _signature(spec: dict[str, Any]) -> bytes:
    # What the node engine's decision depends on: each container's kind and resources (its
    # name does not choose CPUs), the pod-level resources and the overhead.
    def part(c: dict[str, Any]) -> list[Any]:
        return [c.get("resources") or {}, c.get("restartPolicy") or ""]

    return orjson.dumps(
        [
            [part(c) for c in spec.get("initContainers") or []],
            [part(c) for c in spec.get("containers") or []],
            spec.get("resources") or {},
            spec.get("overhead") or {},
        ],
        option=orjson.OPT_SORT_KEYS,
    )


@dataclass(frozen=True)
class _Template:
    """What pods of one resource shape share: the parsed pod (identity replaced per pod) and
    everything derived from its resources."""

    pod: Pod
    requests: dict[str, int]
    score_requests: tuple[int, int]
    guaranteed: bool
    exclusive_cpus: tuple[int, ...]
    memory_needs: dict[str, int]
    signature: bytes


#: Parsed shapes by ``_shape`` key: pods of a Job or a bench differ only in their names, and
#: parsing (validation included) costs more than the whole decision otherwise.
_TEMPLATES: dict[bytes, _Template] = {}
_TEMPLATES_MAX: Final = 4096


def _shape(obj: dict[str, Any], spec: dict[str, Any]) -> bytes:
    def part(c: dict[str, Any]) -> list[Any]:
        return [c.get("name"), c.get("resources") or {}, c.get("restartPolicy") or ""]

    return orjson.dumps(
        [
            [part(c) for c in spec.get("initContainers") or []],
            [part(c) for c in spec.get("containers") or []],
            spec.get("resources") or {},
            spec.get("overhead") or {},
            spec.get("restartPolicy") or "",
            (obj.get("status") or {}).get("qosClass") or "",
        ],
        option=orjson.OPT_SORT_KEYS,
    )


def _template(obj: dict[str, Any], spec: dict[str, Any]) -> _Template:
    meta = obj["metadata"]
    pod = pod_from_dict(obj, f"pod {meta.get('namespace')}/{meta.get('name')}")
    requests = scheduler_requests(pod)
    requests[PODS] = 1
    # Scoring's non-zero requests: per container, a missing cpu or memory request counts as the
    # default (upstream's GetNonzeroRequests applied per container, then summed).
    cpu = mem = 0
    for c in spec.get("containers") or []:
        req = (c.get("resources") or {}).get("requests") or {}
        cpu += requests_part(req, CPU, DEFAULT_MILLI_CPU_REQUEST)
        mem += requests_part(req, MEMORY, DEFAULT_MEMORY_REQUEST)
    cpu = max(cpu, requests.get(CPU, 0))
    mem = max(mem, requests.get(MEMORY, 0))
    guaranteed = pod.qos_class is QOSClass.GUARANTEED
    exclusive: list[int] = []
    # The largest memory and hugepages request of one container (the memory manager places each
    # container's memory, Guaranteed pods only).
    memory_needs: dict[str, int] = {}
    if guaranteed:
        for container in pod.containers:
            amount = container.resources.requests.get(CPU)
            if amount is not None and amount.milli_value() % 1000 == 0 and amount.sign() > 0:
                exclusive.append(amount.milli_value() // 1000)
        for container in (*pod.init_containers, *pod.containers):
            for name, amount in container.resources.requests.items():
                if name == MEMORY or name.startswith("hugepages-"):
                    memory_needs[name] = max(memory_needs.get(name, 0), amount.value())
    return _Template(
        pod, requests, (cpu, mem), guaranteed, tuple(exclusive), memory_needs, _signature(spec)
    )


def pod_info(obj: dict[str, Any]) -> PodInfo:
    """Parse ``obj`` (a Pod from the API). ``InputError`` when it is no valid pod."""
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    shape = _shape(obj, spec)
    template = _TEMPLATES.get(shape)
    namespace = str(meta.get("namespace") or "default")
    name = str(meta["name"])
    if template is None:
        template = _template(obj, spec)
        if len(_TEMPLATES) >= _TEMPLATES_MAX:
            _TEMPLATES.clear()
        _TEMPLATES[shape] = template
        pod = template.pod
    else:
        uid = str(meta.get("uid") or "") or pod_uid(namespace, name)
        pod = replace(template.pod, name=name, namespace=namespace, uid=uid)
    if pod.name != name or pod.namespace != namespace:
        pod = replace(pod, name=name, namespace=namespace)
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    terms = None if affinity is None else list(affinity.get("nodeSelectorTerms") or [])
    selector = dict(spec.get("nodeSelector") or {})
    tolerations = list(spec.get("tolerations") or [])
    filter_key = template.signature
    if selector or terms is not None or tolerations:
        filter_key += orjson.dumps([selector, terms, tolerations], option=orjson.OPT_SORT_KEYS)
    return PodInfo(
        obj=obj,
        key=f"{namespace}/{name}",
        uid=pod.uid,
        pod=pod,
        requests=template.requests,
        score_requests=template.score_requests,
        node_selector=selector,
        required_terms=terms,
        tolerations=tolerations,
        priority=int(spec.get("priority") or 0),
        signature=template.signature,
        filter_key=filter_key,
        guaranteed=template.guaranteed,
        exclusive_cpus=template.exclusive_cpus,
        memory_needs=template.memory_needs,
    )


def requests_part(requests: dict[str, Any], resource: str, default: int) -> int:
    """One container's request of ``resource`` in scheduler units, ``default`` when absent."""
    value = requests.get(resource)
    if value is None:
        return default
    return scheduler_units(resource, Quantity.parse(value))
