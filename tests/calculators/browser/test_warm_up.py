"""The warm-up after a start from the kept Python memory runs every module body of the calculators again,
and changes nothing the widgets compute (calculators/browser/warm_up.py says why it runs)."""

from __future__ import annotations

import json
import sys

import calculators.models
import calculators.passes
from calculators.browser import protocol, warm_up
from tests.calculators.browser.test_widgets_memoised import REQUESTS


def answers() -> list[str]:
    return [protocol.handle(json.dumps({"widget": widget, "state": state})) for widget, state in REQUESTS]


def test_every_loaded_module_of_the_calculators_runs_again() -> None:
    """All of them, so the warm-up is the import's work; a module whose body cannot run twice would be
    skipped in the reader's browser without a word, so it fails here."""
    names = json.loads(warm_up.module_names())
    assert "calculators.browser.protocol" in names
    assert "calculators.passes" in names
    assert all(name == "calculators" or name.startswith("calculators.") for name in names)
    assert [name for name in names if not warm_up.rerun(name)] == []


def test_the_answers_and_the_modules_stay_as_they_were() -> None:
    before = answers()
    models, memoised, modules = calculators.models.MODELS, calculators.passes.memoised, dict(sys.modules)
    for name in json.loads(warm_up.module_names()):
        warm_up.rerun(name)
    assert calculators.models.MODELS is models
    assert calculators.passes.memoised is memoised
    assert sys.modules == modules
    assert answers() == before


def test_only_the_calculators_loaded_modules_are_run() -> None:
    """The worker passes names it was given; anything else is refused quietly, never imported or run."""
    assert warm_up.rerun("json") is False  # loaded, but not ours
    assert warm_up.rerun("calculators.no_such_module") is False
    assert "calculators.no_such_module" not in sys.modules
