"""`make deploy`: a first deploy asks at most ten questions and saves only what the deployer
changed; every deploy after it deploys what is saved (the Makefile builds first).

    python scripts/deploy.py [--template template.yaml] [--config samconfig.toml] [--env default]
                             [--ask] [--answers FILE] [--drop NAME] [--dry-run] [-- SAM DEPLOY ARGS]

`sam deploy --guided` asks about every Parameter and saves every answer, the defaults too: a
default a later release changes never reaches that stack. Here a question is asked only for
what a first deploy must decide (who signs in, your tools, a domain, where alarms go), and only
answers that differ from the template's defaults go into samconfig.toml's
``parameter_overrides``; everything else is the template's, release after release. Over an
existing stack, ``sam deploy`` keeps each Parameter's previous value (UsePreviousValue): run
``python scripts/upgrade_diff.py`` to see what an upgrade changes.

Over an existing stack, every deploy first reads the stack's Parameters (DescribeStacks): a
value of a Parameter this release no longer has (taskgate/former_parameters.py) that is not its
former default moves into its new home (a ``Tuning`` key, ``JobArns``), is shown and saved to
samconfig.toml, because CloudFormation would forget it and ``sam deploy`` would say nothing.
What cannot move (out of the key's bounds; ``EndpointUrl``, which has no home) stops the deploy
with what to set; ``--drop NAME`` deploys without a value that has no home.

The same script serves a project made from templates/ (its stack nests taskgate's): only the
questions whose Parameter its template declares are asked. ``--answers`` takes a JSON object
of answers by Parameter name, for scripts and tests.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
# A stack's Parameters by name (None: no such stack), read before a deploy.
StackReader = Callable[[str, str | None, str | None], dict[str, str] | None]


@dataclass(frozen=True)
class Question:
    parameter: str  # the Parameter it sets ("" for the stack's name and Region)
    text: str
    yes_no: bool = False
    # Asked only when this earlier answer (Parameter -> value) was given.
    when: tuple[str, str] | None = None


# What a first deploy decides; everything else keeps the template's default (and its
# Description says how to change it later: sam deploy --parameter-overrides, or the Tuning).
QUESTIONS = (
    Question("StackName", "Stack name"),
    Question("Region", "AWS Region"),
    Question(
        "SignInPeople", "Do people sign in (hosts register themselves; the stack's sign-in page)?", True
    ),
    Question("SignInAgents", "Do agents sign in with client credentials?", True),
    Question("SignInIam", "May AWS principals call with SigV4 (IAM)?", True),
    Question("JwtIssuer", "Your own OpenID Connect issuer (empty: the stack creates a Cognito user pool)"),
    Question(
        "JwtSignInClientId",
        "  the client at that issuer this stack signs people in with",
        when=("JwtIssuer", "*"),
    ),
    Question(
        "JwtClientIds", "  the client ids of agents at that issuer (comma-separated)", when=("JwtIssuer", "*")
    ),
    Question("PublicUrl", "A custom domain in front of the API (https://..., empty: the API's own URL)"),
    Question("ToolModules", "Your tools' Python modules (comma-separated)"),
    Question("AlarmEmail", "An email address for the alarms (empty: none)"),
    Question("StreamingApi", "A second endpoint that streams long plain calls (REST API, 15 minutes)?", True),
)


def load_template(path: pathlib.Path) -> dict[str, Any]:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    # CloudFormation's short tags (!Ref, !Sub, ...): only the Parameters are read here.
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return yaml.load(path.read_text(), Loader)  # type: ignore[no-any-return]


def _default_region() -> str:
    """The Region the AWS CLI and SAM would use: AWS_REGION, AWS_DEFAULT_REGION, the profile's."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if os.environ.get(name):
            return os.environ[name]
    import configparser

    config = configparser.ConfigParser()
    config.read(os.environ.get("AWS_CONFIG_FILE", pathlib.Path.home() / ".aws" / "config"))
    profile = os.environ.get("AWS_PROFILE", "default")
    section = profile if profile == "default" else f"profile {profile}"
    return config.get(section, "region", fallback="us-east-1")


def _yes(value: str, default: str) -> str:
    value = value.strip().lower()
    if not value:
        return default
    return "true" if value in ("y", "yes", "true") else "false"


def ask(
    template: dict[str, Any],
    answer: Callable[[Question, str], str],
    *,
    stack: str = "taskgate",
) -> tuple[dict[str, str], dict[str, str]]:
    """(the stack's settings: StackName, Region; the Parameter values that differ from the
    template's defaults). ``answer(question, default)`` returns what the deployer typed."""
    parameters = template.get("Parameters", {})
    given: dict[str, str] = {}
    settings = {"StackName": stack, "Region": _default_region()}
    for question in QUESTIONS:
        if question.when is not None:
            earlier = given.get(question.when[0], "")
            if not earlier or (question.when[1] != "*" and earlier != question.when[1]):
                continue
        if question.parameter in settings:
            typed = answer(question, settings[question.parameter]).strip()
            settings[question.parameter] = typed or settings[question.parameter]
            continue
        if question.parameter not in parameters:
            continue  # this template does not have it (a project's declares a few)
        default = str(parameters[question.parameter].get("Default", ""))
        if question.yes_no:
            shown = "true" if default not in ("false", "") else "false"
            value = _yes(answer(question, shown), shown)
            if question.parameter == "StreamingApi" and value == shown:
                value = default
        else:
            value = answer(question, default).strip() or default
        given[question.parameter] = value
    chosen = {
        name: value for name, value in given.items() if value != str(parameters[name].get("Default", ""))
    }
    return settings, chosen


def save(config: pathlib.Path, env: str, settings: dict[str, str], chosen: dict[str, str]) -> None:
    """samconfig.toml's [env.*] tables for this deploy: only the values chosen, with the rest of
    the file as it was (comments too)."""
    import tomlkit

    document = tomlkit.parse(config.read_text()) if config.exists() else tomlkit.document()
    if "version" not in document:
        document["version"] = 0.1
    section = document.setdefault(env, tomlkit.table())
    section.setdefault("global", tomlkit.table()).setdefault("parameters", tomlkit.table())
    section["global"]["parameters"]["stack_name"] = settings["StackName"]
    section["global"]["parameters"]["region"] = settings["Region"]
    deploy = section.setdefault("deploy", tomlkit.table()).setdefault("parameters", tomlkit.table())
    deploy.setdefault("capabilities", "CAPABILITY_IAM")
    deploy.setdefault("resolve_s3", True)
    deploy.setdefault("confirm_changeset", True)
    deploy.setdefault("fail_on_empty_changeset", False)
    deploy.setdefault("s3_prefix", settings["StackName"])
    overrides = tomlkit.array()
    overrides.multiline(True)
    for name, value in chosen.items():
        overrides.append(_item(name, value))
    if chosen:
        deploy["parameter_overrides"] = overrides
    elif "parameter_overrides" in deploy:
        del deploy["parameter_overrides"]
    config.write_text(tomlkit.dumps(document))


def _item(name: str, value: str) -> str:
    """One parameter_overrides entry as the SAM CLI reads it (quoted when empty or spaced)."""
    if value == "" or re.search(r"[\s\"']", value):
        return f'{name}="{value.replace(chr(34), chr(92) + chr(34))}"'
    return f"{name}={value}"


# An entry as the SAM CLI splits parameter_overrides: Key=value, the value quoted or unspaced.
_OVERRIDE = re.compile(r"""(?:^|\s)([A-Za-z0-9]+)=("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|(?:\\.|[^\s"'\\])*)""")


def overrides_of(deploy: dict[str, Any] | None) -> dict[str, str]:
    """The saved parameter_overrides (a string, as sam deploy --guided writes it, or a list)."""
    value = (deploy or {}).get("parameter_overrides", [])
    items = [value] if isinstance(value, str) else [str(v) for v in value]
    out: dict[str, str] = {}
    for item in items:
        for name, raw in _OVERRIDE.findall(item):
            if raw[:1] in ('"', "'") and raw[-1:] == raw[:1] and len(raw) > 1:
                raw = raw[1:-1]
            out[name] = raw.replace('\\"', '"').replace("\\'", "'").replace("\\ ", " ")
    return out


def save_overrides(config: pathlib.Path, env: str, overrides: dict[str, str]) -> None:
    """parameter_overrides of [env.deploy.parameters] set to ``overrides``, the rest of the file
    as it was."""
    import tomlkit

    document = tomlkit.parse(config.read_text())
    section = document.setdefault(env, tomlkit.table())
    deploy = section.setdefault("deploy", tomlkit.table()).setdefault("parameters", tomlkit.table())
    items = tomlkit.array()
    items.multiline(True)
    for name, value in overrides.items():
        items.append(_item(name, value))
    deploy["parameter_overrides"] = items
    config.write_text(tomlkit.dumps(document))


def stack_parameters(stack: str, region: str | None, profile: str | None) -> dict[str, str] | None:
    """The deployed stack's Parameters (DescribeStacks), or None if there is no such stack."""
    import boto3
    from botocore.exceptions import ClientError

    client = boto3.Session(profile_name=profile, region_name=region).client("cloudformation")
    try:
        stacks = client.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as error:
        if "does not exist" in str(error):
            return None
        raise
    return {p["ParameterKey"]: str(p.get("ParameterValue", "")) for p in stacks[0].get("Parameters", [])}


def _former_parameters() -> Any:
    try:
        from taskgate import former_parameters
    except ImportError:  # a project's copy of the stack (.taskgate/) has the package in its layer
        sys.path.insert(0, str(ROOT / "layers" / "taskgate"))
        from taskgate import former_parameters
    return former_parameters


def _sam_arg(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def carry_former_values(
    template: dict[str, Any],
    config: pathlib.Path,
    env: str,
    read_stack: StackReader,
    *,
    drop: list[str],
    sam_args: list[str],
    say: Callable[[str], None] = print,
) -> bool:
    """Move the values of Parameters this template no longer has (the deployed stack's, or
    named in samconfig.toml) into their new homes and save them; False if the deploy must stop."""
    former = _former_parameters()
    import tomllib

    document = tomllib.loads(config.read_text())
    section = document.get(env, {})
    settings = {
        **section.get("global", {}).get("parameters", {}),
        **section.get("deploy", {}).get("parameters", {}),
    }
    stack = _sam_arg(sam_args, "--stack-name") or settings.get("stack_name")
    if not stack:
        return True
    declared = template.get("Parameters", {})
    homes = {former.TUNING, former.JOB_ARNS} & set(declared)
    saved_overrides = overrides_of(section.get("deploy", {}).get("parameters"))
    leaving = [n for n, f in former.FORMER.items() if n not in declared and (not f.home or f.home in homes)]
    try:
        deployed = read_stack(
            stack,
            _sam_arg(sam_args, "--region") or settings.get("region"),
            _sam_arg(sam_args, "--profile") or settings.get("profile"),
        )
    except Exception as error:
        say(
            f"Not deployed: could not read stack {stack}'s Parameters ({type(error).__name__}: {error}), "
            "so values of Parameters this release no longer has could be lost. sam deploy needs the "
            "same credentials."
        )
        return False
    deployed = deployed or {}
    found = {n: v for n, v in {**deployed, **saved_overrides}.items() if n in leaving}
    carried = former.carry(
        found,
        tuning=saved_overrides.get(former.TUNING, deployed.get(former.TUNING, "")),
        job_arns=saved_overrides.get(former.JOB_ARNS, deployed.get(former.JOB_ARNS, "")),
        drop=drop,
    )
    for note in carried.notes:
        say(f"  note: {note}")
    if carried.refused:
        say(
            f"Not deployed: stack {stack} has values of Parameters this release no longer has that "
            "cannot move by themselves:"
        )
        for refusal in carried.refused:
            say(f"  {refusal}")
        say(
            f"Put what you choose into parameter_overrides in {config} [{env}.deploy.parameters] and "
            "run make deploy again."
        )
        return False
    stale = [n for n in saved_overrides if n in leaving]
    if not carried.moved and not stale:
        return True
    if carried.moved:
        say(f"Stack {stack} has values of Parameters this release no longer has; they move:")
        width = max(len(f"{n}={v}") for n, v, _ in carried.moved)
        for name, value, where in carried.moved:
            say(f"  {f'{name}={value}':{width}}  ->  {where}")
    kept = {n: v for n, v in saved_overrides.items() if n not in leaving}
    save_overrides(config, env, {**kept, **carried.overrides})
    say(
        f"saved to {config} [{env}]: "
        + (" ".join(_item(k, v) for k, v in carried.overrides.items()) or "")
        + (f" (no longer there: {', '.join(stale)})" if stale else "")
    )
    return True


def saved(config: pathlib.Path, env: str) -> dict[str, Any] | None:
    import tomllib

    if not config.exists():
        return None
    document = tomllib.loads(config.read_text())
    deploy = document.get(env, {}).get("deploy", {}).get("parameters")
    stack = document.get(env, {}).get("global", {}).get("parameters", {}).get("stack_name")
    return deploy if deploy is not None and stack else None


def _terminal(question: Question, default: str) -> str:
    shown = {"true": "Y/n", "false": "y/N"}.get(default, default) if question.yes_no else default
    return input(f"{question.text} [{shown}]: ")


def main(argv: list[str] | None = None, read_stack: StackReader = stack_parameters) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template", type=pathlib.Path, default=pathlib.Path("template.yaml"))
    parser.add_argument("--config", type=pathlib.Path, default=pathlib.Path("samconfig.toml"))
    parser.add_argument("--env", default="default")
    parser.add_argument("--ask", action="store_true", help="ask again, even with a saved configuration")
    parser.add_argument("--answers", type=pathlib.Path, help="a JSON object of answers by Parameter name")
    parser.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="NAME",
        help="deploy without the stack's value of this former Parameter that has no new home",
    )
    parser.add_argument("--dry-run", action="store_true", help="say what would run; run nothing")
    parser.add_argument("sam_args", nargs="*", help="passed on to sam deploy (after --)")
    args = parser.parse_args(argv)

    template = load_template(args.template)
    if args.ask or args.answers or saved(args.config, args.env) is None:
        if args.answers:
            answers = json.loads(args.answers.read_text())

            def answer(question: Question, default: str) -> str:
                return str(answers.get(question.parameter, ""))

        else:
            answer = _terminal
        settings, chosen = ask(template, answer)
        save(args.config, args.env, settings, chosen)
        print(
            f"saved to {args.config} [{args.env}]: "
            + (" ".join(f"{k}={v}" for k, v in chosen.items()) or "the defaults")
        )
    if not carry_former_values(
        template, args.config, args.env, read_stack, drop=args.drop, sam_args=args.sam_args
    ):
        return 2
    command = ["sam", "deploy", "--config-file", str(args.config), "--config-env", args.env, *args.sam_args]
    print("$ " + shlex.join(command), flush=True)
    return 0 if args.dry_run else subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
