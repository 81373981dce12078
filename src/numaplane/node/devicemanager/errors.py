"""Errors of the Device Manager.

Allocation failures are plain ``NodeError``s, as upstream's are plain Go errors: admission
reports them as ``UnexpectedAdmissionError`` ("Allocate failed due to <err>, which is
unexpected"). Inventory problems are user input, so they are ``InputError``s.
"""

from __future__ import annotations

from numaplane.errors import InputError
from numaplane.node.errors import NodeError


class DeviceManagerError(NodeError):
    """A device allocation or registration failure (message = upstream's error string)."""


class DeviceSourceError(NodeError):
    """A device source (plugin) call failed; the manager wraps it like upstream's RPC errors."""


class InventoryError(InputError):
    """A device inventory (rules or YAML file) is unusable; names the source and the field."""
