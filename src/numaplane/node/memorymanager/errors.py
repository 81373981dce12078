"""Errors of the memory manager; every message is upstream's, word for word.

Allocation errors are plain ``NodeError``s (upstream: errors without ``Type()``), so admission
reports them as ``UnexpectedAdmissionError`` "Allocate failed due to <message>, which is
unexpected". Start-up and configuration errors are also ``ConfigurationError``s.
"""

from __future__ import annotations

from numaplane.node.errors import ConfigurationError, NodeError


class MemoryManagerError(NodeError):
    """Any error of the memory manager."""


class MemoryAllocationError(MemoryManagerError):
    """``Allocate`` could not place a container's memory."""


class MemoryStateError(MemoryManagerError, ConfigurationError):
    """The stored state does not match the machine (``Start`` / ``validateState``)."""


class MemoryConfigurationError(MemoryManagerError, ConfigurationError):
    """The memory manager cannot be built with the given configuration (``NewManager``)."""


class ReservedMemoryError(MemoryConfigurationError):
    """The reserved-memory configuration is unusable (``NewManager`` / ``NewPolicyStatic``)."""
