"""MCP 2025-11-25 (and the 2025 revisions before it): ``initialize``, sessions kept in
the store, and the experimental Tasks of that revision, with ``tasks/result`` over
resumable SSE and elicitation delivered on that stream."""

from .era import Era2025

__all__ = ["Era2025"]
