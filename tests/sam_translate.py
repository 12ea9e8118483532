"""template.yaml translated locally by samtranslator, as CloudFormation's SAM transform
translates it at deploy time with the deploy's Parameter values.

Local paths (CodeUri, ContentUri, DefinitionUri) are given the S3 locations `sam package`
would give them; the managed policy map is the one samtranslator bundles (no AWS call).
"""

from __future__ import annotations

import copy
import functools
import os
import pathlib
from typing import Any

from cfnlint.decode import decode

ROOT = pathlib.Path(__file__).resolve().parents[1]
REGION = "us-east-1"
PACKAGED_KEYS = ("CodeUri", "ContentUri", "DefinitionUri")


@functools.cache
def _decoded(path: str) -> dict[str, Any]:
    template, matches = decode(path)
    assert not matches and template is not None, matches
    return template  # type: ignore[no-any-return]


def source(path: pathlib.Path | None = None) -> dict[str, Any]:
    """The template as written (a fresh copy)."""
    return copy.deepcopy(_decoded(str(path or ROOT / "template.yaml")))


class _NoManagedPolicies:
    """samtranslator resolves managed policy names through IAM; the template names none
    (ARNs only), so nothing needs loading."""

    def load(self) -> dict[str, str]:
        return {}


def translate(
    parameters: dict[str, str] | None = None,
    template: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The CloudFormation template the SAM transform makes of ``template`` (default:
    template.yaml) with these Parameter values (the rest take their defaults)."""
    if template is None:
        return copy.deepcopy(_translated(tuple(sorted((parameters or {}).items()))))
    return _translate(parameters, template)


@functools.cache
def _translated(items: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    return _translate(dict(items), None)


def _translate(parameters: dict[str, str] | None, template: dict[str, Any] | None) -> dict[str, Any]:
    from samtranslator.translator.transform import transform

    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
    doc = copy.deepcopy(template) if template is not None else source()
    for name, resource in doc.get("Resources", {}).items():
        props = resource.get("Properties", {})
        for key in PACKAGED_KEYS:
            if isinstance(props.get(key), str):
                props[key] = f"s3://packaged/{name}/{key}"
    return transform(doc, dict(parameters or {}), _NoManagedPolicies())  # type: ignore[no-any-return]


def environment(function: str, parameters: dict[str, str] | None = None) -> dict[str, Any]:
    """A function's environment variables as SAM gives it them (Globals' merged in, unless the
    function ignores them), intrinsics unresolved. StreamingApi is on, so StreamFunction is there."""
    translated = translate({"StreamingApi": "true", **(parameters or {})})
    return translated["Resources"][function]["Properties"]["Environment"]["Variables"]  # type: ignore[no-any-return]


def versions(translated: dict[str, Any]) -> dict[str, str]:
    """Each aliased function's published version: function logical id -> version logical id."""
    out: dict[str, str] = {}
    for logical_id, resource in translated["Resources"].items():
        if resource["Type"] == "AWS::Lambda::Version":
            function = resource["Properties"]["FunctionName"]["Ref"]
            assert function not in out
            out[function] = logical_id
    return out


@functools.cache
def _deploy_checks() -> Any:
    return deploy_checks()


def deploy_checks() -> Any:
    """DeployChecksFunction's code (functions/deploy_checks), as a fresh module."""
    import importlib.util

    resources = source()["Resources"]
    assert "DeployChecksFunction" in resources, (
        "the template has no deploy-time checks (DeployChecksFunction)"
    )
    props = resources["DeployChecksFunction"]["Properties"]
    module = props["Handler"].rsplit(".", 1)[0]
    path = ROOT / str(props["Code"]).rstrip("/") / f"{module}.py"
    spec = importlib.util.spec_from_file_location("deploy_checks", path)
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def published(parameters: dict[str, str] | None = None) -> dict[str, tuple[str, str | None]]:
    return _published(tuple(sorted((parameters or {}).items())))


@functools.cache
def _published(items: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, str | None]]:
    """What names each aliased function's published version once CloudFormation has resolved
    the translated template with these Parameter values: (its logical id, its description).
    A new logical id, or a new description (a createOnly property: the version is replaced),
    publishes a new version. Configuration fingerprints are computed by the deploy checks'
    own code over the resolved properties."""
    from tests.cfn_eval import Evaluator

    parameters = dict(items)
    translated = translate(parameters)
    # Without the deploy checks (an older template) no description is computed from values.
    checks = _deploy_checks() if "DeployChecksFunction" in translated["Resources"] else None

    def resource(name: str, attribute: str | None) -> Any:
        found = translated["Resources"][name]
        if checks is not None and found["Type"] == "Custom::Configuration" and attribute == "Fingerprint":
            return checks.fingerprint(evaluator.value(found["Properties"]))
        return f"<{name}{'.' + attribute if attribute else ''}>"

    evaluator = Evaluator(translated, parameters, resource=resource)
    out: dict[str, tuple[str, str | None]] = {}
    for function, version in versions(translated).items():
        description = translated["Resources"][version]["Properties"].get("Description")
        out[function] = (version, None if description is None else evaluator.value(description))
    return out
