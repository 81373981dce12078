# mypy: ignore-errors
from numaplane.apiserver.protobuf import meta_v1_pb2 as _meta_v1_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PriorityClass(_message.Message):
    __slots__ = ("metadata", "value", "globalDefault", "description", "preemptionPolicy")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    GLOBALDEFAULT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PREEMPTIONPOLICY_FIELD_NUMBER: _ClassVar[int]
    metadata: _meta_v1_pb2.ObjectMeta
    value: int
    globalDefault: bool
    description: str
    preemptionPolicy: str
    def __init__(self, metadata: _Optional[_Union[_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., value: _Optional[int] = ..., globalDefault: bool = ..., description: _Optional[str] = ..., preemptionPolicy: _Optional[str] = ...) -> None: ...
