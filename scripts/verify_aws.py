"""`make verify-aws STACK=<name>`: what only a real account can prove, against a deployed stack
(issue 29, item 3). tests/rehearsal.py checks the same rules offline, against AWS's documented
behaviour; this runs them. Each check changes the stack and sets it back, or works on a
throwaway stack of its own; the report says what was seen.

    python scripts/verify_aws.py --stack taskgate [--region R] [--only NAME ...] [--report DIR]

Checks (``--only`` takes their names):

- ``reservation``: WorkerReservedConcurrency alone changed (0 -> 1 -> back): both updates
  complete, and the worker's live alias keeps its version (a reservation is not part of one).
- ``failed-create``: a throwaway stack whose first create fails after the table and the user
  pool exist (a WorkerPolicyArns that names no policy): it ends ROLLBACK_COMPLETE, not
  ROLLBACK_FAILED, and neither the table nor the pool is left.
- ``streaming-sign-in``: StreamingApi on, then IAM alone, then back: an unsigned request to the
  streaming /mcp is refused while IAM alone is set (403), and asked to sign in otherwise (401).
- ``stream-disconnect``: a held call on the streaming endpoint whose client goes away after a
  few seconds: how long StreamFunction kept running it (its REPORT line's Duration).
- ``pinned-version``: every worker version a live task's execution runs: its state (Active, or
  Inactive after two idle weeks) and whether an invocation of it succeeds (Lambda restores it).
- ``host-sign-in``: a person signs in from a real host (a browser), then the token calls /mcp:
  interactive, skipped with --no-interactive.

Writes <report>/verify-aws.md (a table) and verify-aws.json (every check with its evidence).
Needs the SAM CLI for ``failed-create`` (run `make build` first) and credentials that may
update the stack.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
PASS, FAIL, SKIPPED = "PASS", "FAIL", "SKIPPED"


@dataclass
class Check:
    name: str
    result: str = SKIPPED
    seen: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


class Stack:
    """The stack under test, through boto3 (the unit test gives a fake with the same calls)."""

    def __init__(self, name: str, session: Any) -> None:
        self.name = name
        self.cfn = session.client("cloudformation")
        self.awslambda = session.client("lambda")
        self.sfn = session.client("stepfunctions")
        self.logs = session.client("logs")
        self.dynamodb = session.client("dynamodb")
        self.cognito = session.client("cognito-idp")
        self.region = session.region_name

    def describe(self, name: str | None = None) -> dict[str, Any]:
        return self.cfn.describe_stacks(StackName=name or self.name)["Stacks"][0]  # type: ignore[no-any-return]

    def parameters(self) -> dict[str, str]:
        return {p["ParameterKey"]: p.get("ParameterValue", "") for p in self.describe().get("Parameters", [])}

    def outputs(self) -> dict[str, str]:
        return {o["OutputKey"]: o["OutputValue"] for o in self.describe().get("Outputs", [])}

    def physical(self, logical: str, name: str | None = None) -> str:
        found = self.cfn.describe_stack_resource(StackName=name or self.name, LogicalResourceId=logical)
        return str(found["StackResourceDetail"]["PhysicalResourceId"])

    def update(self, changes: dict[str, str]) -> str:
        """The stack's template with these Parameters changed (the rest as they are): its end
        status."""
        parameters = [
            {"ParameterKey": k, "ParameterValue": changes[k]}
            if k in changes
            else {"ParameterKey": k, "UsePreviousValue": True}
            for k in self.parameters()
        ]
        self.cfn.update_stack(
            StackName=self.name,
            UsePreviousTemplate=True,
            Parameters=parameters,
            Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
        )
        return self.wait()

    def wait(self, name: str | None = None, timeout: float = 1800) -> str:
        deadline = time.monotonic() + timeout
        while True:
            status = str(self.describe(name)["StackStatus"])
            if not status.endswith("_IN_PROGRESS") or time.monotonic() > deadline:
                return status
            time.sleep(10)

    def alias_version(self, function: str) -> str:
        return str(self.awslambda.get_alias(FunctionName=function, Name="live")["FunctionVersion"])


def _http(
    url: str, *, method: str = "POST", body: bytes = b"{}", timeout: float = 30, token: str = ""
) -> int:
    request = urllib.request.Request(url, data=body if method == "POST" else None, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


# ---------------------------------------------------------------- the checks


def reservation(stack: Stack) -> Check:
    check = Check("reservation")
    worker = stack.outputs()["WorkerFunctionName"]
    held = stack.parameters().get("WorkerReservedConcurrency", "0")
    before = stack.alias_version(worker)
    changed = "1" if held == "0" else "0"
    statuses = [
        stack.update({"WorkerReservedConcurrency": changed}),
        stack.update({"WorkerReservedConcurrency": held}),
    ]
    after = stack.alias_version(worker)
    ok = statuses == ["UPDATE_COMPLETE", "UPDATE_COMPLETE"] and before == after
    check.result = PASS if ok else FAIL
    check.seen = f"WorkerReservedConcurrency {held} -> {changed} -> {held}: {', '.join(statuses)}; live version {before} -> {after}"
    check.evidence = {"statuses": statuses, "version_before": before, "version_after": after}
    return check


def failed_create(stack: Stack, *, account: str, deploy: Callable[[list[str]], int]) -> Check:
    check = Check("failed-create")
    name = f"{stack.name}-verify-create"[:128]
    missing = f"arn:aws:iam::{account}:policy/taskgate-verify-no-such-policy"
    deploy(
        [
            "sam", "deploy", "--stack-name", name, "--resolve-s3", "--capabilities", "CAPABILITY_IAM",
            "--no-confirm-changeset", "--no-fail-on-empty-changeset", "--region", stack.region,
            "--parameter-overrides", f"WorkerPolicyArns={missing}",
        ]
    )  # fmt: skip
    status = stack.wait(name)
    events = stack.cfn.describe_stack_events(StackName=name)["StackEvents"]
    created = {
        e["LogicalResourceId"]: e.get("PhysicalResourceId", "")
        for e in events
        if e.get("ResourceStatus") == "CREATE_COMPLETE"
        and e["LogicalResourceId"] in ("TaskTable", "UserPool")
    }
    left = []
    if created.get("TaskTable"):
        try:
            stack.dynamodb.describe_table(TableName=created["TaskTable"])
            left.append(f"table {created['TaskTable']}")
        except stack.dynamodb.exceptions.ResourceNotFoundException:
            pass
    if created.get("UserPool"):
        try:
            stack.cognito.describe_user_pool(UserPoolId=created["UserPool"])
            left.append(f"user pool {created['UserPool']}")
        except stack.cognito.exceptions.ResourceNotFoundException:
            pass
    if status == "ROLLBACK_COMPLETE":
        stack.cfn.delete_stack(StackName=name)
    check.result = PASS if status == "ROLLBACK_COMPLETE" and not left and created else FAIL
    check.seen = f"{name}: {status}; created before the failure: {sorted(created) or 'nothing'}; left: {left or 'nothing'}"
    check.evidence = {"stack": name, "status": status, "created": created, "left": left}
    return check


def streaming_sign_in(stack: Stack) -> Check:
    check = Check("streaming-sign-in")
    held = stack.parameters()
    switches = {k: held.get(k, "true") for k in ("SignInPeople", "SignInAgents", "SignInIam")}
    seen: list[str] = []
    ok = False
    try:
        stack.update({"StreamingApi": "true"})
        url = stack.outputs()["StreamingMcpEndpoint"]
        open_status = _http(url)
        stack.update({"SignInPeople": "false", "SignInAgents": "false", "SignInIam": "true"})
        iam_status = _http(url)
        stack.update(switches)
        back_status = _http(url)
        seen = [f"with tokens: {open_status}", f"IAM alone: {iam_status}", f"back: {back_status}"]
        ok = open_status == 401 and iam_status == 403 and back_status == 401
    finally:
        stack.update({"StreamingApi": held.get("StreamingApi", "false"), **switches})
    check.result = PASS if ok else FAIL
    check.seen = "an unsigned POST to the streaming /mcp: " + ", ".join(seen)
    check.evidence = {"statuses": seen}
    return check


def stream_disconnect(stack: Stack, *, hold_seconds: float = 5) -> Check:
    """A held call whose client leaves: the function is not told (Lambda response streaming),
    so it holds the call until the hold ends; the REPORT line says for how long."""
    check = Check("stream-disconnect")
    outputs = stack.outputs()
    url = outputs.get("StreamingMcpEndpoint")
    if not url:
        check.seen = "StreamingApi is off: deploy with StreamingApi=true to run this check"
        return check
    started = int(time.time() * 1000)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "slow_compute", "arguments": {"seconds": 120}},
        }
    ).encode()
    _http(url, body=body, timeout=hold_seconds)  # the client gives up: a timeout closes the connection
    group = f"/aws/lambda/{stack.name}-stream"
    durations: list[float] = []
    deadline = time.monotonic() + 20 * 60
    while not durations and time.monotonic() < deadline:
        time.sleep(30)
        found = stack.logs.filter_log_events(logGroupName=group, startTime=started, filterPattern="REPORT")
        for event in found.get("events", []):
            text = event["message"]
            if "Duration:" in text:
                durations.append(float(text.split("Duration:")[1].split("ms")[0]) / 1000)
    check.result = PASS if durations else FAIL
    check.seen = (
        f"client left after {hold_seconds:g} s; StreamFunction ran {max(durations):.0f} s"
        if durations
        else "no REPORT line in 20 minutes"
    )
    check.evidence = {"client_seconds": hold_seconds, "function_seconds": durations}
    return check


def pinned_version(stack: Stack) -> Check:
    check = Check("pinned-version")
    machine = stack.outputs()["TaskStateMachineArn"]
    running = stack.sfn.list_executions(stateMachineArn=machine, statusFilter="RUNNING", maxResults=100)
    versions: dict[str, str] = {}
    for execution in running.get("executions", []):
        described = stack.sfn.describe_execution(executionArn=execution["executionArn"])
        definition = stack.sfn.describe_state_machine_for_execution(executionArn=described["executionArn"])
        arn = json.loads(definition["definition"])["States"]["RunTool"]["Parameters"]["FunctionName"]
        versions[arn] = stack.awslambda.get_function_configuration(FunctionName=arn).get("State", "?")
    invoked = {}
    for arn, state in versions.items():
        if state != "Active":
            # A dry run restores nothing: a real (empty) invocation, which the worker refuses.
            reply = stack.awslambda.invoke(FunctionName=arn, Payload=b"{}")
            invoked[arn] = reply.get("FunctionError", "ok")
    check.result = PASS
    check.seen = f"{len(versions)} pinned version(s): " + (
        ", ".join(f"{arn.rsplit(':', 1)[1]} {state}" for arn, state in versions.items()) or "no running task"
    )
    check.evidence = {"versions": versions, "invoked": invoked}
    return check


def host_sign_in(stack: Stack, *, interactive: bool, ask: Callable[[str], str] = input) -> Check:
    check = Check("host-sign-in")
    endpoint = stack.outputs()["McpEndpoint"]
    if not interactive:
        check.seen = "interactive: run without --no-interactive and sign in from a host"
        return check
    print(f"Connect a host (Claude, VS Code, the MCP Inspector) to {endpoint} and sign in.")
    token = ask("Paste the access token the host got (empty if the sign-in failed): ").strip()
    status = (
        _http(endpoint, body=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', token=token) if token else 0
    )
    check.result = PASS if status == 200 else FAIL
    check.seen = f"tools/list with the host's token: HTTP {status}" if token else "the host got no token"
    check.evidence = {"status": status}
    return check


CHECKS = (
    "reservation",
    "failed-create",
    "streaming-sign-in",
    "stream-disconnect",
    "pinned-version",
    "host-sign-in",
)


def write_report(directory: pathlib.Path, stack: str, region: str, checks: list[Check]) -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# make verify-aws: stack {stack} ({region}), {when}",
        "",
        "| check | result | what was seen | seconds |",
        "| --- | --- | --- | --- |",
        *(f"| {c.name} | {c.result} | {c.seen.replace('|', '/')} | {c.seconds:.0f} |" for c in checks),
        "",
    ]
    (directory / "verify-aws.md").write_text("\n".join(lines))
    document = {"stack": stack, "region": region, "when": when, "checks": [asdict(c) for c in checks]}
    (directory / "verify-aws.json").write_text(json.dumps(document, indent=1) + "\n")
    return directory / "verify-aws.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--region")
    parser.add_argument("--only", nargs="*", choices=CHECKS, default=list(CHECKS))
    parser.add_argument("--report", type=pathlib.Path, default=pathlib.Path("verify-aws"))
    parser.add_argument("--no-interactive", action="store_true")
    args = parser.parse_args(argv)
    import boto3

    session = boto3.session.Session(region_name=args.region)
    stack = Stack(args.stack, session)
    account = session.client("sts").get_caller_identity()["Account"]

    def deploy(command: list[str]) -> int:
        return subprocess.run(command, cwd=ROOT).returncode

    runs: dict[str, Callable[[], Check]] = {
        "reservation": lambda: reservation(stack),
        "failed-create": lambda: failed_create(stack, account=account, deploy=deploy),
        "streaming-sign-in": lambda: streaming_sign_in(stack),
        "stream-disconnect": lambda: stream_disconnect(stack),
        "pinned-version": lambda: pinned_version(stack),
        "host-sign-in": lambda: host_sign_in(stack, interactive=not args.no_interactive),
    }
    checks = []
    for name in CHECKS:
        if name not in args.only:
            checks.append(Check(name, seen="not asked for (--only)"))
            continue
        started = time.monotonic()
        try:
            check = runs[name]()
        except Exception as error:  # a check that broke is reported, and the rest still run
            check = Check(name, FAIL, f"{type(error).__name__}: {error}")
        check.seconds = time.monotonic() - started
        print(f"{check.result:7} {name}: {check.seen}", flush=True)
        checks.append(check)
    path = write_report(args.report, args.stack, session.region_name or "", checks)
    print(f"report: {path}")
    return 1 if any(c.result == FAIL for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
