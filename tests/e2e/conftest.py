"""Fixtures the end-to-end tests share."""

from __future__ import annotations

from collections.abc import Callable

import pytest

Say = Callable[[str], None]


@pytest.fixture(scope="module")
def say(pytestconfig: pytest.Config) -> Say:
    """Straight to the terminal (the CI log), whatever pytest captures: what a test
    must show on a passing run too."""
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")

    def out(text: str) -> None:
        with capture.global_and_fixture_disabled():  # type: ignore[union-attr]
            print(text, flush=True)

    return out
