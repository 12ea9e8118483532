"""The example tool, tested with taskgate.testing: as a task and as a plain call, its question
answered, its progress seen, and cancelled."""

from taskgate.testing import ToolTester, accept, decline

from {{cookiecutter.package}}.rollout import rollout


def test_it_asks_first_then_rolls_out_wave_by_wave() -> None:
    run = ToolTester(rollout).start(rollout, {"service": "checkout", "waves": 3})
    assert run.status == "input_required"
    assert run.questions["confirm"].message == "Roll checkout out in 3 waves?"
    run.answer(confirm=accept(ok=True))
    assert run.status == "completed" and run.text == "checkout rolled out in 3 waves"
    assert [(p.progress, p.total) for p in run.progress] == [(1, 3), (2, 3), (3, 3)]
    assert [line.message for line in run.logs][-1] == "checkout: wave 3 done"


def test_no_means_no() -> None:
    run = ToolTester(rollout).call(rollout, {"service": "checkout"})  # a plain call: no task
    run.answer(confirm=decline())
    assert run.is_error and run.text == "checkout was not rolled out: not confirmed"


def test_a_cancel_stops_it_between_waves() -> None:
    run = ToolTester(rollout).start(rollout, {"service": "checkout", "waves": 10}, cancel_after=2)
    run.answer(confirm=accept(ok=True))
    assert run.status == "cancelled" and len(run.progress) == 2
