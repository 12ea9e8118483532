"""Response streaming for the Python managed runtime, which has none of its own.

API Gateway REST APIs (integration ``ResponseTransferMode: STREAM``) and Lambda
function URLs (``InvokeMode: RESPONSE_STREAM``) pass a function's bytes on as it
writes them, for up to 15 minutes, if the function streams. Lambda's Python runtime
only returns whole responses, but any runtime may stream through the Runtime API's
documented streaming mode: the response POST carries
``Lambda-Runtime-Function-Response-Mode: streaming`` and a chunked body (an HTTP
prelude, eight NUL bytes, then the payload as it comes), with error trailers for a
failure after the first byte.

``AWS_LAMBDA_EXEC_WRAPPER`` (functions/stream/taskgate-stream-runtime) starts this
package's loop in place of the managed runtime's own: ``runtime_api`` speaks the
Runtime API, ``asgi`` runs the Starlette app for one API Gateway event and hands its
bytes over as the app sends them. Nothing here is imported by the other functions.
"""
