"""The scheme's defaulting of pod specs (``pkg/apis/core/v1/defaults.go``) as Pods and pod
templates (Jobs) share it: image pull policy, probes, ports, volumes' modes, the pod-level
fields, and a Pod's requests filled from its limits."""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.kinds.meta import as_dict, as_list, as_str

Object = dict[str, Any]

DEFAULT_SCHEDULER: Final = "default-scheduler"
DEFAULT_GRACE_PERIOD_S: Final = 30
_VOLUME_DEFAULT_MODE: Final = 0o644
_VOLUME_SOURCES_WITH_MODE: Final = ("secret", "configMap", "downwardAPI", "projected")


def _default_image_pull_policy(container: Object) -> None:
    # Always for the "latest" tag (also what an image with neither tag nor digest means),
    # IfNotPresent otherwise, as ParseImageName reads the reference; an empty image does not
    # parse and gets IfNotPresent.
    if container.get("imagePullPolicy"):
        return
    image = as_str(container.get("image"))
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    if not tag and not digest:
        tag = "latest"
    container["imagePullPolicy"] = "Always" if image and tag == "latest" else "IfNotPresent"


def _default_probe(probe: object) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")


def default_container(container: Object, host_network: bool) -> None:
    """``SetDefaults_Container`` and what it reaches: pull policy by tag, termination message
    path and policy, port protocols (host ports under host networking), env field refs, probes."""
    _default_image_pull_policy(container)
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    for port in as_list(container.get("ports")):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if host_network and "hostPort" not in port and "containerPort" in port:
                port["hostPort"] = port["containerPort"]
    for env in as_list(container.get("env")):
        ref = as_dict(as_dict(env).get("valueFrom")).get("fieldRef")
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(container.get(probe))


def default_requests_from_limits(container: Object) -> None:
    """``SetDefaults_Pod``'s rule: a resource with a limit and no request requests its limit
    (this is what makes a limits-only pod Guaranteed)."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return
    limits = as_dict(resources.get("limits"))
    if not limits:
        return
    requests = resources.setdefault("requests", {})
    if isinstance(requests, dict):
        for name, value in limits.items():
            requests.setdefault(name, value)


def _default_volume(volume: Object) -> None:
    sources = [k for k in volume if k != "name"]
    if not sources:
        volume["emptyDir"] = {}
    for source in _VOLUME_SOURCES_WITH_MODE:
        spec = volume.get(source)
        if isinstance(spec, dict):
            spec.setdefault("defaultMode", _VOLUME_DEFAULT_MODE)
            if source == "projected":
                for projection in as_list(spec.get("sources")):
                    token = as_dict(projection).get("serviceAccountToken")
                    if isinstance(token, dict):
                        token.setdefault("expirationSeconds", 3600)


def default_pod_spec(spec: Object) -> None:
    """``SetDefaults_PodSpec`` and the containers and volumes in it."""
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    if not isinstance(spec.get("securityContext"), dict):
        spec["securityContext"] = {}
    spec.setdefault("terminationGracePeriodSeconds", DEFAULT_GRACE_PERIOD_S)
    spec.setdefault("schedulerName", DEFAULT_SCHEDULER)
    # The v1 conversion keeps the deprecated serviceAccount field as a mirror of the name.
    account = as_str(spec.get("serviceAccountName")) or as_str(spec.get("serviceAccount"))
    if account:
        spec["serviceAccountName"] = account
        spec["serviceAccount"] = account
    host_network = spec.get("hostNetwork") is True
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in as_list(spec.get(key)):
            if isinstance(container, dict):
                default_container(container, host_network)
    for volume in as_list(spec.get("volumes")):
        if isinstance(volume, dict):
            _default_volume(volume)


def default_pod_template(template: Object) -> None:
    """Defaulting of a ``PodTemplateSpec`` (its spec; requests are not filled from limits in
    templates, only in Pods, as upstream)."""
    spec = template.setdefault("spec", {})
    if isinstance(spec, dict):
        default_pod_spec(spec)
