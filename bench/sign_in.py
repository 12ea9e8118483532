"""What section 1's sign-in rows need: the ApiFunction environments with sign-in on, tokens,
and an issuer's keys on a loopback port. Stdlib only here; the tokens are minted once per
run by taskgate's own code and joserfc in a child process (the project venv).

- a person's token (AuthMode USER): an access token of the stack's own authorization server,
  HS256 with the SignInKeySecret's value, which the HTTP-layer stub answers GetSecretValue with;
- an agent's token (CLIENT, the issuer's own, as a Cognito client-credentials token is):
  RS256, its key in a JWKS served here over HTTP, as the issuer's would be (the first
  authenticated request fetches it). Earlier revisions accept this one too (AuthMode JWT).
Both name the owner of the canned task (first_request.OWNER), so the tasks/get succeeds.
"""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import threading
from dataclasses import dataclass

from benchlib import PROJECT_PY, ROOT

ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example"
SUBJECT = "user-1234"
PUBLIC_URL = "https://abc123.execute-api.us-east-1.amazonaws.com"
CLIENT_ID = "bench-agent"
SCOPE = "taskgate/tasks"
SIGNING_KEY = "bench-sign-in-key-0123456789abcdef0123456789abcdef"
SIGNING_SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:taskgate-sign-in-key"

_MINT = """
import json
from joserfc import jwt
from joserfc.jwk import RSAKey
from taskgate.auth.jwt import OwnTokens
from taskgate.auth.signing import SigningKeys
own = OwnTokens(issuer=%(public)r, resource=%(public)r + "/mcp", keys=SigningKeys(lambda: [%(key)r.encode()]))
person, _ = own.mint(subject=%(sub)r, identity_issuer=%(iss)r, client_id="bench-person", scope=[%(scope)r],
                     ttl_seconds=10**8)
key = RSAKey.generate_key(2048, parameters={"kid": "bench-1", "alg": "RS256", "use": "sig"})
agent = jwt.encode({"alg": "RS256", "kid": "bench-1"},
                   {"iss": %(iss)r, "sub": %(sub)r, "client_id": %(client)r, "token_use": "access",
                    "scope": %(scope)r, "iat": 1790000000, "exp": 4102444800}, key)
print(json.dumps({"person": person, "agent": agent, "jwks": {"keys": [key.as_dict(private=False)]}}))
"""


@dataclass(frozen=True)
class SignInBench:
    person_token: str
    agent_token: str
    jwks_url: str

    def user_env(self) -> dict[str, str]:
        """The template's default (USER,CLIENT,IAM with the stack's own user pool)."""
        return {
            "AUTH_MODE": "USER,CLIENT,IAM",
            "PUBLIC_URL": PUBLIC_URL,
            "OAUTH_ISSUER": ISSUER,
            "OAUTH_UPSTREAM_CLIENT_ID": "bench-sign-in",
            "OAUTH_CLIENT_IDS": CLIENT_ID,
            "OAUTH_TOKEN_USE": "access",
            "OAUTH_JWKS_URI": self.jwks_url,
            "OAUTH_SIGNING_SECRET_ARN": SIGNING_SECRET_ARN,
        }

    def client_env(self) -> dict[str, str]:
        """The issuer's own tokens (AuthMode JWT): what every revision understands."""
        return {
            "AUTH_MODE": "JWT",
            "OAUTH_RESOURCE": f"{PUBLIC_URL}/mcp",
            "OAUTH_ISSUER": ISSUER,
            "OAUTH_CLIENT_IDS": CLIENT_ID,
            "OAUTH_SCOPES": SCOPE,
            "OAUTH_TOKEN_USE": "access",
            "OAUTH_JWKS_URI": self.jwks_url,
        }


def _serve(document: bytes) -> str:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="bench-jwks").start()
    return f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json"


@functools.cache
def sign_in_bench() -> SignInBench:
    code = _MINT % {
        "public": PUBLIC_URL,
        "key": SIGNING_KEY,
        "sub": SUBJECT,
        "iss": ISSUER,
        "scope": SCOPE,
        "client": CLIENT_ID,
    }
    done = subprocess.run(
        [str(PROJECT_PY), "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "layers" / "taskgate")},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    minted = json.loads(done.stdout)
    return SignInBench(minted["person"], minted["agent"], _serve(json.dumps(minted["jwks"]).encode()))
