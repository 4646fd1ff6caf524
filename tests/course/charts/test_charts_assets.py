"""The Vega specs the site serves (course/charts/assets.py): compiled once, tooltips computed on hover."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import vl_convert

from course.charts import assets as chart_assets

# Two views side by side, one of them layered: Vega-Lite nests their marks in groups.
SPEC: dict[str, Any] = {
    "data": {"values": [{"x": 1, "y": 2.5}, {"x": 2, "y": 4.25}]},
    "hconcat": [
        {
            "mark": "bar",
            "encoding": {
                "x": {"field": "x", "type": "ordinal"},
                "y": {"field": "y", "type": "quantitative"},
                "tooltip": [{"field": "y", "type": "quantitative", "format": ",.1f"}],
            },
        },
        {
            "layer": [
                {
                    "mark": "point",
                    "encoding": {
                        "x": {"field": "x", "type": "quantitative"},
                        "y": {"field": "y", "type": "quantitative"},
                        "tooltip": [{"field": "x", "type": "quantitative"}],
                    },
                },
                {"mark": "rule", "encoding": {"y": {"datum": 3}}},
            ]
        },
    ],
}


def _encodings(spec: dict[str, Any], encoding_set: str) -> list[dict[str, Any]]:
    """Every mark's ``encoding_set`` (update, hover ...), groups' marks included."""
    found = []
    for mark in spec.get("marks", []):
        found.append(mark.get("encode", {}).get(encoding_set, {}))
        found.extend(_encodings(mark, encoding_set))
    return found


def test_tooltips_move_from_update_to_hover() -> None:
    compiled = vl_convert.vegalite_to_vega(SPEC)
    tooltips = [update["tooltip"] for update in _encodings(compiled, "update") if "tooltip" in update]
    assert len(tooltips) == 2, "Vega-Lite puts the bar's and the point's tooltips in update"
    served = chart_assets.tooltips_on_hover(compiled)
    assert not [update for update in _encodings(served, "update") if "tooltip" in update]
    assert [hover["tooltip"] for hover in _encodings(served, "hover") if "tooltip" in hover] == tooltips
    assert "<svg" in vl_convert.vega_to_svg(served), "still a valid Vega spec"


def test_a_hover_tooltip_of_the_spec_s_own_is_kept() -> None:
    spec = {
        "marks": [{"encode": {"update": {"tooltip": {"signal": "a"}}, "hover": {"tooltip": {"signal": "b"}}}}]
    }
    assert chart_assets.tooltips_on_hover(spec)["marks"][0]["encode"] == {
        "update": {},
        "hover": {"tooltip": {"signal": "b"}},
    }


def test_served_spec_is_compiled_in_the_current_form(tmp_path: Path) -> None:
    key = "0123456789abcdef01234567"
    (tmp_path / f"{key}.vl.json").write_text(json.dumps(SPEC), encoding="utf-8")
    version = chart_assets.vl_convert_version()
    # A spec compiled before tooltips moved (the cache's old name) is not served again.
    (tmp_path / f"{key}.vega-{version}.json").write_text('{"marks": []}', encoding="utf-8")
    served = json.loads(chart_assets.vega_spec(key, tmp_path))
    assert [hover for hover in _encodings(served, "hover") if "tooltip" in hover]
    assert "$schema" not in served
    kept = tmp_path / f"{key}.vega-{version}-{chart_assets.COMPILED_FORM}.json"
    assert json.loads(kept.read_text(encoding="utf-8")) == served, "kept for the next build"
