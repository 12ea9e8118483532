"""{{cookiecutter.description}}. Importing this package registers its tools (ToolModules)."""

from . import rollout as rollout
