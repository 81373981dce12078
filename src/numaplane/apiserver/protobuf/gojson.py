"""How Go's encoding/json writes each field of the messages in this package (the ``json:`` tags
of Kubernetes' Go types), which the protobuf descriptors do not say.

Kubernetes' protobuf marshallers write every non-pointer scalar field, zero or not, and a
pointer field only when it is set; Go's JSON then omits a zero ``omitempty`` field, writes a set
pointer even when it points at zero, writes a field without ``omitempty`` always (a nil
pointer, slice or map as ``null``), and writes a non-pointer struct always (``omitempty`` has no
effect on structs). So the JSON a Go server would see follows from two facts per
field, kept here: is it a pointer, and does it lack ``omitempty``. Fields named by their
message's full protobuf name, then ``.`` and the field name.
"""

from __future__ import annotations

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_CORE = "k8s.io.api.core.v1."
_AUTHN = "k8s.io.api.authentication.v1."
_AUTHZ = "k8s.io.api.authorization.v1."
_BATCH = "k8s.io.api.batch.v1."
_RBAC = "k8s.io.api.rbac.v1."
_SCHED = "k8s.io.api.scheduling.v1."


def _fields(message: str, *names: str) -> frozenset[str]:
    return frozenset(f"{message}.{name}" for name in names)


POINTERS: frozenset[str] = (
    _fields(_META + "ObjectMeta", "deletionTimestamp", "deletionGracePeriodSeconds")
    | _fields(_META + "OwnerReference", "controller", "blockOwnerDeletion")
    | _fields(_META + "ManagedFieldsEntry", "time", "fieldsV1")
    | _fields(
        _META + "DeleteOptions",
        "gracePeriodSeconds",
        "preconditions",
        "orphanDependents",
        "propagationPolicy",
        "ignoreStoreReadErrorWithClusterBreakingPotential",
    )
    | _fields(_META + "Preconditions", "uid", "resourceVersion")
    | _fields(_CORE + "ConfigMap", "immutable")
    | _fields(_CORE + "Secret", "immutable")
    | _fields(_CORE + "ServiceAccount", "automountServiceAccountToken")
    | _fields(
        _CORE + "Container",
        "restartPolicy",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "lifecycle",
        "securityContext",
    )
    | _fields(_CORE + "EnvVar", "valueFrom")
    | _fields(_CORE + "PodStatus", "startTime")
    | _fields(
        _CORE + "EnvVarSource", "fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef"
    )
    | _fields(_CORE + "ConfigMapKeySelector", "optional")
    | _fields(_CORE + "SecretKeySelector", "optional")
    | _fields(_CORE + "ConfigMapEnvSource", "optional")
    | _fields(_CORE + "SecretEnvSource", "optional")
    | _fields(_CORE + "EnvFromSource", "configMapRef", "secretRef")
    | _fields(_CORE + "Affinity", "nodeAffinity", "podAffinity", "podAntiAffinity")
    | _fields(_CORE + "NodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    | _fields(_CORE + "PodAffinityTerm", "labelSelector", "namespaceSelector")
    | _fields(
        _CORE + "PodSecurityContext",
        "seLinuxOptions",
        "runAsUser",
        "runAsGroup",
        "runAsNonRoot",
        "supplementalGroupsPolicy",
        "fsGroup",
        "fsGroupChangePolicy",
        "seccompProfile",
        "appArmorProfile",
        "seLinuxChangePolicy",
    )
    | _fields(
        _CORE + "SecurityContext",
        "capabilities",
        "privileged",
        "seLinuxOptions",
        "runAsUser",
        "runAsGroup",
        "runAsNonRoot",
        "readOnlyRootFilesystem",
        "allowPrivilegeEscalation",
        "procMount",
        "seccompProfile",
        "appArmorProfile",
    )
    | _fields(_CORE + "SeccompProfile", "localhostProfile")
    | _fields(_CORE + "AppArmorProfile", "localhostProfile")
    | _fields(_CORE + "Probe", "terminationGracePeriodSeconds")
    | _fields(_CORE + "ProbeHandler", "exec", "httpGet", "tcpSocket", "grpc")
    | _fields(_CORE + "Lifecycle", "postStart", "preStop")
    | _fields(_CORE + "LifecycleHandler", "exec", "httpGet", "tcpSocket", "sleep")
    | _fields(_CORE + "GRPCAction", "service")
    | _fields(_CORE + "PodDNSConfigOption", "value")
    | _fields(
        _CORE + "TopologySpreadConstraint",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
    )
    | _fields(
        _CORE + "VolumeSource",
        "hostPath",
        "emptyDir",
        "secret",
        "nfs",
        "persistentVolumeClaim",
        "downwardAPI",
        "configMap",
        "projected",
        "csi",
    )
    | _fields(_CORE + "HostPathVolumeSource", "type")
    | _fields(_CORE + "EmptyDirVolumeSource", "sizeLimit")
    | _fields(_CORE + "SecretVolumeSource", "defaultMode", "optional")
    | _fields(_CORE + "ConfigMapVolumeSource", "defaultMode", "optional")
    | _fields(_CORE + "DownwardAPIVolumeSource", "defaultMode")
    | _fields(_CORE + "DownwardAPIVolumeFile", "fieldRef", "resourceFieldRef", "mode")
    | _fields(_CORE + "KeyToPath", "mode")
    | _fields(_CORE + "ProjectedVolumeSource", "defaultMode")
    | _fields(
        _CORE + "VolumeProjection", "secret", "downwardAPI", "configMap", "serviceAccountToken"
    )
    | _fields(_CORE + "SecretProjection", "optional")
    | _fields(_CORE + "ConfigMapProjection", "optional")
    | _fields(_CORE + "ServiceAccountTokenProjection", "expirationSeconds")
    | _fields(_CORE + "CSIVolumeSource", "readOnly", "fsType", "nodePublishSecretRef")
    | _fields(_CORE + "Toleration", "tolerationSeconds")
    | _fields(_CORE + "VolumeMount", "recursiveReadOnly", "mountPropagation")
    | _fields(
        _CORE + "PodSpec",
        "terminationGracePeriodSeconds",
        "activeDeadlineSeconds",
        "automountServiceAccountToken",
        "priority",
        "enableServiceLinks",
        "preemptionPolicy",
        "shareProcessNamespace",
        "securityContext",
        "affinity",
        "dnsConfig",
        "runtimeClassName",
        "setHostnameAsFQDN",
        "os",
        "hostUsers",
        "resources",
    )
    | _fields(
        _BATCH + "JobSpec",
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
        "selector",
        "manualSelector",
        "ttlSecondsAfterFinished",
        "completionMode",
        "suspend",
        "podReplacementPolicy",
        "managedBy",
    )
    | _fields(
        _BATCH + "JobStatus", "startTime", "completionTime", "terminating", "failedIndexes", "ready"
    )
    | _fields(_AUTHN + "TokenRequestSpec", "expirationSeconds", "boundObjectRef")
    | _fields(_AUTHZ + "ResourceAttributes", "fieldSelector", "labelSelector")
    | _fields(_AUTHZ + "SelfSubjectAccessReviewSpec", "resourceAttributes", "nonResourceAttributes")
    | _fields(_RBAC + "ClusterRole", "aggregationRule")
    | _fields(_SCHED + "PriorityClass", "preemptionPolicy")
)
"""Fields that are Go pointers (scalars and structs): set means written, even when zero; unset
means left out. Every other message-typed field is a Go struct, written even when absent."""

ALWAYS: frozenset[str] = (
    _fields(_META + "OwnerReference", "apiVersion", "kind", "name", "uid")
    | _fields(_META + "LabelSelectorRequirement", "key", "operator")
    | _fields(_CORE + "Container", "name")
    | _fields(_CORE + "ContainerPort", "containerPort")
    | _fields(_CORE + "EnvVar", "name")
    | _fields(_CORE + "ResourceClaim", "name")
    | _fields(_CORE + "VolumeMount", "name", "mountPath")
    | _fields(_CORE + "Volume", "name")
    | _fields(_CORE + "VolumeDevice", "name", "devicePath")
    | _fields(_CORE + "ContainerResizePolicy", "resourceName", "restartPolicy")
    | _fields(_CORE + "ObjectFieldSelector", "fieldPath")
    | _fields(_CORE + "ResourceFieldSelector", "resource")
    | _fields(_CORE + "ConfigMapKeySelector", "key")
    | _fields(_CORE + "SecretKeySelector", "key")
    | _fields(_CORE + "HTTPGetAction", "port")
    | _fields(_CORE + "HTTPHeader", "name", "value")
    | _fields(_CORE + "TCPSocketAction", "port")
    | _fields(_CORE + "GRPCAction", "port", "service")
    | _fields(_CORE + "SleepAction", "seconds")
    | _fields(_CORE + "HostPathVolumeSource", "path")
    | _fields(_CORE + "NFSVolumeSource", "server", "path")
    | _fields(_CORE + "PersistentVolumeClaimVolumeSource", "claimName")
    | _fields(_CORE + "DownwardAPIVolumeFile", "path")
    | _fields(_CORE + "KeyToPath", "key", "path")
    | _fields(_CORE + "ProjectedVolumeSource", "sources")
    | _fields(_CORE + "ServiceAccountTokenProjection", "path")
    | _fields(_CORE + "CSIVolumeSource", "driver")
    | _fields(_CORE + "NodeSelector", "nodeSelectorTerms")
    | _fields(_CORE + "NodeSelectorRequirement", "key", "operator")
    | _fields(_CORE + "PreferredSchedulingTerm", "weight")
    | _fields(_CORE + "PodAffinityTerm", "topologyKey")
    | _fields(_CORE + "WeightedPodAffinityTerm", "weight")
    | _fields(_CORE + "HostAlias", "ip")
    | _fields(_CORE + "PodReadinessGate", "conditionType")
    | _fields(_CORE + "PodSchedulingGate", "name")
    | _fields(_CORE + "PodOS", "name")
    | _fields(_CORE + "Sysctl", "name", "value")
    | _fields(_CORE + "TopologySpreadConstraint", "maxSkew", "topologyKey", "whenUnsatisfiable")
    | _fields(_CORE + "SeccompProfile", "type")
    | _fields(_CORE + "AppArmorProfile", "type")
    | _fields(_CORE + "PodSpec", "containers")
    | _fields(_CORE + "NamespaceCondition", "type", "status")
    | _fields(_CORE + "PodCondition", "type", "status")
    | _fields(_CORE + "PodIP", "ip")
    | _fields(_CORE + "HostIP", "ip")
    | _fields(_BATCH + "JobCondition", "type", "status")
    | _fields(_AUTHN + "TokenRequestSpec", "audiences", "expirationSeconds")
    | _fields(_AUTHN + "TokenRequestStatus", "token", "expirationTimestamp")
    | _fields(_AUTHZ + "FieldSelectorRequirement", "key", "operator")
    | _fields(_AUTHZ + "SubjectAccessReviewStatus", "allowed")
    | _fields(
        _AUTHZ + "SubjectRulesReviewStatus", "resourceRules", "nonResourceRules", "incomplete"
    )
    | _fields(_AUTHZ + "ResourceRule", "verbs")
    | _fields(_AUTHZ + "NonResourceRule", "verbs")
    | _fields(_RBAC + "Role", "rules")
    | _fields(_RBAC + "ClusterRole", "rules")
    | _fields(_RBAC + "PolicyRule", "verbs")
    | _fields(_RBAC + "Subject", "kind", "name")
    | _fields(_RBAC + "RoleRef", "apiGroup", "kind", "name")
    | _fields(_SCHED + "PriorityClass", "value")
)
"""Fields whose Go tag lacks ``omitempty``: written even when zero, nil ones as ``null``."""

INLINE: frozenset[str] = (
    _fields(_CORE + "Volume", "volumeSource")
    | _fields(_CORE + "Probe", "handler")
    | _fields(_CORE + "ConfigMapKeySelector", "localObjectReference")
    | _fields(_CORE + "SecretKeySelector", "localObjectReference")
    | _fields(_CORE + "ConfigMapEnvSource", "localObjectReference")
    | _fields(_CORE + "SecretEnvSource", "localObjectReference")
    | _fields(_CORE + "ConfigMapProjection", "localObjectReference")
    | _fields(_CORE + "SecretProjection", "localObjectReference")
    | _fields(_CORE + "ConfigMapVolumeSource", "localObjectReference")
)
"""Embedded Go structs (``json:",inline"``): their fields are written into the parent object."""
