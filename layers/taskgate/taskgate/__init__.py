"""taskgate: durable MCP Tasks on AWS serverless."""

__version__ = "0.1.0"
