"""MCP 2026-07-28, stateless, with the ``io.modelcontextprotocol/tasks`` extension (SEP-2663)."""

from .era import Era2026

__all__ = ["Era2026"]
