"""``STREAM_PORT``: the streaming endpoint (template Parameter StreamingApi) beside the local
server, in the same process. Deployed, StreamFunction serves the same app as ApiFunction
behind a REST API that streams; here the same app is served on ``STREAM_PORT`` by uvicorn
(which passes bytes on as they are written) with StreamFunction's settings: its front
(``FRONT_STREAMING``, 900 s) and its own /mcp as the resource it checks tokens for
(``OAUTH_RESOURCE``), under ``STREAM_PUBLIC_URL``. Both share the embedded AWS (tasks, sign-in
state, the signing key), so a person signs in at the local server's authorization server for
either endpoint, as on a deployed stack.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

from .. import wiring
from ..config import Settings
from ..root import Taskgate

STREAM_PORT = "STREAM_PORT"


def prepare(environ: MutableMapping[str, str], host: str) -> str | None:
    """The streaming endpoint's URL when ``STREAM_PORT`` asks for one, set as
    ``STREAM_PUBLIC_URL`` (unless given) so that the local server's authorization server
    issues tokens for it too; None otherwise."""
    port = environ.get(STREAM_PORT, "")
    if not port:
        return None
    return environ.setdefault("STREAM_PUBLIC_URL", f"http://{host}:{int(port)}")


def stream_settings(environ: Mapping[str, str]) -> Settings:
    """StreamFunction's settings (template.yaml): ApiFunction's, but the front and the resource."""
    stream = environ["STREAM_PUBLIC_URL"]
    return Settings.from_env(
        {
            **environ,
            "FRONT_STREAMING": "true",
            "FRONT_TIMEOUT_SECONDS": "900",
            "OAUTH_RESOURCE": f"{stream}/mcp",
        }
    )


def stream_root(environ: Mapping[str, str], home: Taskgate) -> Taskgate:
    """The streaming endpoint's root over the same AWS as ``home``, serving its tools (one
    registry: declared tools are made once)."""
    settings = stream_settings(environ)
    return Taskgate(settings, wiring.aws_ports(settings), tools=home.tools)
