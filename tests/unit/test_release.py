"""A release a project can pin (issue 31, item 6): the publishing workflow is ready to run with
PyPI's trusted publishing and refuses a tag, a repository or a CHANGELOG that disagree with the
package (scripts/check_dist.py --tag --repository); the version is one everywhere."""

from __future__ import annotations

import pathlib
import sys
import tomllib

import yaml

import taskgate

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import check_dist  # noqa: E402

REPOSITORY = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
VERSION = taskgate.__version__
RELEASED = f"# Changelog\n\n## {VERSION}\n\n### Added\n- everything\n"


def test_a_release_whose_tag_repository_and_changelog_agree_goes_ahead() -> None:
    assert check_dist.release_problems(f"v{VERSION}", REPOSITORY, RELEASED) == []


def test_a_tag_that_is_not_the_version_is_refused() -> None:
    [problem] = check_dist.release_problems("v9.9.9", REPOSITORY, RELEASED)
    assert f"the tag v9.9.9 is not v{VERSION}" in problem


def test_a_package_naming_another_repository_is_refused() -> None:
    [problem] = check_dist.release_problems(f"v{VERSION}", "https://github.com/someone/fork", RELEASED)
    assert "its links would be wrong" in problem


def test_a_changelog_still_unreleased_is_refused() -> None:
    [problem] = check_dist.release_problems(f"v{VERSION}", REPOSITORY, "# Changelog\n\n## Unreleased\n")
    assert f"no section for {VERSION}" in problem


def test_the_workflow_publishes_with_trusted_publishing_after_the_checks() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    workflow = yaml.safe_load(text)
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    jobs = workflow["jobs"]
    build = " ".join(step.get("run", "") for step in jobs["build"]["steps"])
    assert "python -m build" in build
    assert "scripts/check_dist.py dist --install" in build and '--tag "$GITHUB_REF_NAME"' in build
    publish = jobs["publish"]
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert [step["uses"] for step in publish["steps"]][-1] == "pypa/gh-action-pypi-publish@release/v1"
    assert "password" not in text and "PYPI_API_TOKEN" not in text  # no stored token: OIDC only
    assert workflow["permissions"] == {"contents": "read"}
