"""template.yaml agrees with the code that reads it (parsed here; the sam and
cfn-lint tools run in tests/integration/test_template_tools.py)."""

from __future__ import annotations

import functools
import importlib.util
import json
import pathlib
import re
import sys
import tomllib
from types import ModuleType
from typing import Any

from cfnlint.decode import decode

from taskgate.local.runtime import TABLE_DEFINITION, TTL_ATTRIBUTE
from tests.sam_translate import environment

ROOT = pathlib.Path(__file__).resolve().parents[2]


@functools.cache
def _decoded() -> str:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return json.dumps(template)


def _template() -> dict[str, Any]:
    # A fresh copy each time (tests change what they get); decoding the YAML once per run
    # saves about a second of the unit tier.
    return json.loads(_decoded())  # type: ignore[no-any-return]


def _load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_local_table_matches_the_template() -> None:
    props = _template()["Resources"]["TaskTable"]["Properties"]
    assert props["KeySchema"] == TABLE_DEFINITION["KeySchema"]
    assert sorted(props["AttributeDefinitions"], key=str) == sorted(
        TABLE_DEFINITION["AttributeDefinitions"], key=str
    )
    assert props["GlobalSecondaryIndexes"] == TABLE_DEFINITION["GlobalSecondaryIndexes"]
    assert props["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True
    # The change stream the wake-ups come from (taskgate/local/change_stream.py reads the local one).
    assert TABLE_DEFINITION["StreamSpecification"] == {"StreamEnabled": True, **props["StreamSpecification"]}


def test_state_machine_substitutions_cover_the_definition() -> None:
    machine = _template()["Resources"]["TaskStateMachine"]["Properties"]
    definition = (ROOT / machine["DefinitionUri"]).read_text()
    json.loads(definition)
    import re

    used = set(re.findall(r"\$\{(\w+)\}", definition))
    assert used == set(machine["DefinitionSubstitutions"])
    assert machine["Type"] == "STANDARD"


def test_functions_use_the_handlers_and_runtime_we_test() -> None:
    resources = _template()["Resources"]
    globals_ = _template()["Globals"]["Function"]
    assert globals_["Runtime"] == f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert resources["ApiFunction"]["Properties"]["Handler"] == "api_handler.handler"
    assert resources["WorkerFunction"]["Properties"]["Handler"] == "worker_handler.handler"


def test_no_policy_grants_every_action() -> None:
    text = (ROOT / "template.yaml").read_text()
    template = _template()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            # A Deny (e.g. "no non-TLS access to the bucket") grants nothing.
            action = node.get("Action") if node.get("Effect") != "Deny" else None
            actions = action if isinstance(action, list) else [action]
            assert "*" not in actions and not any(isinstance(a, str) and a.endswith(":*") for a in actions), (
                node
            )
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(template["Resources"])
    assert "Action: '*'" not in text and 'Action: "*"' not in text


def test_alarms_and_dashboard_use_metrics_the_code_emits() -> None:
    import re

    from taskgate.observability import EMITTED_METRICS

    resources = _template()["Resources"]
    monitoring = {k: v for k, v in resources.items() if v.get("Condition") == "MonitoringEnabled"}
    assert {
        "FailedTaskRateAlarm",
        "StuckTasksAlarm",
        "ThrottlesAlarm",
        "StateMachineFailuresAlarm",
        "Dashboard",
    } <= set(monitoring)
    ours: set[str] = set()
    for name, res in monitoring.items():
        props = res["Properties"]
        if props.get("Namespace") == "taskgate":
            ours.add(props["MetricName"])
        for metric in props.get("Metrics", []):
            stat = metric.get("MetricStat", {}).get("Metric", {})
            if stat.get("Namespace") == "taskgate":
                ours.add(stat["MetricName"])
        if name == "Dashboard":
            body = props["DashboardBody"]["Fn::Sub"]
            ours |= set(re.findall(r'\["taskgate", "(\w+)"', body))
            ours |= set(re.findall(r'\[".", "(\w+)", ".", "."\]', body.split("AWS/Lambda")[0]))
    assert ours and ours <= EMITTED_METRICS, ours - EMITTED_METRICS
    assert {"TasksFailed", "TasksCompleted", "TasksSwept", "TimeToTerminal", "TasksCancelled"} <= ours


# ---------------------------------------------------------------- deployment checks


def _asl() -> dict[str, Any]:
    machine = _template()["Resources"]["TaskStateMachine"]["Properties"]
    return json.loads((ROOT / machine["DefinitionUri"]).read_text())  # type: ignore[no-any-return]


def _samconfig_parameters(env: str) -> dict[str, str]:
    """The template Parameters ``sam deploy --config-env env`` passes (over the defaults)."""
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    overrides = config.get(env, {}).get("deploy", {}).get("parameters", {}).get("parameter_overrides", [])
    return dict(item.split("=", 1) for item in overrides)


def _deployed_parameters(env: str) -> dict[str, str]:
    defaults = {name: str(p.get("Default", "")) for name, p in _template()["Parameters"].items()}
    return {**defaults, **_samconfig_parameters(env)}


def test_no_arn_hard_codes_the_aws_partition() -> None:
    """aws-cn and aws-us-gov have other partitions: every ARN is built from AWS::Partition."""
    for path in ("template.yaml", "statemachines/task.asl.json"):
        assert "arn:aws:" not in (ROOT / path).read_text(), path
    machine = _template()["Resources"]["TaskStateMachine"]["Properties"]
    assert machine["DefinitionSubstitutions"]["Partition"] == {"Ref": "AWS::Partition"}


def test_every_aws_call_of_the_state_machine_retries_throttling_with_jitter() -> None:
    states = _asl()["States"]
    for name, state in states.items():
        if state["Type"] != "Task":
            continue
        retriers = state.get("Retry", [])
        assert retriers, f"{name} has no Retry"
        retried = {error for r in retriers for error in r["ErrorEquals"]}
        caught = {error for c in state.get("Catch", []) for error in c["ErrorEquals"]} - {"States.ALL"}
        # A Retry is matched before any Catch: it must never swallow a signal or a lost race.
        assert not retried & caught, (name, retried & caught)
        assert not retried & {"States.ALL", "States.TaskFailed", "States.Timeout"}, name
        assert all(r.get("JitterStrategy") == "FULL" for r in retriers), name
        assert any("Throttl" in e or "TooManyRequests" in e for e in retried), name
    run_tool = {error for r in states["RunTool"]["Retry"] for error in r["ErrorEquals"]}
    assert {
        "Lambda.TooManyRequestsException",
        "Lambda.ClientExecutionTimeoutException",
        "ServiceUnavailable",  # the worker's own throttled AWS calls (domain.errors)
    } <= run_tool


def test_worker_throttling_is_retried_for_minutes() -> None:
    diagrams = _load_script("diagrams")
    (throttling,) = [
        r
        for r in _asl()["States"]["RunTool"]["Retry"]
        if "Lambda.TooManyRequestsException" in r["ErrorEquals"]
    ]
    assert "ServiceUnavailable" in throttling["ErrorEquals"]
    assert diagrams.retry_seconds(throttling) >= 10 * 60
    assert throttling["MaxDelaySeconds"] <= 120  # keeps trying, rather than one long sleep


def test_a_pinned_version_made_inactive_is_waited_for_minutes() -> None:
    """A worker version not invoked for two weeks (in a VPC, or with SnapStart) goes inactive;
    the invocation that finds it so fails with ResourceNotReadyException while Lambda restores
    it, which takes minutes. A task parked that long runs the version it started with: the
    retry must outlast the restore (issue 29, n4), not give up after a minute."""
    diagrams = _load_script("diagrams")
    retriers = _asl()["States"]["RunTool"]["Retry"]
    for error in (
        "Lambda.ResourceNotReadyException",
        "Lambda.SnapStartNotReadyException",
        "Lambda.SnapStartTimeoutException",
        "Lambda.ENINotReadyException",
    ):
        (retrier,) = [r for r in retriers if error in r["ErrorEquals"]]
        # FULL jitter draws each delay between 0 and its nominal value: on average half.
        assert diagrams.retry_seconds(retrier) / 2 >= 5 * 60, error
        assert retrier["MaxDelaySeconds"] <= 60, error  # it keeps asking, rather than one long sleep


def test_names_built_from_the_stack_name_fit_any_stack_name() -> None:
    """A stack name may have 128 characters; no name derived from it may outgrow its
    service's limit (the state machine's is 80)."""
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    longest = "s" * 128
    types = {
        "AWS::Serverless::StateMachine": "AWS::StepFunctions::StateMachine",
        "AWS::Serverless::Function": "AWS::Lambda::Function",
        "AWS::Serverless::LayerVersion": "AWS::Lambda::LayerVersion",
    }
    checked = 0
    for name, resource in _template()["Resources"].items():
        kind = types.get(resource["Type"], resource["Type"])
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", kind).schema["properties"]
        for prop, value in resource.get("Properties", {}).items():
            sub = value.get("Fn::Sub") if isinstance(value, dict) else None
            if not isinstance(sub, str) or "${AWS::StackName}" not in sub:
                continue
            limit = schema.get(prop, {}).get("maxLength")
            if limit is None:
                continue
            rendered = re.sub(r"\$\{[^}]+\}", "x", sub.replace("${AWS::StackName}", longest))
            assert len(rendered) <= limit, f"{name}.{prop} can be {len(rendered)} > {limit} characters"
            checked += 1
    assert checked  # the log group names, at least


def test_results_outlive_the_longest_task_the_template_allows() -> None:
    """A task row lives up to its TTL after it ends (MaxTtlMs); the result object it
    points at must not be deleted sooner, or tasks/get and tasks/result fail."""
    from taskgate.domain.results import RETENTION_CLASSES_DAYS, RETENTION_TAG, retention_days

    rules = _template()["Resources"]["ResultBucket"]["Properties"]["LifecycleConfiguration"]["Rules"]
    tagged: dict[str, int] = {}
    untagged: list[int] = []
    for rule in rules:
        if "ExpirationInDays" not in rule:
            continue
        days = rule["ExpirationInDays"]
        assert isinstance(days, int), f"{rule['Id']}: expiration must not depend on a parameter"
        filters = rule.get("TagFilters", [])
        if filters:
            ((key, value),) = ((f["Key"], f["Value"]) for f in filters)
            assert key == RETENTION_TAG
            tagged[value] = days
        else:
            untagged.append(days)
    # One rule per class the code tags objects with, expiring after exactly that.
    assert tagged == {f"{d}d": d for d in RETENTION_CLASSES_DAYS}
    # The longest TTL a Tuning accepts has a class; rules without a tag never cut it short.
    from taskgate.config import Settings
    from taskgate.tuning import BOUNDS

    longest = int(BOUNDS["MaxTtlMs"][1])
    assert retention_days(longest) in RETENTION_CLASSES_DAYS
    assert all(days >= retention_days(longest) for days in untagged)
    for env in ("default", "dev", "prod"):
        tuned = Settings.from_env({"TASK_TABLE": "t", "TUNING": _deployed_parameters(env)["Tuning"]})
        assert retention_days(tuned.limits.max_ttl_ms) * 86_400_000 > tuned.limits.max_ttl_ms, env


def test_alarm_notifications_can_be_delivered() -> None:
    """CloudWatch alarms cannot publish to a topic encrypted with the AWS-managed
    alias/aws/sns key; the topic's key must let cloudwatch.amazonaws.com use it."""
    resources = _template()["Resources"]
    topic = resources["AlarmTopic"]["Properties"]
    key_ref = topic.get("KmsMasterKeyId")
    if key_ref is not None:
        assert isinstance(key_ref, dict) and "Ref" in key_ref, f"topic key {key_ref!r} is not the stack's own"
        key = resources[key_ref["Ref"]]
        assert key["Type"] == "AWS::KMS::Key"
        granted = {
            action
            for statement in key["Properties"]["KeyPolicy"]["Statement"]
            if statement["Effect"] == "Allow"
            and statement["Principal"].get("Service") == "cloudwatch.amazonaws.com"
            and not statement.get("Condition")
            for action in statement["Action"]
        }
        assert {"kms:Decrypt", "kms:GenerateDataKey*"} <= granted
    alarms = {name: r for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert alarms
    for name, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
        assert alarm["Properties"].get("AlarmDescription"), name


def test_the_dashboards_log_queries_read_log_groups_the_stack_has() -> None:
    """The functions log to the groups the template names (LoggingConfig), not to
    /aws/lambda/<function name>: a query of the latter finds nothing."""
    resources = _template()["Resources"]
    body = resources["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    sources = re.findall(r"SOURCE '([^']+)'", body)
    assert sources
    log_groups = {name for name, r in resources.items() if r["Type"] == "AWS::Logs::LogGroup"}
    for source in sources:
        match = re.fullmatch(r"\$\{(\w+)\}", source)
        assert match and match[1] in log_groups, source
    functions_logs = {
        r["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        for r in resources.values()
        if r["Type"] == "AWS::Serverless::Function"
    }
    assert {re.fullmatch(r"\$\{(\w+)\}", s)[1] for s in sources} <= functions_logs  # type: ignore[index]


def test_the_layer_build_takes_wheels_for_every_glibc_lambda_has() -> None:
    """pip given only manylinux2014 silently picks an older release of a package whose
    newer wheels are tagged manylinux_2_28 or _2_34 (both load on Lambda's glibc 2.34)."""
    from tests.lambda_platform import LAMBDA_GLIBC, platform_glibc

    makefile = (ROOT / "layers" / "Makefile").read_text()
    lines = [line for line in makefile.splitlines() if line.startswith("WHEEL_PLATFORMS")]
    assert len(lines) == 1, "layers/Makefile must list its wheel platforms in WHEEL_PLATFORMS"
    # Written for the Architecture the build is for (layers/Makefile ARCH_TAG): arm64's tags here.
    platforms = [p.replace("$(ARCH_TAG)", "aarch64") for p in lines[0].split("=", 1)[1].split()]
    assert {"manylinux2014_aarch64", "manylinux_2_28_aarch64", "manylinux_2_34_aarch64"} <= set(platforms)
    assert all((platform_glibc(p) or (9, 9)) <= LAMBDA_GLIBC for p in platforms), platforms
    assert "$(addprefix --platform ,$(WHEEL_PLATFORMS))" in makefile


def _conditions(params: dict[str, str]) -> dict[str, bool]:
    """The template's Conditions, evaluated for these parameter values."""
    from tests.cfn_eval import Evaluator

    evaluator = Evaluator(_template(), params)
    return {name: evaluator.condition(name) for name in _template()["Conditions"]}


SIGN_IN = ("SignInPeople", "SignInAgents", "SignInIam")


def test_production_authenticates_and_creates_its_own_sign_in() -> None:
    """An open endpoint is a choice made on purpose, never the default: the template's
    default and `sam deploy --config-env prod` sign callers in, with a user pool, an app
    client for MCP clients and a hosted sign-in domain when no issuer is given."""
    parameters = _template()["Parameters"]
    assert all(parameters[name]["Default"] == "true" for name in SIGN_IN)
    for env in ("default", "prod"):
        deployed = _deployed_parameters(env)
        assert all(deployed[name] == "true" for name in SIGN_IN), env
        assert deployed["AuthMode"] == "" and deployed["OAuthCallbackUrls"] == "", env
    prod = _conditions(_deployed_parameters("prod"))
    assert prod["HasUser"] and prod["HasClient"] and prod["CreateUserPool"]
    resources = _template()["Resources"]
    created = {name for name, r in resources.items() if r.get("Condition") == "CreateUserPool"}
    kinds = {resources[name]["Type"] for name in created}
    assert {
        "AWS::Cognito::UserPool",
        "AWS::Cognito::UserPoolClient",
        "AWS::Cognito::UserPoolResourceServer",
        "AWS::Cognito::UserPoolDomain",
    } <= kinds
    clients = {
        n: resources[n]["Properties"]
        for n in created
        if resources[n]["Type"] == "AWS::Cognito::UserPoolClient"
    }
    # The one client the stack signs people in with: public (PKCE), its callback the stack's own.
    sign_in = clients.pop("McpClient")
    assert sign_in["GenerateSecret"] is False and sign_in["AllowedOAuthFlows"] == ["code"]
    # Only a stack from before SignInPeople keeps its hosts' own redirect URIs and scope here.
    assert sign_in["AllowedOAuthScopes"]["Fn::If"][0] == "PoolSignInKept"
    assert sign_in["AllowedOAuthScopes"]["Fn::If"][2] == ["openid", "email"]
    assert not prod["PoolSignInKept"]
    callback, kept = sign_in["CallbackURLs"]["Fn::Split"][1]["Fn::Join"][1]
    assert kept == {
        "Fn::If": [
            "PoolSignInKept",
            {"Fn::Join": [",", {"Ref": "OAuthCallbackUrls"}]},
            {"Ref": "AWS::NoValue"},
        ]
    }
    assert callback["Fn::Sub"][0] == "${Origin}/oauth/callback"
    assert callback["Fn::Sub"][1]["Origin"]["Fn::If"][:2] == ["HasPublicUrl", {"Ref": "PublicUrl"}]
    # Agents: client credentials with the resource server's scope.
    agent = clients.pop("AgentClient")
    assert agent["GenerateSecret"] is True and agent["AllowedOAuthFlows"] == ["client_credentials"]
    assert agent["AllowedOAuthScopes"] == ["taskgate/tasks"] and not clients
    (pool,) = [
        resources[n]["Properties"] for n in created if resources[n]["Type"] == "AWS::Cognito::UserPool"
    ]
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    # Development deployments may be open, and the deploy output says so.
    assert _conditions(_deployed_parameters("dev"))["IsOpen"]
    warning = _template()["Outputs"]["OpenEndpointWarning"]
    assert warning["Condition"] == "IsOpen" and "development" in warning["Description"]


def test_mcp_clients_can_discover_sign_in() -> None:
    """API Gateway's JWT authorizer cannot send resource_metadata in its 401, so /mcp is not
    behind it; ApiFunction checks tokens and serves the metadata and its authorization server
    on open routes. IAM callers beside tokens come in on /iam/mcp, SigV4-checked by the API."""
    resources = _template()["Resources"]
    routes = {
        r["Properties"]["RouteKey"]: r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::ApiGatewayV2::Route"
    }
    for key in ("POST /mcp", "GET /mcp", "DELETE /mcp"):
        assert routes[key]["AuthorizationType"] == {"Fn::If": ["IamOnly", "AWS_IAM", "NONE"]}, key
        assert "AuthorizerId" not in routes[key]
        assert routes[key.replace("/mcp", "/iam/mcp")]["AuthorizationType"] == "AWS_IAM"
    from taskgate.auth.routes import SignInRoutes

    served = {
        f"{method} {route.path}"
        for route in SignInRoutes(endpoints=None, store=None, server=None, upstream=None).routes()  # type: ignore[arg-type]
        for method in route.methods or ()
        if method != "HEAD"
    }
    open_routes = {
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-protected-resource/mcp",
    }
    for key in open_routes | served:
        assert routes[key]["AuthorizationType"] == "NONE", key
    assert not any(r["Type"] == "AWS::ApiGatewayV2::Authorizer" for r in resources.values())
    stage = resources["McpApiApiGatewayDefaultStage"]["DependsOn"]
    assert {name for name, r in resources.items() if r["Type"] == "AWS::ApiGatewayV2::Route"} <= set(stage)
    env = environment("ApiFunction")
    from taskgate.config import Settings

    sign_in = {name for name in env if name.startswith(("AUTH_", "OAUTH_"))}
    assert sign_in <= {f.upper() for f in Settings.variables()}
    # Tuning knobs (token lifetimes, registration rates) keep their defaults; the rest is set.
    assert sign_in == {f.upper() for f in Settings.variables() if f.startswith(("auth_", "oauth_"))} - {
        "OAUTH_RESOURCE",
        "OAUTH_ACCESS_TOKEN_TTL_SECONDS",
        "OAUTH_REFRESH_TOKEN_TTL_DAYS",
        "OAUTH_REGISTRATIONS_PER_HOUR",
        "OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR",
        "OAUTH_UPSTREAM_SCOPES",
        # Key clients for private_key_jwt: an application-only value, the Tuning key
        # OAuthClientKeys; empty by default (no key client).
        "OAUTH_CLIENT_KEYS",
    }
    assert env["PUBLIC_URL"]["Fn::If"][:2] == ["HasPublicUrl", {"Ref": "PublicUrl"}]
    assert env["OAUTH_ISSUER"]["Fn::If"][:2] == [
        "CreateUserPool",
        {"Fn::GetAtt": ["UserPool", "ProviderURL"]},
    ]
    assert env["OAUTH_TOKEN_USE"] == {"Fn::If": ["CreateUserPool", "access", ""]}
    assert env["OAUTH_SIGNING_SECRET_ARN"] == {"Fn::If": ["HasUser", {"Ref": "SignInKeySecret"}, ""]}
    # A client id is never an audience (an ID token's aud is its client's id).
    assert "JwtClientIds" in json.dumps(env["OAUTH_CLIENT_IDS"]) and "JwtClientIds" not in json.dumps(
        env["OAUTH_AUDIENCES"]
    )
    grants = json.dumps(resources["ServeMcpPolicy"]["Properties"]["PolicyDocument"])
    assert {"Ref": "ServeMcpPolicy"} in resources["ApiFunction"]["Properties"]["Policies"]
    assert '"Ref": "SignInKeySecret"' in grants and '"Ref": "JwtSignInClientSecretArn"' in grants


def test_the_template_reads_sign_in_as_the_function_does() -> None:
    """Every combination of the three sign-in switches means the same set of callers to the
    template's conditions (which resources and routes exist) as to Settings (what the function
    accepts, from the AUTH_MODE the template passes it)."""
    import itertools

    from taskgate.config import Settings
    from tests.cfn_eval import Evaluator

    base = {"TASK_TABLE": "t", "PUBLIC_URL": "https://x.example", "OAUTH_ISSUER": "https://i.example"}
    auth_mode = environment("ApiFunction")["AUTH_MODE"]
    for values in itertools.product(["true", "false"], repeat=3):
        params = {
            **_deployed_parameters("default"),
            **dict(zip(SIGN_IN, values, strict=True)),
            "JwtIssuer": "",
        }
        conditions = _conditions(params)
        mode = Evaluator(_template(), params).value(auth_mode)
        members = Settings.from_env(
            {**base, "AUTH_MODE": mode, "OAUTH_UPSTREAM_CLIENT_ID": "c"}
        ).sign_in.auth_mode
        assert members == {m for m, on in zip(("USER", "CLIENT", "IAM"), values, strict=True) if on == "true"}
        assert conditions["HasUser"] == ("USER" in members), values
        assert conditions["HasClient"] == ("CLIENT" in members), values
        assert conditions["IamOnly"] == (members == {"IAM"}), values
        assert conditions["IsOpen"] == (not members), values
        assert conditions["CreateUserPool"] == bool(members & {"USER", "CLIENT"}), values


def test_the_default_stack_deploys_only_the_deployers_tools() -> None:
    """A stack deployed with the template's defaults, or any samconfig environment, never
    serves the conformance suite's fixtures to its users (they load only in tests, the
    conformance run and this repository's local server)."""
    from taskgate.config import Settings

    default = _template()["Parameters"]["ToolModules"]["Default"]
    assert default.split(",") == ["taskgate_tools"]
    # A function whose TOOL_MODULES is unset loads the same.
    assert Settings(task_table="t").tool_modules == ("taskgate_tools",)
    environments = tomllib.loads((ROOT / "samconfig.toml").read_text())
    for name, env in environments.items():
        if not isinstance(env, dict):
            continue
        overrides = env.get("deploy", {}).get("parameters", {}).get("parameter_overrides", [])
        chosen = [o.split("=", 1)[1] for o in overrides if o.startswith("ToolModules=")]
        assert all("taskgate_conformance" not in modules for modules in chosen), name
