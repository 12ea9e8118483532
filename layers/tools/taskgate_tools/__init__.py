"""The deployer's tools. Importing this package registers every tool in it."""

from . import conformance, migrations, reports  # noqa: F401
