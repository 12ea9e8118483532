"""The streaming endpoint in template.yaml (StreamingApi "true"): a REST API whose
integration streams StreamFunction through taskgate's own runtime loop, beside the HTTP
API, and nothing of it unless asked for."""

from __future__ import annotations

import pathlib
from typing import Any

from cfnlint.decode import decode

from taskgate.config import Settings
from tests.cfn_eval import Evaluator
from tests.sam_translate import environment, translate

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What may differ between ApiFunction's and StreamFunction's settings: the front, and which
# of the stack's two resources the function serves (OAUTH_RESOURCE; the HTTP API's by default).
FRONT = {"FRONT_STREAMING", "FRONT_TIMEOUT_SECONDS", "OAUTH_RESOURCE", "AWS_LAMBDA_EXEC_WRAPPER"}


def _resources() -> dict[str, Any]:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template["Resources"]  # type: ignore[no-any-return]


def _template_globals() -> dict[str, Any]:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template["Globals"]["Function"]["Environment"]["Variables"]  # type: ignore[no-any-return]


def _template_conditions() -> dict[str, Any]:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template["Conditions"]  # type: ignore[no-any-return]


def _env(resources: dict[str, Any], name: str) -> dict[str, Any]:
    """The function's environment as deployed: Globals' and its own (SAM merges them)."""
    return environment(name)


def _written(resources: dict[str, Any], name: str) -> dict[str, Any]:
    """What the function's own Environment writes (without Globals')."""
    return resources[name]["Properties"]["Environment"]["Variables"]  # type: ignore[no-any-return]


def test_the_streaming_endpoint_exists_only_when_asked_for() -> None:
    resources = _resources()
    streaming = {name for name in resources if name.startswith("Stream") and name != "StreamMaxSeconds"}
    assert {"StreamFunction", "StreamApi", "StreamProxyMethod", "StreamFunctionInvokePermission"} <= streaming
    # One deployment for each authorization of the methods (IAM alone, or not): a stage is
    # redeployed only by a new deployment.
    assert {resources[name].get("Condition") for name in streaming} == {
        "StreamingApiOn",
        "StreamingApiIamOnly",
        "StreamingApiWithTokensOrOpen",
    }
    conditions = _template_conditions()
    for name in ("StreamingApiIamOnly", "StreamingApiWithTokensOrOpen"):
        assert {"Condition": "StreamingApiOn"} in conditions[name]["Fn::And"], name


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
    # The same rights: one managed policy (ServeMcpPolicy) and the jobs' two, not a copy.
    policies = [resources[name]["Properties"]["Policies"] for name in ("ApiFunction", "StreamFunction")]
    assert (
        policies[0]
        == policies[1]
        == [
            {"Ref": "ServeMcpPolicy"},
            {"Ref": "JobStatusPolicy"},
            {"Ref": "JobStopPolicy"},
        ]
    )
    # Sign-in as on the HTTP API: the REST API checks SigV4 on every route under IAM alone and
    # on /iam/mcp beside tokens; the app checks tokens, naming this endpoint's /mcp as their
    # resource (OAUTH_RESOURCE, under STREAM_PUBLIC_URL), and serves this endpoint's Host.
    method = resources["StreamProxyMethod"]["Properties"]
    assert method["AuthorizationType"] == {"Fn::If": ["IamOnly", "AWS_IAM", "NONE"]}
    assert resources["StreamIamMcpMethod"]["Properties"]["AuthorizationType"] == "AWS_IAM"
    assert resources["StreamIamMcpResource"]["Properties"]["PathPart"] == "mcp"
    assert stream["OAUTH_RESOURCE"]["Fn::Sub"].endswith(
        ".execute-api.${AWS::Region}.${AWS::URLSuffix}/stream/mcp"
    )
    assert resources["StreamApiStage"]["Properties"]["StageName"] == "stream"


def test_what_both_serve_with_is_written_once() -> None:
    """The serving environment is Globals' (SAM merges it into each function): each of the two
    writes only its front, so a change of a shared value is one edit (issue 29)."""
    resources = _resources()
    for name in ("ApiFunction", "StreamFunction"):
        assert set(_written(resources, name)) <= FRONT, name
        assert "IgnoreGlobals" not in resources[name], name
    serving = _template_globals()
    assert {"STATE_MACHINE_ARN", "AUTH_MODE", "OAUTH_ISSUER", "PUBLIC_URL"} <= set(serving)
    assert all(
        environment(name)[key] == value
        for name in ("ApiFunction", "StreamFunction")
        for key, value in serving.items()
    )


def test_functions_that_serve_no_mcp_take_none_of_its_environment() -> None:
    """The worker, the sweeper and the wake-ups' function ignore Globals' environment (the worker's STATE_MACHINE_ARN
    would be a circular dependency) and still have what every function has."""
    resources = _resources()
    serving = _template_globals()
    every_function = dict(list(serving.items())[: list(serving).index("STATE_MACHINE_ARN")])
    assert set(every_function) >= {"TASK_TABLE", "TUNING", "AWS_ENDPOINT_URL", "POWERTOOLS_SERVICE_NAME"}
    own = {
        "WorkerFunction": {"RESULT_BUCKET", "PUBLIC_URL", "PIPELINE_STATE_MACHINE_ARN", "TOOL_SECRET_ARNS"},
        "SweeperFunction": {"STATE_MACHINE_ARN", "PREVIOUS_STATE_MACHINE_ARNS"},
        "TaskEventsFunction": {"TASK_EVENT_BUS"},
    }
    for name, theirs in own.items():
        assert resources[name]["IgnoreGlobals"] == ["Environment"], name
        env = environment(name)
        assert set(env) == set(every_function) | theirs, name
        assert {k: env[k] for k in every_function} == every_function, name
        assert all(env[k] == serving[k] for k in theirs if k in serving), name


def _evaluator(parameters: dict[str, str]) -> tuple[dict[str, Any], Evaluator]:
    translated = translate(parameters)

    def resource(name: str, attribute: str | None) -> str:
        # An id for each resource, and a URL where the template needs one (the pool's issuer).
        return f"https://cognito-idp.us-east-1.amazonaws.com/{name}" if attribute == "ProviderURL" else name

    return translated, Evaluator(translated, parameters, resource=resource)


def _deployed_settings(parameters: dict[str, str]) -> dict[str, Settings]:
    """Each function's Settings as a deploy with these Parameters would give them."""
    translated, evaluator = _evaluator(parameters)
    out = {}
    for name in ("ApiFunction", "StreamFunction"):
        if name in translated["Resources"]:
            env = evaluator.value(translated["Resources"][name]["Properties"]["Environment"]["Variables"])
            out[name] = Settings.from_env({k: str(v) for k, v in env.items()})
    return out


def test_signed_in_people_reach_the_streaming_endpoint_with_its_own_tokens() -> None:
    # Nothing refuses USER beside StreamingApi any more (issue 18 had a Rule for it).
    template, _ = decode(str(ROOT / "template.yaml"))
    assert template is not None
    assert not any("Stream" in name for name in template.get("Rules", {}))
    for public in ("", "https://mcp.example.com"):
        settings = _deployed_settings({"StreamingApi": "true", "PublicUrl": public})
        api, stream = settings["ApiFunction"], settings["StreamFunction"]
        assert api.sign_in.auth_mode == stream.sign_in.auth_mode == {"USER", "CLIENT", "IAM"}
        home = public or "https://McpApi.execute-api.us-east-1.amazonaws.com"
        streaming = "https://StreamApi.execute-api.us-east-1.amazonaws.com/stream"
        # The authorization server (on the HTTP API) issues tokens for either endpoint's /mcp …
        assert api.sign_in.sign_in_resources == (f"{home}/mcp", f"{streaming}/mcp")
        assert not api.sign_in.is_streaming_endpoint and api.sign_in.resource_url == f"{home}/mcp"
        # … and the streaming endpoint takes its own, naming the same issuer.
        assert stream.sign_in.is_streaming_endpoint and stream.sign_in.resource_url == f"{streaming}/mcp"
        assert stream.sign_in.issuer_url == api.sign_in.issuer_url == home
    # Without StreamingApi the HTTP API's /mcp is the only resource, as before.
    alone = _deployed_settings({})["ApiFunction"]
    assert alone.sign_in.sign_in_resources == ("https://McpApi.execute-api.us-east-1.amazonaws.com/mcp",)


def test_the_streaming_endpoints_metadata_is_where_its_401_points_and_under_its_stage() -> None:
    # The REST API routes only its stage (/stream/…): metadata at the host's root would be
    # unreachable. The output names what StreamFunction's app serves and its 401 points at.
    from taskgate.auth.build import SignInPorts, build_sign_in
    from taskgate.auth.signing import ephemeral_source

    parameters = {"StreamingApi": "true"}
    translated, evaluator = _evaluator(parameters)
    stream = _deployed_settings(parameters)["StreamFunction"]

    def no_store() -> Any:
        raise AssertionError("nothing is stored to describe the resource")

    sign_in = build_sign_in(stream.sign_in, SignInPorts(store=no_store, signing_keys=ephemeral_source()))
    assert sign_in is not None and sign_in.resource is not None
    output = evaluator.value(translated["Outputs"]["StreamingProtectedResourceMetadataUrl"]["Value"])
    stage = "https://StreamApi.execute-api.us-east-1.amazonaws.com/stream"
    assert output == sign_in.resource.metadata_url == f"{stage}/.well-known/oauth-protected-resource/mcp"
    assert sign_in.resource.challenge().endswith(f'resource_metadata="{output}"')
    # The app sees paths below the stage: its metadata route and the /mcp it protects.
    assert sign_in.resource.metadata_path == "/.well-known/oauth-protected-resource/mcp"
    assert sign_in.resource.path == "/mcp"


def test_the_tuning_is_in_both_functions_fingerprints() -> None:
    # A Tuning change publishes a new version only if the fingerprint sees it (issue 20); the
    # plain-call settings are Tuning keys now (issue 29).
    from taskgate.tuning import KEYS

    resources = _resources()
    for configuration in ("ApiConfiguration", "WorkerConfiguration"):
        assert resources[configuration]["Properties"]["Tuning"] == {"Ref": "Tuning"}
    assert {
        "InlineCallMaxSeconds",
        "CallWaitSeconds",
        "CallAnswerWaitSeconds",
        "CallHandles",
        "CallPieceSeconds",
        "HangUpSeconds",
    } <= set(KEYS)


def test_every_plain_call_setting_the_template_passes_is_one_the_server_reads() -> None:
    resources = _resources()
    fields = {name.upper() for name in Settings.variables()}
    for function in ("ApiFunction", "StreamFunction"):
        env = _env(resources, function)
        passed = {k for k in env if k.startswith(("CALL_", "INLINE_", "HANG_", "FRONT_"))}
        assert passed and passed <= fields, passed - fields
        # The rest of them come in the Tuning (one variable for every function).
    assert _template_globals()["TUNING"] == {"Ref": "Tuning"}
