"""The trimmed botocore data (aws_clients.TrimmedLoader) changes nothing but the cold start:
same endpoints, same signed requests, and every operation the adapters call is in it."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import botocore.exceptions
import botocore.session
import pytest
from botocore import xform_name
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

from taskgate.adapters import aws_clients, botocore_trim

ADAPTERS = Path(aws_clients.__file__).parent
CLIENT_ATTR = {"_ddb": "dynamodb", "_sfn": "stepfunctions", "_s3": "s3"}
# Adapters whose client is a factory called as self._client().
FACTORY_CLIENTS = {
    "secrets.py": "secretsmanager",
    "batch_jobs.py": "batch",
    "ecs_tasks.py": "ecs",
    "glue_jobs.py": "glue",
}


@pytest.fixture(scope="module")
def trimmed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("botocore_data")
    botocore_trim.main(out)
    return out


def _client_calls(tree: ast.AST, service_of_client_factory: str | None) -> set[tuple[str, str]]:
    called: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        # self._ddb.get_item(...) and the like
        if isinstance(node.value, ast.Attribute) and node.value.attr in CLIENT_ATTR:
            called.add((CLIENT_ATTR[node.value.attr], node.attr))
        # self._client().get_secret_value(...): an adapter holding a client factory
        elif (
            service_of_client_factory
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "_client"
        ):
            called.add((service_of_client_factory, node.attr))
    return called


def test_the_adapters_call_only_trimmed_operations() -> None:
    allowed = {svc: {xform_name(op) for op in ops} for svc, ops in aws_clients.OPERATIONS.items()}
    called: set[tuple[str, str]] = set()
    for path in ADAPTERS.glob("*.py"):
        called |= _client_calls(ast.parse(path.read_text()), FACTORY_CLIENTS.get(path.name))
    assert {svc for svc, _ in called} == set(aws_clients.OPERATIONS), "has the adapters' naming changed?"
    missing = sorted((svc, op) for svc, op in called if op not in allowed[svc])
    assert missing == [], f"add these to aws_clients.OPERATIONS: {missing}"


def test_a_service_outside_the_trimmed_data_gets_botocores_own(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    aws_clients.reset()
    try:
        assert aws_clients.client("sqs").meta.service_model.service_name == "sqs"
        assert aws_clients.client("dynamodb").meta.service_model.service_name == "dynamodb"
    finally:
        aws_clients.reset()


def _send(seen: list[Any]) -> Any:
    def send(request: Any, **kwargs: Any) -> AWSResponse:
        volatile = {
            "X-Amz-Date",
            "Authorization",
            "User-Agent",
            "amz-sdk-invocation-id",
            "X-Amz-Security-Token",
        }
        headers = {k: v for k, v in request.headers.items() if k not in volatile}
        seen.append((request.method, request.url, headers, request.body))

        body = b"" if request.method == "HEAD" else b"{}"  # S3's HeadObject: no body

        class Raw:
            def stream(self, **kw: Any) -> Any:
                yield body

        h = HTTPHeaders()
        h["content-type"] = "application/x-amz-json-1.0"
        h["content-length"] = str(len(body))
        return AWSResponse(request.url, 200, h, Raw())

    return send


def _client(service: str, region: str, fips: bool, loader: Any) -> Any:
    session = botocore.session.Session()
    session.set_config_variable("region", region)
    session.set_config_variable("credentials_file", "/nonexistent")
    if fips:
        session.set_config_variable("use_fips_endpoint", True)
    if loader is not None:
        session.register_component("data_loader", loader)
    return session.create_client(
        service, config=aws_clients._CONFIG, aws_access_key_id="k", aws_secret_access_key="s"
    )


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1", "us-iso-east-1"])
@pytest.mark.parametrize("fips", [False, True])
def test_same_endpoints_and_requests_as_botocores_own_data(trimmed: Path, region: str, fips: bool) -> None:
    calls = {
        "dynamodb": ("get_item", {"TableName": "t", "Key": {"taskId": {"S": "x"}}, "ConsistentRead": True}),
        "stepfunctions": ("describe_execution", {"executionArn": f"arn:aws:states:{region}:1:execution:m:x"}),
        "s3": ("head_object", {"Bucket": "taskgate-results", "Key": "results/x.json"}),
        "secretsmanager": ("get_secret_value", {"SecretId": "arn:aws:secretsmanager:r:1:secret:s"}),
    }
    for service, (method, params) in calls.items():
        seen: dict[str, list[Any]] = {"full": [], "trimmed": []}
        meta = {}
        for kind in seen:
            probe = botocore.session.Session()
            loader = aws_clients.trimmed_loader(probe, trimmed) if kind == "trimmed" else None
            if kind == "trimmed":
                assert loader is not None
            c = _client(service, region, fips, loader)
            c.meta.events.register("before-send", _send(seen[kind]))
            try:
                getattr(c, method)(**params)
            except botocore.exceptions.BotoCoreError as exc:  # e.g. no FIPS endpoint there: the same error
                seen[kind].append((type(exc).__name__, str(exc)))
            meta[kind] = (c.meta.endpoint_url, c.meta.region_name, c.meta.service_model.signing_name)
        assert meta["full"] == meta["trimmed"]
        assert seen["full"] == seen["trimmed"]


def test_a_copy_from_another_botocore_is_ignored(trimmed: Path, tmp_path: Path) -> None:
    stale = tmp_path / "data"
    stale.mkdir()
    stamp = json.loads((trimmed / "stamp.json").read_text())
    (stale / "stamp.json").write_text(json.dumps({**stamp, "botocore": "0.0.1"}))
    assert aws_clients.trimmed_loader(botocore.session.Session(), stale) is None
    assert aws_clients.trimmed_loader(botocore.session.Session(), tmp_path / "absent") is None
