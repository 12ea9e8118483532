"""Who owns a request's tasks: the caller's identity from API Gateway's authorizer."""

from __future__ import annotations

import re
from typing import Any

# arn:<partition>:sts::<account>:assumed-role/<role>/<session>
_ASSUMED_ROLE = re.compile(r"^arn:([\w-]+):sts::(\d{12}):assumed-role/([^/]+)/.+$")


def principal_arn(arn: str) -> str:
    """The caller's principal: for an assumed role, the role (its session name is whatever
    the caller chose when assuming it, so one role's sessions would otherwise each own
    their own tasks); for a user or a root, the ARN as given. An assumed-role ARN does not
    carry the role's path, so neither does the result."""
    match = _ASSUMED_ROLE.match(arn)
    if match:
        partition, account, role = match.groups()
        return f"arn:{partition}:iam::{account}:role/{role}"
    return arn


def owner_from_event(event: dict[str, Any] | None, anonymous_owner: str) -> str:
    """The authorizer's subject, or the configured anonymous owner when auth is off.

    Covers HTTP API JWT authorizers (and taskgate/auth, which puts verified claims in
    the same place), REST API Cognito authorizers, Lambda authorizers and IAM-authorized
    requests (owned by the role, whatever the session is called).
    """
    if not event:
        return anonymous_owner
    context = event.get("requestContext") or {}
    authorizer = context.get("authorizer") or {}
    jwt_claims = (authorizer.get("jwt") or {}).get("claims") or {}
    for claims in (jwt_claims, authorizer.get("claims") or {}):
        subject = claims.get("sub")
        if subject:
            issuer = claims.get("iss", "")
            return f"{issuer}#{subject}" if issuer else str(subject)
    lambda_ctx = authorizer.get("lambda") or {}
    principal = lambda_ctx.get("owner") or authorizer.get("principalId")
    if principal:
        return f"principal#{principal}"
    iam = authorizer.get("iam") or context.get("identity") or {}
    arn = iam.get("userArn")
    if arn:
        return f"iam#{principal_arn(str(arn))}"
    return anonymous_owner
