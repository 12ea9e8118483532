"""AWS SDK clients, created once per process and shared (cold-start cost is paid once).

They are botocore clients, the very objects ``boto3.client`` returns: importing
boto3 itself also imports s3transfer and its thread pools, about 40 ms of the
ApiFunction's cold start, for nothing the adapters use (see bench/, section 1).

``AWS_ENDPOINT_URL`` / ``AWS_PROFILE`` and the usual variables pick the target:
real AWS, or a moto server. Switching is configuration, never code.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import botocore.session
from botocore.config import Config

_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=2,
    read_timeout=10,
)
# Clients are thread-safe once made, but making them from one session in two
# threads at once is not (the local server's request and executor threads do).
_lock = threading.Lock()
_session: botocore.session.Session | None = None
_clients: dict[str, Any] = {}


def client(service: str) -> Any:
    found = _clients.get(service)
    if found is not None:
        return found
    global _session
    with _lock:
        if service not in _clients:
            if _session is None:
                region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
                _session = botocore.session.Session()
                _session.set_config_variable("region", region)
            _clients[service] = _session.create_client(service, config=_CONFIG)
        return _clients[service]


def reset() -> None:
    """Forget cached clients (tests and the local runtime switch endpoints)."""
    global _session
    with _lock:
        _clients.clear()
        _session = None
