"""Who owns a request's tasks: the caller's identity from API Gateway's authorizer."""

from __future__ import annotations

from typing import Any


def owner_from_event(event: dict[str, Any] | None, anonymous_owner: str) -> str:
    """The authorizer's subject, or the configured anonymous owner when auth is off.

    Covers HTTP API JWT authorizers, REST API Cognito authorizers, Lambda
    authorizers and IAM-authorized requests.
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
        return f"iam#{arn}"
    return anonymous_owner
