"""What-ifs named in the text: a figure computed outside the course's setting says so where it is quoted.

Every figure is computed under :data:`calculators.setting.COURSE_SETTING` (the site's setting,
``SITE_SETTING``; were it None, this check would be dormant) unless its expression sets one of the
setting's choices itself (``mode="peak"``, ``kv_traffic=False``, ``calibration="as-published"``, or an
efficiency, which keeps the spec-peak model). Such a figure answers a what-if, and a reader must be told: the
sentence that quotes it (its line: one sentence per line) must contain a word that names the departure.
The rule is deliberately plain, an allow-list of words per departure, so that an author can predict it:

- spec peaks (``mode="peak"``, ``compute_efficiency=``, ``memory_efficiency=``, ``efficiency=``):
  "peak", "bound" or "spec sheet";
- KV-cache reads left out (``kv_traffic=False``): "KV" or "cache", and "read" or "reads";
- the 2023-24 engines' calibration (``calibration="as-published"``): "as published", or "2023" or "2024".

Only a constant that differs from the course's setting is a departure; ``mode="calibrated"`` is not.
"""

from __future__ import annotations

import re

from calculators.setting import COURSE_SETTING, site_setting

PEAK_WORDS = re.compile(r"\bpeaks?\b|\bbound\b|\bspec[- ]sheet", re.IGNORECASE)
KV_WORDS = (re.compile(r"\bKV\b|\bcache", re.IGNORECASE), re.compile(r"\breads?\b", re.IGNORECASE))
CALIBRATION_WORDS = re.compile(r"\bas[- ]published\b|\b202[34]\b", re.IGNORECASE)
EFFICIENCIES = ("compute_efficiency", "memory_efficiency", "communication_efficiency", "efficiency")
FIGURE_RE = re.compile(r"\{\{.+?\}\}")
ARGUMENT_RE = re.compile(
    r"\b(?P<name>mode|kv_traffic|calibration|" + "|".join(EFFICIENCIES) + r")\s*=(?!=)\s*(?P<value>[^,)]*)"
)


def departures(source: str) -> list[str]:
    """What the figure ``source`` (an expression, a claim or a comparison) sets apart from the course setting:
    "spec peaks", "no KV reads", "as-published calibration"; empty when nothing.

    Read from its keyword arguments as written (quotes escaped in quiz text included), not by evaluating it.
    """
    found: set[str] = set()
    for match in ARGUMENT_RE.finditer(source):
        name, value = match.group("name"), match.group("value").strip("\\\"'")
        if name in EFFICIENCIES or (name == "mode" and value != COURSE_SETTING.mode):
            found.add("spec peaks")
        elif name == "kv_traffic" and value != str(COURSE_SETTING.kv_traffic):
            found.add("no KV reads")
        elif name == "calibration" and value != COURSE_SETTING.calibration:
            found.add("as-published calibration")
    return sorted(found)


def named(departure: str, sentence: str) -> bool:
    """Whether ``sentence`` names ``departure`` (see the module docstring for the words)."""
    if departure == "spec peaks":
        return PEAK_WORDS.search(sentence) is not None
    if departure == "no KV reads":
        return all(words.search(sentence) for words in KV_WORDS)
    return CALIBRATION_WORDS.search(sentence) is not None


WORDS = {
    "spec peaks": '"peak", "bound" or "spec sheet"',
    "no KV reads": '"KV" or "cache" with "read(s)"',
    "as-published calibration": '"as published", "2023" or "2024"',
}


def unnamed_departure(source: str, sentence: str) -> tuple[str, str] | None:
    """``(problem, fix)`` when the ``{{ source }}`` quoted in ``sentence`` departs from the course's setting
    without the sentence saying so; None otherwise."""
    if site_setting() is None:
        return None  # each figure uses its own expression's defaults: nothing to depart from yet
    words_only = FIGURE_RE.sub(" ", sentence)  # an expression's own `mode="peak"` names nothing to a reader
    missing = [d for d in departures(source) if not named(d, words_only)]
    if not missing:
        return None
    what = " and ".join(missing)
    words = "; ".join(f"{d}: {WORDS[d]}" for d in missing)
    return (
        f"this figure is a what-if ({what}), computed outside the course's model setting "
        f"({COURSE_SETTING.name}, KV reads counted), and its sentence does not say so",
        f"name the departure in the same sentence ({words}), or drop the argument for the course's setting",
    )
