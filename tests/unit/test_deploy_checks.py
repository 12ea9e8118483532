"""A first deploy in a new account (issue 20, item 4): it works with every samconfig.toml
environment, or fails before any protected resource exists, saying what to ask AWS for;
and no failed create leaves a retained resource behind.

DeployChecksFunction's code is inline in template.yaml; these tests run it."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest

from tests.sam_translate import ROOT, deploy_checks, source, translate

# What a new AWS account gets: Lambda concurrency 10, all of it unreserved.
NEW_ACCOUNT = {"AccountLimit": {"ConcurrentExecutions": 10, "UnreservedConcurrentExecutions": 10}}


def _environment(env: str) -> dict[str, str]:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    overrides = config.get(env, {}).get("deploy", {}).get("parameters", {}).get("parameter_overrides", [])
    return dict(item.split("=", 1) for item in overrides)


def _preflight(properties: dict[str, Any], old: dict[str, Any] | None, account: dict[str, Any]) -> str | None:
    checks = deploy_checks()
    try:
        checks.preflight(properties, old, lambda: account)
    except checks.Refused as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("env", ["default", "dev", "prod"])
def test_every_environment_deploys_in_a_new_account_or_says_what_to_ask_for(env: str) -> None:
    translated = translate(_environment(env))
    preflight = translated["Resources"].get("AccountPreflight")
    assert preflight is not None, "no deploy-time check of what the account can give"
    reserved = _environment(env).get(
        "WorkerReservedConcurrency", str(source()["Parameters"]["WorkerReservedConcurrency"]["Default"])
    )
    assert preflight["Properties"]["WorkerReservedConcurrency"] == {"Ref": "WorkerReservedConcurrency"}
    refusal = _preflight({"WorkerReservedConcurrency": reserved}, None, NEW_ACCOUNT)
    if refusal is not None:
        # Said before anything protected exists, naming the quota to raise and by how much.
        assert "Concurrent executions" in refusal and "L-B99A9384" in refusal, refusal
        assert f"at least {int(reserved) + 100}" in refusal, refusal
        assert "WorkerReservedConcurrency=0" in refusal, refusal


def test_the_preflight_counts_what_an_update_already_holds() -> None:
    busy = {"AccountLimit": {"ConcurrentExecutions": 1000, "UnreservedConcurrentExecutions": 140}}
    # 50 already reserved by this stack, 60 wanted: 10 more of the 140 unreserved leaves 130.
    assert _preflight({"WorkerReservedConcurrency": "60"}, {"WorkerReservedConcurrency": "50"}, busy) is None
    assert _preflight({"WorkerReservedConcurrency": "0"}, None, NEW_ACCOUNT) is None
    # 50 more would leave 90: the quota must grow to what is reserved then (910) plus 100.
    refusal = _preflight({"WorkerReservedConcurrency": "100"}, {"WorkerReservedConcurrency": "50"}, busy)
    assert refusal is not None and "at least 1010" in refusal, refusal


def test_protected_resources_wait_for_the_preflight_and_go_with_a_failed_create() -> None:
    """A retained resource created by a first deploy that then fails would stay behind, and a
    deletion-protected one cannot even be removed by the rollback: such resources are
    RetainExceptOnCreate and are created only after the preflight passed."""
    resources = translate()["Resources"]
    retained = {
        name: r for name, r in resources.items() if str(r.get("DeletionPolicy", "")).startswith("Retain")
    }
    protected = {
        name
        for name, r in retained.items()
        if r["Type"] in ("AWS::DynamoDB::Table", "AWS::Cognito::UserPool")
    }
    assert protected == {"TaskTable", "UserPool"}
    for name in protected:
        assert retained[name]["DeletionPolicy"] == "RetainExceptOnCreate", name
        depends = retained[name].get("DependsOn", [])
        assert "AccountPreflight" in ([depends] if isinstance(depends, str) else depends), name
    # Versions and layers are Retain on purpose (a pinned task runs its version): they are
    # neither protected nor costly, and a failed create has none worth keeping either way.
    for name, r in retained.items():
        if name not in protected:
            assert r["Type"] in ("AWS::Lambda::Version", "AWS::Lambda::LayerVersion"), name


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
    event = {
        "RequestType": "Create",
        "ResponseURL": "https://cloudformation-custom-resource-response.example/x",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/taskgate/1",
        "RequestId": "r1",
        "LogicalResourceId": "AccountPreflight",
        "ResourceType": "Custom::AccountPreflight",
        "ResourceProperties": {"ServiceToken": "arn:fn", "WorkerReservedConcurrency": "50"},
    }
    checks.handler(event, None, account_settings=lambda: NEW_ACCOUNT)
    assert sent[-1]["Status"] == "FAILED" and "L-B99A9384" in sent[-1]["Reason"]
    assert sent[-1]["method"] == "PUT" and sent[-1]["url"] == event["ResponseURL"]
    event["ResourceProperties"]["WorkerReservedConcurrency"] = "0"
    checks.handler(event, None, account_settings=lambda: NEW_ACCOUNT)
    assert sent[-1]["Status"] == "SUCCESS"
    # A fingerprint changes with any property, and only then.
    config = {**event, "LogicalResourceId": "ApiConfiguration", "ResourceType": "Custom::Configuration"}
    prints = []
    for properties in ({"A": "1", "B": ["x"]}, {"B": ["x"], "A": "1"}, {"A": "2", "B": ["x"]}):
        checks.handler({**config, "ResourceProperties": {"ServiceToken": "t", **properties}}, None)
        assert sent[-1]["Status"] == "SUCCESS"
        prints.append(sent[-1]["Data"]["Fingerprint"])
    assert prints[0] == prints[1] != prints[2]
    checks.handler({**config, "RequestType": "Delete"}, None)
    assert sent[-1]["Status"] == "SUCCESS"
