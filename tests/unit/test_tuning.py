"""The Tuning string (taskgate/tuning.py, issue 29 item 4): the values only the functions read,
checked before a deploy as a function will read them - a misspelt key, a value out of the
bounds its Parameter had or one Settings refuses fails, naming the key."""

from __future__ import annotations

import pathlib

import pytest

from taskgate.config import Settings, parse_tuning
from taskgate.tuning import BOUNDS, KEYS, TuningError, environment, with_tuning

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_pairs_set_the_variables_settings_reads() -> None:
    text = (
        "CallPieceSeconds=15 HangUpSeconds=120\n  AllowedHosts=a.example.com,b.example.com CallHandles=false"
    )
    assert parse_tuning(text) == {
        "CallPieceSeconds": "15",
        "HangUpSeconds": "120",
        "AllowedHosts": "a.example.com,b.example.com",
        "CallHandles": "false",
    }
    settings = Settings.from_env({"TASK_TABLE": "t", "TUNING": text})
    assert settings.calls.piece_seconds == 15 and settings.calls.hang_up_seconds == 120
    assert settings.allowed_hosts == ("a.example.com", "b.example.com") and settings.calls.handles is False
    assert parse_tuning("") == {} and environment("") == {}


def test_every_key_is_a_variable_settings_reads() -> None:
    variables = {name.upper() for name in Settings.variables()}
    assert set(KEYS.values()) <= variables
    assert set(BOUNDS) <= set(KEYS)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("CallPeiceSeconds=15", "unknown key CallPeiceSeconds (did you mean CallPieceSeconds?)"),
        ("Nonsense=1", "unknown key Nonsense"),
        ("CallPieceSeconds=26", "CallPieceSeconds must be between 1 and 25"),
        ("MaxTtlMs=soon", "MaxTtlMs must be a number"),
        ("CallHandles=yes", "CallHandles must be one of true, false"),
        ("HangUpSeconds=30", "HangUpSeconds (30) must cover three reconnects"),  # Settings' own check
        ("CallPieceSeconds=15 CallPieceSeconds=16", "CallPieceSeconds is given twice"),
        ("CallPieceSeconds = 15", "is not Key=value"),
        ("AllowedHosts=https://x.example.com", "AllowedHosts"),
    ],
)
def test_a_tuning_the_functions_could_not_start_with_is_refused_naming_the_key(text: str, named: str) -> None:
    with pytest.raises(TuningError) as refused:
        parse_tuning(text)
    assert named in str(refused.value)
    # Never a variable's name: the deployer wrote keys.
    assert not any(variable in str(refused.value) for variable in KEYS.values() if variable not in KEYS)


def test_a_variable_the_environment_sets_itself_wins() -> None:
    assert with_tuning({"TUNING": "MaxTtlMs=60000", "MAX_TTL_MS": "120000"})["MAX_TTL_MS"] == "120000"
    assert with_tuning({"TUNING": "MaxTtlMs=60000", "MAX_TTL_MS": ""})["MAX_TTL_MS"] == "60000"


def test_the_log_level_is_put_where_powertools_reads_it() -> None:
    """LogLevel is a Tuning key (it was a Parameter): Powertools reads POWERTOOLS_LOG_LEVEL
    itself when a handler builds its logger, so the handler puts it there first."""
    from taskgate.tuning import export_environment

    environ = {"TUNING": "CallPieceSeconds=15 LogLevel=DEBUG"}
    export_environment(environ)
    assert environ["POWERTOOLS_LOG_LEVEL"] == "DEBUG"
    kept = {"TUNING": "LogLevel=DEBUG", "POWERTOOLS_LOG_LEVEL": "ERROR"}
    export_environment(kept)
    assert kept["POWERTOOLS_LOG_LEVEL"] == "ERROR"
    with pytest.raises(TuningError, match="LogLevel must be one of DEBUG, INFO, WARNING, ERROR"):
        parse_tuning("LogLevel=LOUD")
    for handler in (
        "api/api_handler.py",
        "worker/worker_handler.py",
        "sweeper/sweeper_handler.py",
        "stream/stream_handler.py",
    ):
        text = (ROOT / "functions" / handler).read_text()
        assert text.index("export_environment()") < text.index("Logger()"), handler
