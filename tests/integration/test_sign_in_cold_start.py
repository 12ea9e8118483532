"""Sign-in costs nothing where it is off, and little where it is on: ApiFunction's cold
start imports no ``cryptography``, joserfc or Authlib without sign-in, and with it not until a
request needs them (a 401, the metadata of the resource and of the authorization server are
answered without). Each case is a fresh interpreter running the real handler on a sample API
Gateway event."""

from __future__ import annotations

import base64
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The dev environment has pyOpenSSL (through moto and sam), which botocore's urllib3 loads
# and which imports cryptography; the built layer has none (test_template_tools checks), so
# it is hidden here as it is absent on Lambda.
PROGRAM = """
import json, sys
sys.modules["OpenSSL"] = None
sys.path[:0] = ["layers/taskgate", "layers/tools", "functions/api"]
import api_handler

class Context:
    function_name = "api"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:api"
    aws_request_id = "r"

event = json.load(open("events/api_server_discover.json"))
if len(sys.argv) > 1 and sys.argv[1].startswith("/"):
    event["rawPath"] = event["requestContext"]["http"]["path"] = sys.argv[1]
    event["requestContext"]["http"]["method"] = "GET"
    event["body"] = ""
elif len(sys.argv) > 1 and sys.argv[1] == "signed":
    # What API Gateway names after checking a SigV4 signature (IAM alone: /mcp takes nothing else).
    event["requestContext"]["authorizer"] = {"iam": {"userArn": "arn:aws:iam::123456789012:user/agent"}}
elif len(sys.argv) > 1:
    event["headers"]["authorization"] = "Bearer " + sys.argv[1]
reply = api_handler.handler(event, Context())
heavy = ("cryptography", "joserfc", "authlib")
print(json.dumps({
    "status": reply["statusCode"],
    "challenge": reply["headers"].get("www-authenticate"),
    "cryptography": sorted(m for m in sys.modules if m.startswith(heavy))[:3],
}))
"""

BASE = {
    "TASK_TABLE": "tasks",
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:t",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "taskgate",
}
# The stack's own authorization server (USER) beside agents' tokens (CLIENT), as deployed;
# the secret and the keys unreachable: a token's check must try to read them.
USER_SIGN_IN = {
    "AUTH_MODE": "USER,CLIENT,IAM",
    "PUBLIC_URL": "https://abc123.execute-api.us-east-1.amazonaws.com",
    "OAUTH_ISSUER": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example",
    "OAUTH_UPSTREAM_CLIENT_ID": "sign-in-client",
    "OAUTH_CLIENT_IDS": "agent-client",
    "OAUTH_SIGNING_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:sign-in-key",
    "OAUTH_JWKS_URI": "http://127.0.0.1:9/jwks.json",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
}
SIGN_IN = {
    "AUTH_MODE": "JWT",
    "OAUTH_RESOURCE": "https://abc123.execute-api.us-east-1.amazonaws.com/mcp",
    "OAUTH_ISSUER": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example",
    "OAUTH_CLIENT_IDS": "client",
    "OAUTH_SCOPES": "taskgate/tasks",
    # Unreachable on purpose: a token's check must try to fetch keys (and so load cryptography).
    "OAUTH_JWKS_URI": "http://127.0.0.1:9/jwks.json",
}


def _run(env: dict[str, str], *args: str) -> dict[str, object]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        cwd=ROOT,
        env={**keep, **BASE, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["NONE", "IAM"])
def test_without_sign_in_cryptography_is_never_imported(mode: str) -> None:
    out = _run({"AUTH_MODE": mode}, *(["signed"] if mode == "IAM" else []))
    assert out["status"] == 200 and out["cryptography"] == []
    if mode == "IAM":
        # Unsigned, refused by the function itself (issue 29 N3), and still without them.
        refused = _run({"AUTH_MODE": mode})
        assert refused["status"] == 403 and refused["cryptography"] == []


@pytest.mark.parametrize("env", [SIGN_IN, USER_SIGN_IN], ids=["CLIENT", "USER,CLIENT,IAM"])
def test_with_sign_in_a_401_is_answered_without_cryptography(env: dict[str, str]) -> None:
    out = _run(env)
    assert out["status"] == 401 and out["cryptography"] == []
    assert (
        'resource_metadata="https://abc123.execute-api.us-east-1.amazonaws.com/.well-known/oauth-protected-resource/mcp"'
        in str(out["challenge"])
    )
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"):
        metadata = _run(env, path)
        expected = 200 if path.endswith("resource/mcp") or "USER" in env["AUTH_MODE"] else 404
        assert metadata["status"] == expected and metadata["cryptography"] == [], path
    # A token is what loads them (its keys cannot be had here: 503, to be retried).
    header = (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiYXQrand0In0"
        if "USER" in env["AUTH_MODE"]
        else ("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0")
    )
    issuer = (
        "https://abc123.execute-api.us-east-1.amazonaws.com"
        if "USER" in env["AUTH_MODE"]
        else env["OAUTH_ISSUER"]
    )
    claims = {
        "iss": issuer,
        "sub": "x",
        "aud": "https://abc123.execute-api.us-east-1.amazonaws.com/mcp",
        "exp": 4102444800,
        "scope": "taskgate/tasks",
        "client_id": "c",
        "idp": env["OAUTH_ISSUER"],
    }
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    with_token = _run(env, f"{header}.{payload}.c2ln")
    assert with_token["status"] == 503 and with_token["cryptography"], with_token
