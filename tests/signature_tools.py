"""tests/signature_examples.py's functions registered as taskgate tools (TOOL_MODULES for the
local server in tests/e2e/test_plain_parameters.py)."""

from __future__ import annotations

from taskgate.tools import ToolContext, tool
from tests import signature_examples

signature_examples.Context = ToolContext
for fn in signature_examples.SIGNATURES:
    tool(name=f"sig_{fn.__name__}", description=f"The {fn.__name__} signature.")(fn)
