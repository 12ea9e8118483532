"""Sign-in for AuthMode JWT: taskgate as an OAuth 2.1 resource server (MCP authorization).

- ``resource``: the RFC 9728 Protected Resource Metadata, the ``WWW-Authenticate``
  challenges and the ASGI middleware that answers 401/403 on /mcp;
- ``tokens``: what a verified token is and the two ways one is refused;
- ``jwt``: RS256 JWT verification over the issuer's JWKS (the only module here that
  imports ``cryptography``, and only when the first token is checked).

Why in the Lambda and not API Gateway's JWT authorizer: that authorizer answers 401
itself, and no setting of an HTTP API can add ``resource_metadata`` to its
``WWW-Authenticate`` (HTTP APIs have no gateway responses; response parameter mapping
applies to integration responses only). MCP clients discover the authorization server
from that header. Verification costs about 0.1 ms a request; the keys are fetched once
per instance.
"""
