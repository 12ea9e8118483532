"""Machine callers sign in by their SDK's own client-credentials flow (issue 33, item 2): mcp
1.30.0's ``ClientCredentialsOAuthProvider`` (client_secret_basic and _post) and
``PrivateKeyJWTOAuthProvider`` (an SDK-signed assertion), with and without ``issuer=``, each
running a task, against ``make serve-signin`` (the development user pool as the issuer) and
against a stack with an issuer of its own (tests/oauth_server.py: RFC 8414, client
credentials, resource-bound tokens). A client that registered itself asking for
client_credentials is refused, and a private_key_jwt assertion sent again is refused.

Cheap by design: per stack one taskgate server and one driver process running every client
(tests/e2e/clients2025/mcp_machine_client.py, on the clients' own venv).
"""

from __future__ import annotations

import json
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from joserfc.jwk import RSAKey

from tests.e2e.local_server import free_port, run_setup, running_server
from tests.oauth_server import LocalAuthorizationServer, RegisteredClient, serve_in_thread

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "e2e" / "clients2025"
PYTHON = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"
SCOPE = "taskgate/tasks"
KEY_CLIENT = "report-agent"


@pytest.fixture(scope="module")
def clients_installed() -> None:
    run_setup(CLIENTS / "setup.sh", "clients2025")


@pytest.fixture(scope="module")
def key_client(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pathlib.Path]:
    """The key client's private key (PEM, for the SDK) and its public JWKS file, which the
    deployer registers with OAUTH_CLIENT_KEYS."""
    key = RSAKey.generate_key(2048, parameters={"kid": "report-agent-1"})
    path = tmp_path_factory.mktemp("keys") / "report-agent.jwks.json"
    path.write_text(json.dumps({"keys": [key.as_dict(private=False)]}))
    return key.as_pem(private=True).decode(), path


def drive(tmp: pathlib.Path, url: str, cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every case through the SDK in one process: the results by name."""
    config = tmp / "cases.json"
    config.write_text(json.dumps({"url": url, "cases": cases}))
    done = subprocess.run(
        [str(PYTHON), str(CLIENTS / "mcp_machine_client.py"), str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert "error" not in out, f"{out['error']}\n{out.get('traceback')}"
    print(f"\n[mcp {out['version']}] {len(out['cases'])} machine clients in {out['elapsed']} s")
    for case in out["cases"]:
        posts = ", ".join(
            f"{urlsplit(p['url']).netloc}{urlsplit(p['url']).path} {p['status']}" for p in case["tokenPosts"]
        )
        print(f"  {case['name']:<34} token: {posts:<60} {case.get('polled', case.get('error'))}")
    return {case["name"]: case for case in out["cases"]}


def assert_ran_a_task(case: dict[str, Any]) -> None:
    assert "error" not in case, case
    assert case["polled"][-1] == "completed" and case["texts"] == [f"{case['name']} finished after 0 seconds"]


def assert_refused_self_registered(case: dict[str, Any], error: str) -> None:
    """``unauthorized_client`` when its id came with the secret (basic): it authenticated, but
    may not use the grant; ``invalid_client`` when mcp 1.30.0 sends the secret alone (post):
    the one secret client the deployer has does not take that secret."""
    assert "error" in case and "taskId" not in case, case
    assert case["tokenPosts"][-1]["status"] in (400, 401), case
    assert json.loads(case["tokenPosts"][-1]["body"])["error"] == error


def assert_replay_refused(case: dict[str, Any]) -> None:
    assert case["replay"]["status"] in (400, 401), case
    assert (
        case["replay"]["body"]["error"] == "invalid_client"
        and "used before" in case["replay"]["body"]["error_description"]
    )


def test_machine_clients_sign_in_at_make_serve_signin(
    clients_installed: None, key_client: tuple[str, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    pem, jwks = key_client
    port, idp_port = free_port(), free_port()
    env = {"TASKGATE_SIGN_IN": "dev", "IDP_PORT": str(idp_port), "OAUTH_CLIENT_KEYS": f"{KEY_CLIENT}={jwks}"}
    pool = f"http://127.0.0.1:{idp_port}/us-east-1_LocalPool"
    agent = {"client_id": "local-agent", "secret": "local-agent-secret"}
    with running_server(tmp_path / "server.log", port=port, **env) as url:
        origin = url.removesuffix("/mcp")
        cases = drive(
            tmp_path,
            url,
            [
                {"name": "secret-basic", "kind": "basic", **agent},
                {"name": "secret-post-issuer-stack", "kind": "post", "issuer": origin, **agent},
                {"name": "secret-basic-issuer-pool", "kind": "basic", "issuer": pool, **agent},
                {"name": "key", "kind": "key", "client_id": KEY_CLIENT, "key_pem": pem, "replay": True},
                {
                    "name": "key-issuer-stack",
                    "kind": "key",
                    "client_id": KEY_CLIENT,
                    "key_pem": pem,
                    "issuer": origin,
                },
                {"name": "self-registered", "kind": "basic", "register": origin},
            ],
        )
    for name in ("secret-basic", "secret-post-issuer-stack", "key", "key-issuer-stack"):
        case = cases[name]
        assert_ran_a_task(case)
        # The stack's own token endpoint, its own token, for this /mcp.
        assert [urlsplit(p["url"]).path for p in case["tokenPosts"]] == ["/oauth/token"], name
        assert case["token"]["iss"] == origin and case["token"]["aud"] == url, name
        assert case["tokenForms"][0]["resource"] == url
    assert cases["secret-basic"]["token"]["idp"] == pool  # the agent as the pool names it
    assert cases["key"]["token"]["idp"] == origin and cases["key"]["token"]["sub"] == KEY_CLIENT
    # issuer= the pool: discovery leads there, and the pool's own token is taken.
    pooled = cases["secret-basic-issuer-pool"]
    assert_ran_a_task(pooled)
    assert pooled["tokenPosts"][0]["url"] == f"http://127.0.0.1:{idp_port}/oauth2/token"
    assert pooled["token"]["iss"] == pool and pooled["token"]["token_use"] == "access"
    assert_replay_refused(cases["key"])
    assert_refused_self_registered(cases["self-registered"], "unauthorized_client")


@pytest.fixture
def own_issuer() -> Iterator[LocalAuthorizationServer]:
    auth = LocalAuthorizationServer(
        subject="alice",
        scopes_supported=[SCOPE],
        clients=[
            RegisteredClient("stack-sign-in", ["http://127.0.0.1:9/oauth/callback"]),
            RegisteredClient(
                "deployer-agent",
                [],
                client_secret="deployer-agent-secret",
                token_endpoint_auth_method="client_secret_basic",
                grant_types=["client_credentials"],
            ),
        ],
    )
    with serve_in_thread(auth.app_for):
        yield auth


def test_machine_clients_sign_in_at_a_stack_with_an_issuer_of_its_own(
    clients_installed: None,
    key_client: tuple[str, pathlib.Path],
    own_issuer: LocalAuthorizationServer,
    tmp_path: pathlib.Path,
) -> None:
    pem, jwks = key_client
    env = {
        "AUTH_MODE": "USER,CLIENT",
        "OAUTH_ISSUER": own_issuer.issuer,
        "OAUTH_UPSTREAM_CLIENT_ID": "stack-sign-in",
        "OAUTH_CLIENT_IDS": "deployer-agent",
        "OAUTH_SCOPES": SCOPE,
        "OAUTH_CLIENT_KEYS": f"{KEY_CLIENT}={jwks}",
    }
    agent = {"client_id": "deployer-agent", "secret": "deployer-agent-secret"}
    with running_server(tmp_path / "server.log", **env) as url:
        origin = url.removesuffix("/mcp")
        cases = drive(
            tmp_path,
            url,
            [
                {"name": "secret-basic", "kind": "basic", **agent},
                {"name": "secret-post-issuer-stack", "kind": "post", "issuer": origin, **agent},
                {"name": "secret-basic-issuer-own", "kind": "basic", "issuer": own_issuer.issuer, **agent},
                {"name": "key", "kind": "key", "client_id": KEY_CLIENT, "key_pem": pem, "replay": True},
                {
                    "name": "key-issuer-stack",
                    "kind": "key",
                    "client_id": KEY_CLIENT,
                    "key_pem": pem,
                    "issuer": origin,
                },
                {"name": "self-registered", "kind": "post", "register": origin},
            ],
        )
    for name in ("secret-basic", "secret-post-issuer-stack", "key", "key-issuer-stack"):
        assert_ran_a_task(cases[name])
        assert cases[name]["token"]["iss"] == origin and cases[name]["token"]["aud"] == url, name
    assert cases["secret-basic"]["token"]["idp"] == own_issuer.issuer
    direct = cases["secret-basic-issuer-own"]
    assert_ran_a_task(direct)
    assert urlsplit(direct["tokenPosts"][0]["url"]).netloc == urlsplit(own_issuer.issuer).netloc
    assert (
        direct["token"]["iss"] == own_issuer.issuer and direct["token"]["aud"] == url
    )  # its own, for this /mcp
    assert_replay_refused(cases["key"])
    assert_refused_self_registered(cases["self-registered"], "invalid_client")
