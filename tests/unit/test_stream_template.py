"""The streaming endpoint in template.yaml (StreamingApi "true"): a REST API whose
integration streams StreamFunction through taskgate's own runtime loop, beside the HTTP
API, and nothing of it unless asked for."""

from __future__ import annotations

import pathlib
from typing import Any

from cfnlint.decode import decode

from taskgate.config import Settings

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What may differ between ApiFunction's and StreamFunction's settings: the front.
FRONT = {"FRONT_STREAMING", "FRONT_TIMEOUT_SECONDS", "PUBLIC_URL", "AWS_LAMBDA_EXEC_WRAPPER"}


def _resources() -> dict[str, Any]:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template["Resources"]  # type: ignore[no-any-return]


def _env(resources: dict[str, Any], name: str) -> dict[str, Any]:
    return resources[name]["Properties"]["Environment"]["Variables"]  # type: ignore[no-any-return]


def test_the_streaming_endpoint_exists_only_when_asked_for() -> None:
    resources = _resources()
    streaming = {name for name in resources if name.startswith("Stream") and name != "StreamMaxSeconds"}
    assert {"StreamFunction", "StreamApi", "StreamProxyMethod", "StreamFunctionInvokePermission"} <= streaming
    assert {resources[name].get("Condition") for name in streaming} == {"StreamingApiOn"}


def test_the_rest_api_streams_the_function_for_up_to_15_minutes() -> None:
    resources = _resources()
    integration = resources["StreamProxyMethod"]["Properties"]["Integration"]
    assert integration["Type"] == "AWS_PROXY"
    assert integration["ResponseTransferMode"] == "STREAM"
    assert integration["TimeoutInMillis"] == 900_000
    # InvokeWithResponseStream: Invoke would buffer the whole response.
    assert integration["Uri"]["Fn::Sub"].endswith("/response-streaming-invocations")
    function = resources["StreamFunction"]["Properties"]
    assert function["Timeout"] == 900
    assert _env(resources, "StreamFunction")["FRONT_STREAMING"] == "true"
    assert _env(resources, "StreamFunction")["FRONT_TIMEOUT_SECONDS"] == 900
    assert _env(resources, "ApiFunction")["FRONT_STREAMING"] == "false"


def test_the_function_runs_taskgates_runtime_loop_on_the_handlers_app() -> None:
    resources = _resources()
    function = resources["StreamFunction"]["Properties"]
    wrapper = _env(resources, "StreamFunction")["AWS_LAMBDA_EXEC_WRAPPER"]
    code = ROOT / function["CodeUri"]
    assert wrapper.startswith("/var/task/")
    script = code / wrapper.removeprefix("/var/task/")
    assert "-m taskgate.lambda_stream" in script.read_text()
    # Lambda runs the wrapper itself: it must be executable in the deployed zip, which
    # keeps the mode the checkout gives it (git records 100755 for it).
    assert script.stat().st_mode & 0o111
    module, _, attribute = function["Handler"].rpartition(".")
    assert attribute == "app" and (code / f"{module}.py").exists()
    assert "\napp = _root.app(" in (code / f"{module}.py").read_text()


def test_both_functions_serve_with_the_same_settings_and_rights_but_their_front() -> None:
    resources = _resources()
    api, stream = _env(resources, "ApiFunction"), _env(resources, "StreamFunction")
    assert {k: v for k, v in api.items() if k not in FRONT} == {
        k: v for k, v in stream.items() if k not in FRONT
    }
    statements = [
        resources[name]["Properties"]["Policies"][0]["Statement"]
        for name in ("ApiFunction", "StreamFunction")
    ]
    assert statements[0] == statements[1]
    # Sign-in as on the HTTP API: the REST API checks SigV4 on every route under IAM alone and
    # on /iam/mcp beside tokens; the app checks tokens, naming this endpoint's /mcp as their
    # resource (PUBLIC_URL + /mcp), and serves this endpoint's Host.
    method = resources["StreamProxyMethod"]["Properties"]
    assert method["AuthorizationType"] == {"Fn::If": ["IamOnly", "AWS_IAM", "NONE"]}
    assert resources["StreamIamMcpMethod"]["Properties"]["AuthorizationType"] == "AWS_IAM"
    assert resources["StreamIamMcpResource"]["Properties"]["PathPart"] == "mcp"
    assert stream["PUBLIC_URL"]["Fn::Sub"].endswith(".execute-api.${AWS::Region}.${AWS::URLSuffix}/stream")
    assert resources["StreamApiStage"]["Properties"]["StageName"] == "stream"


def test_the_stacks_own_sign_in_is_refused_beside_the_streaming_endpoint() -> None:
    # USER's tokens are for the HTTP API's /mcp only: a deploy asking for both fails early.
    template, _ = decode(str(ROOT / "template.yaml"))
    assert template is not None
    rule = template["Rules"]["StreamingApiWithoutUser"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "StreamingApi"}, "true"]}
    refused = rule["Assertions"][0]["Assert"]["Fn::Not"][0]["Fn::Contains"][0]
    assert all("USER" in mode for mode in refused)
    allowed = template["Parameters"]["AuthMode"]["AllowedValues"]
    assert {mode for mode in allowed if "USER" in mode} == set(refused)


def test_every_plain_call_parameter_is_in_the_api_functions_fingerprint() -> None:
    # A Parameter change publishes a new version only if the fingerprint sees it (issue 20).
    resources = _resources()
    fingerprinted = resources["ApiConfiguration"]["Properties"]["Parameters"]
    for name in (
        "InlineCallMaxSeconds",
        "CallWaitSeconds",
        "CallHandles",
        "CallPieceSeconds",
        "HangUpSeconds",
    ):
        assert fingerprinted[name] == {"Ref": name}


def test_every_plain_call_setting_the_template_passes_is_one_the_server_reads() -> None:
    resources = _resources()
    fields = {name.upper() for name in Settings.model_fields}
    for function in ("ApiFunction", "StreamFunction"):
        env = _env(resources, function)
        passed = {k for k in env if k.startswith(("CALL_", "INLINE_", "HANG_", "FRONT_"))}
        assert passed and passed <= fields, passed - fields
