"""What FastMCP makes of tests/signature_examples.py: run in a venv with fastmcp installed,
``python tests/fastmcp_schemas.py`` prints {function: its inputSchema} as JSON."""

from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import fastmcp
from fastmcp.tools import Tool

from tests import signature_examples

signature_examples.Context = fastmcp.Context
print(
    json.dumps(
        {
            "fastmcp": fastmcp.__version__,
            "schemas": {
                fn.__name__: Tool.from_function(fn).parameters for fn in signature_examples.SIGNATURES
            },
        },
        indent=1,
        sort_keys=True,
    )
)
