"""Every Parameter change reaches the running code (issue 20, item 1).

API Gateway and the state machine invoke published versions (the `live` alias, a pinned
version); a Parameter change that publishes no version is silently ignored by them. The
SAM transform runs inside CloudFormation at every deploy with the deploy's Parameter
values, so these tests translate the template locally the same way, once with the
defaults and once with another value of each Parameter a function reads, and require a
new version of every function that reads it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.sam_translate import published, source, translate, versions

# A value the Parameter accepts other than its default, where the rule below cannot
# make one (a pattern, a list of URLs).
ALTERNATES = {
    "JwtIssuer": "https://issuer.example.com",
    "JwtAudience": "client-a,client-b",
    "JwtScopes": "tasks/read",
    "OAuthCallbackUrls": "https://app.example.com/callback",
    "StreamingApi": "true",
    "Tuning": "MaxTtlMs=604800000",
    "ToolModules": "taskgate_conformance,taskgate_tools",
    "ToolDeclarations": "taskgate_tools:jobs.json",
    "EndpointUrl": "http://127.0.0.1:4599",
    "AllowedHosts": "mcp.example.com",
    "AllowedOrigins": "https://app.example.com",
    "PublicUrl": "https://mcp.example.com",
    "KmsKeyArn": "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "WorkerPolicyArns": "arn:aws:iam::123456789012:policy/reports-tool",
    "WorkerSubnetIds": "subnet-0123456789abcdef0",
    "WorkerSecurityGroupIds": "sg-0123456789abcdef0",
    "ToolEnvironment": "REPORTS_BUCKET=reports-example",
    "ToolSecretArns": "arn:aws:secretsmanager:us-east-1:123456789012:secret:reports-AbCdEf",
    "AlarmEmail": "ops@example.com",
    "JwtSignInClientSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:sign-in-AbCdEf",
}


def _alternate(name: str, spec: dict[str, Any]) -> str:
    if name in ALTERNATES:
        return ALTERNATES[name]
    default = str(spec.get("Default", ""))
    if "AllowedValues" in spec:
        return next(str(v) for v in spec["AllowedValues"] if str(v) != default)
    if spec["Type"] == "Number":
        value = float(default)
        step = 1 if value.is_integer() else 0.05
        bigger = value + step
        new = bigger if bigger <= float(spec.get("MaxValue", bigger)) else value - step
        return str(int(new)) if float(new).is_integer() else str(new)
    assert "AllowedPattern" not in spec, f"add an alternate value for {name} to ALTERNATES"
    return default + "x"


def _parameters_read(node: Any, conditions: dict[str, Any], parameters: set[str]) -> set[str]:
    """Parameters ``node`` depends on: Refs, ${} in Subs, and those of the Conditions it uses."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and value in parameters:
                found.add(value)
            elif key == "Fn::Sub":
                text = value if isinstance(value, str) else value[0]
                found |= set(re.findall(r"\$\{(\w+)\}", text)) & parameters
                found |= _parameters_read(value, conditions, parameters)
            elif key in ("Fn::If", "Condition"):
                name = value[0] if key == "Fn::If" else value
                found |= _parameters_read(conditions[name], conditions, parameters)
                found |= _parameters_read(value, conditions, parameters)
            else:
                found |= _parameters_read(value, conditions, parameters)
    elif isinstance(node, list):
        for value in node:
            found |= _parameters_read(value, conditions, parameters)
    return found


def _read_by_function() -> dict[str, set[str]]:
    """For each function published behind an alias: the Parameters its configuration reads
    (environment, memory, timeout, architecture, layers, VPC, SnapStart, ...)."""
    template = source()
    parameters = set(template["Parameters"])
    translated = translate()
    out: dict[str, set[str]] = {}
    for function in versions(translated):
        # Reserved concurrency and tags are not part of a version (PublishVersion).
        props = {
            k: v
            for k, v in translated["Resources"][function]["Properties"].items()
            if k not in ("ReservedConcurrentExecutions", "Tags")
        }
        out[function] = _parameters_read(props, translated.get("Conditions", {}), parameters)
    return out


READ = _read_by_function()
CASES = sorted({(p, f) for f, ps in READ.items() for p in ps})


def test_the_aliased_functions_read_configuration() -> None:
    assert set(READ) == {"ApiFunction", "WorkerFunction"}
    assert {"Tuning", "SignInPeople", "ApiMemorySize", "ToolModules", "SnapStart"} <= READ["ApiFunction"]
    assert {"Tuning", "WorkerMemorySize", "ToolModules", "Architecture"} <= READ["WorkerFunction"]
    assert "WorkerReservedConcurrency" not in READ["WorkerFunction"]


# Where a Parameter is read only with your own issuer (with the stack's user pool its own
# values are), it is changed on a stack that has one.
OWN_ISSUER = {
    "JwtIssuer": "https://issuer.example.com",
    "JwtClientIds": "client-a",
    "JwtSignInClientId": "sign-in",
}
CONTEXT = {
    name: OWN_ISSUER for name in ("JwtAudience", "JwtScopes", "JwtSignInClientId", "JwtSignInClientSecretArn")
}


@pytest.mark.parametrize(("parameter", "function"), CASES)
def test_a_parameter_change_publishes_a_new_version(parameter: str, function: str) -> None:
    spec = source()["Parameters"][parameter]
    value = _alternate(parameter, spec)
    context = CONTEXT.get(parameter, {})
    assert value != context.get(parameter, str(spec.get("Default", "")))
    before = published(context)[function]
    after = published({**context, parameter: value})[function]
    assert after != before, (
        f"{parameter}={value!r} changes {function}'s configuration but publishes no new version "
        f"({before}): the `live` alias would keep running the old value"
    )


def test_an_unchanged_configuration_publishes_nothing() -> None:
    """Deploying twice with the same values must not churn versions (and snapshots)."""
    assert published() == published()
    defaults = {n: str(p.get("Default", "")) for n, p in source()["Parameters"].items()}
    assert published(defaults) == published()
