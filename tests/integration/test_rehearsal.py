"""The stack's life, rehearsed (tests/rehearsal.py; issue 29, item 2): every Parameter at each
allowed value or boundary, every pair of the paired ones, each deploy and the deploy that sets
the value back, each first create and its rollback, and the upgrade from the previous release
with its defaults, checked against AWS's own rules. It must find nothing here, and it must
find the four majors the third review found on the revision before it (170eb83)."""

from __future__ import annotations

import pathlib

import pytest

from tests.rehearsal import (
    PREVIOUS_RELEASE,
    Deployed,
    Release,
    Transition,
    create_rollback,
    former_values,
    rehearse,
    release,
    removed_parameter,
    upgrade,
    upgrade_report,
)

# main when the third review was made: N1-N4 are in it.
REVIEWED = "170eb83"
ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_deploy_a_deployer_can_make_keeps_the_rules() -> None:
    report = rehearse(release(None), release(PREVIOUS_RELEASE))
    print("\n" + report.summary())
    assert report.cases >= 150 and report.transitions >= 400, report.summary()
    assert not report.findings, report.summary()


# ---------------------------------------------------------------- this checkout: N1-N4 fixed


def _iam_alone(rel: Release) -> dict[str, str]:
    if "SignInIam" in rel.parameters:
        return {"SignInPeople": "false", "SignInAgents": "false", "SignInIam": "true"}
    return {"AuthMode": "IAM"}


def _published(deployed: Deployed) -> set[str]:
    return {
        r["Properties"]["Description"]
        for r in deployed.resolved().values()
        if r["Type"] == "AWS::Lambda::Version"
    }


def test_n1_a_parameter_change_publishes_exactly_what_it_changes() -> None:
    """The reservation is not part of a version; the own-issuer values are read only with your
    own issuer: changing them alone publishes nothing, and fails nothing."""
    rel = release(None)
    base = Deployed(rel, {})
    for name, value in (
        ("WorkerReservedConcurrency", "50"),
        ("JwtAudience", "api://taskgate"),
        ("JwtScopes", "tasks/read"),
        ("JwtSignInClientId", "sign-in-client"),
        ("JwtSignInClientSecretArn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:s-AbCdEf"),
    ):
        changed = Deployed(rel, {name: value})
        assert Transition(base, changed).check() == [], name
        assert _published(changed) == _published(base), name


def test_n2_a_failed_first_create_finishes_its_rollback_and_leaves_nothing() -> None:
    rel = release(None)
    for values in (
        {},
        {"JwtIssuer": "https://issuer.example.com", "JwtClientIds": "a", "JwtSignInClientId": "s"},
    ):
        assert create_rollback(Deployed(rel, values)) == [], values


def test_n3_a_change_of_the_streaming_endpoints_authorization_redeploys_its_stage() -> None:
    rel = release(None)
    streaming = Deployed(rel, {"StreamingApi": "true"})
    iam = Deployed(rel, {"StreamingApi": "true", **_iam_alone(rel)})
    for before, after in ((streaming, iam), (iam, streaming)):
        assert Transition(before, after).check() == []


def test_n4_an_upgrade_from_the_previous_release_keeps_people_and_agents_signed_in() -> None:
    found, notes = upgrade(release(PREVIOUS_RELEASE), release(None))
    assert found == [], found
    # The former default is refused once, with what to set, and then kept whole.
    assert any("SignInPeople=true" in note and "SignInAgents=true" in note for note in notes), notes


def test_n6_tasks_on_a_machine_an_upgrade_replaced_can_still_be_read_answered_and_swept() -> None:
    """A release that replaces the task state machine (a createOnly property changes) keeps the
    old one with its executions; the functions must still describe, stop and sweep them."""
    rel = release(None)
    anchor = "      DefinitionUri: statemachines/task.asl.json\n"
    assert anchor in rel.text
    replacing = Release(
        None, rel.text.replace(anchor, "      Name: !Sub ${AWS::StackName}-tasks-v2\n" + anchor, 1)
    )
    before, after = Deployed(rel, {}), Deployed(replacing, {})
    transition = Transition(before, after)
    assert "TaskStateMachine" in transition.renamed
    assert [f for f in transition.check() if f.kind in ("tasks-lost", "publish-fails", "stale-alias")] == []


def test_an_upgrade_that_would_lose_wake_ups_is_found() -> None:
    """Issue 30: the wake-ups come from the table's change stream. A release that changed the
    stream's view type (CloudFormation cannot, in one update) or replaced the mapping reading it
    (it would start again at LATEST, and what was written meanwhile would wake nobody) is found;
    this release, upgraded from the one before the stream existed, is not."""
    rel = release(None)
    view = "        StreamViewType: NEW_AND_OLD_IMAGES\n"
    start = "            StartingPosition: LATEST\n"
    assert view in rel.text and start in rel.text
    new_view = Release(None, rel.text.replace(view, "        StreamViewType: NEW_IMAGE\n", 1))
    new_start = Release(None, rel.text.replace(start, "            StartingPosition: TRIM_HORIZON\n", 1))
    base = Deployed(rel, {})
    for changed, where in ((new_view, "TaskTable"), (new_start, "TaskEventsFunctionTaskChanges")):
        found = [f for f in Transition(base, Deployed(changed, {})).check() if f.kind == "wake-ups-lost"]
        assert [f.where for f in found] == [where], found
    assert [
        f
        for f in Transition(Deployed(release(PREVIOUS_RELEASE), {}), base).check()
        if f.kind == "wake-ups-lost"
    ] == []


def test_n4_the_upgrade_report_says_what_a_parameter_comes_to_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """scripts/upgrade_diff.py reports Parameters, not only resources: the former default's
    refusal and what to set, and a value that reaches less than it did (JwtAudience named client
    ids too before SignInAgents had JwtClientIds)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("upgrade_diff", ROOT / "scripts" / "upgrade_diff.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(["--before", PREVIOUS_RELEASE])
    out = capsys.readouterr().out
    parameters = out.split("\nParameters:\n", 1)[1]
    assert "AuthMode: default 'JWT' -> ''; a stack deployed before keeps 'JWT'" in parameters
    assert 'set AuthMode="" SignInPeople=true SignInAgents=true SignInIam=false' in parameters
    assert "JwtAudience: JwtAudience no longer sets ApiFunction.OAUTH_CLIENT_IDS" in parameters
    assert "sign-in" not in parameters  # kept whole once set as told


def test_an_upgrade_keeps_what_the_deployer_chose_for_a_parameter_this_release_removed() -> None:
    """A stack of the previous release with a value other than the default for every Parameter
    that is a Tuning key now: a plain sam deploy (CloudFormation forgets the Parameter) is
    refused by the configuration custom resource with the Tuning to set, and deployed so keeps
    them all; make deploy carries them first and is not refused."""
    previous, current = release(PREVIOUS_RELEASE), release(None)
    chosen = former_values(previous, current)
    assert {"MaxTtlMs", "LogLevel", "StaleAfterSeconds", "AllowedHosts"} <= set(chosen), chosen
    found, notes = upgrade(previous, current, chosen)
    assert found == [], found
    refusal = next(n for n in notes if n.startswith("refused: ApiConfiguration:"))
    told = refusal.split('Set Tuning="', 1)[1].split('"', 1)[0]
    assert sorted(told.split()) == sorted(f"{k}={v}" for k, v in chosen.items())
    found, notes = upgrade(previous, current, chosen, make_deploy=True)
    assert found == [], found
    assert notes[0].startswith("make deploy carried: Tuning=")
    assert not any("ApiConfiguration" in n for n in notes), notes


def test_the_upgrade_report_says_where_each_removed_parameters_value_goes() -> None:
    """scripts/upgrade_diff.py's Parameters section, per removed Parameter: its new home, and
    what make deploy and a plain sam deploy do with the stack's value."""
    report = dict(upgrade_report(release(PREVIOUS_RELEASE), release(None), {"MaxTtlMs": "604800000"}))
    assert report["MaxTtlMs"] == (
        'removed: its value goes to the Tuning key MaxTtlMs (Tuning="MaxTtlMs=<value>"); this '
        "stack's '604800000': make deploy carries it into Tuning and saves it; a plain sam deploy "
        'is refused until Tuning sets it (Tuning="MaxTtlMs=604800000")'
    )
    assert report["PollIntervalMs"].endswith("this stack has the default '1000': nothing to carry")
    assert report["EndpointUrl"].startswith("removed: its value has no new home: it was for sam local")
    queue = "arn:aws:batch:us-east-1:123456789012:job-queue/q"
    assert removed_parameter("JobBatchQueueArns", queue, "") == (
        "removed: its value goes to JobArns (one list of every job's ARNs, of any kind); this "
        f"stack's '{queue}': make deploy adds it to JobArns and saves it; a plain sam deploy drops it "
        "(the jobs' IAM with it): set JobArns to include it"
    )


def test_the_upgrade_notes_name_every_parameter_an_upgrade_changes() -> None:
    """docs/deploying/upgrading.md's notes from the previous release name each Parameter it
    had that is gone, has another default, or reaches less than it did (n10)."""
    previous, current = release(PREVIOUS_RELEASE), release(None)
    page = (ROOT / "docs" / "deploying" / "upgrading.md").read_text()
    notes = page.split(f"## Upgrade notes: from {PREVIOUS_RELEASE}", 1)[1]
    changed = {n for n in previous.parameters if n not in current.parameters}
    changed |= {
        n
        for n in previous.parameters
        if n in current.parameters and previous.default(n) != current.default(n)
    }
    changed |= {"JwtAudience"}  # meaning_changes finds it (test_n4_the_upgrade_report_...)
    missing = sorted(n for n in changed if f"`{n}`" not in notes)
    assert not missing, missing


# ---------------------------------------------------------------- the review's revision: N1-N4 found


@pytest.fixture(scope="module")
def reviewed() -> object:
    return release(REVIEWED)


def test_it_finds_n1_a_reservation_alone_fails_the_deploy(reviewed: object) -> None:
    rel = release(REVIEWED)
    base = Deployed(rel, {})
    for name, value, function in (
        ("WorkerReservedConcurrency", "50", "WorkerFunction"),
        ("JwtAudience", "api://taskgate", "ApiFunction"),
        ("JwtScopes", "tasks/read", "ApiFunction"),
        ("JwtSignInClientId", "sign-in-client", "ApiFunction"),
    ):
        found = Transition(base, Deployed(rel, {name: value})).check()
        assert [(f.kind, f.where) for f in found] == [("publish-fails", function)], (name, found)


def test_it_finds_n2_a_failed_first_create_ends_in_rollback_failed(reviewed: object) -> None:
    found = create_rollback(Deployed(release(REVIEWED), {}))
    assert sorted((f.kind, f.where) for f in found) == [
        ("create-rollback-fails", "TaskTable"),
        ("create-rollback-fails", "UserPool"),
    ]


def test_it_finds_n3_the_streaming_stage_keeps_its_old_authorization(reviewed: object) -> None:
    rel = release(REVIEWED)
    streaming = Deployed(rel, {"StreamingApi": "true"})
    iam = Deployed(rel, {"StreamingApi": "true", "AuthMode": "IAM"})
    for before, after in ((streaming, iam), (iam, streaming)):
        found = [f for f in Transition(before, after).check() if f.kind == "not-redeployed"]
        assert [f.where for f in found] == ["StreamApiStage"], found
        assert "AuthorizationType" in found[0].message


def test_it_finds_n4_an_upgrade_from_jwt_locks_people_out(reviewed: object) -> None:
    found, _ = upgrade(release(PREVIOUS_RELEASE), release(REVIEWED))
    lost = [f.message for f in found if f.kind == "sign-in-lost"]
    assert any("McpClient loses callbacks" in m for m in lost), found
    assert any("McpClient loses scopes ['taskgate/tasks']" in m for m in lost), found
    assert any("no longer accepts client ids" in m for m in lost), found


def test_on_main_before_it_a_plain_sam_deploy_dropped_those_values_saying_nothing() -> None:
    """69de74f (main when issue 29's first half merged): the Tuning replaced 21 Parameters, and
    an upgrade with sam deploy returned each value a deployer had chosen to its default."""
    previous = release(PREVIOUS_RELEASE)
    found, notes = upgrade(previous, release("69de74f"), former_values(previous, release(None)))
    lost = {f.message.split(" ran with ", 1)[1].split(" ", 1)[0] for f in found if f.kind == "value-lost"}
    assert {"MaxTtlMs", "LogLevel", "StaleAfterSeconds", "AllowedHosts"} <= lost, found
    assert not any("ApiConfiguration" in n for n in notes), notes
