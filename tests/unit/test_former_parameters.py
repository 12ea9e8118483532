"""Upgrading across Parameters this release no longer has (issue 29): CloudFormation forgets a
removed Parameter, value and all, and sam deploy leaves out an override that names one. A
value the deployer chose moves into its new home (a Tuning key, JobArns) with make deploy, and
a plain sam deploy that would drop it is refused by the configuration custom resource, saying
the Tuning to set."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import tomllib
from types import ModuleType
from typing import Any

import pytest

from taskgate.former_parameters import FORMER, JOB_ARNS, TUNING, carry, dropped_values, variable
from taskgate.tuning import EXPORTED, KEYS
from tests.sam_translate import ROOT, deploy_checks, source

STACK = "arn:aws:cloudformation:us-east-1:123456789012:stack/taskgate/1"
QUEUE = "arn:aws:batch:us-east-1:123456789012:job-queue/q"
DEFINITION = "arn:aws:batch:us-east-1:123456789012:job-definition/d"
MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:etl"


def test_every_former_parameter_has_a_home_or_says_why_not() -> None:
    declared = source()["Parameters"]
    for name, former in FORMER.items():
        assert name not in declared, name
        if former.home == TUNING:
            assert name in KEYS or name in EXPORTED, name
            variable(name)
        elif former.home == JOB_ARNS:
            assert declared[JOB_ARNS]["Type"] == "CommaDelimitedList"
        else:
            assert former.why, name


def test_a_chosen_value_moves_into_its_home_and_a_default_stays_behind() -> None:
    carried = carry(
        {
            "CallWaitSeconds": "120",
            "MaxTtlMs": "86400000",  # the former default: this release's default reaches the stack
            "AllowedHosts": "mcp.example.com, api.example.com",
            "LogLevel": "DEBUG",
            "JobBatchQueueArns": QUEUE,
            "JobBatchDefinitionArns": f"{DEFINITION},{MACHINE}",
            "JobGlueJobArns": "",
            "ApiMemorySize": "1024",  # still a Parameter: not this module's business
        },
        tuning="CallPieceSeconds=15",
        job_arns=MACHINE,
    )
    assert not carried.refused and not carried.notes
    assert carried.overrides == {
        TUNING: "CallPieceSeconds=15 CallWaitSeconds=120 AllowedHosts=mcp.example.com,api.example.com LogLevel=DEBUG",
        JOB_ARNS: f"{MACHINE},{QUEUE},{DEFINITION}",
    }
    assert ("CallWaitSeconds", "120", "Tuning CallWaitSeconds=120") in carried.moved
    assert ("JobBatchQueueArns", QUEUE, JOB_ARNS) in carried.moved
    assert not any(name == "MaxTtlMs" for name, _, _ in carried.moved)


def test_what_the_deployer_already_set_in_the_tuning_wins() -> None:
    same = carry({"CallWaitSeconds": "120"}, tuning="CallWaitSeconds=120")
    assert same.overrides == {} and not same.notes and not same.refused
    other = carry({"CallWaitSeconds": "120"}, tuning="CallWaitSeconds=30")
    assert other.overrides == {} and not other.refused
    assert other.notes == [
        "CallWaitSeconds: your Tuning sets 30; the stack's former CallWaitSeconds (120) is not carried"
    ]


def test_what_cannot_move_is_refused_saying_what_to_set() -> None:
    # 16d9020 let MaxBodyBytes go to 5 MiB; the Tuning key stops below Lambda's 6 MB response.
    carried = carry({"MaxBodyBytes": "4194304", "CallWaitSeconds": "120"})
    assert carried.refused == [
        "MaxBodyBytes: the stack has '4194304', which its new home, the Tuning key MaxBodyBytes, does not "
        "take (MaxBodyBytes must be between 1024 and 3112960, not 4194304). "
        'Set Tuning="CallWaitSeconds=120 MaxBodyBytes=3112960" (or another value for MaxBodyBytes)'
    ]
    spaced = carry({"AnonymousOwner": "dev team"})
    assert 'Set Tuning="AnonymousOwner=dev-team"' in spaced.refused[0]
    # Each value alone is in bounds, together they are not (the hang-up must cover three
    # reconnects of the longer pieces).
    together = carry({"HangUpSeconds": "70", "CallPieceSeconds": "25"})
    assert together.refused and together.refused[0].startswith("Tuning: with the values carried")


def test_a_value_with_no_home_is_refused_unless_dropped() -> None:
    refused = carry({"EndpointUrl": "http://127.0.0.1:4566"})
    assert refused.refused and "run again with --drop EndpointUrl" in refused.refused[0]
    dropped = carry({"EndpointUrl": "http://127.0.0.1:4566"}, drop=["EndpointUrl"])
    assert not dropped.refused and dropped.notes[0].startswith("EndpointUrl (http://127.0.0.1:4566) dropped")


def test_a_function_running_with_a_removed_parameters_value_needs_it_in_the_tuning() -> None:
    running = {"MAX_TTL_MS": "604800000", "POWERTOOLS_LOG_LEVEL": "DEBUG", "POLL_INTERVAL_MS": "1000"}
    assert dropped_values(running, "") == {"MaxTtlMs": "604800000", "LogLevel": "DEBUG"}
    assert dropped_values(running, "MaxTtlMs=86400000 LogLevel=DEBUG") == {}
    # This release's functions set none of those variables: nothing to keep.
    assert dropped_values({"TUNING": "MaxTtlMs=604800000"}, "") == {}


# ---------------------------------------------------------------- a plain sam deploy


class Aws:
    """A stack whose functions run with ``functions`` (logical id -> environment)."""

    def __init__(self, functions: dict[str, dict[str, str]]) -> None:
        self.functions = functions
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]:
        self.calls.append((operation, params))
        if operation == "DescribeStackResource":
            if params["LogicalResourceId"] not in self.functions:
                raise RuntimeError("ValidationError: Resource does not exist for stack")
            return {
                "StackResourceDetail": {"PhysicalResourceId": f"taskgate-{params['LogicalResourceId']}-X"}
            }
        if operation == "GetFunctionConfiguration":
            name = params["FunctionName"].split("-")[1]
            return {
                "FunctionName": params["FunctionName"],
                "Environment": {"Variables": self.functions[name]},
            }
        return {}


def _configuration(tuning: str, request: str = "Create", **props: Any) -> dict[str, Any]:
    return {
        "RequestType": request,
        "ResponseURL": "https://cloudformation-custom-resource-response.example/x",
        "StackId": STACK,
        "RequestId": "r1",
        "LogicalResourceId": "ApiConfiguration",
        "ResourceType": "Custom::Configuration",
        "ResourceProperties": {
            "ServiceToken": "arn:fn",
            "Tuning": tuning,
            "UpgradesFunctions": ["ApiFunction", "SweeperFunction"],
            "Parameters": {},
            **props,
        },
    }


def test_a_plain_sam_deploy_that_would_drop_a_value_is_refused_saying_the_tuning_to_set() -> None:
    """A stack deployed from 16d9020 with MaxTtlMs and StaleAfterSeconds (the sweeper's) chosen."""
    checks = deploy_checks()
    aws = Aws(
        {
            "ApiFunction": {"MAX_TTL_MS": "604800000", "TASK_TABLE": "t"},
            "SweeperFunction": {"MAX_TTL_MS": "604800000", "STALE_AFTER_SECONDS": "600"},
        }
    )
    answer = checks.handle(_configuration("CallPieceSeconds=15"), aws)
    assert answer["Status"] == "FAILED"
    assert 'Set Tuning="CallPieceSeconds=15 MaxTtlMs=604800000 StaleAfterSeconds=600"' in answer["Reason"]
    assert [op for op, _ in aws.calls].count("GetFunctionConfiguration") == 2
    told = checks.handle(_configuration("CallPieceSeconds=15 MaxTtlMs=604800000 StaleAfterSeconds=600"), aws)
    assert told["Status"] == "SUCCESS"
    # The fingerprint is of what the functions run with, not of which functions are read.
    plain = _configuration("CallPieceSeconds=15 MaxTtlMs=604800000 StaleAfterSeconds=600")
    del plain["ResourceProperties"]["UpgradesFunctions"]
    assert checks.handle(plain, aws)["Data"] == told["Data"]


def test_a_value_out_of_its_new_bounds_is_refused_with_the_nearest_it_takes() -> None:
    answer = deploy_checks().handle(_configuration(""), Aws({"ApiFunction": {"MAX_BODY_BYTES": "4194304"}}))
    assert answer["Status"] == "FAILED"
    assert (
        "MaxBodyBytes 4194304 is out of its bounds now: 3112960 is the nearest it takes." in answer["Reason"]
    )
    assert 'Set Tuning="MaxBodyBytes=3112960"' in answer["Reason"]


def test_a_first_create_and_a_rollback_to_an_older_release_pass() -> None:
    checks = deploy_checks()
    assert checks.handle(_configuration(""), Aws({}))["Status"] == "SUCCESS"  # no function yet
    # A rollback to a release before the Tuning sends its properties (no Tuning): nothing to check.
    old = _configuration("", "Update")
    del old["ResourceProperties"]["Tuning"]
    aws = Aws({"ApiFunction": {"TUNING": "MaxTtlMs=604800000"}})
    assert checks.handle(old, aws)["Status"] == "SUCCESS" and aws.calls == []


def test_the_configuration_reads_the_functions_before_they_change() -> None:
    """ApiFunction waits for ApiConfiguration (its Description names the fingerprint); the
    sweeper, whose StaleAfterSeconds only it had, waits for it too; the role may read them."""
    resources = source()["Resources"]
    props = resources["ApiConfiguration"]["Properties"]
    assert props["UpgradesFunctions"] == ["ApiFunction", "SweeperFunction"]
    assert "ApiConfiguration.Fingerprint" in resources["ApiFunction"]["Properties"]["Description"]["Fn::Sub"]
    assert resources["SweeperFunction"]["DependsOn"] == "ApiConfiguration"
    statements = resources["DeployChecksRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    granted = {action for s in statements for action in s["Action"]}
    assert {"cloudformation:DescribeStackResource", "lambda:GetFunctionConfiguration"} <= granted


# ---------------------------------------------------------------- make deploy


@pytest.fixture(scope="module")
def deploy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deploy_script", ROOT / "scripts" / "deploy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["deploy_script"] = module
    spec.loader.exec_module(module)
    return module


# What sam deploy --guided wrote for a stack of an earlier release: every answer, quoted, in one string.
GUIDED = """version = 0.1
[default.global.parameters]
stack_name = "taskgate"
region = "eu-west-1"

[default.deploy.parameters]
capabilities = "CAPABILITY_IAM"
parameter_overrides = "ApiMemorySize=\\"1024\\" MaxTtlMs=\\"86400000\\" LogLevel=\\"DEBUG\\" AllowedOrigins=\\"\\""
"""


def _stack(parameters: dict[str, str] | None) -> Any:
    asked: list[tuple[str, str | None, str | None]] = []

    def read(stack: str, region: str | None, profile: str | None) -> dict[str, str] | None:
        asked.append((stack, region, profile))
        return parameters

    read.asked = asked  # type: ignore[attr-defined]
    return read


def test_make_deploy_carries_the_stacks_values_shows_them_and_saves_them(
    deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "samconfig.toml"
    config.write_text(GUIDED)
    stack = _stack(
        {
            "ApiMemorySize": "1024",
            "MaxTtlMs": "86400000",
            "LogLevel": "DEBUG",
            "CallWaitSeconds": "120",
            "JobBatchQueueArns": QUEUE,
            "JobBatchDefinitionArns": DEFINITION,
        }
    )
    args = ["--template", str(ROOT / "template.yaml"), "--config", str(config), "--dry-run"]
    assert deploy.main(args, read_stack=stack) == 0
    assert stack.asked == [("taskgate", "eu-west-1", None)]
    out = capsys.readouterr().out
    assert "CallWaitSeconds=120" in out and "->  Tuning CallWaitSeconds=120" in out
    assert f"JobBatchQueueArns={QUEUE}" in out and "->  JobArns" in out
    assert "(no longer there: MaxTtlMs, LogLevel)" in out
    assert out.rstrip().endswith(f"$ sam deploy --config-file {config} --config-env default")
    saved = tomllib.loads(config.read_text())["default"]["deploy"]["parameters"]["parameter_overrides"]
    assert saved == [
        "ApiMemorySize=1024",
        'AllowedOrigins=""',
        'Tuning="LogLevel=DEBUG CallWaitSeconds=120"',
        f"JobArns={QUEUE},{DEFINITION}",
    ]
    # As the SAM CLI reads them.
    from samcli.cli.types import CfnParameterOverridesType

    assert CfnParameterOverridesType().convert(saved, None, None) == {
        "ApiMemorySize": "1024",
        "AllowedOrigins": "",
        "Tuning": "LogLevel=DEBUG CallWaitSeconds=120",
        "JobArns": f"{QUEUE},{DEFINITION}",
    }
    # The next deploy finds them carried: nothing more to move, nothing saved again.
    before = config.read_text()
    assert deploy.main(args, read_stack=stack) == 0
    assert config.read_text() == before and "move" not in capsys.readouterr().out


def test_make_deploy_stops_where_a_value_cannot_move(
    deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "samconfig.toml"
    config.write_text(GUIDED)
    before = config.read_text()
    args = ["--template", str(ROOT / "template.yaml"), "--config", str(config), "--dry-run"]
    assert deploy.main(args, read_stack=_stack({"MaxBodyBytes": "4194304"})) == 2
    out = capsys.readouterr().out
    assert 'Set Tuning="LogLevel=DEBUG MaxBodyBytes=3112960"' in out
    assert "$ sam deploy" not in out and config.read_text() == before
    assert deploy.main(args, read_stack=_stack({"EndpointUrl": "http://127.0.0.1:4566"})) == 2
    assert "--drop EndpointUrl" in capsys.readouterr().out
    assert (
        deploy.main([*args, "--drop", "EndpointUrl"], read_stack=_stack({"EndpointUrl": "http://x:1"})) == 0
    )


def test_make_deploy_stops_when_it_cannot_read_the_stack(
    deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "samconfig.toml"
    config.write_text(GUIDED)

    def unreadable(stack: str, region: str | None, profile: str | None) -> dict[str, str] | None:
        raise RuntimeError("Unable to locate credentials")

    args = ["--template", str(ROOT / "template.yaml"), "--config", str(config), "--dry-run"]
    assert deploy.main(args, read_stack=unreadable) == 2
    assert "could not read stack taskgate's Parameters" in capsys.readouterr().out
