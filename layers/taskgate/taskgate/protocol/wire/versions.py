"""The protocol versions taskgate speaks, and which era serves each: the one list.

An era is known by its newest version. A request is the stateless era's when its
``MCP-Protocol-Version`` header names one of that era's versions or its ``_meta`` carries a
version at all (``VERSION_META``, a mark no earlier revision has); everything else is the
``initialize`` handshake era's, which then negotiates among its own versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The eras, by their newest version.
HANDSHAKE = "2025-11-25"  # initialize, sessions, experimental Tasks (protocol/v2025)
STATELESS = "2026-07-28"  # per-request _meta, the tasks extension (protocol/v2026)

# Every version served, newest first, and the era that serves it.
SERVED_BY: Mapping[str, str] = {
    "2026-07-28": STATELESS,
    "2025-11-25": HANDSHAKE,
    "2025-06-18": HANDSHAKE,
    "2025-03-26": HANDSHAKE,
}

# Where a stateless request names its version beside the header.
VERSION_META = "io.modelcontextprotocol/protocolVersion"
VERSION_HEADER = "mcp-protocol-version"


def served_by(era: str) -> tuple[str, ...]:
    """The versions ``era`` serves, newest first."""
    return tuple(version for version, serving in SERVED_BY.items() if serving == era)


def is_stateless(headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
    """Whether a request carries the stateless era's marks (its header, or a version in ``_meta``)."""
    return SERVED_BY.get(headers.get(VERSION_HEADER, "")) == STATELESS or VERSION_META in meta
