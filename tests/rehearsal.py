"""The stack's life, rehearsed without an AWS account (issue 29).

template.yaml is translated by samtranslator with each configuration's Parameter values (as
CloudFormation's SAM transform translates it at deploy time), resolved as CloudFormation
resolves it, and every deploy a deployer can make is checked against AWS's own rules:

- **replaced**: a resource whose type or one of its ``createOnlyProperties`` changes (the resource
  schemas cfn-lint ships) is replaced, and what refers to it sees a new physical id;
- **a new version published**: a new ``AWS::Lambda::Version`` (a new logical id, or a changed
  createOnly property such as its Description) makes CloudFormation call PublishVersion, which
  publishes only when the function's code or configuration changed since the last version
  ("A version for this Lambda function exists" otherwise); reserved concurrency and tags are
  not part of a version. A configuration change without a new version never reaches the alias;
- **redeployed**: a REST API stage serves what its ``AWS::ApiGateway::Deployment`` captured; only
  a new Deployment resource redeploys (a changed Description does not);
- **every rollback path can finish**: a failed first create deletes what it created, and a
  deletion-protected resource cannot be deleted; an update's rollback sends the custom resources
  their old properties, which they must accept;
- **an upgrade keeps people and agents signed in and tasks running**: from the previous release's
  template and default Parameter values, deployed as ``sam deploy`` does it (a Parameter the stack
  already has keeps its value unless overridden), the pool clients' callback URLs and scopes and
  the API's accepted client ids, audiences and scopes include everything they did before, and
  the table, the parked executions and the versions they run stay reachable.

The deploy-time custom resources are run, not modelled: their handler (functions/, or the code
inline in an older template) computes each configuration's fingerprint and answers each
request a deploy or a rollback sends it.

    python -m tests.rehearsal [--release REV] [--previous REV] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import functools
import io
import itertools
import json
import os
import re
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # python -m tests.rehearsal from anywhere
    sys.path.insert(0, str(ROOT))

from tests.cfn_eval import ACCOUNT, REGION, Evaluator  # noqa: E402

PREVIOUS_RELEASE = "16d9020"  # the release before this one: an upgrade starts from its defaults
PACKAGED_KEYS = ("CodeUri", "ContentUri", "DefinitionUri", "Code")
# What a published version does not capture (Lambda: PublishVersion, "Lambda doesn't publish a
# version if the function's configuration and code haven't changed since the last version").
NOT_SNAPSHOTTED = frozenset({"ReservedConcurrentExecutions", "Tags", "RecursiveLoop"})
# Resources whose replacement loses what users have: rows, people, clients' credentials, keys,
# results, endpoints, running executions.
STATEFUL = frozenset(
    {
        "AWS::DynamoDB::Table",
        "AWS::Cognito::UserPool",
        "AWS::Cognito::UserPoolClient",
        "AWS::Cognito::UserPoolDomain",
        "AWS::SecretsManager::Secret",
        "AWS::S3::Bucket",
        "AWS::KMS::Key",
        "AWS::ApiGatewayV2::Api",
        "AWS::ApiGateway::RestApi",
        "AWS::StepFunctions::StateMachine",
        "AWS::Lambda::Function",
    }
)
# What a REST API stage serves is captured by its deployment.
REST_DEFINITION = frozenset(
    {
        "AWS::ApiGateway::Method",
        "AWS::ApiGateway::Resource",
        "AWS::ApiGateway::Authorizer",
        "AWS::ApiGateway::GatewayResponse",
        "AWS::ApiGateway::RequestValidator",
        "AWS::ApiGateway::Model",
    }
)
# The Parameters whose every pair of values is rehearsed (AuthMode or what replaces it).
PAIRED = ("AuthMode", "StreamingApi", "JwtIssuer", "SnapStart", "WorkerSubnetIds", "KmsKeyArn")
SIGN_IN_KINDS = ("SignInPeople", "SignInAgents", "SignInIam")

# A value each Parameter accepts where its declaration cannot give one (a pattern, a list).
SAMPLES: dict[str, list[str]] = {
    "PublicUrl": ["https://mcp.example.com", "https://mcp.example.com/base"],
    "JwtIssuer": ["https://issuer.example.com"],
    "JwtAudience": ["api://taskgate", "api://taskgate,api://other"],
    "JwtClientIds": ["client-a", "client-a,client-b"],
    "JwtScopes": ["tasks/read", "tasks/read,tasks/write"],
    "JwtSignInClientId": ["sign-in-client"],
    "JwtSignInClientSecretArn": ["arn:aws:secretsmanager:us-east-1:123456789012:secret:sign-in-AbCdEf"],
    "OAuthCallbackUrls": [
        "http://localhost:6274/oauth/callback",
        "https://app.example.com/cb,http://127.0.0.1:33418/",
    ],
    "ToolModules": ["taskgate_conformance,taskgate_tools", "taskgate_tools,taskgate_tools:jobs.json"],
    "ToolDeclarations": ["taskgate_tools:jobs.json"],
    "EndpointUrl": ["http://127.0.0.1:4599"],
    "AllowedHosts": ["mcp.example.com", "*"],
    "AllowedOrigins": ["https://app.example.com", "https://a.example.com,https://b.example.com"],
    "AnonymousOwner": ["anonymous-dev"],
    "KmsKeyArn": [
        "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        "arn:aws:kms:us-east-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab",
    ],
    "WorkerPolicyArns": [
        "arn:aws:iam::123456789012:policy/reports-tool",
        "arn:aws:iam::123456789012:policy/a,arn:aws:iam::123456789012:policy/b",
    ],
    "WorkerSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef0,subnet-0123456789abcdef1"],
    "WorkerSecurityGroupIds": ["sg-0123456789abcdef0"],
    "ToolEnvironment": ["REPORTS_BUCKET=reports-example", "A=1,B=two"],
    "ToolSecretArns": ["arn:aws:secretsmanager:us-east-1:123456789012:secret:reports-AbCdEf"],
    "AlarmEmail": ["ops@example.com"],
    "PreviousStateMachineArns": [
        "arn:aws:states:us-east-1:123456789012:stateMachine:TaskStateMachine-AbC123"
    ],
    "JobArns": [
        "arn:aws:states:us-east-1:123456789012:stateMachine:etl",
        "arn:aws:states:us-east-1:123456789012:stateMachine:etl,arn:aws:batch:us-east-1:123456789012:job-queue/q,"
        "arn:aws:batch:us-east-1:123456789012:job-definition/d,arn:aws:ecs:us-east-1:123456789012:cluster/c,"
        "arn:aws:ecs:us-east-1:123456789012:task-definition/t:1,arn:aws:iam::123456789012:role/task,"
        "arn:aws:glue:us-east-1:123456789012:job/g",
    ],
    "JobStateMachineArns": ["arn:aws:states:us-east-1:123456789012:stateMachine:etl"],
    "JobBatchQueueArns": ["arn:aws:batch:us-east-1:123456789012:job-queue/q"],
    "JobBatchDefinitionArns": ["arn:aws:batch:us-east-1:123456789012:job-definition/d"],
    "JobEcsClusterArns": ["arn:aws:ecs:us-east-1:123456789012:cluster/c"],
    "JobEcsTaskDefinitionArns": ["arn:aws:ecs:us-east-1:123456789012:task-definition/t:1"],
    "JobEcsRoleArns": ["arn:aws:iam::123456789012:role/task"],
    "JobGlueJobArns": ["arn:aws:glue:us-east-1:123456789012:job/g"],
    "Tuning": ["CallPieceSeconds=25", "CallPieceSeconds=5 HangUpSeconds=86400 MaxTtlMs=31536000000"],
    "AuthMode": [],  # its AllowedValues
    "StreamingApi": ["true", "1", "9999"],
}
# What a value needs beside it to be a deploy anyone would make (the template's Rules say so).
COMPANIONS: dict[tuple[str, str], dict[str, str]] = {
    ("JwtIssuer", "*"): {"JwtClientIds": "client-a", "JwtSignInClientId": "sign-in-client"},
    ("WorkerSubnetIds", "*"): {"WorkerSecurityGroupIds": "sg-0123456789abcdef0"},
    ("WorkerSecurityGroupIds", "*"): {"WorkerSubnetIds": "subnet-0123456789abcdef0"},
    ("JobBatchQueueArns", "*"): {
        "JobBatchDefinitionArns": "arn:aws:batch:us-east-1:123456789012:job-definition/d"
    },
    ("JobEcsClusterArns", "*"): {
        "JobEcsTaskDefinitionArns": "arn:aws:ecs:us-east-1:123456789012:task-definition/t:1"
    },
}


# ---------------------------------------------------------------------------- releases


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


class Release:
    """template.yaml as one revision has it (None: this checkout's working tree)."""

    def __init__(self, revision: str | None = None, text: str | None = None) -> None:
        self.revision = revision
        self.label = revision or "working-tree"
        self.text = text if text is not None else self.read("template.yaml")
        self.source = _decode(self.text)
        self.parameters: dict[str, dict[str, Any]] = self.source.get("Parameters", {})

    def read(self, path: str) -> str:
        if self.revision is None:
            return (ROOT / path).read_text()
        return _git("show", f"{self.revision}:{path}")

    @functools.cached_property
    def checks(self) -> types.ModuleType | None:
        """The deploy-time custom resources' handler this release deploys (DeployChecksFunction)."""
        function = self.source.get("Resources", {}).get("DeployChecksFunction")
        if function is None:
            return None
        props = function["Properties"]
        code = props.get("Code")
        if isinstance(code, dict) and "ZipFile" in code:
            text, where = code["ZipFile"], f"{self.label}:template.yaml:DeployChecksFunction"
        else:
            module = props["Handler"].rsplit(".", 1)[0]
            folder = props.get("CodeUri", code)  # a SAM function's, or a plain function's local Code
            where = f"{str(folder).rstrip('/')}/{module}.py"
            text = self.read(where)
        module_ = types.ModuleType(f"deploy_checks_{self.label}")
        module_.__file__ = where
        exec(compile(text, where, "exec"), module_.__dict__)
        return module_

    def default(self, name: str) -> str:
        return str(self.parameters[name].get("Default", ""))

    def defaults(self) -> dict[str, str]:
        return {name: self.default(name) for name in self.parameters}


@functools.cache
def release(revision: str | None = None) -> Release:
    return Release(revision)


def _decode(text: str) -> dict[str, Any]:
    import tempfile

    from cfnlint.decode import decode

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        template, matches = decode(f.name)
    finally:
        os.unlink(f.name)
    assert template is not None, matches
    return template  # type: ignore[no-any-return]


@functools.cache
def _packaged(rel: Release) -> str:
    """The template as `sam package` hands it to CloudFormation (local paths replaced by S3
    locations: a new release's code is a new object), as JSON: each translation starts from a
    fresh copy of plain values."""
    doc = json.loads(json.dumps(rel.source))
    for name, resource in doc.get("Resources", {}).items():
        props = resource.get("Properties", {})
        for key in PACKAGED_KEYS:
            if isinstance(props.get(key), str):
                props[key] = f"s3://packaged/{rel.label}/{name}/{key}"
    return json.dumps(doc)


@functools.cache
def _translated(rel: Release, items: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    from samtranslator.translator.transform import transform

    class _NoManagedPolicies:
        def load(self) -> dict[str, str]:
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
    _validate_policy_templates_once()
    TRANSLATIONS[0] += 1
    return transform(json.loads(_packaged(rel)), dict(items), _NoManagedPolicies())  # type: ignore[no-any-return]


def _validate_policy_templates_once() -> None:
    """samtranslator validates its bundled policy templates against their JSON schema on every
    translation (a third of its time); they are the same files every time, checked once here."""
    from samtranslator.policy_template_processor.processor import PolicyTemplatesProcessor

    validate = PolicyTemplatesProcessor.__dict__["_is_valid_templates_dict"].__func__
    if getattr(validate, "checked", None) is not None:
        return
    checked: set[str] = set()

    def validate_once(templates: dict[str, Any], schema: dict[str, Any] | None = None) -> bool:
        key = json.dumps([templates, schema], sort_keys=True)
        if key not in checked:
            validate(templates, schema)  # raises on an invalid one
            checked.add(key)
        return True

    validate_once.checked = checked  # type: ignore[attr-defined]
    PolicyTemplatesProcessor._is_valid_templates_dict = staticmethod(validate_once)  # type: ignore[method-assign]


TRANSLATIONS = [0]


@functools.cache
def _create_only(kind: str) -> tuple[str, ...]:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    if kind.startswith("Custom::") or kind == "AWS::CloudFormation::CustomResource":
        return ()
    try:
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema(REGION, kind).schema
    except Exception:
        return ()
    return tuple(p.removeprefix("/properties/") for p in schema.get("createOnlyProperties", []))


def _at(props: dict[str, Any], path: str) -> Any:
    node: Any = props
    for part in path.split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


# ---------------------------------------------------------------------------- a deployed stack


@dataclass
class Call:
    """One AWS call a custom resource's handler made (the rehearsal's AWS answers it)."""

    service: str
    operation: str
    params: dict[str, Any]


class RehearsalAws:
    """What the deploy checks' handler may ask AWS during a rehearsed deploy: an account with
    room to spare (unless told otherwise) and a stack in ``stack_status``. Every call is kept."""

    def __init__(
        self,
        *,
        stack_status: str = "UPDATE_IN_PROGRESS",
        concurrency: int = 100_000,
        functions: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.stack_status = stack_status
        self.concurrency = concurrency
        # The stack's functions as deployed before (logical id -> environment), for an upgrade.
        self.functions = functions or {}
        self.calls: list[Call] = []

    def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]:
        self.calls.append(Call(service, operation, params))
        if (service, operation) == ("lambda", "GetAccountSettings"):
            return {
                "AccountLimit": {
                    "ConcurrentExecutions": self.concurrency,
                    "UnreservedConcurrentExecutions": self.concurrency,
                }
            }
        if (service, operation) == ("cloudformation", "DescribeStacks"):
            return {"Stacks": [{"StackName": "taskgate", "StackStatus": self.stack_status}]}
        if (service, operation) == ("cloudformation", "DescribeStackResource"):
            name = params["LogicalResourceId"]
            if name not in self.functions:  # as CloudFormation answers: a ValidationError
                raise LookupError(f"Resource {name} does not exist for stack taskgate")
            return {
                "StackResourceDetail": {"LogicalResourceId": name, "PhysicalResourceId": f"taskgate-{name}"}
            }
        if (service, operation) == ("lambda", "GetFunctionConfiguration"):
            name = params["FunctionName"].removeprefix("taskgate-")
            return {"Environment": {"Variables": self.functions[name]}}
        if (service, operation) == ("stepfunctions", "ListStateMachines"):
            return {
                "stateMachines": [{"stateMachineArn": arn, "name": arn.rsplit(":", 1)[1]} for arn in MACHINES]
            }
        if (service, operation) == ("stepfunctions", "ListTagsForResource"):
            tags = MACHINES.get(params["resourceArn"], {})
            return {"tags": [{"key": k, "value": v} for k, v in tags.items()]}
        return {}


# The account's state machines: every one a rehearsed deploy of the stack created (a replaced
# one is kept), with the tags CloudFormation gives them.
MACHINES: dict[str, dict[str, str]] = {}
STACK_ID = f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/taskgate/0000"


def invoke_checks(
    checks: types.ModuleType, event: dict[str, Any], aws: RehearsalAws | None = None
) -> dict[str, Any]:
    """The answer the deploy checks' handler sends CloudFormation for ``event``:
    {Status, Reason, Data}."""
    aws = aws or RehearsalAws()
    event = {
        "ResponseURL": "https://cloudformation-custom-resource-response.example/rehearsal",
        "StackId": STACK_ID,
        "RequestId": "rehearsal",
        **event,
    }
    if hasattr(checks, "handle"):  # this release's handler: AWS passed in, the answer returned
        with contextlib.redirect_stdout(io.StringIO()):  # what it logs for CloudWatch
            return dict(checks.handle(event, aws))
    # An older inline handler: it PUTs its answer, and takes the account settings as a callable.
    sent: list[dict[str, Any]] = []

    def answer(event: dict[str, Any], status: str, reason: str = "", data: Any = None) -> None:
        sent.append({"Status": status, "Reason": reason, "Data": data or {}})

    original = checks.__dict__["answer"]
    checks.__dict__["answer"] = answer
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints what it refused
            checks.handler(event, None, account_settings=lambda: aws.call("lambda", "GetAccountSettings"))
    finally:
        checks.__dict__["answer"] = original
    return sent[-1]


class Deployed:
    """A release deployed with these Parameter values: translated, its Conditions and Rules
    evaluated, its resources resolved."""

    def __init__(self, rel: Release, parameters: dict[str, str] | None = None, label: str = "") -> None:
        self.release = rel
        self.given = {k: str(v) for k, v in (parameters or {}).items()}
        self.label = label or describe(self.given)
        self.values = {**rel.defaults(), **{k: v for k, v in self.given.items() if k in rel.parameters}}
        self.translated = _translated(rel, tuple(sorted(self.values.items())))
        self._base = _Resolver(self, frozenset(), fingerprints=True)
        self.resources = {
            name: r
            for name, r in self.translated["Resources"].items()
            if "Condition" not in r or self._base.condition(r["Condition"])
        }
        self._resolved: dict[tuple[frozenset[str], bool], dict[str, dict[str, Any]]] = {}

    def condition(self, name: str) -> bool:
        return self._base.condition(name)

    def value(self, node: Any) -> Any:
        return self._base.value(node)

    @functools.cached_property
    def invalid(self) -> list[str]:
        """Values CloudFormation refuses before anything happens (AllowedValues, patterns, bounds)."""
        out = []
        for name, value in self.given.items():
            spec = self.release.parameters.get(name)
            if spec is None:
                out.append(f"{name}: no such Parameter")
                continue
            problem = _invalid(spec, value)
            if problem:
                out.append(f"{name}={value!r}: {problem}")
        return out

    @functools.cached_property
    def refusals(self) -> list[str]:
        """The template's Rules that refuse these values (their AssertDescription)."""
        out = []
        for name, rule in self.translated.get("Rules", {}).items():
            condition = rule.get("RuleCondition")
            if condition is not None and not self.value(condition):
                continue
            for assertion in rule.get("Assertions", []):
                if not self.value(assertion["Assert"]):
                    out.append(f"{name}: {assertion.get('AssertDescription', 'refused')}")
        return out

    def resolved(self, renamed: frozenset[str] = frozenset(), fingerprints: bool = True) -> dict[str, Any]:
        """Each active resource as CloudFormation resolves it; those in ``renamed`` (replaced by
        the deploy) have a new physical id. Without ``fingerprints``, a configuration fingerprint
        reads as one placeholder (what changes apart from it)."""
        key = (renamed, fingerprints)
        if key not in self._resolved:
            resolver = _Resolver(self, renamed, fingerprints=fingerprints)
            self._resolved[key] = {
                name: {
                    "Type": r["Type"],
                    "Properties": resolver.value(r.get("Properties", {})),
                    "DeletionPolicy": r.get("DeletionPolicy", "Delete"),
                    "UpdateReplacePolicy": r.get("UpdateReplacePolicy", "Delete"),
                }
                for name, r in self.resources.items()
            }
        return self._resolved[key]

    def physical(self, name: str, attribute: str | None = None, renamed: frozenset[str] = frozenset()) -> Any:
        return _Resolver(self, renamed, fingerprints=True).resource(name, attribute)

    def custom_answer(self, name: str, props: dict[str, Any]) -> dict[str, Any]:
        """What this release's deploy checks answer for custom resource ``name`` created with
        ``props`` (resolved)."""
        checks = self.release.checks
        if checks is None:
            return {"Status": "SUCCESS", "Data": {}}
        key = json.dumps([self.release.label, name, props], sort_keys=True, default=str)
        if key not in _ANSWERS:
            _ANSWERS[key] = invoke_checks(
                checks,
                {
                    "RequestType": "Create",
                    "LogicalResourceId": name,
                    "ResourceType": self.resources[name]["Type"],
                    "ResourceProperties": props,
                },
            )
        return _ANSWERS[key]

    def references(self, name: str) -> set[str]:
        """The resources ``name`` waits for: DependsOn, and every Ref / GetAtt / ${} of its taken
        branches (CloudFormation orders creation by them)."""
        resource = self.resources[name]
        depends = resource.get("DependsOn", [])
        found = set([depends] if isinstance(depends, str) else depends)
        found |= self._base.referenced(resource.get("Properties", {}))
        return found & set(self.resources)

    @functools.cached_property
    def graph(self) -> dict[str, set[str]]:
        return {name: self.references(name) for name in self.resources}

    def ancestors(self, name: str) -> set[str]:
        seen: set[str] = set()
        todo = list(self.graph[name])
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(self.graph[current])
        return seen

    def descendants(self, name: str) -> set[str]:
        return {other for other in self.resources if name in self.ancestors(other)}


_ANSWERS: dict[str, dict[str, Any]] = {}


def _invalid(spec: dict[str, Any], value: str) -> str | None:
    kind = spec.get("Type", "String")
    if "AllowedValues" in spec and value not in [str(v) for v in spec["AllowedValues"]]:
        return f"not one of {spec['AllowedValues']}"
    if kind == "Number":
        try:
            number = float(value)
        except ValueError:
            return "not a number"
        if "MinValue" in spec and number < float(spec["MinValue"]):
            return f"below {spec['MinValue']}"
        if "MaxValue" in spec and number > float(spec["MaxValue"]):
            return f"above {spec['MaxValue']}"
    pattern = spec.get("AllowedPattern")
    if pattern is not None and kind == "String" and re.fullmatch(pattern, value) is None:
        return f"does not match {pattern}"
    if "MaxLength" in spec and len(value) > int(spec["MaxLength"]):
        return "too long"
    if "MinLength" in spec and len(value) < int(spec["MinLength"]):
        return "too short"
    return None


class _Resolver(Evaluator):
    """CloudFormation's intrinsics with physical ids: a resource's Ref and attributes look like
    what AWS returns (ARNs where IAM needs them), a custom resource's attributes are what its
    handler answers, and a resource replaced by the deploy gets a new id."""

    def __init__(self, deployed: Deployed, renamed: frozenset[str], *, fingerprints: bool) -> None:
        self.deployed = deployed
        self.renamed = renamed
        self.fingerprints = fingerprints
        super().__init__(deployed.translated, deployed.values, resource=self._physical)
        self._memo: dict[tuple[str, str | None], Any] = {}

    # Rules' functions (cfn_eval has the rest).
    def _Fn_Contains(self, args: Any) -> bool:
        items, item = (self.value(a) for a in args)
        return item in (items if isinstance(items, list) else [items])

    def _Fn_EachMemberEquals(self, args: Any) -> bool:
        items, item = (self.value(a) for a in args)
        return all(str(i) == str(item) for i in (items if isinstance(items, list) else [items]))

    def _Fn_EachMemberIn(self, args: Any) -> bool:
        items, allowed = (self.value(a) for a in args)
        return all(i in allowed for i in (items if isinstance(items, list) else [items]))

    def _Fn_FindInMap(self, args: Any) -> Any:
        name, top, second = (self.value(a) for a in args)
        return self.template["Mappings"][name][top][second]

    def _Fn_ToJsonString(self, args: Any) -> str:
        return json.dumps(self.value(args), separators=(",", ":"))

    def referenced(self, node: Any) -> set[str]:
        """Logical ids ``node`` refers to, in the branches its conditions take."""
        found: set[str] = set()
        if isinstance(node, list):
            for item in node:
                found |= self.referenced(item)
        elif isinstance(node, dict):
            if len(node) == 1:
                ((fn, args),) = node.items()
                if fn == "Ref" and isinstance(args, str):
                    return {args}
                if fn == "Fn::GetAtt":
                    return {args.split(".", 1)[0] if isinstance(args, str) else args[0]}
                if fn == "Fn::If":
                    return self.referenced(args[1] if self.condition(args[0]) else args[2])
                if fn == "Fn::Sub":
                    text, variables = (args, {}) if isinstance(args, str) else (args[0], args[1])
                    names = {m.split(".", 1)[0] for m in re.findall(r"\$\{([^}!][^}]*)\}", text)}
                    return (names - set(variables)) | self.referenced(variables)
            for value in node.values():
                found |= self.referenced(value)
        return found

    def _physical(self, name: str, attribute: str | None) -> Any:
        key = (name, attribute)
        if key not in self._memo:
            self._memo[key] = self._compute(name, attribute)
        return self._memo[key]

    def _compute(self, name: str, attribute: str | None) -> Any:
        resources = self.deployed.resources
        if name not in resources:
            return f"<not in this stack: {name}>"
        resource = resources[name]
        kind = resource["Type"]
        tag = f"{name}-new" if name in self.renamed else name
        props = resource.get("Properties", {})
        arn = f"arn:aws:{{}}:{REGION}:{ACCOUNT}:{{}}"
        if kind.startswith("Custom::") and attribute is not None:
            if attribute == "Fingerprint" and not self.fingerprints:
                return "<fingerprint>"
            answer = self.deployed.custom_answer(name, self.value(props))
            return answer.get("Data", {}).get(attribute, f"<{tag}.{attribute}>")
        if kind == "AWS::Lambda::Function":
            function_arn = arn.format("lambda", f"function:{tag}")
            return {None: tag, "Arn": function_arn}.get(attribute, f"<{tag}.{attribute}>")
        if kind == "AWS::Lambda::Version":
            function = self.value(props["FunctionName"])
            version_arn = arn.format("lambda", f"function:{function}:{tag}")
            return {None: version_arn, "Version": tag}.get(attribute, f"<{tag}.{attribute}>")
        if kind == "AWS::Lambda::Alias":
            function = self.value(props["FunctionName"])
            return arn.format("lambda", f"function:{function}:{props['Name']}")
        if kind == "AWS::Lambda::LayerVersion":
            return arn.format("lambda", f"layer:{tag}:1")
        if kind == "AWS::DynamoDB::Table":
            return {None: tag, "Arn": arn.format("dynamodb", f"table/{tag}")}.get(
                attribute, f"<{tag}.{attribute}>"
            )
        if kind == "AWS::StepFunctions::StateMachine":
            # Without a name CloudFormation makes one from the logical id and a random suffix.
            machine = (
                str(self.value(props["StateMachineName"])) if "StateMachineName" in props else f"{tag}-Ab12"
            )
            machine_arn = arn.format("states", f"stateMachine:{machine}")
            MACHINES.setdefault(
                machine_arn, {"aws:cloudformation:stack-id": STACK_ID, "aws:cloudformation:logical-id": name}
            )
            return {None: machine_arn, "Arn": machine_arn, "Name": machine}.get(
                attribute, f"<{tag}.{attribute}>"
            )
        if kind == "AWS::S3::Bucket":
            bucket = tag.lower()
            return {None: bucket, "Arn": f"arn:aws:s3:::{bucket}"}.get(attribute, f"<{tag}.{attribute}>")
        if kind == "AWS::IAM::Role":
            return {None: tag, "Arn": f"arn:aws:iam::{ACCOUNT}:role/{tag}"}.get(
                attribute, f"<{tag}.{attribute}>"
            )
        if kind == "AWS::IAM::ManagedPolicy":
            return f"arn:aws:iam::{ACCOUNT}:policy/{tag}"
        if kind == "AWS::SecretsManager::Secret":
            return arn.format("secretsmanager", f"secret:{tag}-AbCdEf")
        if kind == "AWS::Logs::LogGroup":
            group = str(self.value(props["LogGroupName"])) if "LogGroupName" in props else tag
            return {None: group, "Arn": arn.format("logs", f"log-group:{group}:*")}.get(attribute)
        if kind == "AWS::Cognito::UserPool":
            pool = f"{REGION}_{tag}"
            return {
                None: pool,
                "Arn": arn.format("cognito-idp", f"userpool/{pool}"),
                "ProviderURL": f"https://cognito-idp.{REGION}.amazonaws.com/{pool}",
            }.get(attribute, f"<{tag}.{attribute}>")
        return f"<{tag}>" if attribute is None else f"<{tag}.{attribute}>"


def describe(parameters: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(parameters.items())) or "defaults"


# ---------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Finding:
    kind: str
    where: str
    message: str
    case: str = ""

    def __str__(self) -> str:
        return f"[{self.kind}] {self.case}: {self.where}: {self.message}"


# What each kind of finding is, in the review's words (N1-N4 were found this way).
KINDS = {
    "publish-fails": "N1: a new version is created with nothing to publish ('A version for this Lambda function exists')",
    "needless-version": "a new version (and snapshot) is published though nothing Lambda snapshots changed",
    "stale-alias": "a configuration change publishes no version: the live alias keeps the old one",
    "create-rollback-fails": "N2: a failed first create cannot delete a deletion-protected resource (ROLLBACK_FAILED)",
    "update-rollback-fails": "a failed update cannot delete the deletion-protected resource it created (UPDATE_ROLLBACK_FAILED)",
    "left-behind": "a failed first create leaves a resource behind (retained, nothing deletes it)",
    "not-redeployed": "N3: a REST API's methods change but no new Deployment: the stage keeps the old ones",
    "sign-in-lost": "N4: an upgrade takes away a way people or agents sign in",
    "replaced": "a resource holding state is replaced",
    "removed": "a resource holding state is deleted",
    "tasks-lost": "running tasks can no longer be reached, answered, stopped or swept",
    "rollback-refused": "an update's rollback sends a custom resource its old properties, which it refuses",
    "no-service-timeout": "a custom resource waits an hour for a lost answer (ServiceTimeout unset)",
    "refused-silently": "an upgrade is refused without saying what to set",
    "value-lost": "an upgrade drops a value a removed Parameter gave the functions, saying nothing",
    "cold-start-fails": "a configuration deploys but its functions cannot start (Settings refuses it)",
    "wake-ups-lost": "a change of a task made during the deploy wakes nobody (the stream or its reader replaced)",
}


def _statements(deployed: Deployed, resolved: dict[str, Any], role: str) -> list[dict[str, Any]]:
    """Every statement in the policies attached to ``role`` (inline, the template's managed
    policies and AWS::IAM::Policy resources naming it)."""
    out: list[dict[str, Any]] = []
    props = resolved[role]["Properties"]
    for policy in props.get("Policies", []):
        out.extend(_listed(policy["PolicyDocument"]["Statement"]))
    managed = set(props.get("ManagedPolicyArns", []))
    role_name = deployed.physical(role)
    for name, r in resolved.items():
        if r["Type"] == "AWS::IAM::ManagedPolicy" and deployed.physical(name) in managed:
            out.extend(_listed(r["Properties"]["PolicyDocument"]["Statement"]))
        if r["Type"] in ("AWS::IAM::Policy", "AWS::IAM::RolePolicy") and role_name in (
            [*r["Properties"].get("Roles", []), r["Properties"].get("RoleName")]
        ):
            out.extend(_listed(r["Properties"]["PolicyDocument"]["Statement"]))
    return out


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allows(statements: Iterable[dict[str, Any]], action: str, resource: str) -> bool:
    """Whether an Allow statement grants ``action`` on ``resource`` (conditions aside)."""
    for s in statements:
        if s.get("Effect") != "Allow":
            continue
        actions = [a.lower() for a in _listed(s.get("Action", []))]
        if not any(fnmatch.fnmatchcase(action.lower(), a) for a in actions):
            continue
        if any(fnmatch.fnmatchcase(resource, str(r)) for r in _listed(s.get("Resource", []))):
            return True
    return False


def _role_of(resolved: dict[str, Any], function: str) -> str | None:
    role = resolved[function]["Properties"].get("Role", "")
    match = re.fullmatch(rf"arn:aws:iam::{ACCOUNT}:role/(.+)", str(role))
    if not match:
        return None
    name = match[1].removesuffix("-new")
    return name if name in resolved else None


def _versions(deployed: Deployed) -> dict[str, str]:
    out = {}
    for name, r in deployed.resources.items():
        if r["Type"] == "AWS::Lambda::Version":
            out[r["Properties"]["FunctionName"]["Ref"]] = name
    return out


def _snapshot(resolved: dict[str, Any], function: str) -> dict[str, Any]:
    props = resolved[function]["Properties"]
    return {k: v for k, v in props.items() if k not in NOT_SNAPSHOTTED}


def _changed_keys(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
                out.extend(f"{key}.{k}" for k in _changed_keys(a[key], b[key]))
            else:
                out.append(key)
    return out


class Transition:
    """A deploy of ``after`` over a stack deployed as ``before`` (an update; ``before`` is None
    for a first create)."""

    def __init__(self, before: Deployed, after: Deployed, case: str = "") -> None:
        self.before, self.after = before, after
        self.case = case or f"{before.label} -> {after.label}"
        self.renamed = self._replaced()
        self.a = before.resolved()
        self.b = after.resolved(self.renamed)

    def _replaced(self) -> frozenset[str]:
        renamed: frozenset[str] = frozenset()
        a = self.before.resolved()
        while True:
            b = self.after.resolved(renamed)
            new = set()
            for name in set(a) & set(b):
                if name in renamed:
                    continue
                if a[name]["Type"] != b[name]["Type"] or any(
                    _at(a[name]["Properties"], p) != _at(b[name]["Properties"], p)
                    for p in _create_only(b[name]["Type"])
                ):
                    new.add(name)
            if not new:
                return renamed
            renamed = renamed | new

    def finding(self, kind: str, where: str, message: str) -> Finding:
        return Finding(kind, where, message, self.case)

    def check(self) -> list[Finding]:
        return [
            *self.versions(),
            *self.replacements(),
            *self.redeploys(),
            *self.custom_resources(),
            *self.tasks(),
            *self.wake_ups(),
        ]

    # -- PublishVersion's rule
    def versions(self) -> Iterator[Finding]:
        before, after = _versions(self.before), _versions(self.after)
        a_plain = self.before.resolved(fingerprints=False)
        b_plain = self.after.resolved(self.renamed, fingerprints=False)
        for function, version in after.items():
            if function not in self.a or function in self.renamed or function not in before:
                continue  # a new function: its first version always publishes
            created = version != before[function] or version in self.renamed
            real = _changed_keys(_snapshot(a_plain, function), _snapshot(b_plain, function))
            with_fingerprint = _changed_keys(_snapshot(self.a, function), _snapshot(self.b, function))
            if created and not real:
                if with_fingerprint:
                    yield self.finding(
                        "needless-version",
                        function,
                        "a new version is published, though only its configuration fingerprint changed",
                    )
                else:
                    why = _changed_keys(self.a[before[function]]["Properties"], self.b[version]["Properties"])
                    yield self.finding(
                        "publish-fails",
                        function,
                        f"{version} is a new version ({', '.join(why) or 'new logical id'} changed) but nothing "
                        "Lambda snapshots changed: PublishVersion publishes nothing and the deploy fails",
                    )
            elif real and not created:
                yield self.finding(
                    "stale-alias",
                    function,
                    f"{', '.join(real)} changed but no version is published: the live alias keeps the old one",
                )

    # -- createOnlyProperties, and what a failed update's rollback deletes
    def replacements(self) -> Iterator[Finding]:
        for name in sorted(set(self.b) - set(self.a)):
            policy = str(self.b[name]["DeletionPolicy"])
            if _protected(self.b[name]) and (
                not policy.startswith("Retain") or policy == "RetainExceptOnCreate"
            ):
                yield self.finding(
                    "update-rollback-fails",
                    name,
                    f"created deletion-protected by this update with DeletionPolicy {policy}: its rollback cannot delete it",
                )
        for name in sorted(self.renamed):
            kind = self.b[name]["Type"]
            if kind not in STATEFUL or kind == "AWS::StepFunctions::StateMachine":
                continue  # a machine's replacement is judged by what its tasks need (tasks())
            which = [
                p
                for p in _create_only(kind)
                if _at(self.a[name]["Properties"], p) != _at(self.b[name]["Properties"], p)
            ]
            yield self.finding("replaced", name, f"{kind} replaced ({', '.join(which) or 'type'} changed)")
        for name in sorted(set(self.a) - set(self.b)):
            r = self.a[name]
            if r["Type"] in ("AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::Cognito::UserPool") and not str(
                r["DeletionPolicy"]
            ).startswith("Retain"):
                yield self.finding("removed", name, f"{r['Type']} deleted with the stack's update")

    # -- a REST API stage serves its deployment
    def redeploys(self) -> Iterator[Finding]:
        for api, r in self.b.items():
            if r["Type"] != "AWS::ApiGateway::RestApi" or api not in self.a or api in self.renamed:
                continue
            token = self.after.physical(api, renamed=self.renamed)
            changed = _changed_keys(_rest_definition(self.a, token), _rest_definition(self.b, token))
            if not changed:
                continue
            new = {
                self.after.physical(n, renamed=self.renamed)
                for n, x in self.b.items()
                if x["Type"] == "AWS::ApiGateway::Deployment" and (n not in self.a or n in self.renamed)
            }
            for stage, s in self.b.items():
                props = s["Properties"]
                if (
                    s["Type"] == "AWS::ApiGateway::Stage"
                    and props.get("RestApiId") == token
                    and props.get("DeploymentId") not in new
                ):
                    yield self.finding(
                        "not-redeployed",
                        stage,
                        f"{', '.join(changed)} changed, but no new AWS::ApiGateway::Deployment: the stage "
                        "keeps serving the methods it had",
                    )

    # -- an update, then its rollback, as the custom resources see them
    def custom_resources(self) -> Iterator[Finding]:
        checks = self.after.release.checks
        if checks is None or self.before.release is not self.after.release:
            return
        for name, r in self.b.items():
            if not r["Type"].startswith("Custom::") or name not in self.a:
                continue
            old, new = self.a[name]["Properties"], r["Properties"]
            if old == new:
                continue
            forward = invoke_checks(checks, _update(name, r["Type"], new, old))
            if forward["Status"] != "SUCCESS":
                continue  # the deploy is refused there, with its reason: nothing to roll back
            back = invoke_checks(checks, _update(name, r["Type"], old, new, "UPDATE_ROLLBACK_IN_PROGRESS"))
            if back["Status"] != "SUCCESS":
                yield self.finding("rollback-refused", name, back.get("Reason", ""))

    # -- tasks started before the deploy
    def tasks(self) -> Iterator[Finding]:
        machine = next(
            (n for n, r in self.a.items() if r["Type"] == "AWS::StepFunctions::StateMachine" and "Task" in n),
            None,
        )
        table = next((n for n, r in self.a.items() if r["Type"] == "AWS::DynamoDB::Table"), None)
        if table and (table in self.renamed or table not in self.b):
            yield self.finding("tasks-lost", table, "the task table is replaced or removed")
        if machine is None or machine not in self.b:
            return
        old_machine = self.before.physical(machine, "Name")
        executions = f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{old_machine}:a-task"
        if machine in self.renamed:
            if not str(self.b[machine]["UpdateReplacePolicy"]).startswith("Retain"):
                yield self.finding(
                    "tasks-lost", machine, "the state machine is replaced and deleted with its executions"
                )
            for function, actions in (
                ("ApiFunction", ("states:StopExecution",)),
                ("SweeperFunction", ("states:DescribeExecution", "states:StopExecution")),
            ):
                role = _role_of(self.b, function) if function in self.b else None
                if role is None:
                    continue
                statements = _statements(self.after, self.b, role)
                for action in actions:
                    if not allows(statements, action, executions):
                        yield self.finding(
                            "tasks-lost",
                            function,
                            f"may not {action} the replaced machine's executions ({old_machine})",
                        )
        # The executions running before the deploy keep their definition: the worker version
        # it pinned, invoked with the machine's role (the same role resource, updated in place).
        pinned = _pinned_worker(self.a[machine])
        if pinned and machine in self.b:
            role = _machine_role(self.b[machine])
            if role and role in self.b:
                statements = _statements(self.after, self.b, role)
                if not allows(statements, "lambda:InvokeFunction", pinned):
                    yield self.finding("tasks-lost", role, f"the machine may no longer invoke {pinned}")
            version = next(
                (
                    n
                    for n, r in self.a.items()
                    if r["Type"] == "AWS::Lambda::Version" and self.before.physical(n) == pinned
                ),
                None,
            )
            if (
                version
                and version not in self.b
                and not str(self.a[version]["DeletionPolicy"]).startswith("Retain")
            ):
                yield self.finding("tasks-lost", version, "the version parked tasks run is deleted")

    # -- the table's change stream and what reads it (issue 30)
    def wake_ups(self) -> Iterator[Finding]:
        """A task's change made while the deploy runs still wakes its agent: the table's stream
        keeps its view type (CloudFormation cannot change an enabled stream's in one update,
        and the events are the change between the two images), and the mapping that reads it
        is updated in place, never replaced (a new one starts at LATEST: what was written
        between the old one's last read and the new one's first is never read)."""
        for name, r in self.b.items():
            if r["Type"] == "AWS::DynamoDB::Table" and name in self.a and name not in self.renamed:
                old = _at(self.a[name]["Properties"], "StreamSpecification/StreamViewType")
                new = _at(r["Properties"], "StreamSpecification/StreamViewType")
                if old is not None and new is not None and old != new:
                    yield self.finding(
                        "wake-ups-lost",
                        name,
                        f"the stream's view type changes ({old} -> {new}): the update fails",
                    )
                elif old is not None and new is None:
                    yield self.finding("wake-ups-lost", name, "the table's stream is turned off")
            if r["Type"] == "AWS::Lambda::EventSourceMapping" and name in self.a and name in self.renamed:
                changed = [
                    p
                    for p in _create_only(r["Type"])
                    if _at(self.a[name]["Properties"], p) != _at(r["Properties"], p)
                ]
                yield self.finding(
                    "wake-ups-lost",
                    name,
                    f"the mapping is replaced ({', '.join(changed) or 'type'} changed): the new one starts "
                    "at LATEST, and changes written meanwhile are never read",
                )


def _update(
    name: str, kind: str, props: dict[str, Any], old: dict[str, Any], status: str = "UPDATE_IN_PROGRESS"
) -> dict[str, Any]:
    return {
        "RequestType": "Update",
        "LogicalResourceId": name,
        "PhysicalResourceId": name,
        "ResourceType": kind,
        "ResourceProperties": props,
        "OldResourceProperties": old,
    }


def _rest_definition(resolved: dict[str, Any], api: Any) -> dict[str, Any]:
    """What a deployment of REST API ``api`` captures: its methods, resources, authorizers..."""
    return {
        n: x["Properties"]
        for n, x in resolved.items()
        if x["Type"] in REST_DEFINITION and x["Properties"].get("RestApiId") == api
    }


def _pinned_worker(machine: dict[str, Any]) -> str | None:
    substitutions = machine["Properties"].get("DefinitionSubstitutions", {})
    value = substitutions.get("WorkerFunctionArn")
    return str(value) if value else None


def _machine_role(machine: dict[str, Any]) -> str | None:
    role = str(machine["Properties"].get("RoleArn", ""))
    match = re.fullmatch(rf"arn:aws:iam::{ACCOUNT}:role/(.+)", role)
    return match[1].removesuffix("-new") if match else None


# ---------------------------------------------------------------------------- a first create


def create_rollback(deployed: Deployed, case: str = "") -> list[Finding]:
    """A failed first create rolls back by deleting what it created. A deletion-protected
    resource cannot be deleted (ROLLBACK_FAILED) unless the rollback leaves it (DeletionPolicy
    Retain); one it leaves must be deleted by a guard (a custom resource whose Delete, in that
    rollback, deletes it), or a failed first deploy leaves it behind."""
    resolved = deployed.resolved()
    protected = {name: r for name, r in resolved.items() if _protected(r)}
    if not protected:
        return []
    guards = _guards(deployed, resolved, protected)
    findings = []
    for name in sorted(protected):
        policy = str(resolved[name]["DeletionPolicy"])
        if not policy.startswith("Retain") or policy == "RetainExceptOnCreate":
            findings.append(
                Finding(
                    "create-rollback-fails",
                    name,
                    f"{resolved[name]['Type']} is deletion-protected from its creation and "
                    f"DeletionPolicy {policy}: a failed first create's rollback cannot delete it",
                    case or deployed.label,
                )
            )
        elif name not in guards:
            findings.append(
                Finding(
                    "left-behind",
                    name,
                    "a failed first create leaves it (nothing deletes it)",
                    case or deployed.label,
                )
            )
    return findings


def _protected(resource: dict[str, Any]) -> bool:
    props = resource["Properties"]
    if resource["Type"] == "AWS::DynamoDB::Table":
        return str(props.get("DeletionProtectionEnabled", "false")).lower() == "true"
    if resource["Type"] == "AWS::Cognito::UserPool":
        return props.get("DeletionProtection") == "ACTIVE"
    return False


def _guards(deployed: Deployed, resolved: dict[str, Any], protected: dict[str, Any]) -> dict[str, str]:
    """Protected resource -> the custom resource whose Delete, in a failed first create's
    rollback, deletes it (found by running the handler and watching its calls)."""
    checks = deployed.release.checks
    if checks is None:
        return {}
    out: dict[str, str] = {}
    for name, r in resolved.items():
        if not r["Type"].startswith("Custom::"):
            continue
        aws = RehearsalAws(stack_status="ROLLBACK_IN_PROGRESS")
        answer = invoke_checks(
            checks,
            {
                "RequestType": "Delete",
                "LogicalResourceId": name,
                "PhysicalResourceId": name,
                "ResourceType": r["Type"],
                "ResourceProperties": r["Properties"],
            },
            aws,
        )
        if answer["Status"] != "SUCCESS":
            continue
        for call in aws.calls:
            for target in protected:
                physical = deployed.physical(target)
                if (
                    (call.service, call.operation) == ("dynamodb", "DeleteTable")
                    and call.params.get("TableName") == physical
                ) or (
                    (call.service, call.operation) == ("cognito-idp", "DeleteUserPool")
                    and call.params.get("UserPoolId") == physical
                ):
                    out[target] = name
    return out


# ---------------------------------------------------------------------------- sign-in, before and after


def sign_in(deployed: Deployed) -> dict[str, Any]:
    """Who can sign in, as the resolved stack says: each pool client's callback URLs, scopes and
    flows, and for each function checking tokens, the kinds of caller it accepts and the
    client ids, audiences and scopes it requires."""
    resolved = deployed.resolved()
    clients = {
        name: {
            "callbacks": set(r["Properties"].get("CallbackURLs", [])),
            "scopes": set(r["Properties"].get("AllowedOAuthScopes", [])),
            "flows": set(r["Properties"].get("AllowedOAuthFlows", [])),
        }
        for name, r in resolved.items()
        if r["Type"] == "AWS::Cognito::UserPoolClient"
    }
    functions = {}
    for name, r in resolved.items():
        env = (
            r["Properties"].get("Environment", {}).get("Variables", {})
            if r["Type"] == "AWS::Lambda::Function"
            else {}
        )
        if "AUTH_MODE" not in env:
            continue
        kinds = {k.strip().upper() for k in str(env["AUTH_MODE"]).split(",") if k.strip()} - {"NONE"}
        kinds = {"CLIENT" if k == "JWT" else k for k in kinds}
        tokens = "CLIENT" in kinds

        def listed(variable: str, env: dict[str, Any] = env) -> set[str]:
            return {v.strip() for v in str(env.get(variable, "")).split(",") if v.strip()}

        functions[name] = {
            "kinds": kinds,
            "client ids": listed("OAUTH_CLIENT_IDS") if tokens else set(),
            "audiences": listed("OAUTH_AUDIENCES") if tokens else set(),
            "scopes": listed("OAUTH_SCOPES"),
            "issuer": env.get("OAUTH_ISSUER", ""),
        }
    return {"clients": clients, "functions": functions}


def sign_in_lost(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What ``after`` no longer allows that ``before`` did."""
    lost = []
    for name, client in before["clients"].items():
        now = after["clients"].get(name)
        if now is None:
            lost.append(f"pool client {name} is gone")
            continue
        for key in ("callbacks", "scopes", "flows"):
            missing = client[key] - now[key]
            if missing:
                lost.append(f"{name} loses {key} {sorted(missing)}")
    for name, function in before["functions"].items():
        now = after["functions"].get(name)
        if now is None:
            continue
        if function["kinds"] - now["kinds"]:
            lost.append(f"{name} no longer accepts {sorted(function['kinds'] - now['kinds'])}")
        for key in ("client ids", "audiences"):
            missing = function[key] - now[key]
            if missing:
                lost.append(f"{name} no longer accepts {key} {sorted(missing)}")
        if function["kinds"] & {"CLIENT"} and now["scopes"] - function["scopes"]:
            lost.append(
                f"{name} now requires scopes {sorted(now['scopes'] - function['scopes'])} old tokens lack"
            )
        if function["issuer"] and now["issuer"] and function["issuer"] != now["issuer"]:
            lost.append(f"{name} trusts another issuer ({function['issuer']} -> {now['issuer']})")
    return lost


# ---------------------------------------------------------------------------- upgrades


def sam_deploy_values(
    before: Deployed, after: Release, overrides: dict[str, str] | None = None
) -> dict[str, str]:
    """The values ``sam deploy`` gives the new template over a stack deployed as ``before``: an
    override, else the stack's previous value of a Parameter it already has (UsePreviousValue),
    else the new template's default."""
    values: dict[str, str] = {}
    for name in after.parameters:
        if overrides and name in overrides:
            values[name] = overrides[name]
        elif name in before.values:
            values[name] = before.values[name]
    return values


SUGGESTION = re.compile(r"\b([A-Z][A-Za-z0-9]+)=('[^']*'|\"[^\"]*\"|[^\s,;)]*)")


def suggested(refusals: list[str]) -> dict[str, str]:
    """The Parameter values a refusal tells the deployer to set (Name=value, quoted when empty)."""
    out = {}
    for message in refusals:
        for name, value in SUGGESTION.findall(message.split(":", 1)[-1]):
            out[name] = value.strip("'\"")
    return out


def make_deploy_values(before: Deployed, after: Release) -> dict[str, str]:
    """The overrides ``make deploy`` (scripts/deploy.py) saves before deploying ``after`` over a
    stack deployed as ``before``: the values of Parameters ``after`` no longer has, carried into
    their new homes (taskgate/former_parameters.py, as this checkout has it)."""
    from taskgate.former_parameters import FORMER, carry

    leaving = {n: v for n, v in before.values.items() if n in FORMER and n not in after.parameters}
    carried = carry(
        leaving,
        tuning=before.values.get("Tuning", ""),
        job_arns=before.values.get("JobArns", ""),
    )
    assert not carried.refused, carried.refused
    return carried.overrides


def configuration_refusals(before: Deployed, after: Deployed) -> list[str]:
    """What the new release's configuration custom resources answer, run as an upgrade runs them:
    a Create (or an Update of the old one's properties) while the functions still run with
    ``before``'s environment."""
    checks = after.release.checks
    if checks is None:
        return []
    old, new = before.resolved(), after.resolved()
    functions = {
        name: {k: str(v) for k, v in r["Properties"].get("Environment", {}).get("Variables", {}).items()}
        for name, r in old.items()
        if r["Type"] == "AWS::Lambda::Function"
    }
    out = []
    for name, r in new.items():
        if r["Type"] != "Custom::Configuration":
            continue
        if name in old:
            event = _update(name, r["Type"], r["Properties"], old[name]["Properties"])
        else:
            event = {
                "RequestType": "Create",
                "LogicalResourceId": name,
                "ResourceType": r["Type"],
                "ResourceProperties": r["Properties"],
            }
        answer = invoke_checks(checks, event, RehearsalAws(functions=functions))
        if answer["Status"] != "SUCCESS":
            out.append(f"{name}: {answer.get('Reason', '')}")
    return out


def values_lost(before: Deployed, after: Deployed) -> list[str]:
    """Each value a Parameter ``after`` no longer has gave ``before``'s functions (not its
    default) that ``after``'s functions do not run with: CloudFormation forgot it, and nothing said so."""
    from taskgate.former_parameters import FORMER, TUNING, is_default, pairs, variable

    lost = []
    old, new = _environment(before), _environment(after)
    for name, former in FORMER.items():
        if former.home != TUNING or name in after.release.parameters or name not in before.values:
            continue
        if is_default(name, before.values[name]):
            continue
        for key, value in old.items():
            function, var = key.split(".", 1)
            if var != variable(name) or (f"{function}.TUNING" not in new and f"{function}.{var}" not in new):
                continue
            now = new.get(f"{function}.{var}") or pairs(str(new.get(f"{function}.TUNING", ""))).get(name)
            if str(now) != str(value):
                lost.append(f"{function} ran with {name} {value}; now {now or 'the default'}")
    return lost


def former_values(previous: Release, current: Release) -> dict[str, str]:
    """A value other than the default for each Parameter ``previous`` has and ``current`` keeps
    only as a Tuning key, as many together as a Tuning takes (each at a boundary or a sample)."""
    from taskgate.config import parse_tuning
    from taskgate.former_parameters import FORMER, TUNING
    from taskgate.tuning import TuningError

    chosen: dict[str, str] = {}
    for name in previous.parameters:
        if name in current.parameters or FORMER.get(name, None) is None or FORMER[name].home != TUNING:
            continue
        for value in values_of(previous, name):
            trial = {**chosen, name: value}
            try:
                parse_tuning(" ".join(f"{k}={v}" for k, v in trial.items()))
            except TuningError:
                continue
            chosen = trial
            break
    return chosen


def upgrade(
    previous: Release,
    current: Release,
    parameters: dict[str, str] | None = None,
    case: str = "",
    *,
    make_deploy: bool = False,
) -> tuple[list[Finding], list[str]]:
    """An upgrade of a stack deployed from ``previous`` with ``parameters`` (its defaults) to
    ``current`` with ``sam deploy`` (or ``make deploy``, which first carries the values of
    Parameters ``current`` no longer has): refused with a message that says what to set (then
    deployed as told), or deployed; then people and agents must still sign in, tasks run, and
    every value the deployer chose still reach the functions."""
    old = Deployed(previous, parameters or {}, label=f"{previous.label}")
    how = "make deploy" if make_deploy else "sam deploy"
    case = case or f"upgrade {previous.label} ({old.label}) -> {current.label} ({how})"
    told = make_deploy_values(old, current) if make_deploy else {}
    new = Deployed(current, sam_deploy_values(old, current, told), label=current.label)
    notes = []
    if told:
        notes.append(f"make deploy carried: {describe(told)}")
    for _ in range(2):  # the template's Rules, then the deploy checks: each says what to set
        refusals = new.invalid + new.refusals or configuration_refusals(old, new)
        if not refusals:
            break
        notes.append(f"refused: {'; '.join(refusals)}")
        more = suggested(refusals)
        if not more:
            return [Finding("refused-silently", "Rules", "; ".join(refusals), case)], notes
        told = {**told, **more}
        new = Deployed(current, sam_deploy_values(old, current, told), label=f"{current.label} as told")
        notes.append(f"deployed as told: {describe(more)}")
    refusals = new.invalid + new.refusals or configuration_refusals(old, new)
    if refusals:
        return [Finding("refused-silently", "Rules", "; ".join(refusals), case)], notes
    findings = Transition(old, new, case).check()
    for lost in sign_in_lost(sign_in(old), sign_in(new)):
        findings.append(Finding("sign-in-lost", "sign-in", lost, case))
    for lost in values_lost(old, new):
        findings.append(Finding("value-lost", "Tuning", lost, case))
    return findings, notes


# ---------------------------------------------------------------------------- the cases


def values_of(rel: Release, name: str) -> list[str]:
    """Each allowed value of a Parameter, or its boundaries, or values its pattern accepts."""
    spec = rel.parameters[name]
    default = rel.default(name)
    if "AllowedValues" in spec:
        out = [str(v) for v in spec["AllowedValues"]]
    elif spec.get("Type") == "Number":
        out = [str(spec[k]) for k in ("MinValue", "MaxValue") if k in spec]
        if not out:
            out = [str(int(float(default)) + 1)]
    else:
        out = list(SAMPLES.get(name, []))
        if not out:
            out = [default + "x" if "AllowedPattern" not in spec else default]
        if default != "":
            out.append("")
    return [v for v in dict.fromkeys(out) if v != default and not _invalid(spec, v)]


def with_companions(rel: Release, name: str, value: str) -> dict[str, str]:
    out = {name: value}
    if value != rel.default(name):
        for (param, _), extra in COMPANIONS.items():
            if param == name:
                out.update({k: v for k, v in extra.items() if k in rel.parameters})
    return out


def dimensions(rel: Release) -> dict[str, list[dict[str, str]]]:
    """The paired Parameters' non-default settings (AuthMode, or the three sign-in switches
    that replace it, as one dimension)."""
    out: dict[str, list[dict[str, str]]] = {}
    if all(k in rel.parameters for k in SIGN_IN_KINDS):
        defaults = {k: rel.default(k) for k in SIGN_IN_KINDS}
        combos = [
            dict(zip(SIGN_IN_KINDS, c, strict=True)) for c in itertools.product(["true", "false"], repeat=3)
        ]
        out["AuthMode"] = [c for c in combos if c != defaults]
    elif "AuthMode" in rel.parameters:
        out["AuthMode"] = [{"AuthMode": v} for v in values_of(rel, "AuthMode")]
    for name in PAIRED[1:]:
        if name in rel.parameters:
            out[name] = [with_companions(rel, name, v) for v in values_of(rel, name)]
    return out


@dataclass
class Report:
    release: str
    configurations: int = 0
    transitions: int = 0
    cases: int = 0
    refused: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    upgrade_notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    translations: int = 0

    def by_kind(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        for f in self.findings:
            out.setdefault(f.kind, []).append(f)
        return out

    def summary(self) -> str:
        lines = [
            f"rehearsal of {self.release}: {self.cases} (Parameter, value) cases and pairs, "
            f"{self.configurations} configurations translated ({self.translations} samtranslator runs), "
            f"{self.transitions} deploys and rollbacks checked in {self.seconds:.1f} s",
        ]
        for note in self.upgrade_notes:
            lines.append(f"  upgrade: {note}")
        if self.refused:
            lines.append(f"  refused by the template's Rules (not deployed): {len(self.refused)}")
        kinds = self.by_kind()
        if not kinds:
            lines.append("  no findings")
        for kind, found in sorted(kinds.items()):
            lines.append(f"  {len(found):4d} {kind}: {KINDS.get(kind, '')}")
            for f in found[:4]:
                lines.append(f"       {f.case} | {f.where}: {f.message}")
            if len(found) > 4:
                lines.append(f"       ... and {len(found) - 4} more")
        return "\n".join(lines)


def cold_start(deployed: Deployed) -> list[Finding]:
    """A stack that deploys must start: each function's settings, as the template gives them,
    pass Settings' checks (a value the deploy accepted but the functions refuse would fail every
    request). Only this checkout's Settings can tell."""
    from taskgate.config import ConfigurationError, Settings

    out = []
    for name, r in deployed.resolved().items():
        env = (
            r["Properties"].get("Environment", {}).get("Variables", {})
            if r["Type"] == "AWS::Lambda::Function"
            else {}
        )
        if "TASK_TABLE" not in env:
            continue
        try:
            Settings.from_env({k: str(v) for k, v in env.items()})
        except ConfigurationError as error:
            out.append(Finding("cold-start-fails", name, str(error), deployed.label))
    return out


def static_checks(deployed: Deployed) -> list[Finding]:
    out = []
    for name, r in deployed.resources.items():
        if r["Type"].startswith("Custom::") and "ServiceTimeout" not in r.get("Properties", {}):
            out.append(
                Finding(
                    "no-service-timeout", name, "a lost answer holds the deploy for an hour", deployed.label
                )
            )
    return out


def rehearse(
    rel: Release,
    previous: Release | None = None,
    *,
    only: Callable[[str], bool] | None = None,
) -> Report:
    """Every Parameter at each allowed value or boundary, every pair of the paired ones, each
    deployed over the defaults and rolled back, each created (and its create rolled back); and
    the upgrade from ``previous`` with its defaults."""
    started = time.monotonic()
    translations = TRANSLATIONS[0]
    report = Report(rel.label)
    base = Deployed(rel, {}, label="defaults")
    configurations: dict[str, Deployed] = {"defaults": base}
    findings: set[Finding] = set()

    def deployed(values: dict[str, str]) -> Deployed | None:
        key = describe(values)
        if key not in configurations:
            configurations[key] = Deployed(rel, values)
            d = configurations[key]
            if not (d.invalid or d.refusals) and rel.revision is None:
                findings.update(cold_start(d))
        d = configurations[key]
        if d.invalid or d.refusals:
            report.refused.append(f"{key}: {'; '.join(d.invalid + d.refusals)}")
            return None
        return d

    def both_ways(a: Deployed, b: Deployed) -> None:
        report.transitions += 2  # each change, and the deploy that sets the value back
        findings.update(Transition(a, b, f"{a.label} -> {b.label}").check())
        findings.update(Transition(b, a, f"revert {b.label} -> {a.label}").check())

    findings.update(static_checks(base))
    findings.update(create_rollback(base, "first create with the defaults"))
    singles: list[dict[str, str]] = []
    for name in rel.parameters:
        if only and not only(name):
            continue
        for value in values_of(rel, name):
            singles.append(with_companions(rel, name, value))
    pairs: list[tuple[dict[str, str], dict[str, str]]] = []
    dims = dimensions(rel)
    for (p, ps), (q, qs) in itertools.combinations(dims.items(), 2):
        if only and not (only(p) or only(q)):
            continue
        pairs.extend(itertools.product(ps, qs))
    report.cases = len(singles) + len(pairs)
    for values in singles:
        d = deployed(values)
        if d is None:
            continue
        both_ways(base, d)
        findings.update(create_rollback(d, f"first create with {d.label}"))
    for left, right in pairs:
        combined = deployed({**left, **right})
        if combined is None:
            continue
        findings.update(create_rollback(combined, f"first create with {combined.label}"))
        for one in (left, right):
            start = deployed(one)
            if start is not None:
                both_ways(start, combined)
    if previous is not None:
        found, notes = upgrade(previous, rel)
        findings.update(found)
        report.upgrade_notes.extend(notes)
        report.transitions += 1
        # A stack that chose values for Parameters this release no longer has: neither a plain
        # sam deploy nor make deploy may drop them.
        chosen = former_values(previous, rel)
        if chosen:
            for make_deploy in (False, True):
                found, notes = upgrade(previous, rel, chosen, make_deploy=make_deploy)
                findings.update(found)
                how = "make deploy" if make_deploy else "sam deploy"
                report.upgrade_notes.extend(
                    f"with {len(chosen)} removed Parameters set, {how}: {n[:160]}" for n in notes
                )
                report.transitions += 1
    report.findings = sorted(findings, key=lambda f: (f.kind, f.case, f.where))
    report.configurations = len(configurations)
    report.translations = TRANSLATIONS[0] - translations
    report.seconds = time.monotonic() - started
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default=None, help="a git revision (default: this checkout)")
    parser.add_argument("--previous", default=PREVIOUS_RELEASE, help="the release an upgrade starts from")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = rehearse(release(args.release), release(args.previous) if args.previous else None)
    if args.json:
        print(json.dumps({**report.__dict__, "findings": [f.__dict__ for f in report.findings]}, indent=1))
    else:
        print(report.summary())
    return 1 if report.findings else 0


# ---------------------------------------------------------------------------- what Parameters come to mean


def _environment(deployed: Deployed) -> dict[str, Any]:
    """Every function's resolved environment: (function, variable) -> value."""
    out: dict[str, Any] = {}
    for name, r in deployed.resolved().items():
        if r["Type"] == "AWS::Lambda::Function":
            for variable, value in r["Properties"].get("Environment", {}).get("Variables", {}).items():
                out[f"{name}.{variable}"] = value
    return out


# Where a Parameter is read only beside others (your own issuer's values), its meaning is
# compared on a stack that has them.
_OWN_ISSUER = {
    "JwtIssuer": "https://issuer.example.com",
    "JwtSignInClientId": "sign-in-client",
    "JwtClientIds": "client-base",
    "JwtAudience": "api://base",
}
_READ_BESIDE = {
    name: _OWN_ISSUER
    for name in ("JwtAudience", "JwtClientIds", "JwtScopes", "JwtSignInClientId", "JwtSignInClientSecretArn")
}


def _reaches(rel: Release, name: str, value: str, other: str) -> set[str]:
    """The variables (function.VARIABLE) and resources that differ between ``name=other`` and
    ``name=value``, everything else the same."""
    context = {k: v for k, v in _READ_BESIDE.get(name, {}).items() if k in rel.parameters and k != name}
    context.update({k: v for k, v in with_companions(rel, name, value).items() if k != name})
    base, changed = Deployed(rel, {**context, name: other}), Deployed(rel, {**context, name: value})
    if changed.invalid or changed.refusals or base.invalid or base.refusals:
        return set()
    a, b = _environment(base), _environment(changed)
    reached = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
    reached |= {f"resource {n}" for n in set(base.resources) ^ set(changed.resources)}
    return reached


def meaning_changes(previous: Release, current: Release) -> dict[str, str]:
    """{Parameter: how its meaning changed} for each Parameter both releases have whose values
    reach fewer of the settings or resources they reached (the same value, a lesser effect): a
    deployed stack keeps its value through an upgrade, and loses what it did."""
    out: dict[str, str] = {}
    for name in previous.parameters:
        if name not in current.parameters:
            continue
        samples = values_of(previous, name)
        if not samples:
            continue
        value = samples[0]
        if _invalid(current.parameters[name], value):
            out[name] = f"{name}={value} is no longer accepted"
            continue
        others = [
            v for v in [*samples[1:], previous.default(name)] if not _invalid(current.parameters[name], v)
        ]
        if not others:
            continue
        other = others[0]
        before, after = _reaches(previous, name, value, other), _reaches(current, name, value, other)
        lost = sorted(before - after)
        if lost and before:
            out[name] = (
                f"{name} no longer sets {', '.join(lost)} (now: {', '.join(sorted(after)) or 'nothing'})"
            )
    return out


def removed_parameter(name: str, value: str, default: str) -> str:
    """Where the value of a Parameter this release no longer has goes, and what each way of
    deploying does with this stack's ``value``."""
    from taskgate.former_parameters import FORMER, JOB_ARNS, TUNING, home

    if name not in FORMER:
        return f"removed: dropped (this stack's {value!r} is forgotten)"
    out = f"removed: {home(name)}"
    if value == default:
        return out + f"; this stack has the default {value!r}: nothing to carry"
    former = FORMER[name]
    if former.home == TUNING:
        return out + (
            f"; this stack's {value!r}: make deploy carries it into Tuning and saves it; a plain "
            f'sam deploy is refused until Tuning sets it (Tuning="{name}={value}")'
        )
    if former.home == JOB_ARNS:
        return out + (
            f"; this stack's {value!r}: make deploy adds it to JobArns and saves it; a plain sam "
            f"deploy drops it (the jobs' IAM with it): set JobArns to include it"
        )
    return out + f"; this stack's {value!r}: make deploy refuses until run with --drop {name}"


def upgrade_report(
    previous: Release, current: Release, values: dict[str, str] | None = None
) -> list[tuple[str, str]]:
    """(Parameter or topic, what an upgrade from ``previous`` deployed with ``values`` does to it)."""
    old = Deployed(previous, values or {})
    report: list[tuple[str, str]] = []
    for name in previous.parameters:
        if name in current.parameters:
            before, after = previous.default(name), current.default(name)
            if before != after:
                report.append(
                    (
                        name,
                        f"default {before!r} -> {after!r}; a stack deployed before keeps {old.values[name]!r} (sam deploy keeps a Parameter's previous value)",
                    )
                )
            continue
        report.append((name, removed_parameter(name, old.values[name], previous.default(name))))
    for name, what in meaning_changes(previous, current).items():
        report.append((name, what))
    findings, notes = upgrade(previous, current, values)
    for note in notes:
        report.append(("upgrade", note))
    for f in findings:
        report.append(("sign-in" if f.kind == "sign-in-lost" else f.kind, f"{f.where}: {f.message}"))
    return report


if __name__ == "__main__":
    raise SystemExit(main())
