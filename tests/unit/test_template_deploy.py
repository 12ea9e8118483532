"""template.yaml, translated by samtranslator and resolved as CloudFormation resolves it,
for what a deployer sets (issue 20): browser hosts, a custom domain, payload sizes (item 6),
the tools' own needs (item 7), a customer-managed key (item 10)."""

from __future__ import annotations

from typing import Any

from tests.cfn_eval import Evaluator
from tests.sam_translate import ROOT, source, translate

ORIGIN = "https://app.example.com"
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SIX_MB = 6 * 1024 * 1024


def _resolved(parameters: dict[str, str] | None = None) -> dict[str, Any]:
    translated = translate(parameters)
    evaluator = Evaluator(translated, parameters)
    resources = {
        name: r
        for name, r in translated["Resources"].items()
        if "Condition" not in r or evaluator.condition(r["Condition"])
    }
    out = evaluator.value({"Resources": resources, "Outputs": translated.get("Outputs", {})})
    assert isinstance(out, dict)
    return out


def _statements(resources: dict[str, Any], role: str) -> list[dict[str, Any]]:
    """The role's inline statements and those of the stack's managed policies it names."""
    props = resources[role]["Properties"]
    documents = [policy["PolicyDocument"] for policy in props.get("Policies", [])]
    managed = set(props.get("ManagedPolicyArns", []))
    documents += [
        r["Properties"]["PolicyDocument"]
        for name, r in resources.items()
        if r["Type"] == "AWS::IAM::ManagedPolicy" and f"<{name}>" in managed
    ]
    return [s for document in documents for s in document["Statement"]]


def _granting(statements: list[dict[str, Any]], action: str) -> list[Any]:
    found = []
    for s in statements:
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        if action in actions:
            found.append(s["Resource"])
    return found


# ---------------------------------------------------------------- item 6


def test_browser_hosts_on_the_allowed_origins_get_cors() -> None:
    assert "CorsConfiguration" not in _resolved()["Resources"]["McpApi"]["Properties"]
    cors = _resolved({"AllowedOrigins": ORIGIN})["Resources"]["McpApi"]["Properties"].get("CorsConfiguration")
    assert cors is not None, "no CORS: a browser host's preflight (OPTIONS) fails"
    assert cors["AllowOrigins"] == [ORIGIN]
    assert "OPTIONS" in cors["AllowMethods"] and {"GET", "POST", "DELETE"} <= set(cors["AllowMethods"])
    exposed = {h.lower() for h in cors["ExposeHeaders"]}
    assert {"mcp-session-id", "mcp-protocol-version", "www-authenticate"} <= exposed
    assert "authorization" in {h.lower() for h in cors["AllowHeaders"]}


def test_a_custom_domain_is_where_clients_sign_in() -> None:
    assert "PublicUrl" in source()["Parameters"], "no PublicUrl Parameter"
    resolved = _resolved({"PublicUrl": "https://mcp.example.com"})
    env = resolved["Resources"]["ApiFunction"]["Properties"]["Environment"]["Variables"]
    # The protected resource, the issuer and the callbacks are built from it (Settings).
    assert env["PUBLIC_URL"] == "https://mcp.example.com"
    assert "OAUTH_RESOURCE" not in env or env["OAUTH_RESOURCE"] in ("", "https://mcp.example.com/mcp")
    assert resolved["Outputs"]["McpEndpoint"]["Value"] == "https://mcp.example.com/mcp"
    assert resolved["Outputs"]["ProtectedResourceMetadataUrl"]["Value"].startswith("https://mcp.example.com/")
    default = _resolved()["Resources"]["ApiFunction"]["Properties"]["Environment"]["Variables"]
    assert default["PUBLIC_URL"] == "https://<McpApi>.execute-api.us-east-1.amazonaws.com"


def test_the_largest_sizes_the_tuning_accepts_fit_a_lambda_payload() -> None:
    """A body (request or response) is a string inside Lambda's JSON payload: every quote in it
    is escaped once more, so N bytes can take 2N of the 6 MB, with headers and framing."""
    from taskgate.tuning import BOUNDS

    for name in ("MaxResultResponseBytes", "MaxBodyBytes"):
        largest = int(BOUNDS[name][1])
        worst = 2 * largest + 64 * 1024
        assert worst <= SIX_MB, f"{name} accepts {largest}: escaped, {worst} bytes > Lambda's {SIX_MB}"


def test_the_minor_deployment_items() -> None:
    resources = source()["Resources"]
    access_log = resources["McpApiAccessLogGroup"]["Properties"].get("LogGroupName", {})
    assert str(access_log.get("Fn::Sub", "")).startswith("/aws/vendedlogs/"), access_log
    # Dashboards are global to the account: a stack of the same name in another region.
    assert "${AWS::Region}" in resources["Dashboard"]["Properties"]["DashboardName"]["Fn::Sub"]
    secret = resources["RequestStateSecret"]
    assert secret.get("DeletionPolicy") and secret.get("UpdateReplacePolicy")
    import json

    run_tool = json.loads((ROOT / "statemachines" / "task.asl.json").read_text())["States"]["RunTool"]
    retried = {e for r in run_tool["Retry"] for e in r["ErrorEquals"]}
    assert {"Lambda.SnapStartNotReadyException", "Lambda.SnapStartTimeoutException"} <= retried
    makefile = (ROOT / "layers" / "Makefile").read_text()
    assert "taskgate.architecture" in makefile and "tools.architecture" in makefile


# ---------------------------------------------------------------- item 7

NEEDS = {
    "WorkerPolicyArns": "arn:aws:iam::123456789012:policy/reports-a,arn:aws:iam::123456789012:policy/reports-b",
    "WorkerSubnetIds": "subnet-0123456789abcdef0,subnet-0123456789abcdef1",
    "WorkerSecurityGroupIds": "sg-0123456789abcdef0",
    "ToolEnvironment": "REPORTS_BUCKET=reports-example",
    "ToolSecretArns": "arn:aws:secretsmanager:us-east-1:123456789012:secret:reports-AbCdEf",
}


def test_your_tools_needs_reach_the_worker_and_only_the_worker() -> None:
    missing = set(NEEDS) - set(source()["Parameters"])
    assert not missing, f"no Parameters for a tool's own needs: {sorted(missing)}"
    resolved = _resolved(NEEDS)["Resources"]
    worker = resolved["WorkerFunction"]["Properties"]
    role = worker["Role"]
    assert role == "<WorkerFunctionRole.Arn>", role
    managed = set(resolved["WorkerFunctionRole"]["Properties"]["ManagedPolicyArns"])
    assert set(NEEDS["WorkerPolicyArns"].split(",")) <= managed
    assert "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole" in managed
    assert worker["VpcConfig"] == {
        "SubnetIds": NEEDS["WorkerSubnetIds"].split(","),
        "SecurityGroupIds": NEEDS["WorkerSecurityGroupIds"].split(","),
    }
    env = worker["Environment"]["Variables"]
    assert env["TOOL_ENVIRONMENT"] == NEEDS["ToolEnvironment"]
    assert env["TOOL_SECRET_ARNS"] == NEEDS["ToolSecretArns"]
    assert _granting(_statements(resolved, "WorkerFunctionRole"), "secretsmanager:GetSecretValue") == [
        NEEDS["ToolSecretArns"].split(",")
    ]
    # The internet-facing function gets none of them.
    api = resolved["ApiFunction"]["Properties"]
    assert "VpcConfig" not in api
    assert set(resolved["ApiFunctionRole"]["Properties"]["ManagedPolicyArns"]).isdisjoint(
        managed
        - {
            "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
            "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
        }
    )
    assert NEEDS["ToolSecretArns"] not in str(_statements(resolved, "ApiFunctionRole"))


def test_without_them_the_worker_is_as_before() -> None:
    resolved = _resolved()["Resources"]
    worker = resolved["WorkerFunction"]["Properties"]
    assert "VpcConfig" not in worker
    assert sorted(resolved["WorkerFunctionRole"]["Properties"]["ManagedPolicyArns"]) == [
        "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
        "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
    ]
    assert not _granting(_statements(resolved, "WorkerFunctionRole"), "secretsmanager:GetSecretValue")
    assert worker["Environment"]["Variables"]["TOOL_SECRET_ARNS"] == ""


# ---------------------------------------------------------------- item 10


def test_the_deployers_key_encrypts_table_bucket_logs_secret_and_environment() -> None:
    assert "KmsKeyArn" in source()["Parameters"], "no customer-managed key Parameter"
    resolved = _resolved({"KmsKeyArn": KEY})["Resources"]
    table = resolved["TaskTable"]["Properties"]["SSESpecification"]
    assert table == {"SSEEnabled": True, "SSEType": "KMS", "KMSMasterKeyId": KEY}
    (rule,) = resolved["ResultBucket"]["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"] == {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": KEY}
    logs = {n: r for n, r in resolved.items() if r["Type"] == "AWS::Logs::LogGroup"}
    assert logs and all(r["Properties"].get("KmsKeyId") == KEY for r in logs.values()), sorted(logs)
    secrets = {n: r for n, r in resolved.items() if r["Type"] == "AWS::SecretsManager::Secret"}
    assert secrets and all(r["Properties"].get("KmsKeyId") == KEY for r in secrets.values()), sorted(secrets)
    functions = {n: r for n, r in resolved.items() if r["Type"] == "AWS::Lambda::Function"}
    for name, function in functions.items():
        if function["Properties"].get("Environment"):
            assert function["Properties"].get("KmsKeyArn") == KEY, name
    # Whoever reads or writes what the key encrypts may use it (S3 and Secrets Manager act
    # with the caller's rights; DynamoDB and CloudWatch Logs with their own).
    for role in ("ApiFunctionRole", "WorkerFunctionRole"):
        assert _granting(_statements(resolved, role), "kms:Decrypt") == [KEY], role
    plain = _resolved()["Resources"]
    assert "KMSMasterKeyId" not in plain["TaskTable"]["Properties"]["SSESpecification"]
    assert all(
        "KmsKeyArn" not in r["Properties"] for r in plain.values() if r["Type"] == "AWS::Lambda::Function"
    )
