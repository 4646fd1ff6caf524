"""Worked notebooks: the "go deeper" derivations a reader can run, stored as jupytext percent-format ``.py``.

A notebook lives in ``docs/<track>/notebooks/<name>.py`` and names the lesson it belongs to in its jupytext
header (``ridgepoint: {lesson: <lesson-id>}``); everything else follows from that one field: its place in the
navigation (right after its lesson), the link back to the lesson, and the ``.ipynb`` offered for download.

mkdocs-jupyter executes and renders the notebooks; this module holds what the course adds around it, as plain
functions the MkDocs hook calls:

- :func:`load_notebooks` reads and checks every notebook's header, returning problems like lesson problems.
- :func:`nav_companions` says which pages the navigation places after each lesson.
- :func:`configure_execution_cache` keys mkdocs-jupyter's cache on the calculators' sources too: the plugin's
  own key is the notebook text alone, so a changed preset would otherwise keep serving stale numbers.
- :func:`finish_notebook_page` removes what nbconvert's template writes around the cells (its CDN scripts:
  MathJax, Mermaid, RequireJS; its inline stylesheets: JupyterLab's theme, 590 kB on every page, which the
  site's own ``notebooks.css`` replaces) and adds the links to the lesson and to the download.
- :func:`write_downloads` writes each notebook as ``.ipynb`` into the built site.
"""

from __future__ import annotations

import functools
import hashlib
import html
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from course.folder_digest import fingerprint_folder, installed_versions
from course.lesson_format.lessons import Course
from course.lesson_format.navigation import NavItem
from course.lesson_format.problems import Problem
from course.sanitising.source_files import SOURCE_FIELD, YamlLimitError, load_yaml
from course.sanitising.source_tree import is_plain_file
from course.sanitising.titles import text_of_html
from course.stored_results import StoredResults, text_key

NOTEBOOK_FOLDER = "notebooks"
NOTEBOOK_GLOB = f"*/{NOTEBOOK_FOLDER}/*.py"  # relative to docs/; also mkdocs-jupyter's `include` pattern
METADATA_KEY = "ridgepoint"
HEADER_EXAMPLE = "#   ridgepoint:\n#     lesson: prefill-vs-decode"
# What the notebooks' outputs depend on besides their own text: the calculators (charts included), the chart
# markup their renderer writes, the sandbox that executes them (it also hands back their charts' specs) and
# the libraries that execute and draw them. A change to any of these must re-execute the notebooks.
OUTPUT_PATHS = (
    "calculators",
    "course/charts/markup.py",
    "course/charts/assets.py",
    "course/notebooks/renderer.py",
    "course/notebooks/sandbox.py",
    "course/notebooks/sandbox_runner.py",
    "course/charts/vega-runtime.lock.json",
)
OUTPUT_DISTRIBUTIONS = ("altair", "vl-convert-python", "nbconvert", "nbclient", "mkdocs-jupyter", "jupytext")


@dataclass(frozen=True)
class Notebook:
    """One worked notebook: where it is, its title (its first ``#`` heading) and the lesson it belongs to."""

    path: str  # relative to docs/, forward slashes, e.g. "serving/notebooks/prefill-vs-decode-derivation.py"
    title: str
    lesson: str  # lesson id

    @property
    def download_name(self) -> str:
        """File name of the ``.ipynb`` offered for download next to the notebook's page."""
        return PurePosixPath(self.path).with_suffix(".ipynb").name


def is_notebook_path(path: str) -> bool:
    """Whether ``path`` (relative to docs/) is a worked notebook: ``<track>/notebooks/<name>.py``."""
    return PurePosixPath(path).match(NOTEBOOK_GLOB)


def load_notebooks(docs_dir: str | Path, course: Course) -> tuple[list[Notebook], list[Problem]]:
    """Read every notebook's header under ``docs_dir``; a notebook with problems is left out and reported."""
    docs = Path(docs_dir)
    notebooks: list[Notebook] = []
    problems: list[Problem] = []
    for file in sorted(docs.glob(NOTEBOOK_GLOB)):
        if not is_plain_file(file, docs):  # a link or a pipe: refused by the file checks, never read
            continue
        path = file.relative_to(docs).as_posix()
        notebook, found = parse_notebook(path, file.read_text(encoding="utf-8"), course)
        problems.extend(found)
        if notebook is not None:
            notebooks.append(notebook)
    return notebooks, problems + missing_notebooks(course, notebooks)


def missing_notebooks(course: Course, notebooks: Iterable[Notebook]) -> list[Problem]:
    """A problem for each lesson without a worked notebook, in a track that requires one (the default)."""
    covered = {notebook.lesson for notebook in notebooks}
    problems = []
    for lesson in course.lessons:
        track = course.track(lesson.track)
        if lesson.id in covered or track is None or not track.notebook_required:
            continue
        problems.append(
            Problem(
                lesson.path,
                "notebook",
                f"the lesson has no worked notebook; every lesson of track {track.key!r} has one, in "
                f"docs/{track.key}/{NOTEBOOK_FOLDER}/, that names the lesson in its header",
                f"`python3 dev.py new_lesson -- --notebook-for {lesson.id}` writes "
                f"docs/{track.key}/{NOTEBOOK_FOLDER}/{lesson.id}.py from the template, to fill in",
            )
        )
    return problems


def parse_notebook(path: str, text: str, course: Course) -> tuple[Notebook | None, list[Problem]]:
    """Check one notebook's jupytext header and title; never raises, returns the problems found instead.

    The header and the first heading are read here directly, not through jupytext: importing jupytext takes
    seconds (tornado, jsonschema), longer than the whole of ``check`` should. The build still converts and
    runs every notebook with jupytext, so a file jupytext cannot read fails there.
    """
    try:
        header = _header_metadata(text)
    except YamlLimitError as error:  # jupytext would read it unbounded: the build stops before it does
        return None, [Problem(path, SOURCE_FIELD, f"jupytext header: {error.problem}", error.fix)]
    except yaml.YAMLError as error:  # jupytext would read it unbounded too: the build stops before it does
        return None, [
            Problem(path, SOURCE_FIELD, f"its jupytext header is not valid YAML ({error})", HEADER_EXAMPLE)
        ]
    problems: list[Problem] = []
    settings = header.get(METADATA_KEY)
    lesson_id = settings.get("lesson") if isinstance(settings, Mapping) else None
    if not isinstance(lesson_id, str) or not lesson_id:
        problems.append(
            Problem(
                path,
                f"{METADATA_KEY}.lesson",
                "is missing from the jupytext header; every notebook names the lesson it belongs to",
                f"add to the header, under `# jupyter:`,\n{HEADER_EXAMPLE}",
            )
        )
    elif course.lesson_by_id(lesson_id) is None:
        known = ", ".join(sorted(lesson.id for lesson in course.lessons)) or "none yet"
        problems.append(
            Problem(
                path,
                f"{METADATA_KEY}.lesson",
                f"names {lesson_id!r}, which is not a lesson (lessons: {known})",
                "use the file stem of a lesson, e.g. `lesson: prefill-vs-decode`",
            )
        )
    heading = _first_heading(text)
    # The heading is Markdown; the title is its text (plain, escaped where it is printed), not its markup.
    title = None if heading is None else text_of_html(heading) or "Worked notebook"
    if title is None:
        problems.append(
            Problem(
                path,
                "title",
                "the notebook has no `# ` heading in a Markdown cell; its first one is the page title",
                "start the first Markdown cell with `# # Prefill vs decode, worked through in Python`",
            )
        )
    if problems or title is None or not isinstance(lesson_id, str):
        return None, problems
    return Notebook(path, title, lesson_id), []


_HEADER_LINE_RE = re.compile(r"^#\s*---\s*$")


def _header_metadata(text: str) -> Mapping[str, Any]:
    """The ``jupyter:`` mapping of a percent-format file's header (``# ---`` ... ``# ---`` at the top).

    The delimiters are read as loosely as jupytext reads them (``#---`` too): a header that jupytext reads and
    this did not would reach jupytext's unbounded YAML reading unchecked.
    """
    lines = text.splitlines()
    start = 0
    while start < len(lines) and lines[start].startswith("#") and not _HEADER_LINE_RE.match(lines[start]):
        start += 1  # a shebang or an encoding line may come first
    if start == len(lines) or not _HEADER_LINE_RE.match(lines[start]):
        return {}
    end = next((i for i in range(start + 1, len(lines)) if _HEADER_LINE_RE.match(lines[i])), None)
    if end is None:
        return {}
    body = "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in lines[start + 1 : end])
    header = load_yaml(body) or {}  # the one bounded reader (jupytext reads it too, after our check)
    jupyter = header.get("jupyter") if isinstance(header, Mapping) else None
    return jupyter if isinstance(jupyter, Mapping) else {}


def _first_heading(text: str) -> str | None:
    """The first ``# `` heading of a Markdown cell (``# # Title`` in percent format)."""
    in_markdown = False
    for line in text.splitlines():
        if line.startswith("# %%"):
            in_markdown = bool(re.match(r"# %%.*\[(markdown|md)\]", line))
        elif in_markdown and (match := re.match(r"^# # +(.+?)\s*$", line)):
            return match.group(1)
    return None


def nav_companions(notebooks: Iterable[Notebook], course: Course) -> dict[str, list[NavItem]]:
    """Navigation entries to place right after each lesson (its notebooks): ``{lesson: [{title: path}]}``."""
    companions: dict[str, list[NavItem]] = {}
    for notebook in sorted(notebooks, key=lambda n: n.path):
        lesson = course.lesson_by_id(notebook.lesson)
        if lesson is not None:
            companions.setdefault(lesson.path, []).append({notebook.title: notebook.path})
    return companions


# ------------------------------------------------------------------------------------------ execution cache
def outputs_fingerprint(project_root: str | Path) -> str:
    """A short hash of everything besides a notebook's own text that its executed outputs depend on."""
    digest = hashlib.sha256()
    root = Path(project_root)
    for name in OUTPUT_PATHS:
        path = root / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(root).as_posix().encode())
            digest.update(file.read_bytes() if file.exists() else b"absent")
    digest.update(installed_versions(OUTPUT_DISTRIBUTIONS).encode())  # the same bytes as one at a time
    return digest.hexdigest()[:16]


# ------------------------------------------------------------------------------------------ the built page
# nbconvert's lab template writes these into every page; each loads from a CDN (or from src=""), and none is
# needed: the notebooks use no LaTeX in Markdown cells, no Mermaid, no widgets needing RequireJS.
_EXTERNAL_SCRIPTS = (
    re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.DOTALL),
    re.compile(
        r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded".*?</script>', re.DOTALL
    ),
    re.compile(r"<script[^>]*\ssrc=\"[^\"]*require[^\"]*\"[^>]*>\s*</script>"),
)


_FIRST_CELL_RE = re.compile(r'<div class="jp-Cell ')
# mkdocs-jupyter's own copy button is a <clipboard-copy> element run by a script from its template, which
# the page does not load (the sanitiser drops the element too, leaving a dead icon), beside a hidden copy of
# the cell's source. Both are removed before sanitising. After it, each code cell's <pre> gets a <code> and
# its wrapper an id of ours, so that Material's copy button (``content.code.copy``), the one every other code
# block of the site has, copies the cell: Material targets ``#__code_<nearest id> > code``, and the nearest
# id would otherwise be nbconvert's ``cell-id=...``, no valid CSS selector (the copy silently fails).
_TEMPLATE_COPY_BUTTON_RE = re.compile(
    r'<div class="zeroclipboard-container">\s*<clipboard-copy\b.*?</clipboard-copy>\s*</div>', re.DOTALL
)
_TEMPLATE_COPY_TEXT_RE = re.compile(
    r'<div (?:class="clipboard-copy-txt" id="cell-\d+"|id="cell-\d+" class="clipboard-copy-txt")>[^<]*</div>'
)
_CODE_CELL_PRE_RE = re.compile(r'<div (class="highlight-ipynb\b[^"<>]*")><pre>(.*?)</pre>', re.DOTALL)
CODE_CELL_ID = "rp-notebook-code-{}"  # "rp-" ids are reserved: a notebook's own are dropped by the sanitiser


def without_template_copy_button(content: str) -> str:
    """A rendered notebook without mkdocs-jupyter's dead copy button and hidden source (before sanitising)."""
    return _TEMPLATE_COPY_TEXT_RE.sub("", _TEMPLATE_COPY_BUTTON_RE.sub("", content))


def copyable_code_cells(sanitised: str) -> str:
    """A sanitised notebook whose code cells are ``<pre><code>`` in a wrapper with an id of ours.

    Only markup is added, none of the notebook's text: the cells' code stays as the sanitiser left it.
    """
    numbers = iter(range(1, 1_000_000))

    def copyable(match: re.Match[str]) -> str:
        cell_id = CODE_CELL_ID.format(next(numbers))
        return f'<div {match.group(1)} id="{cell_id}"><pre><code>{match.group(2)}</code></pre>'

    return _CODE_CELL_PRE_RE.sub(copyable, sanitised)


# Markup in a cell's output that only a script-running page would want: the sanitiser drops it, and the build
# says so (a warning, which fails the strict build), so that a hostile notebook does not pass silently.
_DANGEROUS_OUTPUT = (
    (re.compile(r"<script\b(?![^>]*application/json)", re.IGNORECASE), "a <script>"),
    (re.compile(r"<[a-zA-Z][^<>]*\son[a-zA-Z]+\s*=", re.IGNORECASE), "an inline event handler"),
    (re.compile(r"<[a-zA-Z][^<>]*=\s*[\"']?\s*(?:javascript|vbscript):", re.IGNORECASE), "a script URL"),
    (
        re.compile(r"<(?:iframe|object|embed|base|form|meta)\b", re.IGNORECASE),
        "a frame, object, form or <base>",
    ),
)


def dangerous_output(cells: str) -> list[str]:
    """What in a notebook's rendered cells would run script or leave the page, before sanitising."""
    return [what for pattern, what in _DANGEROUS_OUTPUT if pattern.search(cells)]


def warn_of_dangerous_output(content: str, notebook_path: str = "a notebook") -> list[str]:
    """Warn (which fails the strict build) if a notebook page's cells hold markup the sanitiser will drop."""
    first = _FIRST_CELL_RE.search(content)
    found = dangerous_output(content[first.start() :]) if first is not None else []
    if found:
        import logging

        logging.getLogger("mkdocs.hooks.notebooks").warning(
            "%s: its output holds %s, which the site removes; a notebook shows results, it runs no script "
            "in the reader's browser. Fix: display text, tables or charts (enable_course_charts) instead",
            notebook_path,
            ", ".join(found),
        )
    return found


def without_template_head(content: str) -> str:
    """A rendered notebook from its first cell on: without what mkdocs-jupyter's template writes before it.

    That is its scripts (a copy button's, MathJax's and Mermaid's, from CDNs) and its inline stylesheets:
    JupyterLab's whole theme (574 kB of variables and rules for Lab's own interface, nearly all of them scoped
    to a ``.jupyter-wrapper`` the page does not keep), its light theme's variables, a Pygments theme written
    in those variables and Mermaid's rules, 590 kB that every notebook page downloaded and every build
    sanitised, scanned and indexed again. The site styles notebooks itself (``notebooks.css``, in the site's
    one stylesheet bundle), and a notebook cannot write there: the cells are all that is its own.
    """
    first = _FIRST_CELL_RE.search(content)
    return content if first is None else content[first.start() :]


def sanitise_cells(content: str, notebook_path: str = "a notebook", *, warn: bool = True) -> str:
    """The notebook's cells (code, Markdown and every output) sanitised by allow-list, in one ``jp-Notebook``.

    What comes before the first cell is mkdocs-jupyter's template, which is not kept
    (:func:`without_template_head`). The cells are the contributor's: their outputs may hold any HTML the code
    printed, so they get the lessons' allow-list plus the static SVG of charts (see
    ``sanitise_notebook_html`` in :mod:`course.sanitising.policy`). ``warn``: say what was dropped
    (:func:`warn_of_dangerous_output`).
    """
    from course.sanitising.policy import sanitise_notebook_html

    if warn:
        warn_of_dangerous_output(content, notebook_path)
    first = _FIRST_CELL_RE.search(content)
    if first is None:
        return sanitise_notebook_html(content)
    cells = exclude_code_cells_from_search(sanitise_notebook_html(content[first.start() :]))  # no head
    return '<div class="jp-Notebook">' + cells + "</div>"


# Material's search indexer skips an element marked data-search-exclude only until the first element of the
# same tag inside it closes (its parser compares elements by tag name), so marking a code cell's <div>
# would stop excluding at the cell's first inner </div>. The mark goes on a wrapper whose tag the sanitised
# cells never contain: a custom element, shown as a block (ridgepoint.css).
CODE_CELL_WRAPPER = "rp-code-cell"
_CODE_CELL_START_RE = re.compile(r'<div class="jp-Cell jp-CodeCell\b[^"]*"[^>]*>')
_DIV_TAG_RE = re.compile(r"<div\b[^>]*>|</div>")


def exclude_code_cells_from_search(cells: str) -> str:
    """Sanitised notebook cells with each code cell (its code and outputs) kept out of the search index.

    A reader searches the course for ideas, which the lesson prose and the notebook's Markdown cells (its
    headings and explanations) hold; the code and its printed outputs were more than a third of the search
    index (127 of 365 kB), which every page downloads at load. ``cells`` must be the sanitiser's output, whose
    ``<div>`` tags are balanced.
    """
    parts: list[str] = []
    position = 0
    while (start := _CODE_CELL_START_RE.search(cells, position)) is not None:
        depth = 0
        for tag in _DIV_TAG_RE.finditer(cells, start.start()):
            depth += -1 if tag.group(0) == "</div>" else 1
            if depth == 0:
                end = tag.end()
                break
        else:  # unbalanced: cannot happen after sanitising; leave the rest as it is
            break
        parts.append(cells[position : start.start()])
        parts.append(
            f"<{CODE_CELL_WRAPPER} data-search-exclude>{cells[start.start() : end]}</{CODE_CELL_WRAPPER}>"
        )
        position = end
    parts.append(cells[position:])
    return "".join(parts)


def finish_notebook_page(
    content: str, notebook: Notebook, lesson_title: str, lesson_url: str, stored: StoredResults | None = None
) -> str:
    """Strip the template's scripts and stylesheets from a rendered notebook; open it with its lesson and
    download links.

    Raises ``ValueError`` if anything in the page would still load from another host, so that a new
    nbconvert template cannot quietly bring a CDN back. The finished cells are kept in ``stored`` when
    given (the build's: a warm build sanitised and scanned the twenty notebook pages again, a tenth of it).
    """
    warn_of_dangerous_output(content, notebook.path)  # on every build, like any other warning
    finished = functools.partial(_finished_cells, content, notebook.path)
    cells = finished() if stored is None else stored.kept(text_key(notebook.path, content), finished)
    return notebook_links_html(notebook, lesson_title, lesson_url) + cells


# Tags that load nothing, skipped by the scan for external loads: most of a notebook's tags are Pygments'
# token spans and the cells' nested divs (62,000 of 80,000 over the course), and Python's HTML parser took
# 0.8 s of a build to read them. Only bare tags or tags with a plain class qualify; the sanitiser escapes
# `"`, `<` and `>` in attribute values and `<` in text, so the pattern matches whole tags and nothing else.
_INERT_TAGS_RE = re.compile(
    r'<(?:span|div|td|th|tr|p|pre|code)(?: class="[\w -]*")?>|</(?:span|div|td|th|tr|p|pre|code)>'
)


@functools.lru_cache(maxsize=64)
def _finished_cells(content: str, notebook_path: str) -> str:
    """The rendered notebook's cells without the template's scripts and inline stylesheets, sanitised, checked
    to load nothing from another host.

    The template's head goes first (:func:`without_template_head`): the scan for external loads read its
    590 kB of stylesheets on every build, and the search index and every reader after it.
    A function of the rendered notebook alone, which mkdocs-jupyter reads from its cache while the notebook
    and the calculators are unchanged; so ``serve`` sanitises a notebook again only when it was executed
    again, not on every edit of a lesson (sanitising and scanning its outputs was a fifth of a rebuild).
    A page that would load from another host raises, and is never stored.
    """
    from course.sanitising.external_loads import html_loads, js_loads

    content = without_template_head(content)
    for pattern in _EXTERNAL_SCRIPTS:
        content = pattern.sub("", content)
    cells = sanitise_cells(without_template_copy_button(content), notebook_path, warn=False)
    content = copyable_code_cells(cells)
    # html_loads reads tags and styles; js_loads also catches import()/fetch() of a URL in an inline script
    external = [url for _, url in html_loads(_INERT_TAGS_RE.sub("", content))] + js_loads(content)
    if external:
        raise ValueError(
            f"{notebook_path}: the rendered notebook would load {', '.join(sorted(set(external)))} from "
            "another host; the course loads nothing from elsewhere. Fix: remove it from the notebook's "
            "output or strip it in course/notebooks/lesson_notebooks.py"
        )
    return content


def notebook_links_html(notebook: Notebook, lesson_title: str, lesson_url: str) -> str:
    """The box at the top of a notebook page: which lesson it works through, and the notebook to download."""
    return (
        '<div class="admonition note rp-notebook-links">\n'
        '<p class="admonition-title">Worked notebook</p>\n'
        f'<p>This notebook works through the lesson <a href="{html.escape(lesson_url)}">'
        f"{html.escape(lesson_title)}</a> in Python, with the course's <code>calculators</code> package. "
        f'<a href="{html.escape(notebook.download_name)}" download>Download it as a Jupyter notebook '
        f"(.ipynb)</a> and run it in a clone of the course with the project installed "
        "(<code>pip install -e .[site]</code>).</p>\n"
        "</div>\n"
    )


def write_downloads(
    notebooks: Iterable[Notebook], docs_dir: str | Path, page_dirs: Mapping[str, str]
) -> list[Path]:
    """Write each notebook as ``.ipynb`` (no outputs: the reader runs it) into its page's folder in the site.

    ``page_dirs`` maps a notebook's path to the folder its built page sits in (from MkDocs).
    """
    written: list[Path] = []
    stored = StoredResults(notebook_cache_root() / DOWNLOADS)  # converted by an earlier build
    for notebook in notebooks:
        if notebook.path not in page_dirs:
            continue
        source = (Path(docs_dir) / notebook.path).read_text(encoding="utf-8")
        target = Path(page_dirs[notebook.path]) / notebook.download_name
        target.parent.mkdir(parents=True, exist_ok=True)
        text = stored.kept(text_key(source), functools.partial(ipynb_text, source))
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


@functools.lru_cache(maxsize=64)
def ipynb_text(percent_source: str) -> str:
    """A percent-format notebook as ``.ipynb`` JSON; converted once per text (``serve`` writes every
    notebook's download again on each rebuild, and jupytext's conversion was most of that)."""
    import jupytext

    text = str(jupytext.writes(jupytext.reads(percent_source, fmt="py:percent"), fmt="ipynb"))
    return text if text.endswith("\n") else text + "\n"  # as jupytext.write ends a file


# ------------------------------------------------------------------------------------- what the hook calls
JUPYTER_PLUGIN = "mkdocs-jupyter"
# Under the working directory, like the charts' cache (a fresh one makes a cold build), unless overridden.
CACHE_ROOT = ".cache/mkdocs-jupyter"
CACHE_ENV = "RIDGEPOINT_NOTEBOOK_CACHE"
# Beside the docs folders' caches (named by their path, never these): the notebook pages' sanitised cells,
# and the notebooks converted to .ipynb for download.
FINISHED_CELLS, DOWNLOADS = "finished-cells", "downloads"


def notebook_cache_root() -> Path:
    """``$RIDGEPOINT_NOTEBOOK_CACHE``, else ``.cache/mkdocs-jupyter`` under the working directory."""
    return Path(os.environ.get(CACHE_ENV) or Path.cwd() / CACHE_ROOT)


def configure_execution_cache(
    plugins: Mapping[str, Any], project_root: str | Path, docs_dir: str | Path, *, partial: bool = False
) -> Path | None:
    """Point mkdocs-jupyter's cache at the folder for these docs and the current calculators.

    Each docs folder (the course, a test fixture site) gets its own cache: the plugin deletes every cached
    page a build did not use, so two sites sharing a folder would evict each other's. For the same reason the
    cache is off in a ``partial`` serve rebuild (:mod:`course.lesson_format.partial_rebuilds`), which writes
    no notebook page (a changed notebook makes every page be written again): the plugin would evict them all,
    and the next full rebuild would execute every notebook again. Returns None if the plugin or its cache is
    off.
    """
    plugin = plugins.get(JUPYTER_PLUGIN)
    if plugin is None or not plugin.config["cache"]:
        return None
    if partial:
        plugin.config["cache"] = False
        return None
    root = Path(project_root).resolve()
    docs = Path(docs_dir).resolve()
    try:
        site_key = "-".join(docs.relative_to(root).parts)
    except ValueError:  # docs outside the project (a temporary test site): name the cache by the path's hash
        site_key = "outside-" + hashlib.sha256(str(docs).encode()).hexdigest()[:12]
    folder = fingerprint_folder(notebook_cache_root() / site_key, outputs_fingerprint(root))
    plugin.config["cache_dir"] = str(folder)
    return folder


def notebook_page_content(
    content: str, path: str, notebooks: Iterable[Notebook], course: Course, lesson_link: Any
) -> str:
    """A built page's HTML, finished if ``path`` is a notebook (see :func:`finish_notebook_page`).

    ``lesson_link(lesson_path)`` returns the lesson page's URL relative to this page.
    """
    notebook = next((n for n in notebooks if n.path == path), None)
    if notebook is None:
        return content
    lesson = course.lesson_by_id(notebook.lesson)
    if lesson is None:  # reported as a problem when the notebooks were loaded
        return content
    stored = StoredResults(notebook_cache_root() / FINISHED_CELLS)
    return finish_notebook_page(content, notebook, lesson.title, lesson_link(lesson.path), stored)


def notebook_page_folders(notebooks: Iterable[Notebook], files: Any) -> dict[str, str]:
    """Where each notebook's page is written in the site (MkDocs ``Files``), for :func:`write_downloads`."""
    folders: dict[str, str] = {}
    for notebook in notebooks:
        file = files.get_file_from_path(notebook.path)
        if file is not None and not file.inclusion.is_excluded():  # exclude_docs keeps files, marked
            folders[notebook.path] = str(Path(file.abs_dest_path).parent)
    return folders


# ------------------------------------------------------------------------------------------ a failing cell
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FAILED_CELL = re.compile(r"executing the following cell:\n-{18}\n(?P<source>.*?)\n-{18}\n", re.DOTALL)


def describe_cell_failure(error: BaseException, docs_dir: str | Path) -> str | None:
    """One plain sentence naming the notebook, the code cell and the exception of a failed execution.

    nbclient's error shows the cell's source and a colour-coded traceback but not the notebook; the source is
    matched against the notebooks under ``docs_dir``. Returns None for any other error.
    """
    if type(error).__name__ != "CellExecutionError":
        return None
    text = _ANSI.sub("", str(error))
    match = _FAILED_CELL.search(text)
    if match is None:
        return None
    source = match.group("source").strip()
    summary = f"{getattr(error, 'ename', 'Error')}: {getattr(error, 'evalue', '')}".rstrip(": ")
    line = re.search(r"^-+> +(\d+)", text, re.MULTILINE)
    at_line = f", line {line.group(1)}" if line else ""
    import jupytext

    docs = Path(docs_dir)
    for file in sorted(docs.glob(NOTEBOOK_GLOB)):
        code_cells = [c for c in jupytext.read(file, fmt="py:percent").cells if c.cell_type == "code"]
        for number, cell in enumerate(code_cells, start=1):
            if cell.source.strip() == source:
                first = source.splitlines()[0] if source else ""
                return (
                    f"Notebook {file.relative_to(docs).as_posix()} failed in code cell {number} (starting "
                    f"`{first}`){at_line}: {summary}. Fix the cell or the calculators it calls; the build "
                    "runs every notebook and stops at the first failing cell."
                )
    return f"A notebook cell failed{at_line}: {summary}. The cell:\n{source}"
