"""AWS SDK clients, created once per process and shared (cold-start cost is paid once).

They are botocore clients, the very objects ``boto3.client`` returns: importing
boto3 itself also imports s3transfer and its thread pools, about 40 ms of the
ApiFunction's cold start, for nothing the adapters use (see bench/, section 1).

``AWS_ENDPOINT_URL`` (declared empty by the template, set by ``sam local invoke
--env-vars``; empty means AWS itself), ``AWS_PROFILE`` and the usual variables pick the
target: real AWS, or a
local endpoint such as ``make local-aws``'s. Switching is configuration, never code.

Cold start: botocore's own loader lists every service directory in its data
folder (about 400) before it loads a model, and reads the whole endpoints.json
(1.2 MB, 300 services) for a client's legacy endpoint data. When the build has cut
a copy of that data down to the services and operations below
(``botocore_trim``, stamped with the botocore version it was cut from), the
loader reads that instead: about 40 ms less to make the DynamoDB client. Without
the copy, or for another botocore version, botocore's own data is used as is.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import botocore
import botocore.session
from botocore.config import Config
from botocore.loaders import Loader

# Every operation an adapter calls, per client; botocore_trim keeps these (and the
# shapes they reach). tests/unit check the adapters call nothing else.
OPERATIONS: dict[str, tuple[str, ...]] = {
    "dynamodb": (
        "BatchGetItem",
        "DeleteItem",
        "GetItem",
        "PutItem",
        "Query",
        "Scan",
        "UpdateItem",
    ),
    "stepfunctions": (
        "DescribeExecution",
        "GetExecutionHistory",
        "SendTaskHeartbeat",
        "SendTaskSuccess",
        "StartExecution",
        "StopExecution",
    ),
    "s3": ("DeleteObject", "GetObject", "HeadObject", "PutObject"),
    "secretsmanager": ("GetSecretValue",),
    # The jobs tools hand off (adapters/aws_jobs.py): their status, their stop.
    "batch": ("DescribeJobs", "TerminateJob"),
    "ecs": ("DescribeTasks", "StopTask"),
    "glue": ("BatchStopJobRun", "GetJobRun"),
}
TRIMMED_DATA = Path(__file__).with_name("_botocore_data")

# Connections each client keeps. The sweeper checks this many tasks at once (wiring): with
# more threads than connections, botocore discards connections and warns at every sweep.
MAX_POOL_CONNECTIONS = 16
_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=2,
    read_timeout=10,
    max_pool_connections=MAX_POOL_CONNECTIONS,
)
# Clients are thread-safe once made, but making them from one session in two
# threads at once is not (the local server's request and executor threads do).
_lock = threading.Lock()
_session: botocore.session.Session | None = None  # over the trimmed data, for OPERATIONS' services
_plain: botocore.session.Session | None = None  # botocore's own data, for any other service
_clients: dict[str, Any] = {}


class TrimmedLoader(Loader):
    """botocore's Loader over the trimmed copy first, knowing only our services."""

    def __init__(self, trimmed: Path, data_path: str | None) -> None:
        extra = [os.path.expanduser(p) for p in (data_path or "").split(os.pathsep) if p]
        super().__init__(extra_search_paths=[*extra, str(trimmed)])
        self._endpoints = str(trimmed / "endpoints")

    def list_available_services(self, type_name: str) -> list[str]:
        # Only the named service's own directories are listed (list_api_versions).
        return [s for s in OPERATIONS if self.list_api_versions(s, type_name)]

    def is_builtin_path(self, path: str) -> bool:
        # The trimmed endpoints.json is botocore's own, less other services' entries:
        # endpoint resolution must treat it as built in (else it passes the legacy
        # URL to the endpoint rules as a custom endpoint).
        return path == self._endpoints or bool(super().is_builtin_path(path))


def trimmed_loader(session: botocore.session.Session, data: Path = TRIMMED_DATA) -> Loader | None:
    """The loader over ``data``, or None when there is no copy cut from this botocore."""
    try:
        stamp = json.loads((data / "stamp.json").read_text())
    except (OSError, ValueError):
        return None
    if stamp.get("botocore") != botocore.__version__ or stamp.get("operations") != {
        k: list(v) for k, v in OPERATIONS.items()
    }:
        return None
    return TrimmedLoader(data, session.get_config_variable("data_path"))


def endpoint_url() -> str | None:
    """The endpoint every client talks to instead of AWS's own, if one is set."""
    return os.environ.get("AWS_ENDPOINT_URL") or None


def _new_session(trimmed: bool) -> botocore.session.Session:
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    session = botocore.session.Session()
    session.set_config_variable("region", region)
    # TASKGATE_BOTOCORE_TRIM=0: botocore's own data (the bench's comparison).
    loader = trimmed_loader(session) if trimmed and os.environ.get("TASKGATE_BOTOCORE_TRIM") != "0" else None
    if loader is not None:
        session.register_component("data_loader", loader)
    return session


def client(service: str) -> Any:
    found = _clients.get(service)
    if found is not None:
        return found
    global _session, _plain
    with _lock:
        if service not in _clients:
            if service in OPERATIONS:
                _session = _session or _new_session(trimmed=True)
                session = _session
            else:  # a service the trimmed data does not carry: botocore's own
                _plain = _plain or _new_session(trimmed=False)
                session = _plain
            _clients[service] = session.create_client(service, config=_CONFIG, endpoint_url=endpoint_url())
        return _clients[service]


def refresh() -> None:
    """Build every client again from a new session: new credentials (resolved by this
    execution environment, not the one a SnapStart snapshot was taken in), new
    connection pools, a new retry jitter source. Run after a restore."""
    global _session, _plain
    with _lock:
        made = list(_clients)
        _clients.clear()
        _session = _plain = None
    for service in made:
        client(service)


def reset() -> None:
    """Forget cached clients (tests and the local runtime switch endpoints)."""
    global _session, _plain
    with _lock:
        _clients.clear()
        _session = _plain = None
