"""A deployer's smoke test, after a deploy: ``make smoke`` (``python -m taskgate_cli.smoke``).

    python -m taskgate_cli.smoke [--url URL] [--stack NAME] [--token T | --token-command CMD] [--open]
        --task 'TOOL {"arg": 1}' [--task …] [--cancel 'TOOL {…}']

Checks, in order, and stops at the first that fails (exit 1, saying what failed):
1. sign-in metadata: /mcp answers an unsigned request 401 with resource_metadata, and that
   RFC 9728 document names this endpoint and an authorization server (skipped only with
   --open, for a stack without sign-in);
2. each --task: the tool called as a task by a signed-in caller and followed to its end through
   the state machine and the worker; every question it asks is declined (a person saying no
   changes nothing), and the answer resumes it;
3. --cancel: the tool called as a task and cancelled at once ends cancelled;
4. the alarms' topic (with --stack, using your AWS credentials): the stack's AlarmTopicArn has
   a confirmed subscription, so an alarm reaches someone.

With --stack, the endpoint (McpEndpoint) and the rest are read from the stack's outputs, those
of the taskgate stack nested in a project's included (taskgate_cli.deployed). The signed-in
caller's token comes from ``signed_in_token``: --token (or TASKGATE_SMOKE_TOKEN), or
--token-command, a command that prints one (it gets the sign-in metadata on stdin), or else,
with --stack, the stack's own agent: the AgentClient's secret read from Cognito with your AWS
credentials and a client-credentials grant at AgentTokenEndpoint (``agent_token``). That
function is the one place a sign-in flow plugs in. The standard library only, plus boto3 with
--stack.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from . import deployed
from .protocol import Client2026, TaskView
from .transport import Http


class SmokeFailure(Exception):
    pass


def _get_json(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode(errors="replace")
        return exc.code, dict(exc.headers), parsed


def sign_in_metadata(url: str) -> dict[str, Any]:
    """Step 1: what an MCP client finds before it signs in."""
    request = urllib.request.Request(
        url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        method="POST",
    )
    try:
        urllib.request.urlopen(request, timeout=30).close()
        raise SmokeFailure(f"{url} answered a request without a token: is sign-in off (AuthMode NONE)?")
    except urllib.error.HTTPError as exc:
        if exc.code != 401:
            raise SmokeFailure(f"an unsigned request got HTTP {exc.code}, not 401") from None
        challenge = exc.headers.get("WWW-Authenticate", "")
    if "resource_metadata=" not in challenge:
        raise SmokeFailure(f"the 401 names no resource_metadata: {challenge!r}")
    metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
    status, _, metadata = _get_json(metadata_url)
    if status != 200 or not isinstance(metadata, dict):
        raise SmokeFailure(f"{metadata_url} answered HTTP {status}")
    if metadata.get("resource", "").rstrip("/") != url.rstrip("/"):
        raise SmokeFailure(
            f"the metadata's resource is {metadata.get('resource')!r}, not {url!r} (PublicUrl?)"
        )
    if not metadata.get("authorization_servers"):
        raise SmokeFailure("the metadata names no authorization server")
    return metadata


def signed_in_token(
    metadata: dict[str, Any],
    token: str | None,
    command: str | None,
    agent: Callable[[], str] | None = None,
) -> str:
    """The signed-in caller's access token for this endpoint. Replace this to sign in another
    way. ``agent``: the stack's own agent client (--stack)."""
    if token:
        return token
    if command:
        done = subprocess.run(command, shell=True, input=json.dumps(metadata), capture_output=True, text=True)
        if done.returncode != 0 or not done.stdout.strip():
            raise SmokeFailure(f"--token-command failed ({done.returncode}): {done.stderr.strip()[:300]}")
        return done.stdout.strip().splitlines()[-1]
    if agent is not None:
        return agent()
    raise SmokeFailure(
        "no token: pass --stack (the stack's agent client signs in), --token (or TASKGATE_SMOKE_TOKEN) "
        "or --token-command"
    )


def _outputs(stack: str, cloudformation: Any) -> dict[str, str]:
    try:
        return deployed.outputs(stack, cloudformation)
    except deployed.StackError as exc:
        raise SmokeFailure(str(exc)) from None


def agent_token(stack: str, cloudformation: Any, cognito: Any) -> str:
    """An access token of the stack's own agent (AgentClient, client credentials at the
    user pool's token endpoint): what a machine caller of the deployed endpoint holds."""
    outputs = _outputs(stack, cloudformation)
    client_id, endpoint = (
        deployed.given(outputs, "AgentClientId"),
        deployed.given(outputs, "AgentTokenEndpoint"),
    )
    pool = deployed.given(outputs, "UserPoolId")
    if not (client_id and endpoint and pool):
        raise SmokeFailure(
            f"stack {stack} has no AgentClientId/AgentTokenEndpoint/UserPoolId outputs (your own JwtIssuer?): "
            "pass --token or --token-command"
        )
    secret = cognito.describe_user_pool_client(UserPoolId=pool, ClientId=client_id)["UserPoolClient"][
        "ClientSecret"
    ]
    form = {"grant_type": "client_credentials"}
    if outputs.get("OAuthScope"):
        form["scope"] = outputs["OAuthScope"]
    basic = base64.b64encode(f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()).decode()
    request = urllib.request.Request(
        endpoint,
        data=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": f"Basic {basic}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise SmokeFailure(
            f"the agent client's token request got HTTP {exc.code}: {exc.read()[:300]!r}"
        ) from None
    token = body.get("access_token") if isinstance(body, dict) else None
    if not token:
        raise SmokeFailure(f"{endpoint} answered no access_token")
    return str(token)


def _wait(client: Client2026, task_id: str, until: Callable[[TaskView], bool], timeout: float) -> TaskView:
    deadline = time.monotonic() + timeout
    while True:
        view = client.get_task(task_id)
        if until(view):
            return view
        if view.terminal or time.monotonic() > deadline:
            raise SmokeFailure(f"task {task_id} is {view.status} ({view.message})")
        time.sleep(max(0.2, view.poll_ms / 1000))


def _tool(client: Client2026, name: str) -> dict[str, Any]:
    listed = client.list_tools()
    for tool in listed:
        if tool["name"] == name:
            return tool
    names = ", ".join(t["name"] for t in listed) or "none"
    raise SmokeFailure(f"the endpoint lists no {name} tool (its tools: {names}; ToolModules?)")


def parse_call(text: str) -> tuple[str, dict[str, Any]]:
    """``TOOL {json arguments}`` (the arguments may be left out: ``{}``)."""
    name, _, arguments = text.strip().partition(" ")
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: the arguments are not JSON ({exc})") from None
    if not name or not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(f"{text!r}: expected TOOL {{json object}}")
    return name, parsed


def _start(client: Client2026, name: str, arguments: dict[str, Any]) -> str:
    reply = client.call_tool(_tool(client, name), arguments, {})
    if reply.task is None:
        raise SmokeFailure(f"{name} did not become a task: {reply}")
    return reply.task.task_id


def _summary(view: TaskView) -> str:
    result = view.result or {}
    texts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
    text = (texts[0] if texts else json.dumps(result.get("structuredContent")))[:120]
    return f"{'isError: ' if result.get('isError') else ''}{text}"


def task_to_its_end(client: Client2026, name: str, arguments: dict[str, Any], timeout: float) -> str:
    """Step 2: a task followed to its end, each of its questions declined."""
    task_id = _start(client, name, arguments)
    declined: set[str] = set()

    def settled(view: TaskView) -> bool:
        return view.terminal or (
            view.status == "input_required" and any(q.key not in declined for q in client.questions(view))
        )

    while not (view := _wait(client, task_id, settled, timeout)).terminal:
        fresh = [q.key for q in client.questions(view) if q.key not in declined]
        client.answer(task_id, {key: {"action": "decline"} for key in fresh})
        declined.update(fresh)
    if view.status != "completed":
        raise SmokeFailure(f"{name} {task_id} ended {view.status}: {view.error or view.result}")
    asked = f", {len(declined)} question(s) declined" if declined else ""
    return f"{name} {task_id} completed{asked}: {_summary(view)}"


def cancelled(client: Client2026, name: str, arguments: dict[str, Any], timeout: float) -> str:
    """Step 3."""
    task_id = _start(client, name, arguments)
    client.cancel(task_id)
    view = _wait(client, task_id, lambda v: v.terminal, timeout)
    if view.status != "cancelled":
        raise SmokeFailure(f"the cancelled task ended {view.status}")
    return f"{name} {task_id} cancelled"


def alarm_topic(stack: str, cloudformation: Any, sns: Any) -> str:
    """Step 5: the alarms notify someone."""
    outputs = _outputs(stack, cloudformation)
    topic = outputs.get("AlarmTopicArn")
    if not topic:
        raise SmokeFailure(f"stack {stack} has no AlarmTopicArn output (EnableMonitoring=false?)")
    subscriptions = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    confirmed = [s for s in subscriptions if s["SubscriptionArn"].startswith("arn:")]
    if not confirmed:
        pending = " (one is pending: confirm the email)" if subscriptions else ""
        raise SmokeFailure(f"nobody is subscribed to {topic}{pending}: set AlarmEmail or subscribe yourself")
    return (
        f"{topic}: {len(confirmed)} confirmed subscription(s) ({', '.join(s['Protocol'] for s in confirmed)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m taskgate_cli.smoke", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--url", help="the McpEndpoint output (default, with --stack: read from the stack)")
    parser.add_argument("--token", default=os.environ.get("TASKGATE_SMOKE_TOKEN"))
    parser.add_argument("--token-command")
    parser.add_argument(
        "--stack", help="the stack: its outputs, its agent's sign-in, its alarm topic (AWS credentials)"
    )
    parser.add_argument("--open", action="store_true", help="the stack has no sign-in")
    parser.add_argument("--task", type=parse_call, action="append", default=[], metavar="'TOOL {JSON}'")
    parser.add_argument("--cancel", type=parse_call, metavar="'TOOL {JSON}'")
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args(argv)
    if not (args.url or args.stack):
        parser.error("give --url or --stack")
    if not (args.task or args.cancel):
        parser.error("give at least one --task or --cancel: a tool your deployment serves")
    steps: list[tuple[str, Callable[[], str]]] = []
    state: dict[str, Any] = {}
    url = args.url or ""
    if not url:
        import boto3

        url = _outputs(args.stack, boto3.client("cloudformation")).get("McpEndpoint", "")
        if not url:
            print(f"FAIL stack {args.stack} has no McpEndpoint output", flush=True)
            return 1

    def sign_in() -> str:
        state["metadata"] = sign_in_metadata(url)
        return f"resource {state['metadata']['resource']}, signs in at {state['metadata']['authorization_servers'][0]}"

    def stack_agent() -> str:
        import boto3

        return agent_token(args.stack, boto3.client("cloudformation"), boto3.client("cognito-idp"))

    agent = stack_agent if args.stack else None

    def client() -> Client2026:
        if "client" not in state:
            headers = (
                {}
                if args.open
                else {
                    "Authorization": "Bearer "
                    + signed_in_token(state["metadata"], args.token, args.token_command, agent)
                }
            )
            state["client"] = Client2026(Http(url, headers))
        return state["client"]  # type: ignore[no-any-return]

    if not args.open:
        steps.append(("sign-in metadata", sign_in))

    def on_client(check: Callable[..., str], tool: str, arguments: dict[str, Any]) -> Callable[[], str]:
        return lambda: check(client(), tool, arguments, args.timeout)

    steps += [(f"task {tool}", on_client(task_to_its_end, tool, arguments)) for tool, arguments in args.task]
    if args.cancel:
        steps.append((f"cancel {args.cancel[0]}", on_client(cancelled, *args.cancel)))
    if args.stack:
        import boto3

        steps.append(
            (
                "alarm topic",
                lambda: alarm_topic(args.stack, boto3.client("cloudformation"), boto3.client("sns")),
            )
        )
    print(f"smoke test of {url} ({urlsplit(url).netloc})", flush=True)
    for name, step in steps:
        started = time.monotonic()
        try:
            detail = step()
        except SmokeFailure as exc:
            print(f"FAIL {name}: {exc}", flush=True)
            return 1
        except Exception as exc:  # an MCP or HTTP error the endpoint answered with
            print(f"FAIL {name}: {type(exc).__name__}: {exc}", flush=True)
            return 1
        print(f"ok   {name:22} {time.monotonic() - started:5.1f} s  {detail}", flush=True)
    if not args.stack:
        print("note: the alarm topic was not checked (give --stack / STACK=)", flush=True)
    print(f"{len(steps)} passed, 0 failed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
