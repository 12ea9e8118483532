"""A secret in Secrets Manager, read when first needed. The stack creates them
(``RequestStateSecret``, ``SignInKeySecret``: generated strings); every API instance reads
the same value, so what one instance seals or signs, any other opens or verifies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from ..domain.errors import DependencyFailure
from .aws_errors import error_code, translating


class SecretsManagerSecret:
    def __init__(self, client: Callable[[], Any], secret_id: str) -> None:
        # A client factory: only the requests that need the secret build the client.
        self._client = client
        self._secret_id = secret_id

    @staticmethod
    def _bytes(found: dict[str, Any]) -> bytes:
        if "SecretString" in found:
            return str(found["SecretString"]).encode()
        if "SecretBinary" in found:
            return bytes(found["SecretBinary"])
        raise DependencyFailure("the secret has no value")

    @translating
    def value(self) -> bytes:
        return self._bytes(self._client().get_secret_value(SecretId=self._secret_id))

    @translating
    def versions(self, stages: tuple[str, ...] = ("AWSCURRENT", "AWSPREVIOUS")) -> list[bytes]:
        """The values at these staging labels, in this order; a label no version has yet (a
        secret never rotated has no AWSPREVIOUS) is left out, except the first."""
        found: list[bytes] = []
        for n, stage in enumerate(stages):
            try:
                answer = self._client().get_secret_value(SecretId=self._secret_id, VersionStage=stage)
            except ClientError as error:
                if n and error_code(error) == "ResourceNotFoundException":
                    continue
                raise
            found.append(self._bytes(answer))
        return found
