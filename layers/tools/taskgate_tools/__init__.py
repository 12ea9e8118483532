"""The deployer's tools. Importing this package registers every tool in it.

The conformance suite's fixtures are in ``taskgate_conformance``, next to this package."""

from . import migrations, reports  # noqa: F401
