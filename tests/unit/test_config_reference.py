"""docs/reference/configuration.md is generated from the template's Parameters and Settings
(scripts/config_reference.py): a Parameter or a setting changed without the page fails here."""

from __future__ import annotations

import copy
import functools
import importlib.util
import pathlib
from types import ModuleType

from pydantic import BaseModel, Field

from taskgate.config import Settings

ROOT = pathlib.Path(__file__).resolve().parents[2]


@functools.cache
def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "config_reference", ROOT / "scripts" / "config_reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    template = module.load_template()
    module.load_template = lambda: template  # parsed once for these tests
    return module


def test_the_configuration_page_is_what_the_sources_say() -> None:
    # What `python scripts/config_reference.py --check` compares; the script rewrites it.
    script = _script()
    page = script.PAGE.read_text()
    assert script.render(page, script.tables()) == page, "stale: run python scripts/config_reference.py"


def test_every_parameter_and_setting_has_its_row() -> None:
    script = _script()
    page = script.PAGE.read_text()
    template = script.load_template()
    for name in template["Parameters"]:
        assert f"| `{name}` |" in page
    for path, field, _ in script._fields(Settings):
        assert f"| `{script.env_name(path, field)}` |" in page
    assert "| `SignInPeople` | String: `true`" in page
    assert "| `POLL_INTERVAL_MS` | int, > 0 | 1000 | `Tuning` key `PollIntervalMs` (100 to 60000) |" in page


def test_a_changed_parameter_or_setting_makes_the_page_stale() -> None:
    script = _script()
    page = script.PAGE.read_text()
    template = script.load_template()

    changed = copy.deepcopy(template)
    changed["Parameters"]["ApiMemorySize"]["Default"] = 2000
    assert script.render(page, script.tables(changed)) != page

    class Renamed(Settings):
        poll_interval_ms: int = Field(default=1_000, gt=0, description="How often clients poll.")

    assert "How often clients poll." in script.tables(template, Renamed)["settings"]
    assert script.render(page, script.tables(template, Renamed)) != page


def test_settings_in_groups_are_listed_field_by_field() -> None:
    # Settings may come to hold groups of fields (a model per concern): each field still gets
    # its row, named by env_name.
    script = _script()

    class Limits(BaseModel):
        # The largest request body.
        max_body_bytes: int = Field(default=1_048_576, gt=0)

    class Grouped(BaseModel):
        task_table: str = Field(min_length=1)
        limits: Limits = Limits()

    table = script.tables(script.load_template(), Grouped)["settings"]
    assert (
        "| `MAX_BODY_BYTES` | int, > 0 | 1048576 | `Tuning` key `MaxBodyBytes` (1024 to 3112960) | The largest request body. |"
        in table
    )
    assert "| `TASK_TABLE` |" in table
