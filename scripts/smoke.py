"""A deployer's smoke test: `make smoke URL=https://…/mcp [STACK=name]` after `sam deploy`.

    python scripts/smoke.py --url URL [--token T | --token-command CMD] [--stack NAME] [--open]

Checks, in order, and stops at the first that fails (exit 1, saying what failed):
1. sign-in metadata: /mcp answers an unsigned request 401 with resource_metadata, and that
   RFC 9728 document names this endpoint and an authorization server (skipped only with
   --open, for an AuthMode NONE stack);
2. a task round trip as a signed-in caller: orders_report as a task, polled to completed;
3. a parked task answered: archive_orders asks to confirm; the answer (decline: nothing is
   archived) resumes it to its end;
4. a cancel: a slow orders_report cancelled while it works ends cancelled;
5. the alarms' topic (with --stack, using your AWS credentials): the stack's AlarmTopicArn has
   a confirmed subscription, so an alarm reaches someone.

The signed-in caller's token comes from ``signed_in_token``: --token (or TASKGATE_SMOKE_TOKEN),
or --token-command, a command that prints one (it gets the sign-in metadata on stdin), or else,
with --stack, the stack's own agent: the AgentClient's secret read from Cognito with your AWS
credentials and a client-credentials grant at AgentTokenEndpoint (``agent_token``). That
function is the one place a sign-in flow plugs in.
Uses only the tools a production stack lists (taskgate_tools) and the standard library, plus
boto3 with --stack.
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
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))

from taskgate_cli.protocol import Client2026, TaskView
from taskgate_cli.transport import Http


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
    return {
        o["OutputKey"]: o["OutputValue"]
        for o in cloudformation.describe_stacks(StackName=stack)["Stacks"][0].get("Outputs", [])
    }


def agent_token(stack: str, cloudformation: Any, cognito: Any) -> str:
    """An access token of the stack's own agent (AgentClient, client credentials at the
    user pool's token endpoint): what a machine caller of the deployed endpoint holds."""
    outputs = _outputs(stack, cloudformation)
    client_id, endpoint = outputs.get("AgentClientId"), outputs.get("AgentTokenEndpoint")
    pool = outputs.get("UserPoolId")
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
    for tool in client.list_tools():
        if tool["name"] == name:
            return tool
    raise SmokeFailure(f"the endpoint lists no {name} tool (ToolModules without taskgate_tools?)")


def round_trip(client: Client2026, timeout: float) -> str:
    """Step 2."""
    reply = client.call_tool(_tool(client, "orders_report"), {"year": 2025, "orders": 200}, {})
    if reply.task is None:
        raise SmokeFailure(f"orders_report did not become a task: {reply}")
    view = _wait(client, reply.task.task_id, lambda v: v.terminal, timeout)
    if view.status != "completed" or not (view.result or {}).get("structuredContent"):
        raise SmokeFailure(f"orders_report ended {view.status}: {view.error or view.result}")
    return f"orders_report {view.task_id} completed ({view.result['structuredContent']['orders']} orders)"  # type: ignore[index]


def parked_and_answered(client: Client2026, timeout: float) -> str:
    """Step 3: the answer declines, so nothing is archived."""
    reply = client.call_tool(_tool(client, "archive_orders"), {"year": 2025, "orders": 200}, {})
    if reply.task is None:
        raise SmokeFailure(f"archive_orders did not become a task: {reply}")
    parked = _wait(client, reply.task.task_id, lambda v: v.status == "input_required", timeout)
    questions = client.questions(parked)
    if not questions:
        raise SmokeFailure("archive_orders parked without a question")
    client.answer(
        parked.task_id, {q.key: {"action": "accept", "content": {"confirm": False}} for q in questions}
    )
    view = _wait(client, parked.task_id, lambda v: v.terminal, timeout)
    text = json.dumps(view.result or view.error)
    if view.status != "completed" or "declined" not in text:
        raise SmokeFailure(f"the answered task ended {view.status}: {text[:300]}")
    return f"archive_orders {view.task_id} parked, answered, completed (declined: nothing archived)"


def cancelled(client: Client2026, timeout: float) -> str:
    """Step 4."""
    reply = client.call_tool(
        _tool(client, "orders_report"), {"year": 2025, "orders": 200, "pause_seconds": 30}, {}
    )
    if reply.task is None:
        raise SmokeFailure("orders_report did not become a task")
    client.cancel(reply.task.task_id)
    view = _wait(client, reply.task.task_id, lambda v: v.terminal, timeout)
    if view.status != "cancelled":
        raise SmokeFailure(f"the cancelled task ended {view.status}")
    return f"orders_report {view.task_id} cancelled"


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the McpEndpoint output")
    parser.add_argument("--token", default=os.environ.get("TASKGATE_SMOKE_TOKEN"))
    parser.add_argument("--token-command")
    parser.add_argument("--stack", help="check the stack's alarm topic (AWS credentials needed)")
    parser.add_argument("--open", action="store_true", help="the stack has no sign-in (AuthMode NONE)")
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args(argv)
    steps: list[tuple[str, Callable[[], str]]] = []
    state: dict[str, Any] = {}

    def sign_in() -> str:
        state["metadata"] = sign_in_metadata(args.url)
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
            state["client"] = Client2026(Http(args.url, headers))
        return state["client"]  # type: ignore[no-any-return]

    if not args.open:
        steps.append(("sign-in metadata", sign_in))
    steps += [
        ("task round trip", lambda: round_trip(client(), args.timeout)),
        ("parked task answered", lambda: parked_and_answered(client(), args.timeout)),
        ("cancel", lambda: cancelled(client(), args.timeout)),
    ]
    if args.stack:
        import boto3

        steps.append(
            (
                "alarm topic",
                lambda: alarm_topic(args.stack, boto3.client("cloudformation"), boto3.client("sns")),
            )
        )
    print(f"smoke test of {args.url} ({urlsplit(args.url).netloc})", flush=True)
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
