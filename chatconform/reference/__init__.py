"""The reference implementation: one small, obviously-correct module per contract."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from chatconform.reference.thread import UUID_NIL, Row, extract_thread

try:
    __version__ = version("chatconform")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = ["UUID_NIL", "ReferenceImplementation", "Row", "extract_thread"]


class ReferenceImplementation:
    """Defines the expected behaviour of every contract."""

    name = "reference"
    version = __version__

    @staticmethod
    def extract_thread(rows_newest_first):
        return extract_thread(rows_newest_first)

    from chatconform.reference.payload import PROVIDERS as _PROVIDERS

    providers = frozenset(_PROVIDERS)

    @staticmethod
    def to_payload(history, *, provider, instructions=None):
        from chatconform.reference.payload import to_payload

        return to_payload(history, provider=provider, instructions=instructions)
