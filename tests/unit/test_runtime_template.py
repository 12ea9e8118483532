"""template.yaml's runtime Parameters agree with the code and the build: the architecture
(with layers/Makefile's wheels), the endpoint override (with aws_clients and
events/env.json) and SnapStart (published versions behind the alias everything invokes)."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

from cfnlint.decode import decode

from taskgate.local.endpoint import CONTAINER_HOST, DEFAULT_PORT

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _template() -> dict[str, Any]:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template  # type: ignore[no-any-return]


def test_the_architecture_is_a_parameter_the_layer_build_knows() -> None:
    t = _template()
    param = t["Parameters"]["Architecture"]
    assert param["Default"] == "arm64"
    makefile = (ROOT / "layers" / "Makefile").read_text()
    tags = dict(re.findall(r"^ARCH_TAG_(\w+) = (\w+)$", makefile, re.M))
    assert tags == {"arm64": "aarch64", "x86_64": "x86_64"}
    assert set(tags) == set(param["AllowedValues"])
    assert re.search(r"^WHEEL_PLATFORMS = .*\$\(ARCH_TAG\)", makefile, re.M)
    assert "LAMBDA_ARCH ?= arm64" in makefile
    assert t["Globals"]["Function"]["Architectures"] == [{"Ref": "Architecture"}]
    for layer in ("TaskgateLayer", "ToolsLayer"):
        res = t["Resources"][layer]
        assert res["Properties"]["CompatibleArchitectures"] == [{"Ref": "Architecture"}]
        assert res["Metadata"]["BuildArchitecture"] == {"Ref": "Architecture"}
    # `make build ARCH=...` hands the same value to both.
    top = (ROOT / "Makefile").read_text()
    assert "LAMBDA_ARCH=$(ARCH)" in top and "Architecture=$(ARCH)" in top


def test_the_endpoint_override_is_empty_by_default_and_reaches_every_function() -> None:
    """Declared (empty: AWS itself) so that `sam local invoke --env-vars` may set it; not a
    Parameter a deployer could set by mistake."""
    t = _template()
    assert "EndpointUrl" not in t["Parameters"]
    assert t["Globals"]["Function"]["Environment"]["Variables"]["AWS_ENDPOINT_URL"] == ""


def test_env_json_sets_only_variables_the_template_declares() -> None:
    """`sam local invoke --env-vars` drops the rest silently."""
    t = _template()
    declared = set(t["Globals"]["Function"]["Environment"]["Variables"])
    for res in t["Resources"].values():
        if res["Type"] == "AWS::Serverless::Function":
            declared |= set(res["Properties"].get("Environment", {}).get("Variables", {}))
    env = json.loads((ROOT / "events" / "env.json").read_text())
    assert set(env) == {"Parameters"}
    assert set(env["Parameters"]) <= declared
    assert env["Parameters"]["AWS_ENDPOINT_URL"] == f"http://{CONTAINER_HOST}:{DEFAULT_PORT}"


def test_snapstart_is_a_parameter_on_the_api_and_the_worker_invoked_through_published_versions() -> None:
    t = _template()
    assert t["Parameters"]["SnapStart"]["Default"] == "false"
    assert t["Conditions"]["SnapStartOn"] == {"Fn::Equals": [{"Ref": "SnapStart"}, "true"]}
    r = t["Resources"]
    for name in ("ApiFunction", "WorkerFunction"):
        props = r[name]["Properties"]
        assert props["SnapStart"] == {"ApplyOn": {"Fn::If": ["SnapStartOn", "PublishedVersions", "None"]}}
        assert props["AutoPublishAlias"] == "live"
        # Not AutoPublishAliasAllProperties: it names versions after what Lambda does not
        # snapshot too (a reserved concurrency), and such a version fails to publish.
        assert "AutoPublishAliasAllProperties" not in props
        # A layer change (all of taskgate's code) publishes a new version: the layers are in the
        # configuration fingerprint the version's description carries.
        configuration = r[name.replace("Function", "Configuration")]["Properties"]
        assert configuration["Layers"] == [{"Ref": "TaskgateLayer"}, {"Ref": "ToolsLayer"}]
    assert r["ApiFunctionIntegration"]["Properties"]["IntegrationUri"] == {"Ref": "ApiFunction.Alias"}
    assert r["ApiFunctionInvokePermission"]["Properties"]["FunctionName"] == {"Ref": "ApiFunction.Alias"}
    # The state machine invokes the worker version published with the deploy (a published
    # version, as SnapStart needs): each execution keeps the one it started with.
    subs = r["TaskStateMachine"]["Properties"]["DefinitionSubstitutions"]
    assert subs["WorkerFunctionArn"] == {"Ref": "WorkerFunction.Version"}
