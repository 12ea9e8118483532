"""Sign-in costs nothing where it is off, and little where it is on: ApiFunction's cold
start imports no ``cryptography`` without AuthMode JWT, and with it not until a request
carries a token (a 401 is answered without it). Each case is a fresh interpreter running
the real handler on a sample API Gateway event."""

from __future__ import annotations

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
if len(sys.argv) > 1:
    event["headers"]["authorization"] = "Bearer " + sys.argv[1]
reply = api_handler.handler(event, Context())
print(json.dumps({
    "status": reply["statusCode"],
    "challenge": reply["headers"].get("www-authenticate"),
    "cryptography": sorted(m for m in sys.modules if m.startswith("cryptography"))[:3],
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
    out = _run({"AUTH_MODE": mode})
    assert out["status"] == 200 and out["cryptography"] == []


def test_with_sign_in_a_401_is_answered_without_cryptography() -> None:
    out = _run(SIGN_IN)
    assert out["status"] == 401 and out["cryptography"] == []
    assert (
        'resource_metadata="https://abc123.execute-api.us-east-1.amazonaws.com/.well-known/oauth-protected-resource/mcp"'
        in str(out["challenge"])
    )
    # A token is what loads it (its keys cannot be fetched here: 503, to be retried).
    with_token = _run(SIGN_IN, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
    assert with_token["status"] == 503 and with_token["cryptography"]
