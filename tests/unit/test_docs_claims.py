"""What the deploying pages claim about the stack is what the template does (issue 29, n10):
which of your tools' needs publish a worker version, and what a rollback does to the
deletion-protected resources."""

from __future__ import annotations

import pathlib

from tests.sam_translate import source

ROOT = pathlib.Path(__file__).resolve().parents[2]
NEEDS = ("WorkerPolicyArns", "WorkerSubnetIds", "WorkerSecurityGroupIds", "ToolEnvironment", "ToolSecretArns")


def test_the_page_says_which_of_your_tools_needs_publish_a_version() -> None:
    """A need publishes a worker version when the worker's configuration fingerprint reads it
    (it is in what a version runs with); the others change in place."""
    page = (ROOT / "docs" / "deploying" / "first-deploy.md").read_text()
    fingerprint = source()["Resources"]["WorkerConfiguration"]["Properties"]["Parameters"]
    sentence = next(
        p
        for p in page.split("\n\n")
        if "publish a new\nworker version" in p or "publish a new worker version" in p
    )
    publishing = sentence.split("publish")[0]
    for need in NEEDS:
        assert (f"`{need}`" in publishing) == (need in fingerprint), need


def test_the_pages_name_the_deletion_policy_the_template_has() -> None:
    resources = source()["Resources"]
    deleting = (ROOT / "docs" / "deploying" / "deleting.md").read_text()
    first = (ROOT / "docs" / "deploying" / "first-deploy.md").read_text()
    for name in ("TaskTable", "UserPool"):
        policy = resources[name]["DeletionPolicy"]
        row = next(
            line
            for line in deleting.splitlines()
            if line.startswith("|") and ("TaskTable" if name == "TaskTable" else "user pool") in line
        )
        assert f"DeletionPolicy: {policy}" in row, (name, row)
    # A rollback skips a retained resource: the pages must not say it deletes them.
    assert "RetainExceptOnCreate" not in deleting + first
