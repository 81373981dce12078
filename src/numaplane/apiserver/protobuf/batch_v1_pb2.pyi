# mypy: ignore-errors
from numaplane.apiserver.protobuf import core_v1_pb2 as _core_v1_pb2
from numaplane.apiserver.protobuf import meta_v1_pb2 as _meta_v1_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Job(_message.Message):
    __slots__ = ("metadata", "spec", "status")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    metadata: _meta_v1_pb2.ObjectMeta
    spec: JobSpec
    status: JobStatus
    def __init__(self, metadata: _Optional[_Union[_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[JobSpec, _Mapping]] = ..., status: _Optional[_Union[JobStatus, _Mapping]] = ...) -> None: ...

class JobCondition(_message.Message):
    __slots__ = ("type", "status", "lastProbeTime", "lastTransitionTime", "reason", "message")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LASTPROBETIME_FIELD_NUMBER: _ClassVar[int]
    LASTTRANSITIONTIME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    type: str
    status: str
    lastProbeTime: _meta_v1_pb2.Time
    lastTransitionTime: _meta_v1_pb2.Time
    reason: str
    message: str
    def __init__(self, type: _Optional[str] = ..., status: _Optional[str] = ..., lastProbeTime: _Optional[_Union[_meta_v1_pb2.Time, _Mapping]] = ..., lastTransitionTime: _Optional[_Union[_meta_v1_pb2.Time, _Mapping]] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class JobSpec(_message.Message):
    __slots__ = ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector", "template", "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy", "managedBy")
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    ACTIVEDEADLINESECONDS_FIELD_NUMBER: _ClassVar[int]
    BACKOFFLIMIT_FIELD_NUMBER: _ClassVar[int]
    BACKOFFLIMITPERINDEX_FIELD_NUMBER: _ClassVar[int]
    MAXFAILEDINDEXES_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    MANUALSELECTOR_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    TTLSECONDSAFTERFINISHED_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONMODE_FIELD_NUMBER: _ClassVar[int]
    SUSPEND_FIELD_NUMBER: _ClassVar[int]
    PODREPLACEMENTPOLICY_FIELD_NUMBER: _ClassVar[int]
    MANAGEDBY_FIELD_NUMBER: _ClassVar[int]
    parallelism: int
    completions: int
    activeDeadlineSeconds: int
    backoffLimit: int
    backoffLimitPerIndex: int
    maxFailedIndexes: int
    selector: _meta_v1_pb2.LabelSelector
    manualSelector: bool
    template: _core_v1_pb2.PodTemplateSpec
    ttlSecondsAfterFinished: int
    completionMode: str
    suspend: bool
    podReplacementPolicy: str
    managedBy: str
    def __init__(self, parallelism: _Optional[int] = ..., completions: _Optional[int] = ..., activeDeadlineSeconds: _Optional[int] = ..., backoffLimit: _Optional[int] = ..., backoffLimitPerIndex: _Optional[int] = ..., maxFailedIndexes: _Optional[int] = ..., selector: _Optional[_Union[_meta_v1_pb2.LabelSelector, _Mapping]] = ..., manualSelector: bool = ..., template: _Optional[_Union[_core_v1_pb2.PodTemplateSpec, _Mapping]] = ..., ttlSecondsAfterFinished: _Optional[int] = ..., completionMode: _Optional[str] = ..., suspend: bool = ..., podReplacementPolicy: _Optional[str] = ..., managedBy: _Optional[str] = ...) -> None: ...

class JobStatus(_message.Message):
    __slots__ = ("conditions", "startTime", "completionTime", "active", "succeeded", "failed", "terminating", "completedIndexes", "failedIndexes", "ready")
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    STARTTIME_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONTIME_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    TERMINATING_FIELD_NUMBER: _ClassVar[int]
    COMPLETEDINDEXES_FIELD_NUMBER: _ClassVar[int]
    FAILEDINDEXES_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    conditions: _containers.RepeatedCompositeFieldContainer[JobCondition]
    startTime: _meta_v1_pb2.Time
    completionTime: _meta_v1_pb2.Time
    active: int
    succeeded: int
    failed: int
    terminating: int
    completedIndexes: str
    failedIndexes: str
    ready: int
    def __init__(self, conditions: _Optional[_Iterable[_Union[JobCondition, _Mapping]]] = ..., startTime: _Optional[_Union[_meta_v1_pb2.Time, _Mapping]] = ..., completionTime: _Optional[_Union[_meta_v1_pb2.Time, _Mapping]] = ..., active: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., terminating: _Optional[int] = ..., completedIndexes: _Optional[str] = ..., failedIndexes: _Optional[str] = ..., ready: _Optional[int] = ...) -> None: ...
