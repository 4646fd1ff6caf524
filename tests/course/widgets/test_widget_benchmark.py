"""The widget benchmark's printout: where a start's time went, stage by stage."""

from __future__ import annotations

from course.widgets.benchmark import stage_rows


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
