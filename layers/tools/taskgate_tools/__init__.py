"""The deployer's tools. Importing this package registers every tool, resource and
prompt in it.

The conformance suite's fixtures are in ``taskgate_conformance``, next to this package."""

from . import migrations, pipeline, report_views, reports  # noqa: F401
