"""Kueue's API objects as immutable values (``model``) read from their JSON form (``parse``)."""
