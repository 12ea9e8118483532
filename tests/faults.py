"""Fault injection for tests: make chosen AWS calls fail, wherever they are made.

Hooks botocore's ``before-call`` event on the app's shared clients and on the
default session (which moto's Step Functions executor uses for the state
machine's own DynamoDB calls), so a fault hits the API, the worker or the
state machine alike.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError

from taskgate.adapters import aws_clients


@dataclass
class Rule:
    service: str
    operation: str
    code: str
    times: int
    skip: int = 0
    seen: int = 0
    fired: int = 0


class Faults:
    def __init__(self) -> None:
        self._rules: list[Rule] = []
        self._lock = threading.Lock()
        self._hooked: set[int] = set()

    def fail(
        self,
        service: str,
        operation: str,
        *,
        code: str = "InternalServerError",
        times: int = 1,
        skip: int = 0,
    ) -> Rule:
        """Fail the next ``times`` calls of ``operation`` after letting ``skip`` through."""
        rule = Rule(service, operation, code, times, skip)
        with self._lock:
            self._rules.append(rule)
        for target in (aws_clients.client(service).meta.events, boto3._get_default_session().events):
            if id(target) not in self._hooked:
                target.register("before-call", self._before_call)
                self._hooked.add(id(target))
        return rule

    def _before_call(self, model: Any, **kwargs: Any) -> None:
        service = model.service_model.service_name
        service = {"sfn": "stepfunctions", "states": "stepfunctions"}.get(service, service)
        with self._lock:
            for rule in self._rules:
                if rule.service == service and rule.operation == model.name and rule.fired < rule.times:
                    rule.seen += 1
                    if rule.seen <= rule.skip:
                        continue
                    rule.fired += 1
                    break
            else:
                return
        error = {
            "Error": {"Code": rule.code, "Message": "injected fault"},
            "ResponseMetadata": {"HTTPStatusCode": 500, "RequestId": "injected"},
        }
        raise ClientError(error, model.name)  # type: ignore[arg-type]

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()
