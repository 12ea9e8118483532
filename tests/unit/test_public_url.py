"""A custom domain (PublicUrl → PUBLIC_URL → Settings.public_url) is where clients sign in and
a Host the API serves (issue 20, item 6)."""

from __future__ import annotations

import pytest

from taskgate.config import ConfigurationError, Settings

JWT = {
    "TASK_TABLE": "t",
    "AUTH_MODE": "CLIENT",
    "OAUTH_ISSUER": "https://issuer.example.com",
    "OAUTH_SCOPES": "tasks",
}


def test_the_public_url_is_the_protected_resource_and_a_served_host() -> None:
    s = Settings.from_env({**JWT, "PUBLIC_URL": "https://mcp.example.com"})
    assert s.sign_in.resource_url == "https://mcp.example.com/mcp"
    assert "mcp.example.com" in s.served_hosts
    # An explicit OAUTH_RESOURCE (the template's) wins.
    s = Settings.from_env(
        {**JWT, "PUBLIC_URL": "https://a.example", "OAUTH_RESOURCE": "https://b.example/mcp"}
    )
    assert s.sign_in.resource_url == "https://b.example/mcp"


def test_the_metadata_names_the_public_url() -> None:
    from taskgate import wiring

    with pytest.MonkeyPatch.context() as mp:
        for key, value in {**JWT, "PUBLIC_URL": "https://mcp.example.com"}.items():
            mp.setenv(key, value)
        mp.delenv("OAUTH_RESOURCE", raising=False)
        wiring.reset()
        try:
            sign_in = wiring.root().sign_in
            assert sign_in is not None and sign_in.resource is not None
            assert sign_in.resource.metadata()["resource"] == "https://mcp.example.com/mcp"
            assert sign_in.resource.metadata_url.startswith("https://mcp.example.com/.well-known/")
            assert wiring.root().transport_security.refusal({"host": "mcp.example.com"}) is None
        finally:
            wiring.reset()


@pytest.mark.parametrize("bad", ["mcp.example.com", "https://mcp.example.com/", "ftp://x"])
def test_a_malformed_public_url_fails_the_start(bad: str) -> None:
    with pytest.raises(ConfigurationError, match="PUBLIC_URL"):
        Settings.from_env({"TASK_TABLE": "t", "PUBLIC_URL": bad})
