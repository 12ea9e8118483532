"""A secret in Secrets Manager, read when first needed. The stack creates it
(``RequestStateSecret``, a generated string); every API instance reads the same value,
so a requestState sealed by one instance opens on any other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..domain.errors import DependencyFailure
from .aws_errors import translating


class SecretsManagerSecret:
    def __init__(self, client: Callable[[], Any], secret_id: str) -> None:
        # A client factory: only the requests that need the secret build the client.
        self._client = client
        self._secret_id = secret_id

    @translating
    def value(self) -> bytes:
        found = self._client().get_secret_value(SecretId=self._secret_id)
        if "SecretString" in found:
            return str(found["SecretString"]).encode()
        if "SecretBinary" in found:
            return bytes(found["SecretBinary"])
        raise DependencyFailure("the request-state secret has no value")
