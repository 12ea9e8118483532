"""Every error code taskgate sends, in one place.

JSON-RPC 2.0 reserves -32768..-32000; MCP claims some of the implementation
range for itself. Stored task errors (the ``error`` of a failed task) use the
same codes, so the domain reads them from here too.
"""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# MCP 2025-11-25: resources/read of a URI that names nothing (2026-07-28 uses -32602, SEP-2164).
RESOURCE_NOT_FOUND = -32002
# JSON-RPC leaves -32000..-32099 to implementations; MCP has not claimed this one.
TASK_LIMIT_REACHED = -32000
# A tool run inside the request ran past what its front allows and was stopped (the code
# the MCP SDKs give a request that timed out, so a client reads it as one).
REQUEST_TIMED_OUT = -32001
# MCP 2026-07-28: routing headers that disagree with the body (SEP-2243).
HEADER_MISMATCH = -32020
# MCP 2026-07-28: the request needs a client capability it did not declare.
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
# MCP 2026-07-28: a protocol version this server does not serve.
UNSUPPORTED_PROTOCOL_VERSION = -32022
