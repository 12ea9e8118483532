"""Fixtures the MCP conformance suite calls by name: they exist for the suite; their
names, arguments and texts follow its expectations.

A package of its own, outside ``taskgate_tools``, so a deployment serves them only when
``ToolModules`` names it (the default does, first: the suite calls the first tool listed;
the prod environment in samconfig.toml does not). Importing it registers everything:
one module per kind of fixture."""

from . import prompts, resources, tools

__all__ = ["prompts", "resources", "tools"]
