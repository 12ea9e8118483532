"""`make deploy` over a stack of an earlier release (issue 29): the stack's Parameters are read
from CloudFormation (moto), and what the deployer chose for a Parameter this release no longer
has moves into its new home before sam deploy runs. The stacks are created from the earlier
releases' own Parameter declarations (their defaults, their types) with non-default values;
moto cannot create those releases' resources (Cognito, API Gateway v2 through CloudFormation),
and DescribeStacks answers from the Parameters alone."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
import tomllib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from taskgate.former_parameters import FORMER
from tests.rehearsal import PREVIOUS_RELEASE, release

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGION = "eu-west-1"
# main before this release's Tuning (the third review's revision): CallWaitSeconds and the Job* lists.
BEFORE_TUNING = "170eb83"
QUEUE = "arn:aws:batch:eu-west-1:123456789012:job-queue/reports"
DEFINITION = "arn:aws:batch:eu-west-1:123456789012:job-definition/reports:*"


@pytest.fixture(scope="module")
def deploy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deploy_script_aws", ROOT / "scripts" / "deploy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["deploy_script_aws"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        yield


def _create(revision: str, values: dict[str, str]) -> None:
    """A stack with ``revision``'s Parameters, deployed with ``values``."""
    parameters = json.loads(json.dumps(release(revision).parameters, default=str))
    for spec in parameters.values():
        # moto answers a CommaDelimitedList's value as a Python list's repr ("['a', 'b']");
        # CloudFormation answers "a,b", as for a String with that value.
        if spec["Type"] == "CommaDelimitedList":
            spec["Type"] = "String"
    body = {
        "Parameters": parameters,
        "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName="taskgate",
        TemplateBody=json.dumps(body),
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in values.items()],
    )


def _samconfig(tmp_path: pathlib.Path, overrides: str = "") -> pathlib.Path:
    config = tmp_path / "samconfig.toml"
    config.write_text(
        "version = 0.1\n[default.global.parameters]\n"
        f'stack_name = "taskgate"\nregion = "{REGION}"\n'
        '[default.deploy.parameters]\ncapabilities = "CAPABILITY_IAM"\n' + overrides
    )
    return config


def _deploy(deploy: ModuleType, config: pathlib.Path, *extra: str) -> int:
    args = ["--template", str(ROOT / "template.yaml"), "--config", str(config), "--dry-run", *extra]
    return deploy.main(args)  # type: ignore[no-any-return]


def _saved(config: pathlib.Path) -> Any:
    return tomllib.loads(config.read_text())["default"]["deploy"]["parameters"].get("parameter_overrides")


def test_the_previous_releases_chosen_values_move_into_the_tuning(
    aws: None, deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _create(
        PREVIOUS_RELEASE,
        {
            "MaxTtlMs": "604800000",
            "LogLevel": "DEBUG",
            "AllowedHosts": "mcp.example.com",
            "PollIntervalMs": "1000",  # its default: this release's default reaches the stack
            "ApiMemorySize": "1024",  # still a Parameter: sam deploy keeps it
        },
    )
    config = _samconfig(tmp_path)
    assert _deploy(deploy, config) == 0
    out = capsys.readouterr().out
    for line in ("MaxTtlMs=604800000", "LogLevel=DEBUG", "AllowedHosts=mcp.example.com"):
        assert line in out, out
    assert "PollIntervalMs" not in out and "ApiMemorySize" not in out
    assert _saved(config) == ['Tuning="MaxTtlMs=604800000 AllowedHosts=mcp.example.com LogLevel=DEBUG"']


def test_the_job_lists_of_main_before_the_tuning_move_into_job_arns(
    aws: None, deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _create(
        BEFORE_TUNING,
        {"CallWaitSeconds": "120", "JobBatchQueueArns": QUEUE, "JobBatchDefinitionArns": DEFINITION},
    )
    config = _samconfig(tmp_path, 'parameter_overrides = ["Tuning=HangUpSeconds=100"]\n')
    assert _deploy(deploy, config) == 0
    assert _saved(config) == [
        'Tuning="HangUpSeconds=100 CallWaitSeconds=120"',
        f"JobArns={QUEUE},{DEFINITION}",
    ]
    assert "->  JobArns" in capsys.readouterr().out


def test_a_value_out_of_its_new_bounds_stops_the_deploy_saying_what_to_set(
    aws: None, deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _create(PREVIOUS_RELEASE, {"MaxResultResponseBytes": "4194304", "EndpointUrl": "http://10.0.0.5:4566"})
    config = _samconfig(tmp_path)
    assert _deploy(deploy, config) == 2
    out = capsys.readouterr().out
    assert 'Set Tuning="MaxResultResponseBytes=3112960"' in out and "--drop EndpointUrl" in out
    assert "$ sam deploy" not in out and _saved(config) is None


def test_no_stack_yet_carries_nothing(
    aws: None, deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _samconfig(tmp_path)
    assert _deploy(deploy, config) == 0 and _saved(config) is None
    assert "move" not in capsys.readouterr().out


def test_every_parameter_an_earlier_release_had_and_this_one_has_not_is_known() -> None:
    """FORMER names every Parameter those releases declared that this template does not, with the
    Default they had: a value equal to it stays behind, any other moves or stops the deploy."""
    current = release(None).parameters
    for revision in (PREVIOUS_RELEASE, BEFORE_TUNING):
        for name, spec in release(revision).parameters.items():
            if name in current:
                continue
            assert name in FORMER, (revision, name)
            assert FORMER[name].default == str(spec.get("Default", "")), (revision, name)
