"""The few HTTP calls sign-in makes to an issuer (its metadata, its keys, its token endpoint),
with the standard library: capped in time and size, https (or http, for a development
issuer on this machine), no redirects followed. Client ID Metadata Documents are fetched by
``cimd.py``, which adds the guards a URL chosen by a stranger needs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

MAX_DOCUMENT_BYTES = 512 * 1024

# (method, url, form or None, headers, timeout) -> (status, body)
Transport = Callable[[str, str, Mapping[str, str] | None, Mapping[str, str], float], tuple[int, bytes]]


class OutboundError(Exception):
    """The issuer could not be reached, or answered something unusable."""


def _no_redirects() -> Any:
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # a 3xx is answered as it is, never followed

    return urllib.request.build_opener(NoRedirect)


def urllib_transport(
    method: str, url: str, form: Mapping[str, str] | None, headers: Mapping[str, str], timeout: float
) -> tuple[int, bytes]:
    import urllib.error
    import urllib.request  # deferred: only sign-in's outbound calls pay for http.client and ssl

    if urlsplit(url).scheme not in ("https", "http"):
        raise OutboundError(f"refusing to fetch {url!r}")
    data = urlencode(dict(form)).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers))
    try:
        with _no_redirects().open(request, timeout=timeout) as response:
            return int(response.status), bytes(response.read(MAX_DOCUMENT_BYTES + 1))
    except urllib.error.HTTPError as error:
        return int(error.code), bytes(error.read(MAX_DOCUMENT_BYTES + 1))
    except (OSError, ValueError) as error:
        raise OutboundError(f"{url}: {error}") from error


def _json(status: int, body: bytes, url: str) -> dict[str, Any]:
    if len(body) > MAX_DOCUMENT_BYTES:
        raise OutboundError(f"{url}: the answer is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        document = json.loads(body)
    except ValueError as error:
        raise OutboundError(f"{url}: HTTP {status}, not JSON") from error
    if not isinstance(document, dict):
        raise OutboundError(f"{url}: HTTP {status}, not a JSON object")
    return document


def get_json(transport: Transport, url: str, timeout: float = 3.0) -> dict[str, Any]:
    status, body = transport("GET", url, None, {"Accept": "application/json"}, timeout)
    if status != 200:
        raise OutboundError(f"{url}: HTTP {status}")
    return _json(status, body, url)


def post_form(
    transport: Transport,
    url: str,
    form: Mapping[str, str],
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
) -> tuple[int, dict[str, Any]]:
    status, body = transport(
        "POST",
        url,
        form,
        {
            "Accept": "application/json",
            "Content-Type": "application/x-www-form-urlencoded",
            **(headers or {}),
        },
        timeout,
    )
    return status, _json(status, body, url)
