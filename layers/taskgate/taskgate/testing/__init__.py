"""Test your tools the way taskgate runs them, with no AWS and no server: ``ToolTester``.

    from taskgate.testing import ToolTester, accept

    def test_resize_asks_first():
        run = ToolTester(resize_images).start(resize_images, {"bucket": "photos"})
        assert run.questions["confirm"].message == "Resize 3 images?"
        run.answer(confirm=accept(ok=True))
        assert run.status == "completed" and run.text == "Resized 3 images"

In the installable package (``pip install taskgate``), never in the Lambda layer (layers/Makefile
removes it, as ``taskgate.local``). ``taskgate.testing.memory`` holds the in-memory ports the
tester (and taskgate's own tests and bench) build the composition root on.
"""

from .kit import (
    LogLine,
    Progress,
    ProgressWentBack,
    Question,
    Run,
    ToolTester,
    accept,
    decline,
    dismiss,
    roots,
    sampled,
)

__all__ = [
    "LogLine",
    "Progress",
    "ProgressWentBack",
    "Question",
    "Run",
    "ToolTester",
    "accept",
    "decline",
    "dismiss",
    "roots",
    "sampled",
]
