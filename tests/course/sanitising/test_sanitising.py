"""The sanitising layer's parts, one by one: the allow-list, trusted blocks, plain text, bounded reading, CSP.

The attack corpus (test_attack_corpus.py) proves the whole in a browser; these tests pin each piece's
behaviour with small inputs whose expected output is written out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import markdown
import pytest
import yaml

from course.lesson_format.lessons import parse_tracks
from course.sanitising.csp import (
    policy,
    relative_base_urls,
    script_hash,
    script_hashes,
    theme_script_hashes,
    with_policy,
    write_headers_file,
)
from course.sanitising.extension import find_problems
from course.sanitising.front_matter import escape_meta, front_matter_problems
from course.sanitising.policy import leaves_the_site, sanitise_html, url_scheme
from course.sanitising.source_files import docs_file_problem, load_yaml, read_source
from course.sanitising.trusted import (
    BUILD_NONCE,
    marked,
    marked_content,
    sanitise_final_page,
    store_trusted,
    untrusted,
)


@pytest.mark.parametrize(
    ("dirty", "clean"),
    [
        ('<p onclick="x()">a</p>', "<p>a</p>"),
        ("<script>x()</script>b", "b"),
        ('<a href="javascript:x()">a</a>', "<a>a</a>"),
        ('<a href="&#106;avascript:x()">a</a>', "<a>a</a>"),
        ('<a href="https://example.org/">a</a>', '<a href="https://example.org/">a</a>'),
        ('<img src="https:evil.example/x.png" alt="a">', '<img alt="a">'),
        ('<img src="\\\\evil.example\\x.png" alt="a">', '<img alt="a">'),
        ('<img src="roofline.png" alt="a">', '<img src="roofline.png" alt="a">'),
        ('<div data-pyodide="//e/" class="rp-widget">a</div>', "<div>a</div>"),
        ('<td style="text-align: right; background: url(//e/x)">1</td>', "1"),  # a lone <td> is not a table
        (
            '<table><tr><td style="text-align: right; background: url(//e/x)">1</td></tr></table>',
            '<table><tbody><tr><td style="text-align:right">1</td></tr></tbody></table>',
        ),
        ('<p id="__config">x</p>', "<p>x</p>"),
        ("<iframe srcdoc='<script>x()</script>'></iframe>ok", "ok"),
    ],
)
def test_the_allow_list_keeps_prose_and_drops_the_rest(dirty: str, clean: str) -> None:
    assert sanitise_html(dirty) == clean


@pytest.mark.parametrize(
    ("url", "scheme", "elsewhere"),
    [
        ("../a.png", None, False),
        ("jav&#x09;ascript:x", "javascript", True),
        (" \x0ejavascript:x", "javascript", True),
        ("//evil.example/x", None, True),
        ("\\/evil.example/x", None, True),
        ("HTTPS:evil.example", "https", True),
    ],
)
def test_urls_are_read_as_a_browser_reads_them(url: str, scheme: str | None, elsewhere: bool) -> None:
    assert url_scheme(url) == scheme
    assert leaves_the_site(url) is elsewhere


def _render(source: str) -> str:
    """Markdown with the sanitising extension and a tiny block that stores trusted HTML."""
    from markdown.preprocessors import Preprocessor

    class Block(Preprocessor):
        def run(self, lines: list[str]) -> list[str]:
            return [
                store_trusted(self.md, '<div data-rp="ours" onclick="ours()">ours</div>')
                if line == "BLOCK"
                else line
                for line in lines
            ]

    md = markdown.Markdown(extensions=["toc", "attr_list", "course.sanitising.extension"])
    md.preprocessors.register(Block(md), "block", 27)
    return md.convert(source)


def test_trusted_blocks_pass_and_everything_else_is_sanitised() -> None:
    html = _render('# Title\n\nBLOCK\n\n<div data-rp="theirs" onclick="theirs()">theirs</div>\n')
    assert '<div data-rp="ours" onclick="ours()">ours</div>' in html
    assert "<div>theirs</div>" in html
    assert "rptrusted" not in html


def test_a_lesson_cannot_forge_the_token_of_a_trusted_block() -> None:
    first = _render("BLOCK")
    token = "rptrusted" + "0" * 24 + "n0x"
    second = _render(f"BLOCK\n\n{token}\n")
    assert "ours" in first
    assert token in second  # shown as text: the nonce is new for each page
    assert second.count("ours()") == 1


def test_a_trusted_block_in_a_heading_survives_the_table_of_contents() -> None:
    html = _render("# BLOCK\n\n## Next\n\nBLOCK\n")
    assert html.count("ours()") == 1  # the heading's placeholder is text in Markdown; the paragraph's is ours
    assert "rptrusted" not in html


def test_the_check_names_line_and_fix() -> None:
    problems = find_problems("# T\n\nText.\n\n<IMG SRC=x ONERROR=alert(1)>\n\n[a](vbscript:x)\n", "t.md")
    assert [(p.line, p.field) for p in problems] == [(5, "HTML attribute onerror"), (7, "vbscript: URL")]
    assert "remove the onerror attribute" in problems[0].fix


def test_code_may_show_html() -> None:
    assert find_problems("Write `<script>` or\n\n```html\n<iframe src=x>\n```\n", "t.md") == []


# ---------------------------------------------------------------------------------------------- plain text
def test_titles_are_plain_text_and_escaped() -> None:
    problems = front_matter_problems({"title": "<b>x</b>", "status": "hot"}, "a.md", {"title": 2})
    assert [(p.field, p.line) for p in problems] == [("title", 2), ("status", None)]
    meta = {"title": 'A & "B" <c>', "summary": "<kept for Markdown>"}
    escape_meta(meta)
    assert meta == {"title": "A &amp; &quot;B&quot; &lt;c&gt;", "summary": "<kept for Markdown>"}


def test_track_titles_are_plain_text() -> None:
    tracks, problems = parse_tracks('[{"key": "a", "title": "<img src=x>", "summary": "S", "order": 1}]')
    assert tracks == []
    assert "plain text" in problems[0].message


# -------------------------------------------------------------------------------------- bounded reading
def test_yaml_aliases_are_refused() -> None:
    assert load_yaml("a: [1, 2]") == {"a": [1, 2]}
    with pytest.raises(yaml.YAMLError, match="aliases"):
        load_yaml("a: &x [1]\nb: *x\n")
    with pytest.raises(yaml.YAMLError, match="at most"):
        load_yaml("a: " + "x" * 40_000)


@pytest.mark.parametrize(
    "text", ["name: [unclosed", "name: [unclosed\n", "a: 1\nb: {x", "key: 'open", "a: b: c\n", "- a\nb: c\n"]
)
def test_yaml_errors_point_where_pure_python_pyyaml_points(text: str) -> None:
    """The loader reads with libyaml, whose end of a text without a last line break is a line further on:
    a problem would name the line after the block. Every mark is where PyYAML's own parser puts it."""
    with pytest.raises(yaml.MarkedYAMLError) as ours:
        load_yaml(text)
    with pytest.raises(yaml.MarkedYAMLError) as reference:
        yaml.load(text, Loader=yaml.SafeLoader)
    mark, expected = ours.value.problem_mark, reference.value.problem_mark
    assert mark is not None
    assert expected is not None
    assert (mark.line, mark.column) == (expected.line, expected.column)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\xef\xbb\xbf# T\n", "byte-order mark"),
        (b"# Caf\xe9\n", "not UTF-8"),
        (b"---\na: &a [1]\nb: *a\n---\n", "aliases"),
        (b"x" * 300_000, "at most"),
    ],
)
def test_unreadable_lesson_files_name_the_file(tmp_path: Path, content: bytes, words: str) -> None:
    file = tmp_path / "l.md"
    file.write_bytes(content)
    text, problems = read_source(file, "t/l.md")
    assert text is None
    assert problems[0].file == "t/l.md"
    assert words in problems[0].message


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("inference/batching.md", True),
        ("tracks.yml", True),
        ("references.yml", True),
        ("redirects.yml", True),
        ("inference/notebooks/batching.py", True),
        ("inference/roofline.png", True),
        ("inference/tracks.yml", False),
        ("inference/helper.py", False),
        ("inference/page.html", False),
        ("inference/x.js", False),
        ("inference/LESSON.MD", False),
        ("inference/figure.svg", False),
    ],
)
def test_only_the_kinds_of_file_lessons_use_may_live_under_docs(path: str, allowed: bool) -> None:
    assert (docs_file_problem(path) is None) is allowed


# ------------------------------------------------------------------------------------------------------ CSP
def test_the_policy_hashes_inline_scripts_but_not_json() -> None:
    page = '<html><head><script>a()</script><script type="application/json">{}</script></head></html>'
    # sha256 of "a()", base64 (printf 'a()' | openssl dgst -sha256 -binary | base64)
    assert script_hashes(page) == ["'sha256-qVpDBgj7bpq5hMAcGp3AOc79J3Y1Z4HvySTwKrWDoy4='"]
    secured = with_policy(page, ["'sha256-known'"])
    assert secured.startswith('<html><head><meta http-equiv="Content-Security-Policy" content="default-src')
    assert "'sha256-known'" in secured


def test_the_policy_never_allows_a_script_found_in_the_page() -> None:
    """Issue 24: the build hashed every inline script of the finished page, so whatever reached it ran."""
    injected = "<html><head></head><body><p>Lesson</p><script>rpCanary('x')</script></body></html>"
    secured = with_policy(injected, ["'sha256-theme'"])
    assert script_hash("rpCanary('x')") not in secured
    assert "script-src 'self' 'wasm-unsafe-eval' 'sha256-theme';" in secured


def test_the_allowed_scripts_are_read_from_the_theme_templates(tmp_path: Path) -> None:
    import jinja2

    (tmp_path / "partials").mkdir()
    (tmp_path / "partials" / "base.html").write_text(
        '<script>var scope=new URL("{{ config.extra.scope | d(base_url) }}",location)</script>'
        '<script src="x.js"></script><script type="application/json">{"x": 1}</script>',
        encoding="utf-8",
    )
    (tmp_path / "partials" / "static.html").write_text("<script>var a=1</script>", encoding="utf-8")
    (tmp_path / "redirect.html").write_text(
        "<script>go('{{ page.meta.location }}')</script>", encoding="utf-8"
    )
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    base_urls = relative_base_urls(["", "serving/", "serving/batching/"])
    assert base_urls == [".", "..", "../.."]
    hashes = theme_script_hashes(env, [str(tmp_path)], base_urls, {"extra": {}})
    for url in base_urls:  # each depth its own base script and the static one; no page, no redirect script
        expected = [script_hash(f'var scope=new URL("{url}",location)'), script_hash("var a=1")]
        assert sorted(hashes[url]) == sorted(expected)


def test_a_template_that_overrides_the_themes_allows_its_own_scripts_only(tmp_path: Path) -> None:
    import jinja2

    ours, theirs = tmp_path / "overrides", tmp_path / "material"
    for folder, text in ((ours, "var ours=1"), (theirs, "var theirs=1")):
        (folder / "partials").mkdir(parents=True)
        (folder / "partials" / "palette.html").write_text(f"<script>{text}</script>", encoding="utf-8")
    (theirs / "partials" / "header.html").write_text("<script>var header=1</script>", encoding="utf-8")
    hashes = theme_script_hashes(jinja2.Environment(), [str(ours), str(theirs)], ["."], {"extra": {}})
    assert sorted(hashes["."]) == sorted([script_hash("var ours=1"), script_hash("var header=1")])


def test_the_policy_refuses_inline_scripts_eval_plugins_and_base() -> None:
    text = policy(["'sha256-x'"])
    directives = dict(part.split(" ", 1) for part in text.split("; "))
    assert directives["script-src"] == "'self' 'wasm-unsafe-eval' 'sha256-x'"
    assert directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'self'"
    assert directives["form-action"] == "'self'"
    assert "frame-ancestors" not in directives  # a <meta> cannot carry it; _headers does
    assert "frame-ancestors 'self'" in policy(header=True)


def test_headers_give_a_long_cache_lifetime_to_hashed_assets_only(tmp_path: Path) -> None:
    for name in (
        "assets/javascripts/bundle.a5f9d56c.min.js",  # Material: content hash in the name
        "assets/stylesheets/main.57a0d79d.min.css",
        "assets/ridgepoint/vega/vega-runtime-3425bd951a44.js",  # ours: the pinned runtime's hash
        "assets/pyodide/314.0.8/pyodide.mjs",  # a versioned folder
        "assets/ridgepoint/widgets.css",  # no hash: keeps the host's default
        "assets/javascripts/lunr/wordcut.js",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x", encoding="utf-8")
    headers = write_headers_file(tmp_path, []).read_text(encoding="utf-8")
    rules = dict(re.findall(r"^(/\S*)\n  Cache-Control: (.*)$", headers, re.MULTILINE))
    assert rules == dict.fromkeys(
        [
            "/assets/javascripts/bundle.a5f9d56c.min.js",
            "/assets/stylesheets/main.57a0d79d.min.css",
            "/assets/ridgepoint/vega/vega-runtime-3425bd951a44.js",
            "/assets/pyodide/314.0.8/*",
        ],
        "public, max-age=31536000, immutable",
    )
    assert headers.startswith("/*\n  Content-Security-Policy:")


# ---------------------------------------------------------------------------------- issue 24: the final pass
def test_the_final_pass_sanitises_the_content_and_keeps_only_marked_blocks() -> None:
    """Our blocks are recognised by the build's nonce, not by their shape; everything else is sanitised."""
    ours = marked('<section class="rp-widget" data-widget="x"><form><input name="a"></form></section>')
    forged = '<!--rpT0000:1--><section data-widget="y"><script>bad()</script></section><!--/rpT0000:1-->'
    content = (
        f"<p>Text</p>{ours}{forged}<math><mi style='position:fixed' href='https://evil.example'>x</mi></math>"
    )
    page = f"<html><head><script>theme()</script></head><body>{marked_content(content)}</body></html>"
    final = sanitise_final_page(page, sanitise_html)
    assert '<section class="rp-widget" data-widget="x"><form><input name="a"></form></section>' in final
    assert "bad()" not in final  # a guessed mark is only a comment, dropped with the rest
    assert 'data-widget="y"' not in final
    assert "<mi>x</mi>" in final  # MathML kept, its style and href dropped
    assert "<script>theme()</script>" in final  # the theme's part is not the content's
    assert BUILD_NONCE not in final


def test_a_formula_box_is_ours_and_its_mathml_is_sanitised_with_the_page() -> None:
    mathml = '<math><mi style="position:fixed">y</mi><mtext><script>z()</script></mtext></math>'
    box = marked(f'<div class="rp-math" tabindex="0" role="group">{untrusted(mathml)}</div>')
    final = sanitise_final_page(marked_content(f"<p>Text</p>{box}"), sanitise_html)
    assert (
        '<div class="rp-math" tabindex="0" role="group"><math><mi>y</mi><mtext></mtext></math></div>' in final
    )


def test_a_page_without_content_marks_is_left_as_the_theme_wrote_it() -> None:
    page = "<html><body><script>theme()</script></body></html>"
    assert sanitise_final_page(page, sanitise_html) == page


def test_formulas_come_out_of_the_page_sanitiser_inert() -> None:
    md = markdown.Markdown(extensions=["course.math.extension", "course.sanitising.extension"])
    out = md.convert(
        "$\\text{<script>x()</script><img src=y onerror=z()>}$ $\\style{position:fixed}{a}$ "
        "$\\href{javascript:b()}{c}$ $\\class{md-header}{d}$"
    )
    for dropped in ("<script", "onerror", "style=", "href", "md-header"):
        assert dropped not in out
    assert out.count("<math") == 4


def test_titles_are_plain_text_escaped_once() -> None:
    from mkdocs.utils import weak_property

    from course.sanitising.titles import give_plain_title, text_of_html

    assert text_of_html("&lt;/title&gt;&lt;script&gt; <b>x</b> <!-- c -->") == "</title><script> x"

    class Page:
        """A page as MkDocs makes one: ``title`` falls back to the file's name until something sets it."""

        def __init__(self, **fields: object) -> None:
            self.meta: dict[str, object] = {}
            self.is_homepage = False
            self.toc: list[object] = []
            self.file_title: str | None = None
            vars(self).update(fields)

        @weak_property
        def title(self) -> str | None:
            return self.file_title

    def page(**fields: object) -> Any:
        return Page(**fields)

    heading = page(_title_from_render="&lt;/title&gt;&lt;script&gt;CANARY")
    assert give_plain_title(heading) == "&lt;/title&gt;&lt;script&gt;CANARY"
    assert heading.meta["title"] == heading.title  # <title> prints meta.title, never through striptags
    file_name = page(file_title="<img src=x onerror=CANARY>")
    assert give_plain_title(file_name) == "&lt;img src=x onerror=CANARY&gt;"
    home = page(is_homepage=True, _title_from_render="Welcome")
    home.title = "Home"  # the navigation's title wins over the heading, as in MkDocs
    assert give_plain_title(home) == "Home"
    assert "title" not in home.meta  # the home page's <title> stays the site's name
    notebook = page()
    notebook.title = "<img src=x onerror=CANARY>"  # mkdocs-jupyter's, from the cells
    assert give_plain_title(notebook, "KV & paging") == "KV &amp; paging"


def test_new_lesson_writes_the_title_into_the_notebook_heading_as_text(tmp_path: Path) -> None:
    from course.lesson_format.scaffold import ScaffoldError, create_lesson, render_notebook
    from course.notebooks.lesson_notebooks import _first_heading
    from course.sanitising.titles import text_of_html

    notebook = render_notebook("# # LESSON_TITLE, worked through\n", lesson_id="x", title="KV &lt; paging")
    assert notebook == "# # KV &amp;lt; paging, worked through\n"  # shown as written, not decoded into "<"
    assert (
        text_of_html(_first_heading("# %% [markdown]\n" + notebook) or "") == "KV &lt; paging, worked through"
    )
    with pytest.raises(ScaffoldError, match="plain text"):
        create_lesson("<img src=x onerror=alert(1)>", "serving", tmp_path)


def test_a_heading_whose_generated_id_looks_reserved_is_not_the_authors_problem() -> None:
    """A heading "Widget fixture" gets the id widget-fixture from Markdown, not from its author: the check's
    rendered reading refused it (and the widget test site with it); an id the author writes is refused."""
    assert find_problems("# Widget fixture\n\nText.\n", "docs/a.md") == []
    written = find_problems("# A title {#widget-prefill-decode}\n\nText.\n", "docs/a.md")
    assert any("reserved" in problem.message for problem in written)
