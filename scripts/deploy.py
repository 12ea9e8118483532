"""`make deploy`: a first deploy asks at most ten questions and saves only what the deployer
changed; every deploy after it deploys what is saved (the Makefile builds first).

    python scripts/deploy.py [--template template.yaml] [--config samconfig.toml] [--env default]
                             [--ask] [--answers FILE] [--dry-run] [-- SAM DEPLOY ARGS]

`sam deploy --guided` asks about every Parameter and saves every answer, the defaults too: a
default a later release changes never reaches that stack. Here a question is asked only for
what a first deploy must decide (who signs in, your tools, a domain, where alarms go), and only
answers that differ from the template's defaults go into samconfig.toml's
``parameter_overrides``; everything else is the template's, release after release. Over an
existing stack, ``sam deploy`` keeps each Parameter's previous value (UsePreviousValue): run
``python scripts/upgrade_diff.py`` to see what an upgrade changes.

The same script serves a project made from templates/ (its stack nests taskgate's): only the
questions whose Parameter its template declares are asked. ``--answers`` takes a JSON object
of answers by Parameter name, for scripts and tests.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]


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
        overrides.append(f"{name}={value}")
    if chosen:
        deploy["parameter_overrides"] = overrides
    elif "parameter_overrides" in deploy:
        del deploy["parameter_overrides"]
    config.write_text(tomlkit.dumps(document))


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template", type=pathlib.Path, default=pathlib.Path("template.yaml"))
    parser.add_argument("--config", type=pathlib.Path, default=pathlib.Path("samconfig.toml"))
    parser.add_argument("--env", default="default")
    parser.add_argument("--ask", action="store_true", help="ask again, even with a saved configuration")
    parser.add_argument("--answers", type=pathlib.Path, help="a JSON object of answers by Parameter name")
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
    command = ["sam", "deploy", "--config-file", str(args.config), "--config-env", args.env, *args.sam_args]
    print("$ " + shlex.join(command), flush=True)
    return 0 if args.dry_run else subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
