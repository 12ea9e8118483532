"""MCP over HTTP, in three wings under the eras and the server that sit on top:

- ``wire/``: what travels (JSON-RPC envelopes, headers, params models, the error table,
  SSE, the sealed tokens, the versions and which era serves each);
- ``calls/``: what a ``tools/call`` becomes, decided once for both eras (``flow.py``);
- ``catalog/``: resources, prompts, completion and subscriptions.

``era.py`` is the interface every era (``v2025/``, ``v2026/``) implements, and ``server.py``
asks the eras in order.
"""
