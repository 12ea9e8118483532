"""The deploy-time custom resources (functions/deploy_checks, issues 20 and 29): a first deploy
in a new account works with every samconfig.toml environment or fails before anything holding
state exists, saying what to ask AWS for, and says what a new account's quota means; a
configuration's fingerprint moves with it; a failed first create leaves nothing behind; no
custom resource waits an hour for a lost answer."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest

from tests.sam_translate import ROOT, deploy_checks, environment, source, translate

# What a new AWS account gets: Lambda concurrency 10, all of it unreserved.
NEW_ACCOUNT = {"ConcurrentExecutions": 10, "UnreservedConcurrentExecutions": 10}
STACK = "arn:aws:cloudformation:us-east-1:123456789012:stack/taskgate/1"


class Aws:
    """The AWS the checks talk to: an account's limits, a stack's status, and what they did."""

    def __init__(
        self, limits: dict[str, int] | None = None, status: str = "CREATE_IN_PROGRESS", **answers: Any
    ):
        self.limits = limits or {"ConcurrentExecutions": 1000, "UnreservedConcurrentExecutions": 1000}
        self.status = status
        self.answers = answers
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]:
        self.calls.append((service, operation, params))
        if operation == "GetAccountSettings":
            return {"AccountLimit": self.limits}
        if operation == "DescribeStacks":
            return {"Stacks": [{"StackId": params["StackName"], "StackStatus": self.status}]}
        return dict(self.answers.get(operation, {}))

    def done(self) -> list[str]:
        return [operation for _, operation, _ in self.calls]


def _event(kind: str, request: str = "Create", **props: Any) -> dict[str, Any]:
    return {
        "RequestType": request,
        "ResponseURL": "https://cloudformation-custom-resource-response.example/x",
        "StackId": STACK,
        "RequestId": "r1",
        "LogicalResourceId": kind.split("::")[1],
        "PhysicalResourceId": kind.split("::")[1],
        "ResourceType": kind,
        "ResourceProperties": {"ServiceToken": "arn:fn", **props},
    }


def _environment(env: str) -> dict[str, str]:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    overrides = config.get(env, {}).get("deploy", {}).get("parameters", {}).get("parameter_overrides", [])
    return dict(item.split("=", 1) for item in overrides)


def _preflight(props: dict[str, Any], old: dict[str, Any] | None, limits: dict[str, int]) -> dict[str, Any]:
    event = _event("Custom::AccountPreflight", "Update" if old else "Create", **props)
    if old:
        event["OldResourceProperties"] = old
    return deploy_checks().handle(event, Aws(limits))  # type: ignore[no-any-return]


@pytest.mark.parametrize("env", ["default", "dev", "prod"])
def test_every_environment_deploys_in_a_new_account_or_says_what_to_ask_for(env: str) -> None:
    translated = translate(_environment(env))
    preflight = translated["Resources"].get("AccountPreflight")
    assert preflight is not None, "no deploy-time check of what the account can give"
    reserved = _environment(env).get(
        "WorkerReservedConcurrency", str(source()["Parameters"]["WorkerReservedConcurrency"]["Default"])
    )
    assert preflight["Properties"]["WorkerReservedConcurrency"] == {"Ref": "WorkerReservedConcurrency"}
    answer = _preflight({"WorkerReservedConcurrency": reserved}, None, NEW_ACCOUNT)
    if answer["Status"] == "FAILED":
        # Said before anything holding state exists, naming the quota to raise and by how much.
        refusal = answer["Reason"]
        assert "Concurrent executions" in refusal and "L-B99A9384" in refusal, refusal
        assert f"at least {int(reserved) + 100}" in refusal, refusal
        assert "WorkerReservedConcurrency=0" in refusal, refusal
    else:
        # It deploys, and says what a new account's quota means (issue 29, n12).
        assert answer["Data"]["Concurrency"].startswith("WARNING"), answer
        assert "10 concurrent executions" in answer["Data"]["Concurrency"]
        assert "L-B99A9384" in answer["Data"]["Concurrency"]


def test_a_new_accounts_quota_is_in_the_stacks_outputs() -> None:
    output = source()["Outputs"]["LambdaConcurrency"]["Value"]
    assert output == {"Fn::GetAtt": ["AccountPreflight", "Concurrency"]}
    roomy = _preflight(
        {"WorkerReservedConcurrency": "0"},
        None,
        {"ConcurrentExecutions": 1000, "UnreservedConcurrentExecutions": 1000},
    )
    assert roomy["Status"] == "SUCCESS" and not roomy["Data"]["Concurrency"].startswith("WARNING")


def test_the_preflight_counts_what_an_update_already_holds() -> None:
    busy = {"ConcurrentExecutions": 1000, "UnreservedConcurrentExecutions": 140}
    # 50 already reserved by this stack, 60 wanted: 10 more of the 140 unreserved leaves 130.
    assert (
        _preflight({"WorkerReservedConcurrency": "60"}, {"WorkerReservedConcurrency": "50"}, busy)["Status"]
        == "SUCCESS"
    )
    # 50 more would leave 90: the quota must grow to what is reserved then (910) plus 100.
    refused = _preflight({"WorkerReservedConcurrency": "100"}, {"WorkerReservedConcurrency": "50"}, busy)
    assert refused["Status"] == "FAILED" and "at least 1010" in refused["Reason"], refused
    # The streaming endpoint's cap is a reservation too.
    both = _preflight({"WorkerReservedConcurrency": "20", "StreamReservedConcurrency": "10"}, None, busy)
    assert both["Status"] == "SUCCESS"
    more = _preflight(
        {"WorkerReservedConcurrency": "30", "StreamReservedConcurrency": "20"}, None, NEW_ACCOUNT
    )
    assert more["Status"] == "FAILED" and "StreamingApi=false" in more["Reason"]


def test_a_failed_first_create_rolls_back_and_leaves_nothing_behind() -> None:
    """Deletion-protected resources are retained by every rollback, so a rollback always
    finishes (issue 29, N2); in a failed first create's, the guard deletes them if empty."""
    resources = translate()["Resources"]
    guarded = {
        json.dumps(r["Properties"].get("TableName") or r["Properties"].get("UserPoolId"))
        for r in resources.values()
        if r["Type"] == "Custom::CreateRollbackGuard"
    }
    for name in ("TaskTable", "UserPool"):
        assert resources[name]["DeletionPolicy"] == "Retain", name
        assert json.dumps({"Ref": name}) in guarded, f"nothing deletes {name} in a failed first create"
    checks = deploy_checks()
    table = _event("Custom::CreateRollbackGuard", "Delete", TableName="taskgate-TaskTable-X")
    pool = _event("Custom::CreateRollbackGuard", "Delete", UserPoolId="us-east-1_X")
    for event, deleted in (
        (table, ["UpdateTable", "DeleteTable"]),
        (pool, ["UpdateUserPool", "DeleteUserPool"]),
    ):
        aws = Aws(status="ROLLBACK_IN_PROGRESS")
        assert checks.handle(event, aws)["Status"] == "SUCCESS"
        assert aws.done()[-2:] == deleted, aws.calls
        # Its protection off first: deletion protection refuses the delete.
        assert aws.calls[-2][2].get(
            "DeletionProtectionEnabled", aws.calls[-2][2].get("DeletionProtection")
        ) in (
            False,
            "INACTIVE",
        )
    # Anything else keeps them: a stack delete, an update's rollback, a table holding rows.
    for status in (
        "DELETE_IN_PROGRESS",
        "UPDATE_ROLLBACK_IN_PROGRESS",
        "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS",
    ):
        aws = Aws(status=status)
        assert checks.handle(table, aws)["Status"] == "SUCCESS" and aws.done() == ["DescribeStacks"], status
    aws = Aws(status="ROLLBACK_IN_PROGRESS", Scan={"Count": 1})
    checks.handle(table, aws)
    assert "DeleteTable" not in aws.done()
    aws = Aws(status="ROLLBACK_IN_PROGRESS", ListUsers={"Users": [{"Username": "someone"}]})
    checks.handle(pool, aws)
    assert "DeleteUserPool" not in aws.done()


def test_no_custom_resource_waits_an_hour_for_a_lost_answer() -> None:
    """A custom resource's ServiceTimeout defaults to an hour: a lost answer (a crashed
    function) would hold the deploy that long (issue 29, n1)."""
    customs = {n: r for n, r in source()["Resources"].items() if r["Type"].startswith("Custom::")}
    assert len(customs) >= 5
    for name, r in customs.items():
        timeout = r["Properties"].get("ServiceTimeout")
        assert timeout is not None and int(timeout) <= 300, name
        function_timeout = int(source()["Resources"]["DeployChecksFunction"]["Properties"]["Timeout"])
        assert int(timeout) > function_timeout, name


def test_the_deploy_checks_answer_cloudformation(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = deploy_checks()
    sent: list[dict[str, Any]] = []

    class _Response:
        def close(self) -> None:
            pass

    def urlopen(request: Any, timeout: float) -> _Response:
        sent.append({"url": request.full_url, "method": request.get_method(), **json.loads(request.data)})
        return _Response()

    monkeypatch.setattr(checks.urllib.request, "urlopen", urlopen)
    monkeypatch.setattr(checks, "_Boto", lambda: Aws(NEW_ACCOUNT))
    event = _event("Custom::AccountPreflight", WorkerReservedConcurrency="50")
    checks.handler(event, None)
    assert sent[-1]["Status"] == "FAILED" and "L-B99A9384" in sent[-1]["Reason"]
    assert sent[-1]["method"] == "PUT" and sent[-1]["url"] == event["ResponseURL"]
    assert sent[-1]["PhysicalResourceId"] == "AccountPreflight" and sent[-1]["StackId"] == STACK
    event["ResourceProperties"]["WorkerReservedConcurrency"] = "0"
    checks.handler(event, None)
    assert sent[-1]["Status"] == "SUCCESS"
    # A fingerprint changes with any property, and only then.
    prints = []
    for properties in ({"A": "1", "B": ["x"]}, {"B": ["x"], "A": "1"}, {"A": "2", "B": ["x"]}):
        checks.handler(_event("Custom::Configuration", **properties), None)
        assert sent[-1]["Status"] == "SUCCESS"
        prints.append(sent[-1]["Data"]["Fingerprint"])
    assert prints[0] == prints[1] != prints[2]
    checks.handler(_event("Custom::Configuration", "Delete"), None)
    assert sent[-1]["Status"] == "SUCCESS"


def test_the_machines_an_upgrade_replaced_are_found_by_their_tags() -> None:
    """A replaced task state machine is kept with its executions (UpdateReplacePolicy Retain);
    the stack's functions must still reach them (issue 29, n6): the machines are this stack's
    TaskStateMachine, as CloudFormation tagged them, and the one earlier releases named."""
    arn = "arn:aws:states:us-east-1:123456789012:stateMachine:{}".format
    mine = {"aws:cloudformation:stack-id": STACK, "aws:cloudformation:logical-id": "TaskStateMachine"}
    theirs = {**mine, "aws:cloudformation:stack-id": STACK.replace("taskgate/1", "other/2")}
    machines = {
        arn("TaskStateMachine-New1"): mine,  # current
        arn("TaskStateMachine-Old1"): mine,  # replaced by an upgrade, kept
        arn("TaskStateMachine-Else"): theirs,  # another stack's
        arn("pipeline"): {},
    }

    class Account(Aws):
        def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]:
            self.calls.append((service, operation, params))
            if operation == "ListStateMachines":
                names = sorted(machines)
                page = names[:2] if "nextToken" not in params else names[2:]
                return {
                    "stateMachines": [{"stateMachineArn": a, "name": a.rsplit(":", 1)[1]} for a in page],
                    **({"nextToken": "2"} if "nextToken" not in params else {}),
                }
            if operation == "ListTagsForResource":
                return {"tags": [{"key": k, "value": v} for k, v in machines[params["resourceArn"]].items()]}
            return {}

    event = _event(
        "Custom::StateMachines",
        Current=arn("TaskStateMachine-New1"),
        LogicalId="TaskStateMachine",
        Former=[arn("taskgate-task")],
    )
    answer = deploy_checks().handle(event, Account())
    assert answer["Status"] == "SUCCESS", answer
    assert answer["Data"]["Previous"].split(",") == [arn("taskgate-task"), arn("TaskStateMachine-Old1")]
    executions = answer["Data"]["Executions"].split(",")
    assert executions == [
        a.replace(":stateMachine:", ":execution:") + ":*"
        for a in (arn("TaskStateMachine-New1"), arn("taskgate-task"), arn("TaskStateMachine-Old1"))
    ]
    for function in ("ApiFunction", "SweeperFunction", "StreamFunction"):
        assert environment(function)["PREVIOUS_STATE_MACHINE_ARNS"] == {
            "Fn::GetAtt": ["TaskStateMachines", "Previous"]
        }, function


def test_a_misspelt_tuning_key_fails_the_deploy_naming_it() -> None:
    """The configuration custom resource checks the Tuning string before any function runs
    with it (issue 29, item 4): the deploy fails, and CloudFormation shows the reason."""
    checks = deploy_checks()
    for tuning, named in (
        ("CallPeiceSeconds=15", "Tuning: unknown key CallPeiceSeconds (did you mean CallPieceSeconds?)"),
        ("CallPieceSeconds=40", "Tuning: CallPieceSeconds must be between 1 and 25, not 40"),
        ("HangUpSeconds=30", "Tuning: Value error, HangUpSeconds (30) must cover three reconnects"),
    ):
        answer = checks.handle(_event("Custom::Configuration", Tuning=tuning, Parameters={}), Aws())
        assert answer["Status"] == "FAILED" and answer["Reason"].startswith(named), answer
    good = checks.handle(_event("Custom::Configuration", Tuning="CallPieceSeconds=15", Parameters={}), Aws())
    assert good["Status"] == "SUCCESS" and good["Data"]["Fingerprint"]
    for configuration in ("ApiConfiguration", "WorkerConfiguration"):
        assert source()["Resources"][configuration]["Properties"]["Tuning"] == {"Ref": "Tuning"}
