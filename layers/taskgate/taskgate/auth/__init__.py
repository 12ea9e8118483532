"""Sign-in (template Parameter AuthMode): who may call /mcp, and the OAuth 2.1 authorization
server MCP hosts sign in with.

- ``resource``: taskgate as a protected resource: the RFC 9728 metadata, the
  ``WWW-Authenticate`` challenges, and the ASGI middleware that answers 401/403 on /mcp (and
  takes IAM callers on /iam/mcp);
- ``tokens``, ``jwt``, ``jwks``, ``signing``: which access tokens /mcp accepts (the stack's own,
  and the upstream issuer's for agents), checked with joserfc; the issuer's keys, fetched at
  most once per interval; the stack's own signing key;
- ``endpoints``, ``routes``, ``authorization``, ``pages``, ``cimd``, ``redirects``, ``upstream``,
  ``state``: the stack's own authorization server (AuthMode USER) on Authlib: metadata,
  registration, Client ID Metadata Documents, consent, codes and refresh tokens, the sign-in
  delegated to the upstream issuer, and what it keeps in the task table;
- ``build``: all of it from Settings and ports (wiring.py passes the AWS adapters).

Why in the Lambda and not API Gateway's JWT authorizer: that authorizer answers 401 itself,
and no setting of an HTTP API can add ``resource_metadata`` to its ``WWW-Authenticate``. At a
cold start only the routes and the middleware exist: joserfc, Authlib and ``cryptography`` come
with the first request that needs them.
"""
