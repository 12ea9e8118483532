"""Local endpoints listen on loopback by default; the one `sam local invoke` containers
reach listens on the Docker bridge (and loopback), never on every interface unless asked
(issue 20, item 8)."""

from __future__ import annotations

from typing import Any

from taskgate.local.endpoint import listen_addresses, refuse_browsers, served_names


def test_the_endpoint_listens_on_the_docker_bridge_and_loopback_only() -> None:
    assert listen_addresses(None, "172.17.0.1") == ["172.17.0.1", "127.0.0.1"]
    # No Docker bridge (Docker not started): nothing in a container could reach it anyway.
    assert listen_addresses(None, None) == ["127.0.0.1"]
    # --host works: that address, and loopback, which moto's state machine executor calls.
    assert listen_addresses("10.1.2.3", "172.17.0.1") == ["10.1.2.3", "127.0.0.1"]
    assert listen_addresses("127.0.0.1", "172.17.0.1") == ["127.0.0.1"]
    assert listen_addresses("0.0.0.0", "172.17.0.1") == ["0.0.0.0"]


def test_requests_a_browser_makes_are_refused() -> None:
    served: list[str] = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        served.append(environ["PATH_INFO"])
        start_response("200 OK", [])
        return [b"ok"]

    statuses: list[str] = []
    wsgi = refuse_browsers(app)
    for extra in ({"HTTP_ORIGIN": "https://evil.example"}, {"HTTP_SEC_FETCH_SITE": "cross-site"}, {}):
        environ = {"PATH_INFO": "/", "HTTP_HOST": "127.0.0.1:4599", **extra}
        wsgi(environ, lambda status, headers: statuses.append(status))
    assert statuses == ["403 Forbidden", "403 Forbidden", "200 OK"] and served == ["/"]


def test_a_page_on_a_rebound_domain_is_refused_by_its_host_header() -> None:
    """Red team round three, L1: after DNS rebinding, a same-origin GET carries neither Origin
    nor Sec-Fetch-* (plain http is no secure context); only its Host names the page's domain.
    With a Host naming the bucket, it listed and read the result bucket through moto."""
    served: list[str] = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        served.append(environ["HTTP_HOST"])
        start_response("200 OK", [])
        return [b"ok"]

    wsgi = refuse_browsers(app, served_names(["172.17.0.1", "127.0.0.1"]))

    def status(host: str | None) -> str:
        found: list[str] = []
        environ = {"PATH_INFO": "/", "REQUEST_METHOD": "GET"} | ({"HTTP_HOST": host} if host else {})
        wsgi(environ, lambda s, headers: found.append(s))
        return found[0]

    for rebound in (
        "evil.example:4599",
        "taskgate-results.evil.example:4599",
        "taskgate-results.s3.evil.example",
        "127.0.0.1.evil.example:4599",
        "localhost.evil.example",
        None,
    ):
        assert status(rebound) == "403 Forbidden", rebound
    for sdk in (
        "127.0.0.1:4599",
        "localhost:4599",
        "[::1]:4599",
        "host.docker.internal:4599",
        "172.17.0.1:4599",
        "taskgate-results.localhost:4599",  # S3 with the bucket in the host
        "taskgate-results.host.docker.internal:4599",
    ):
        assert status(sdk) == "200 OK", sdk


def test_every_local_server_defaults_to_loopback() -> None:
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    serve = (root / "layers/taskgate/taskgate/local/__main__.py").read_text()
    assert 'os.environ.get("HOST", "127.0.0.1")' in serve
    endpoint = (root / "layers/taskgate/taskgate/local/endpoint.py").read_text()
    assert not re.search(r'default="0\.0\.0\.0"|host: str = "0\.0\.0\.0"', endpoint)


def test_the_image_script_takes_the_machines_own_debian_mirror() -> None:
    import pathlib
    import re

    script = (pathlib.Path(__file__).resolve().parents[2] / "scripts" / "lambda_image.sh").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert not re.search(r"https?://[a-z0-9.-]*debian\.org", code), "the script names a mirror"
    assert "apt-get indextargets" in code
