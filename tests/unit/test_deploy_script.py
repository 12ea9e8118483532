"""`make deploy` (scripts/deploy.py, issue 29 item 4, n11): a first deploy asks at most ten
questions, and samconfig.toml keeps only the answers that differ from the template's defaults,
so a default a later release changes reaches the stack; a project's template gets the
questions its Parameters have."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
import tomllib
from types import ModuleType
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def deploy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deploy", ROOT / "scripts" / "deploy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["deploy"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _run(deploy: ModuleType, answers: dict[str, str]) -> tuple[list[str], dict[str, str], dict[str, str]]:
    asked: list[str] = []

    def answer(question: Any, default: str) -> str:
        asked.append(question.parameter)
        return answers.get(question.parameter, "")

    settings, chosen = deploy.ask(deploy.load_template(ROOT / "template.yaml"), answer)
    return asked, settings, chosen


def test_a_first_deploy_asks_at_most_ten_questions_and_keeps_only_changes(
    deploy: ModuleType, tmp_path: pathlib.Path
) -> None:
    asked, settings, chosen = _run(deploy, {})
    assert len(asked) <= 10, asked
    assert chosen == {}, "accepting every default chose nothing"
    config = tmp_path / "samconfig.toml"
    deploy.save(config, "default", settings, chosen)
    saved = tomllib.loads(config.read_text())["default"]
    assert saved["global"]["parameters"]["stack_name"] == "taskgate"
    assert "parameter_overrides" not in saved["deploy"]["parameters"]

    asked, settings, chosen = _run(
        deploy,
        {
            "StackName": "tasks-prod",
            "SignInIam": "n",
            "ToolModules": "acme_tools",
            "AlarmEmail": "ops@example.com",
        },
    )
    assert chosen == {"SignInIam": "false", "ToolModules": "acme_tools", "AlarmEmail": "ops@example.com"}
    deploy.save(config, "default", settings, chosen)
    saved = tomllib.loads(config.read_text())["default"]
    assert saved["global"]["parameters"]["stack_name"] == "tasks-prod"
    assert saved["deploy"]["parameters"]["parameter_overrides"] == [
        "SignInIam=false",
        "ToolModules=acme_tools",
        "AlarmEmail=ops@example.com",
    ]


def test_your_own_issuer_asks_what_it_needs(deploy: ModuleType) -> None:
    asked, _, chosen = _run(
        deploy,
        {
            "JwtIssuer": "https://login.example.com",
            "JwtSignInClientId": "taskgate",
            "JwtClientIds": "agent-1",
        },
    )
    assert {"JwtSignInClientId", "JwtClientIds"} <= set(asked)
    assert chosen == {
        "JwtIssuer": "https://login.example.com",
        "JwtSignInClientId": "taskgate",
        "JwtClientIds": "agent-1",
    }
    assert len(asked) <= 12


def test_saving_keeps_the_rest_of_the_file(deploy: ModuleType, tmp_path: pathlib.Path) -> None:
    config = tmp_path / "samconfig.toml"
    config.write_text((ROOT / "samconfig.toml").read_text())
    deploy.save(config, "default", {"StackName": "taskgate", "Region": "eu-west-1"}, {"StreamingApi": "true"})
    text = config.read_text()
    assert "# SAM CLI configuration." in text and "[prod.deploy.parameters]" in text
    assert tomllib.loads(text)["prod"] == tomllib.loads((ROOT / "samconfig.toml").read_text())["prod"]


def test_a_saved_configuration_is_deployed_without_questions(
    deploy: ModuleType, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "samconfig.toml"
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"SignInPeople": "n"}))
    args = ["--template", str(ROOT / "template.yaml"), "--config", str(config), "--dry-run"]

    def no_stack(stack: str, region: str | None, profile: str | None) -> None:
        return None  # a first deploy: nothing deployed before

    assert deploy.main([*args, "--answers", str(answers)], read_stack=no_stack) == 0
    assert "SignInPeople=false" in config.read_text()
    assert deploy.main(args, read_stack=no_stack) == 0
    out = capsys.readouterr().out
    assert f"$ sam deploy --config-file {config} --config-env default" in out
