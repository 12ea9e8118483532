"""boto3 clients, created once per process and shared (cold-start cost is paid once).

``AWS_ENDPOINT_URL`` / ``AWS_PROFILE`` and the usual variables pick the target:
real AWS, or a moto server. Switching is configuration, never code.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import boto3
from botocore.config import Config

_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=2,
    read_timeout=10,
)


@functools.cache
def _session() -> boto3.session.Session:
    return boto3.session.Session(
        region_name=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    )


@functools.cache
def client(service: str) -> Any:
    return _session().client(service, config=_CONFIG)  # type: ignore[call-overload]


def reset() -> None:
    """Forget cached clients (tests and the local runtime switch endpoints)."""
    client.cache_clear()
    _session.cache_clear()
