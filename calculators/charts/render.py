"""Static SVG for a chart, rendered by vl-convert (no browser, no network) and cached on disk by content hash.

Rendering costs tens of milliseconds per chart and importing Altair a few hundred, so a warm build must do
neither. Two keys make that safe:

- the *spec key* hashes the Vega-Lite spec itself (with the renderer's version): any Altair chart can be
  rendered through :func:`render_spec`, e.g. from a notebook;
- the *input key* hashes what a course chart is made of: its name, parameters and data rows (all numbers the
  calculators computed) plus the source of the module that draws them and the library versions.
  :func:`render_course_chart` looks the input key up first and only imports Altair on a miss.

The SVG is tidied for inlining into pages: element ids get a per-chart prefix (two charts on one page must not
share clip-path ids), redundant attributes are dropped, coordinates are rounded to 0.01 px.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from calculators.charts.content import ChartData
from calculators.charts.data import chart_data

# Bump when tidy_svg or the stored files change, so that old cache entries are not reused.
RENDER_FORMAT = "6"
CACHE_ENV = "RIDGEPOINT_CHART_CACHE"


def default_cache_dir() -> Path:
    """``$RIDGEPOINT_CHART_CACHE``, else ``.cache/charts`` under the working directory (git-ignored)."""
    return Path(os.environ.get(CACHE_ENV) or Path.cwd() / ".cache" / "charts")


@dataclass(frozen=True)
class RenderedChart:
    """A chart ready for a page: ``key`` names its spec file, ``spec_json`` is compact, ``svg`` is tidied.

    A course chart also has its ``narrow`` variant (the same rows drawn for a phone's width, see
    :data:`calculators.charts.specs.NARROW_WIDTH`); the page shows whichever fits its figure.
    """

    key: str
    spec_json: str
    svg: str
    narrow: RenderedChart | None = None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@cache
def _versions() -> str:
    names = ("altair", "vl-convert-python")
    return (
        ";".join(f"{name}={importlib.metadata.version(name)}" for name in names) + f";format={RENDER_FORMAT}"
    )


def spec_key(spec: dict[str, Any]) -> str:
    """Content hash of a Vega-Lite spec and the renderer versions: equal keys give identical SVG."""
    return hashlib.sha256(f"{_versions()}\n{_canonical(spec)}".encode()).hexdigest()[:24]


@cache
def _drawing_code_digest() -> str:
    """Hash of the modules that turn rows into a spec: editing them must invalidate cached charts."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for name in ("specs.py", "render.py", "palette.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


def input_key(data: ChartData) -> str:
    """Content hash of a course chart's inputs: name, parameters, rows, drawing code and library versions."""
    payload = _canonical(
        {
            "chart": data.chart,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in data.params.items()},
            "datasets": data.datasets,
            "code": _drawing_code_digest(),
            "versions": _versions(),
        }
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


_NUMBER = re.compile(r"-?\d+\.\d{3,}")
_DROP = re.compile(
    r' (?:opacity="1"|aria-hidden="true"|pointer-events="none"|role="graphics-\w+"'
    r'|aria-roledescription="[^"]*"|font-family="sans-serif"|version="1\.1")'
)
_EMPTY = re.compile(r'<path class="(?:background|foreground)" d="(?:M0,0h0v0h0Z|)"(?: display="none")?/>')
# Marks drawn fully transparent: a chart's hover targets (504 points on the GEMM-efficiency chart, a fifth of
# its lesson's elements) and the axis labels Vega hides where they would overlap. The live view has its own.
_INVISIBLE = re.compile(r'<path [^>]* opacity="0"[^>]*/>|<text [^>]* opacity="0"[^>]*>[^<]*</text>')


# A rectangle as Vega writes a rect mark: from its top-left corner, right, down, back left by the same width.
_RECT_PATH = re.compile(r'<path d="(M-?[\d.]+,-?[\d.]+h([\d.]+)v[\d.]+h-\2Z)" fill="(#[0-9a-f]{6})"/>')
_RECT_RUN = re.compile(rf"(?:{_RECT_PATH.pattern}){{2,}}")


def merged_rects(svg: str) -> str:
    """Each run of sibling rectangles of one opaque fill, and nothing else, as one path of their outlines.

    A serving timeline draws one rect per step and request: 629 of the 2,769 elements of the batching lesson,
    each styled, laid out and painted on a phone as the page loads (issue 23: lessons as light as the twin).
    One path draws the same picture: every rectangle is traced the same way round (right, down, left, with
    a width and height that cannot be negative in this pattern), so under the nonzero fill rule their union is
    filled, with the one opaque colour they each had, and nothing else is written on them (no stroke,
    opacity, class or label: a path with any other attribute is left as it is). Only the seams go: drawn
    apart, two rectangles each half-cover the pixels of their shared edge and the page shows through.
    Page CSS that strokes a chart's rects (the request timeline's gaps) draws the same centred band along
    each edge either way, since a timeline's rectangles do not overlap.
    """

    def merge(run: re.Match[str]) -> str:
        parts = [(m.group(1), m.group(3)) for m in _RECT_PATH.finditer(run.group())]
        merged: list[tuple[str, str]] = []
        for outline, fill in parts:
            if merged and merged[-1][1] == fill:
                merged[-1] = (merged[-1][0] + outline, fill)
            else:
                merged.append((outline, fill))
        return "".join(f'<path d="{outline}" fill="{fill}"/>' for outline, fill in merged)

    return _RECT_RUN.sub(merge, svg)


def _round(match: re.Match[str]) -> str:
    text = f"{float(match.group()):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def tidy_svg(svg: str, prefix: str) -> str:
    """Make vl-convert's SVG fit for inlining: unique ids, no redundant attributes, rounded coordinates, no
    marks drawn fully transparent, runs of same-coloured rectangles drawn as one path (:func:`merged_rects`).

    Only markup inside tags is touched; text content (axis labels such as "0.864") is kept as written.
    The font family moves to the root element (inherited), so page CSS can restyle it in one place.
    """
    # vl-convert numbers ids with a counter that runs on through the process (clip23 in one build, clip226
    # in another that drew other charts first); numbered again in order of appearance, a chart's SVG depends
    # on its spec alone, so two builds (MkDocs, Zensical) draw the same bytes.
    found = dict.fromkeys(re.findall(r'\sid="([^"]+)"', svg))
    ids = {old: f"{prefix}-{re.sub(r'[0-9]+$', '', old)}{index}" for index, old in enumerate(found, 1)}

    def tag(match: re.Match[str]) -> str:
        text = _DROP.sub("", match.group())
        text = _NUMBER.sub(_round, text)
        for old, new in ids.items():
            text = text.replace(f'id="{old}"', f'id="{new}"').replace(f"#{old})", f"#{new})")
            text = text.replace(f'href="#{old}"', f'href="#{new}"')
        return text

    svg = re.sub(r"<[^>]+>", tag, svg)
    svg = merged_rects(_INVISIBLE.sub("", _EMPTY.sub("", svg)))
    if "xlink:" not in svg.replace("xmlns:xlink", ""):
        svg = re.sub(r' xmlns:xlink="[^"]*"', "", svg, count=1)
    return svg.replace("<svg ", '<svg font-family="sans-serif" ', 1)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file: a build reading the cache meanwhile sees the old
    file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.replace(temporary, path)


def served_spec(spec: dict[str, Any]) -> str:
    """The spec as the page loads it: compact, without ``$schema`` (a URL the browser never needs)."""
    return _canonical({k: v for k, v in spec.items() if k != "$schema"})


def render_spec(spec: dict[str, Any], cache_dir: Path | None = None) -> RenderedChart:
    """Render a Vega-Lite spec to tidied SVG, reusing ``cache_dir/<key>.svg`` when it exists."""
    key = spec_key(spec)
    folder = cache_dir if cache_dir is not None else default_cache_dir()
    svg_path, spec_path = folder / f"{key}.svg", folder / f"{key}.vl.json"
    if svg_path.exists() and spec_path.exists():
        return RenderedChart(key, spec_path.read_text(encoding="utf-8"), svg_path.read_text(encoding="utf-8"))
    import vl_convert  # imported on a cache miss only

    svg = tidy_svg(vl_convert.vegalite_to_svg(spec), prefix=f"rp{key[:8]}")
    spec_json = served_spec(spec)
    write_atomically(spec_path, spec_json)
    write_atomically(svg_path, svg)
    return RenderedChart(key, spec_json, svg)


def render_course_chart(
    name: str, params: dict[str, Any], cache_dir: Path | None = None
) -> tuple[ChartData, RenderedChart]:
    """Compute a course chart's data and its SVG (cached by inputs); the site's builds read the data from
    ``course.charts.stored_data`` and call :func:`render_chart_data`.

    Raises :class:`~calculators.charts.params.ChartError` for an unknown chart or a bad parameter.
    """
    data = chart_data(name, **params)
    return data, render_chart_data(data, cache_dir)


def render_chart_data(data: ChartData, cache_dir: Path | None = None) -> RenderedChart:
    """The SVG and spec of computed chart data, wide with its narrow variant (cached by inputs)."""
    folder = cache_dir if cache_dir is not None else default_cache_dir()
    wide, narrow = (_render_variant(data, folder, narrow=variant) for variant in (False, True))
    return RenderedChart(wide.key, wide.spec_json, wide.svg, narrow)


def _render_variant(data: ChartData, folder: Path, *, narrow: bool) -> RenderedChart:
    pointer = folder / f"{input_key(data)}{'.narrow' if narrow else ''}.input"
    if pointer.exists():
        key = pointer.read_text(encoding="utf-8").strip()
        svg_path, spec_path = folder / f"{key}.svg", folder / f"{key}.vl.json"
        if svg_path.exists() and spec_path.exists():
            svg, spec_json = svg_path.read_text(encoding="utf-8"), spec_path.read_text(encoding="utf-8")
            return RenderedChart(key, spec_json, svg)
    from calculators.charts.specs import course_spec  # Altair: only on a miss

    rendered = render_spec(course_spec(data, narrow=narrow), folder)
    write_atomically(pointer, rendered.key)
    return rendered
