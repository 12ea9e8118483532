"""DeployChecksFunction: the custom resources CloudFormation runs while a deploy (or its
rollback) waits; never a task's code.

- ``Custom::AccountPreflight``: created before anything that holds state. Refuses a deploy the
  account cannot take (Lambda keeps 100 concurrent executions unreserved, so every reservation
  the stack asks for must fit above them), naming the quota to ask AWS for; and answers what
  the account's quota means for this stack (``Concurrency``: a new account's 10 serves a handful
  of calls at once, and the stack's outputs say so).
- ``Custom::Configuration``: the fingerprint of everything a function's published version runs
  with (its Description carries it, so a change publishes a version, and only a change does).
  The ``Tuning`` string among its properties is checked as the functions will read it: a
  misspelt key or a value out of bounds fails the deploy, naming it. And an upgrade must not
  drop what the functions named in ``UpgradesFunctions`` run with from a Parameter a release
  removed (CloudFormation forgets it, value and all): read before they are updated, a value
  the new Tuning does not set fails the deploy, saying the Tuning to set.
- ``Custom::StateMachines``: the task state machines the stack's tasks may run on - the current
  one and any an upgrade replaced (kept, with their executions) - for the functions' settings
  and IAM: a replaced machine's tasks can still be read, answered, stopped and swept.
- ``Custom::CreateRollbackGuard``: nothing, except in the rollback of a stack's failed first
  create: the resource it names is deletion-protected and retained (DeletionPolicy Retain, so
  the rollback always finishes), and the guard deletes it there, if it holds nothing, so a failed
  first deploy leaves nothing behind.

``handle(event, aws)`` decides and returns the answer; ``handler`` is Lambda's entry, which sends
it to CloudFormation. tests/rehearsal.py and tests/unit/test_deploy_checks.py run ``handle``.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.request
from typing import Any, Protocol

LAMBDA_UNRESERVED_FLOOR = 100  # Lambda keeps this many unreserved in every account
QUOTA_CODE = "L-B99A9384"  # Service Quotas, AWS Lambda, "Concurrent executions"
# Below this, the API, the worker and the sweeper share so few executions that a few callers at
# once are throttled (a new account's quota is 10; AWS's default is 1000).
SMALL_QUOTA = 100
# Where a failed first create's rollback may delete what it created.
CREATE_ROLLBACK = "ROLLBACK_IN_PROGRESS"


class Aws(Protocol):
    """The AWS calls the checks make, one method for all (the rehearsal answers them itself)."""

    def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]: ...


class Refused(Exception):
    """The deploy cannot go on; the message says why and what to do."""


# ---------------------------------------------------------------- Custom::AccountPreflight


def _reserved(properties: dict[str, Any] | None) -> int:
    props = properties or {}
    return sum(
        int(props.get(name) or 0) for name in ("WorkerReservedConcurrency", "StreamReservedConcurrency")
    )


def preflight(properties: dict[str, Any], old: dict[str, Any] | None, aws: Aws) -> dict[str, str]:
    limits = aws.call("lambda", "GetAccountSettings")["AccountLimit"]
    unreserved = int(limits["UnreservedConcurrentExecutions"])
    quota = int(limits["ConcurrentExecutions"])
    wanted, held = _reserved(properties), _reserved(old)
    if wanted > held and unreserved - (wanted - held) < LAMBDA_UNRESERVED_FLOOR:
        needed = quota - unreserved + wanted - held + LAMBDA_UNRESERVED_FLOOR
        raise Refused(
            f"Reserving {wanted} concurrent executions (WorkerReservedConcurrency and the streaming "
            f"endpoint's cap) is more than this account can: Lambda keeps {LAMBDA_UNRESERVED_FLOOR} "
            f"unreserved, and it has {unreserved} unreserved of a quota of {quota} in this Region. Ask "
            f"AWS to raise the quota 'Concurrent executions' (Service Quotas, AWS Lambda, {QUOTA_CODE}) "
            f"to at least {needed}, or deploy with WorkerReservedConcurrency=0 and StreamingApi=false."
        )
    if quota < SMALL_QUOTA:
        return {
            "Concurrency": (
                f"WARNING: this account's Lambda quota is {quota} concurrent executions in this Region "
                f"(a new account's): the API, the worker and the sweeper share them, so a few callers at "
                f"once are throttled. Ask for 1000 (Service Quotas, AWS Lambda, {QUOTA_CODE})."
            )
        }
    return {"Concurrency": f"{quota} concurrent executions in this Region ({unreserved} unreserved)"}


# ---------------------------------------------------------------- Custom::Configuration


# Properties that say how to check, not what a function runs with: not in the fingerprint.
_NOT_CONFIGURATION = frozenset({"ServiceToken", "UpgradesFunctions"})


def fingerprint(properties: dict[str, Any]) -> str:
    values = {k: v for k, v in properties.items() if k not in _NOT_CONFIGURATION}
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:20]


def configuration(properties: dict[str, Any], stack_id: str = "", aws: Aws | None = None) -> dict[str, str]:
    tuning = properties.get("Tuning")
    if tuning:
        from taskgate.config import parse_tuning  # the layer's: the functions' own check
        from taskgate.tuning import TuningError

        try:
            parse_tuning(str(tuning))
        except TuningError as error:
            raise Refused(f"Tuning: {error}") from None
    if aws is not None and "Tuning" in properties and properties.get("UpgradesFunctions"):
        kept_values(properties, stack_id, aws)
    return {"Fingerprint": fingerprint(properties)}


def _running_environment(stack_id: str, function: str, aws: Aws) -> dict[str, str] | None:
    """What the stack's function ``function`` (a logical id) runs with now; None where it does
    not exist yet (a first create) or cannot be read (then the check passes: make deploy is the
    path that carries values; this one only catches a plain sam deploy)."""
    try:
        detail = aws.call(
            "cloudformation", "DescribeStackResource", StackName=stack_id, LogicalResourceId=function
        ).get("StackResourceDetail", {})
        name = detail.get("PhysicalResourceId")
        if not name:
            return None
        found = aws.call("lambda", "GetFunctionConfiguration", FunctionName=name)
    except Exception as exc:  # no such resource yet, or not allowed to read it
        print(f"not read: {function}'s environment ({type(exc).__name__}: {exc})")
        return None
    return dict(found.get("Environment", {}).get("Variables", {}))


def kept_values(properties: dict[str, Any], stack_id: str, aws: Aws) -> None:
    """Refuse a Tuning that drops a value the running functions have from a removed Parameter."""
    from taskgate.former_parameters import dropped_values, settable, with_keys

    tuning = str(properties.get("Tuning") or "")
    dropped: dict[str, str] = {}
    for function in properties["UpgradesFunctions"]:
        environment = _running_environment(stack_id, str(function), aws)
        if environment:
            dropped.update(dropped_values(environment, tuning))
    if dropped:
        named = ", ".join(f"{k} {v}" for k, v in dropped.items())
        told = {k: settable(k, v) for k, v in dropped.items()}
        bounded = "".join(
            f" {k} {v} is out of its bounds now: {told[k]} is the nearest it takes."
            for k, v in dropped.items()
            if told[k] != v
        )
        raise Refused(
            f"This stack runs with {named}, from Parameters this release no longer has (their "
            f"values go into the Tuning string now), and this deploy would return them to their "
            f'defaults.{bounded} Set Tuning="{with_keys(tuning, told)}" (to take a default '
            f"instead, give that key its default value there). make deploy carries them for you."
        )


# ---------------------------------------------------------------- Custom::StateMachines


def state_machines(props: dict[str, Any], stack_id: str, aws: Aws) -> dict[str, str]:
    """Every task state machine this stack has run tasks on: the current one, the ones named
    in ``Former`` (earlier releases named theirs), and any an upgrade replaced and kept
    (CloudFormation tags a machine with its stack and logical id; a replaced one keeps them)."""
    current = str(props["Current"])
    logical_id = str(props["LogicalId"])
    found = [current, *(str(arn) for arn in props.get("Former", []) if arn)]
    token = None
    while True:
        page = aws.call("stepfunctions", "ListStateMachines", **({"nextToken": token} if token else {}))
        for machine in page.get("stateMachines", []):
            arn = str(machine["stateMachineArn"])
            if arn in found or not str(machine["name"]).startswith(f"{logical_id}-"):
                continue
            tags = aws.call("stepfunctions", "ListTagsForResource", resourceArn=arn).get("tags", [])
            named = {t["key"]: t["value"] for t in tags}
            if named.get("aws:cloudformation:stack-id") == stack_id and (
                named.get("aws:cloudformation:logical-id") == logical_id
            ):
                found.append(arn)
        token = page.get("nextToken")
        if not token:
            break
    previous = [arn for arn in dict.fromkeys(found) if arn != current]
    executions = [arn.replace(":stateMachine:", ":execution:") + ":*" for arn in dict.fromkeys(found)]
    return {"Previous": ",".join(previous), "Executions": ",".join(executions)}


# ---------------------------------------------------------------- Custom::CreateRollbackGuard


def guard_delete(event: dict[str, Any], aws: Aws) -> None:
    """In a failed first create's rollback, delete what the guard names if it holds nothing."""
    stack = aws.call("cloudformation", "DescribeStacks", StackName=event["StackId"])["Stacks"][0]
    if stack["StackStatus"] != CREATE_ROLLBACK:
        return  # a stack delete, an update: what it names is kept (DeletionPolicy Retain)
    props = event.get("ResourceProperties", {})
    table = props.get("TableName")
    if table:
        scanned = aws.call("dynamodb", "Scan", TableName=table, Limit=1, Select="COUNT")
        if not scanned.get("Count") and not scanned.get("LastEvaluatedKey"):
            aws.call("dynamodb", "UpdateTable", TableName=table, DeletionProtectionEnabled=False)
            aws.call("dynamodb", "DeleteTable", TableName=table)
    pool = props.get("UserPoolId")
    if pool:
        users = aws.call("cognito-idp", "ListUsers", UserPoolId=pool, Limit=1)
        if not users.get("Users"):
            # Every setting not given returns to its default: the pool is deleted next.
            aws.call("cognito-idp", "UpdateUserPool", UserPoolId=pool, DeletionProtection="INACTIVE")
            aws.call("cognito-idp", "DeleteUserPool", UserPoolId=pool)


# ---------------------------------------------------------------- the request


def handle(event: dict[str, Any], aws: Aws) -> dict[str, Any]:
    """The answer to one request from CloudFormation: Status, Reason, Data."""
    kind = event["ResourceType"]
    request = event["RequestType"]
    props = event.get("ResourceProperties", {})
    try:
        data: dict[str, str] = {}
        if request == "Delete":
            if kind == "Custom::CreateRollbackGuard":
                guard_delete(event, aws)
        elif kind == "Custom::AccountPreflight":
            data = preflight(props, event.get("OldResourceProperties"), aws)
        elif kind == "Custom::Configuration":
            data = configuration(props, event["StackId"], aws)
        elif kind == "Custom::StateMachines":
            data = state_machines(props, event["StackId"], aws)
    except Refused as refused:
        print(f"refused: {refused}")
        return {"Status": "FAILED", "Reason": str(refused), "Data": {}}
    except Exception as exc:
        print(f"failed: {exc!r}")
        return {"Status": "FAILED", "Reason": f"{type(exc).__name__}: {exc}", "Data": {}}
    return {"Status": "SUCCESS", "Reason": "", "Data": data}


class _Boto:
    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]:
        import boto3

        if service not in self._clients:
            self._clients[service] = boto3.client(service)
        method = re.sub(r"(?<!^)(?=[A-Z])", "_", operation).lower()
        return getattr(self._clients[service], method)(**params)  # type: ignore[no-any-return]


def respond(event: dict[str, Any], answer: dict[str, Any]) -> None:
    body = json.dumps(
        {
            "Status": answer["Status"],
            "Reason": str(answer.get("Reason", ""))[:3000],
            "PhysicalResourceId": event.get("PhysicalResourceId") or event["LogicalResourceId"],
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "Data": answer.get("Data") or {},
        }
    ).encode()
    request = urllib.request.Request(
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": ""}
    )
    urllib.request.urlopen(request, timeout=30).close()


def handler(event: dict[str, Any], context: Any) -> None:
    respond(event, handle(event, _Boto()))
