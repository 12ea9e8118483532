"""The Parameters earlier releases had and this one has not, and where each one's value lives now.

CloudFormation forgets a Parameter the new template does not declare, value and all, and
``sam deploy`` leaves out an override that names one (it sends only the template's
Parameters): a stack deployed with ``CallWaitSeconds=120`` would run with the default after
the upgrade, and nothing would say so. So a value moves before the deploy, or the deploy stops:

- ``make deploy`` (scripts/deploy.py) reads the stack's Parameters and the saved overrides,
  carries each value that is not the former default into its new home (``carry``), shows it
  and saves it to samconfig.toml; what it cannot carry it refuses, saying what to set.
- a plain ``sam deploy`` meets the configuration custom resource (functions/deploy_checks),
  which reads what the stack's functions run with now and refuses a ``Tuning`` that would drop a
  value a removed Parameter gave them (``dropped_values``), saying the Tuning to set.

Standard library only, beside taskgate.tuning: the deploy script and the deploy checks import it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from .config import parse_tuning
from .tuning import BOUNDS, EXPORTED, KEYS, TuningError

TUNING = "Tuning"
JOB_ARNS = "JobArns"


@dataclass(frozen=True)
class Former:
    home: str  # TUNING (its key of the same name), JOB_ARNS, or "" (none)
    default: str  # its Default, the same in every release that had it
    why: str = ""  # with no home: why, and what a deployed stack runs with instead


# Every Parameter a release since 16d9020 declared and this one does not
# (tests/unit/test_former_parameters.py compares them with those releases' templates).
FORMER: dict[str, Former] = {
    **{
        name: Former(TUNING, default)
        for name, default in {
            "DefaultTtlMs": "3600000",
            "MaxTtlMs": "86400000",
            "PollIntervalMs": "1000",
            "AnonymousOwner": "anonymous",
            "MaxActiveTasksPerOwner": "100",
            "MaxArgumentBytes": "262144",
            "MaxInputResponseBytes": "65536",
            "MaxCheckpointBytes": "65536",
            "MaxInlineResultBytes": "262144",
            "MaxResultResponseBytes": "2097152",
            "MaxTaskRuntimeSeconds": "86400",
            "MaxBodyBytes": "1048576",
            "StreamMaxSeconds": "0",
            "StaleAfterSeconds": "300",
            "InlineCallMaxSeconds": "10",
            "CallWaitSeconds": "50",
            "CallHandles": "true",
            "CallPieceSeconds": "20",
            "HangUpSeconds": "90",
            "RequestStateTtlSeconds": "600",
            "AllowedHosts": "",
            "LogLevel": "INFO",
        }.items()
    },
    **{
        name: Former(JOB_ARNS, "")
        for name in (
            "JobStateMachineArns",
            "JobBatchQueueArns",
            "JobBatchDefinitionArns",
            "JobEcsClusterArns",
            "JobEcsTaskDefinitionArns",
            "JobEcsRoleArns",
            "JobGlueJobArns",
        )
    },
    "EndpointUrl": Former(
        "",
        "",
        "it was for sam local invoke only (events/env.json sets AWS_ENDPOINT_URL now); deployed, "
        "the functions call AWS itself",
    ),
}
_PAIR = re.compile(r"([A-Za-z][A-Za-z0-9]*)=(\S*)")
# Lists a Tuning holds as comma-separated items with no spaces.
_LISTS = frozenset({"AllowedHosts"})


def home(name: str) -> str:
    """Where the value of the former Parameter ``name`` goes now, in words."""
    former = FORMER[name]
    if former.home == TUNING:
        return f'its value goes to the Tuning key {name} (Tuning="{name}=<value>")'
    if former.home == JOB_ARNS:
        return "its value goes to JobArns (one list of every job's ARNs, of any kind)"
    return f"its value has no new home: {former.why}"


def variable(name: str) -> str:
    """The environment variable the former Parameter ``name`` set in the functions (the one its
    Tuning key sets now)."""
    return KEYS.get(name) or EXPORTED[name]


def is_default(name: str, value: str) -> bool:
    default = FORMER[name].default
    if value.strip() == default:
        return True
    try:
        return float(value) == float(default)
    except ValueError:
        return False


@dataclass
class Carried:
    """What ``carry`` found: the Parameter values to deploy with now, and what to show."""

    overrides: dict[str, str] = field(default_factory=dict)  # Tuning / JobArns, when they change
    moved: list[tuple[str, str, str]] = field(default_factory=list)  # (former, its value, now where)
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def pairs(tuning: str) -> dict[str, str]:
    """A Tuning's Key -> value, unchecked (a malformed item is skipped)."""
    return {m.group(1): m.group(2) for item in tuning.split() if (m := _PAIR.fullmatch(item))}


def with_keys(tuning: str, extra: Mapping[str, str]) -> str:
    """``tuning`` with the keys of ``extra`` it does not set added at its end."""
    given = pairs(tuning)
    added = [f"{k}={v}" for k, v in extra.items() if k not in given]
    return " ".join([*tuning.split(), *added])


def _tuning_value(name: str, value: str) -> str | None:
    """The value as a Tuning holds it (no spaces), or None if it cannot."""
    value = value.strip()
    if name in _LISTS:
        value = ",".join(item.strip() for item in value.split(","))
    return None if re.search(r"\s", value) else value


def _within_bounds(name: str, value: str) -> str:
    """The nearest value the Tuning key accepts, for the message that says what to set."""
    if name in BOUNDS:
        low, high = BOUNDS[name]
        try:
            return f"{min(max(float(value), low), high):.0f}"
        except ValueError:
            pass
    return "<a value it accepts>"


def settable(name: str, value: str) -> str:
    """``value`` as the Tuning key ``name`` takes it: itself, or the nearest value it accepts."""
    held = _tuning_value(name, value) or re.sub(r"\s+", "-", value.strip())
    try:
        parse_tuning(f"{name}={held}")
    except TuningError:
        return _within_bounds(name, held)
    return held


def carry(
    found: Mapping[str, str],
    *,
    tuning: str = "",
    job_arns: str = "",
    drop: Collection[str] = (),
) -> Carried:
    """Carry the values of former Parameters in ``found`` (the stack's Parameters, or the saved
    overrides; any others are ignored) into ``tuning`` and ``job_arns`` (what the deploy gives
    those now). A value equal to the former default stays behind: this release's default
    reaches the stack. A key the Tuning already sets is the deployer's choice and wins. A value
    with no home is refused unless its Parameter is in ``drop``."""
    carrier = _Carrier(tuning, job_arns)
    for name, value in found.items():
        former = FORMER.get(name)
        if former is None or is_default(name, value):
            continue
        if former.home == TUNING:
            carrier.to_tuning(name, value)
        elif former.home == JOB_ARNS:
            carrier.to_job_arns(name, value)
        elif name in drop:
            carrier.out.notes.append(f"{name} ({value}) dropped, as asked: {former.why}")
        else:
            carrier.out.refused.append(
                f"{name}: the stack has '{value}', and this release has no {name} ({former.why}). "
                f"To deploy without it, run again with --drop {name}"
            )
    return carrier.done()


class _Carrier:
    def __init__(self, tuning: str, job_arns: str) -> None:
        self.out = Carried()
        self.tuning, self.given = tuning, pairs(tuning)
        self.added: dict[str, str] = {}
        self.job_arns = [a.strip() for a in job_arns.split(",") if a.strip()]
        self.arns = list(self.job_arns)
        self.refusing: dict[str, tuple[str, str, str]] = {}  # name -> (value, why, what to set)

    def to_tuning(self, name: str, value: str) -> None:
        held = _tuning_value(name, value)
        if name in self.given:
            if self.given[name] != held:
                self.out.notes.append(
                    f"{name}: your Tuning sets {self.given[name]}; the stack's former {name} "
                    f"({value}) is not carried"
                )
            return
        problem = "a Tuning value has no spaces" if held is None else ""
        if held is not None:
            try:
                parse_tuning(f"{name}={held}")
            except TuningError as error:
                problem = str(error)
        if held is None or problem:
            suggestion = re.sub(r"\s+", "-", value.strip()) if held is None else _within_bounds(name, held)
            self.refusing[name] = (value, problem, suggestion)
            return
        self.added[name] = held
        self.out.moved.append((name, value, f"Tuning {name}={held}"))

    def to_job_arns(self, name: str, value: str) -> None:
        new = [a.strip() for a in value.split(",") if a.strip() and a.strip() not in self.arns]
        self.arns.extend(new)
        if new:
            self.out.moved.append((name, value, JOB_ARNS))

    def done(self) -> Carried:
        # One Tuning to set for all of them: what is carried, and a value each refused key takes.
        told = with_keys(self.tuning, {**self.added, **{k: v[2] for k, v in self.refusing.items()}})
        for name, (value, problem, _) in self.refusing.items():
            self.out.refused.append(
                f"{name}: the stack has '{value}', which its new home, the Tuning key {name}, does "
                f'not take ({problem}). Set Tuning="{told}" (or another value for {name})'
            )
        if self.added:
            text = with_keys(self.tuning, self.added)
            try:
                parse_tuning(text)
            except TuningError as error:
                self.out.refused.append(f"Tuning: with the values carried ({text}), {error}")
            self.out.overrides[TUNING] = text
        if self.arns != self.job_arns:
            self.out.overrides[JOB_ARNS] = ",".join(self.arns)
        return self.out


def dropped_values(environment: Mapping[str, str], tuning: str) -> dict[str, str]:
    """{Tuning key: value} a function runs with from a Parameter a release removed (releases
    before the Tuning set one variable per Parameter, in ``environment``) that ``tuning`` does not
    set: a deploy with this Tuning would return it to the default."""
    given = pairs(tuning)
    out: dict[str, str] = {}
    for name, former in FORMER.items():
        if former.home != TUNING or name in given:
            continue
        value = environment.get(variable(name))
        if not value or is_default(name, value):
            continue
        out[name] = _tuning_value(name, value) or value
    return out
