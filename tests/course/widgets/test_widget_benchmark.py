"""The widget benchmark's printout: where a start's time went, stage by stage."""

from __future__ import annotations

from course.widgets.benchmark import halves_row, other_rows, stage_rows, warm_up_row


def test_a_restored_start_is_split_into_the_stages_it_passed() -> None:
    """A start from the kept Python memory skips Pyodide's own start and the import: each stage it passed is
    timed from the one before it that it passed, and the stages it skipped are not printed."""
    restored = {
        "total": 700.0,
        "stages": [
            ["worker script running", 20.0],
            ["start asked", 21.0],
            ["runtime.json read", 30.0],
            ["snapshot read", 270.0],
            ["Pyodide restored with the calculators", 600.0],
            ["page told ready", 601.0],
            ["first answer shown", 680.0],
            ["painted", 700.0],
        ],
    }
    assert dict(stage_rows([restored])) == {
        "  click to worker running": "20 ms",
        "  runtime.json": "10 ms",  # 30 - 20
        "  kept Python memory: read and checked": "240 ms",  # 270 - 30
        "  Pyodide: start from the kept memory": "330 ms",  # 600 - 270
        "  ready message to the page": "1 ms",  # 601 - 600
        "  first answer computed and shown": "79 ms",  # 680 - 601
        "  next frame painted": "20 ms",  # 700 - 680
    }


def test_starts_side_by_side_say_which_stages_each_skipped() -> None:
    scratch = {"total": 900.0, "stages": [["runtime.json read", 10.0], ["Pyodide loaded", 800.0]]}
    restored = {"total": 400.0, "stages": [["runtime.json read", 10.0], ["snapshot read", 300.0]]}
    rows = dict(stage_rows([scratch, restored]))
    assert rows["  Pyodide: download, compile, start"] == "790 ms / n/a"
    assert rows["  kept Python memory: read and checked"] == "n/a / 290 ms"


def test_a_sliders_tail_in_its_first_moves_shows_in_the_halves() -> None:
    """Forty moves whose first twenty are slow (10..29 ms, Python 1..20 ms) and the rest 5 ms (Python 2 ms).
    p95 of twenty values is the 19th smallest (index round(0.95 * 19) = 18): 28 ms and Python 19 ms."""
    slow = [{"updated": 10.0 + i, "python": 1.0 + i} for i in range(20)]
    quick = [{"updated": 5.0, "python": 2.0} for _ in range(20)]
    assert halves_row(slow + quick, "  ") == (
        "  first / second half of the moves, p95",
        "28.0 ms / 5.0 ms; Python 19.0 ms / 2.0 ms",
    )


def test_only_sliders_get_the_halves_row() -> None:
    """A typed value's changes are whole simulations, five of them: no halves; a slider's moves get them."""
    moves = [{"updated": 8.0, "python": 3.0}] * 4
    other = {
        "lesson": "serving/batching/",
        "start": {"total": 500.0},
        "inputs": [
            {"name": "rate", "field": True, "rows": moves},
            {"name": "context-slider", "rows": moves},
        ],
        "long_tasks_ms": [],
    }
    labels = [label for label, _ in other_rows([other])]
    assert labels.count("    first / second half of the moves, p95") == 1
    assert (
        labels.index("    first / second half of the moves, p95")
        == labels.index("  context-slider: slider to repaint p50 / p95") + 1
    )


def test_the_warm_up_row_says_whether_it_finished_before_the_first_move() -> None:
    assert warm_up_row({"ms": 612.4, "modules": 70, "rerun": 70}) == (
        "  Python warm-up after the start, before the first move",
        "70 of 70 modules, 612 ms in the worker",
    )
    assert warm_up_row(None)[1].startswith("not finished")
