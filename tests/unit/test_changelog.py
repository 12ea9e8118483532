"""The CHANGELOG's upgrade notes against the template's Parameters (scripts/upgrade_diff.py
--changelog, issue 31 item 6): a Parameter whose meaning changed for a deployed stack, with no
upgrade note naming it, fails the check."""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import upgrade_diff  # noqa: E402

BEFORE = {
    "Parameters": {
        "AuthMode": {"Type": "String", "Default": "JWT", "AllowedValues": ["JWT", "IAM", "NONE"]},
        "MaxBodyBytes": {"Type": "Number", "Default": 1048576, "MaxValue": 5242880},
        "OAuthCallbackUrls": {"Type": "CommaDelimitedList", "Default": ""},
        "LogLevel": {"Type": "String", "Default": "INFO", "Description": "old words"},
    }
}
AFTER = {
    "Parameters": {
        "AuthMode": {
            "Type": "String",
            "Default": "USER,CLIENT,IAM",
            "AllowedValues": ["USER,CLIENT,IAM", "JWT"],
        },
        "MaxBodyBytes": {"Type": "Number", "Default": 1048576, "MaxValue": 3112960},
        "LogLevel": {"Type": "String", "Default": "INFO", "Description": "new words"},
        "PublicUrl": {"Type": "String", "Default": ""},
    }
}
CHANGELOG = """# Changelog

## Unreleased

### Upgrade notes
- `AuthMode`: the default is now USER,CLIENT,IAM.

## 0.2.0

### Upgrade notes
- `OAuthCallbackUrls` is gone.

## 0.1.0

### Upgrade notes
- `MaxBodyBytes` is smaller.
"""


def test_a_changed_default_allowed_values_bound_or_a_removal_changes_a_parameters_meaning() -> None:
    changes = upgrade_diff.parameter_changes(BEFORE, AFTER)
    assert sorted(changes) == [
        "AuthMode",
        "MaxBodyBytes",
        "OAuthCallbackUrls",
    ]  # not the Description, not one added
    assert changes["OAuthCallbackUrls"] == "removed"
    assert "Default 'JWT' -> 'USER,CLIENT,IAM'" in changes["AuthMode"]
    assert changes["MaxBodyBytes"] == "MaxValue 5242880 -> 3112960"


def test_only_the_notes_of_releases_after_the_previous_one_count() -> None:
    # Upgrading from 0.1.0: the notes of 0.2.0 and of the unreleased section.
    assert upgrade_diff.upgrade_notes(CHANGELOG, "0.1.0", "0.3.0") == {"AuthMode", "OAuthCallbackUrls"}
    # From 0.2.0: the unreleased section only.
    assert upgrade_diff.upgrade_notes(CHANGELOG, "0.2.0", "0.3.0") == {"AuthMode"}
    # From a revision before the version now being prepared was released: every section.
    assert upgrade_diff.upgrade_notes(CHANGELOG, "0.3.0", "0.3.0") == {
        "AuthMode",
        "OAuthCallbackUrls",
        "MaxBodyBytes",
    }


def test_a_meaning_change_without_a_note_is_what_the_check_reports() -> None:
    changes = upgrade_diff.parameter_changes(BEFORE, AFTER)
    noted = upgrade_diff.upgrade_notes(CHANGELOG, "0.2.0", "0.3.0")
    assert [name for name in changes if name not in noted] == ["MaxBodyBytes", "OAuthCallbackUrls"]
