"""MkDocs hook: a thin dispatcher from MkDocs events to plain functions in ``course``.

No logic lives here, so leaving MkDocs (for Zensical, which runs extensions but not hooks) costs little.
MkDocs restores ``sys.path`` after loading this file, so the project package is imported inside each event.

Problems found in any page are collected through the build and reported together at ``on_env`` (after every
page's Markdown was read, before any HTML is written), which fails the build. Under ``mkdocs serve`` they are
logged instead and shown on top of every page, so the server keeps answering while the author fixes them.
``dev.py serve`` runs ``mkdocs serve --dirty``: a rebuild writes only the edited pages, and every page when
what they share changed (``course.lesson_format.partial_rebuilds``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

_BUILD: dict[str, Any] = {}  # per-build state, reset by on_config (mkdocs serve rebuilds in one process)
UNCHECKED_BUILD_ENV = "RIDGEPOINT_UNCHECKED_BUILD"  # the attack corpus builds despite lesson problems
_SERVING = (
    "RIDGEPOINT_SERVING"  # course.lesson_format.problems.SERVING_ENV; MkDocs reloads this file per build
)
_DIRTY = "RIDGEPOINT_DIRTY_SERVE"  # course.lesson_format.partial_rebuilds.DIRTY_ENV, for the same reason


def on_startup(command: str, dirty: bool) -> None:
    import os

    if command == "serve":
        os.environ[_SERVING] = "1"
    # dev.py serve runs --dirty (see partial_rebuilds). MkDocs says so in this first event only, and this
    # file is loaded again for each build, so the environment keeps it (and drops a caller's).
    os.environ.pop(_DIRTY, None)
    if dirty:
        from course.lesson_format.partial_rebuilds import quiet_dirty_build_warning

        os.environ[_DIRTY] = "1"
        quiet_dirty_build_warning()


def on_config(config: Any) -> Any:
    import sys

    project = str(Path(__file__).resolve().parent.parent)
    if project not in sys.path:
        sys.path.insert(0, project)  # the project, when it is not installed
    from course.lesson_format.pages import purge_changed_project_modules

    # Pick up edited calculators and extensions on a serve rebuild; an edited lesson keeps what they computed.
    code_changed = bool(purge_changed_project_modules(project))
    import os

    from course.lesson_format.partial_rebuilds import DIRTY_ENV, prepare_rebuild, shared_inputs

    if _serving():  # the server rebuilds when the notebooks run in the background have all run
        from course.notebooks.scheduling import prepare_marker

        config.watch.append(str(prepare_marker()))
    from course.lesson_format import background

    if background.enabled():  # dev.py serve: and when the slow results computed by workers are all done
        config.watch.append(str(background.prepare_marker()))
    background.start_build()
    # Under --dirty, MkDocs writes only the edited pages; every page when what they share changed.
    watched = [w for w in (config.theme.custom_dir, *config.watch) if w]
    inputs = shared_inputs(config.docs_dir, config.config_file_path, watched)
    dirty = os.environ.get(DIRTY_ENV) == "1"
    partial = not prepare_rebuild(config.site_dir, inputs, code_changed=code_changed, dirty=dirty)
    from course.lesson_format.lessons import load_course
    from course.lesson_format.rendered_pages import STORE as RENDERED_PAGES
    from course.lesson_format.validation import PassedChecks, block_validators
    from course.numbers.value_cache import default_cache_dir
    from course.stored_results import StoredResults

    course = load_course(config.docs_dir)
    from mkdocs.exceptions import PluginError

    from course.lesson_format.glossary import glossary_problems
    from course.lesson_format.problems import LessonProblems
    from course.notebooks.lesson_notebooks import load_notebooks
    from course.redirects.pages import redirect_problems
    from course.references.bibliography import bibliography_problems
    from course.sanitising.source_files import SOURCE_FIELD
    from course.sanitising.source_tree import build_input_folders, build_input_problems

    notebooks, notebook_problems = load_notebooks(config.docs_dir, course)  # headers only: not run yet
    files_problems = (
        redirect_problems(config.docs_dir)
        + bibliography_problems(config.docs_dir)
        + glossary_problems(config.docs_dir)
    )
    folders = build_input_folders(config.theme.custom_dir, config.mdx_configs)  # overrides/, snippets
    early = course.problems + files_problems + notebook_problems  # before MkDocs or jupytext reads them
    unreadable = [p for p in early if p.field == SOURCE_FIELD]
    unreadable += build_input_problems(folders)
    if unreadable:  # stop before MkDocs reads or copies these files
        raise PluginError(str(LessonProblems(unreadable)))
    from course.lesson_format.expression_budget import start_build

    start_build()  # the calculator time that this build's lesson expressions share
    _BUILD.clear()
    _BUILD.update(
        course=course,
        problems=list(course.problems),
        validators=block_validators(config.markdown_extensions),
        passed_checks=PassedChecks(default_cache_dir(), config.docs_dir),  # what earlier builds checked
        inputs=inputs,
        site_dir=config.site_dir,
        rendered_pages=StoredResults(default_cache_dir() / RENDERED_PAGES),
    )
    config.mdx_configs.setdefault("course.lesson_lists.extension", {})["docs_dir"] = config.docs_dir
    config.mdx_configs.setdefault("course.references.extension", {})["docs_dir"] = config.docs_dir
    config.mdx_configs.setdefault("course.lesson_format.takeaways", {})["docs_dir"] = config.docs_dir
    # Pages are sanitised once, on their final HTML (on_post_page); the extension marks our blocks for it.
    config.mdx_configs.setdefault("course.sanitising.extension", {})["final_pass"] = True
    _BUILD["problems"].extend(files_problems)
    # The hook reports every problem of the course together; the extension fails builds that have no hook.
    config.mdx_configs.setdefault("course.lesson_format.extension", {})["collect"] = True
    from course.notebooks.lesson_notebooks import configure_execution_cache

    _BUILD.update(notebooks=notebooks, notebook_dirs={}, docs_dir=config.docs_dir)  # dirs: see on_files
    _BUILD["problems"].extend(notebook_problems)
    configure_execution_cache(config.plugins, project, config.docs_dir, partial=partial)
    from course.notebooks.sandbox import configure_kernel_sandbox

    configure_kernel_sandbox(project)  # notebooks run isolated, with time limits, or not at all
    from course.page_assets.bundle import site_stylesheet_bundle

    # Our stylesheets as one minified file (written at on_post_build), linked instead of the four.
    _BUILD["stylesheet_bundle"] = site_stylesheet_bundle(config.extra_css, config.theme.dirs)
    config.extra_css = [_BUILD["stylesheet_bundle"][0]]
    search = next((p for name, p in config.plugins.items() if name.endswith("search")), None)
    _BUILD["search"] = search
    if search is not None:
        from course.sanitising.trusted import BUILD_NONCE
        from course.search_index.excluded_parts import MARK_NONCE
        from course.search_index.kept_entries import STORE, keep_plugin_entries

        # A page's search entries are reused while what Material's indexer reads of it is unchanged.
        stored = StoredResults(default_cache_dir() / STORE)
        _BUILD["search_entries"] = keep_plugin_entries(search, stored, (BUILD_NONCE, MARK_NONCE))
    return config


def on_files(files: Any, config: Any) -> Any:
    from course.lesson_format.navigation import build_nav
    from course.notebooks.lesson_notebooks import nav_companions, notebook_page_folders

    companions = nav_companions(_BUILD["notebooks"], _BUILD["course"])
    config.nav = build_nav(_BUILD["course"], [f.src_uri for f in files.documentation_pages()], companions)
    _BUILD["notebook_dirs"] = notebook_page_folders(_BUILD["notebooks"], files)
    from course.lesson_format.partial_rebuilds import write_edited_pages_again

    write_edited_pages_again((f.abs_src_path, f.abs_dest_path) for f in files.documentation_pages())
    from course.sanitising.csp import relative_base_urls, theme_script_hashes

    # The inline scripts the policy allows: the theme's, from its templates, before any page is read.
    base_urls = relative_base_urls(f.url for f in files.documentation_pages())
    _BUILD["script_hashes"] = theme_script_hashes(
        config.theme.get_env(), config.theme.dirs, base_urls, config
    )
    return files


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    from course.lesson_format.partial_rebuilds import read_untitled_pages
    from course.sanitising.titles import give_read_page_title

    for page in read_untitled_pages((f.page for f in files.documentation_pages()), config):
        give_read_page_title(page)  # titled in every nav, escaped once
    from course.notebooks.scheduling import start_notebooks

    # Uncached notebooks start executing now, side by side; under serve the server answers meanwhile.
    start_notebooks(_BUILD["notebooks"], config, files, serving=_serving())
    return nav


def on_pre_page(page: Any, config: Any, files: Any) -> Any:
    from course.lesson_format.partial_rebuilds import page_read

    if page.file.abs_src_path:
        page_read(page.file.abs_src_path)
    return page


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    from course.lesson_format.validation import validate_page
    from course.sanitising.front_matter import escape_meta

    escape_meta(page.meta)  # plain text wherever Material prints it (the check refuses markup in them)
    from course.notebooks.scheduling import before_notebook_page

    # A notebook page waits for its execution (build), or says it is running (serve).
    before_notebook_page(page, _BUILD["notebooks"], config, serving=_serving())

    # The problems use the file's line numbers; the takeaways box is placed by its Markdown extension.
    source = Path(page.file.abs_src_path).read_text(encoding="utf-8") if page.file.abs_src_path else markdown
    _BUILD["problems"].extend(
        validate_page(
            source, page.file.src_uri, _BUILD["validators"], config.docs_dir, _BUILD["passed_checks"]
        )
    )
    if page.file.src_uri.endswith(".md") and not _serving():  # under serve a figure may still be computing
        from course.lesson_format.rendered_pages import keep_render

        keep_render(page, source, _BUILD["inputs"], _BUILD["rendered_pages"])  # reused for the same inputs
    return markdown


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    from mkdocs.utils import get_relative_url

    from course.notebooks.lesson_notebooks import notebook_page_content

    def lesson_link(path: str) -> str:
        return get_relative_url(files.get_file_from_path(path).url, page.url)

    from course.sanitising.titles import give_plain_title, quote_edit_url

    notebook = next((n for n in _BUILD["notebooks"] if n.path == page.file.src_uri), None)
    give_plain_title(page, notebook.title if notebook else None)  # plain text, escaped once, everywhere
    quote_edit_url(page)  # the file name in the edit button's address
    if notebook is not None:
        # Not Markdown: mkdocs-jupyter's page, whose cells the notebooks' own allow-list sanitises here.
        html = notebook_page_content(
            html, page.file.src_uri, _BUILD["notebooks"], _BUILD["course"], lesson_link
        )
    else:
        from course.sanitising.trusted import marked_content

        html = marked_content(html)  # sanitised, with the theme around it, at on_post_page
    if _BUILD.get("search") is None:
        return html
    if (kept := _BUILD.get("search_entries")) is not None and kept.known(page, html):
        return html  # its search entries are kept: Material's indexer will not read it
    from course.search_index.excluded_parts import set_aside

    # What the search index skips is set aside while Material's search plugin reads the page, and put back
    # before the theme writes it (on_page_context).
    aside = set_aside(html)
    _BUILD.setdefault("set_aside", {})[page.file.src_uri] = aside.parts
    return aside.html


@event_priority(-100)  # after every plugin's, Material's search among them
def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:
    from course.search_index.excluded_parts import put_back

    page.content = put_back(page.content, _BUILD.get("set_aside", {}).pop(page.file.src_uri, []))
    return context


def on_post_page(output: str, page: Any, config: Any) -> str:
    from course.sanitising.csp import with_policy
    from course.sanitising.policy import sanitise_html
    from course.sanitising.trusted import sanitise_final_page

    output = sanitise_final_page(output, sanitise_html)  # the page's one pass, after the theme

    if page is not None and _serving() and _BUILD.get("problems"):
        from course.lesson_format.problems import problems_panel, with_problems_panel

        output = with_problems_panel(output, problems_panel(_BUILD["problems"], page.file.src_uri))
    from course.lesson_format import background

    if page is not None and (waiting := background.waiting()):  # only under dev.py serve
        from course.lesson_format.problems import with_problems_panel

        output = with_problems_panel(output, background.notice_html(waiting))
    from course.sanitising.csp import base_url_of

    # The Content-Security-Policy, first in <head>: the theme's scripts for this page's depth.
    hashes = _BUILD["script_hashes"].get(base_url_of(page.url if page is not None else ""), [])
    return with_policy(output, hashes)


def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    if not template_name.endswith(".html"):
        return output_content
    from course.sanitising.csp import not_found_script_hashes, with_policy

    # 404.html: a theme template rendered with no page (no lesson text); its own scripts are allowed.
    _BUILD["not_found_hashes"] = not_found_script_hashes(output_content)
    return with_policy(output_content, _BUILD["not_found_hashes"])


def on_env(env: Any, config: Any, files: Any) -> Any:
    from mkdocs.exceptions import PluginError

    from course.lesson_format.problems import LessonProblems, docs_prefix

    if _BUILD.get("problems"):
        report = str(LessonProblems(_BUILD["problems"], docs_prefix(config.docs_dir)))
        if _serving():  # printed, not logged: the config is strict, and a logged error would stop the build
            import sys

            print(f"ERROR   -  {report}\nThe pages show them until they are fixed.", file=sys.stderr)
            return env
        import os

        if os.environ.get(UNCHECKED_BUILD_ENV) != "1":
            raise PluginError(report)
        # Only the attack-corpus test sets this: it proves the pages are inert when the checks are skipped
        # (as under a builder that runs no hooks). The problems are still printed.
        import logging

        logging.getLogger("mkdocs.hooks.lessons").warning(report)
    return env


def _serving() -> bool:
    import os

    return os.environ.get(_SERVING) == "1"


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    from course.sanitising.live_reload import serve_with_live_reload

    serve_with_live_reload(server)  # a script file of the site, which the site's own policy allows
    return server


def on_shutdown() -> None:
    from course.lesson_format import background

    background.shutdown()  # dev.py serve stopped: its background jobs must not hold the exit


def on_build_error(error: Exception) -> None:
    import logging

    from course.notebooks.lesson_notebooks import describe_cell_failure

    if _BUILD.get("site_dir"):
        from course.lesson_format.partial_rebuilds import forget_build

        forget_build(_BUILD["site_dir"])  # the next serve rebuild writes every page
    if _BUILD.get("docs_dir") and (message := describe_cell_failure(error, _BUILD["docs_dir"])):
        logging.getLogger("mkdocs.hooks.notebooks").error(message)


def on_post_build(config: Any) -> None:
    from course.widgets.runtime import install_site_assets

    # Pyodide, the calculators archive, runtime.json, Vega, chart specs: python -m course.widgets.runtime
    install_site_assets(config.site_dir)  # also minifies our scripts and stylesheets in place
    from course.page_assets.bundle import write_bundle

    write_bundle(config.site_dir, *_BUILD["stylesheet_bundle"])
    from course.not_found.page import finish_not_found_page

    finish_not_found_page(config.site_dir, config.site_url)  # styled at any base path, nothing to fail
    from course.notebooks.lesson_notebooks import write_downloads

    write_downloads(_BUILD["notebooks"], config.docs_dir, _BUILD["notebook_dirs"])  # the notebooks as .ipynb
    from course.redirects.pages import write_redirect_pages

    write_redirect_pages(config.docs_dir, config.site_dir)  # the old addresses of moved pages
    from course.lesson_format.partial_rebuilds import finish_build
    from course.sanitising.csp import write_headers_file

    # The policy for static hosts: the theme's scripts and the 404 page's, never a lesson page's.
    allowed = [h for hashes in _BUILD["script_hashes"].values() for h in hashes]
    write_headers_file(config.site_dir, [*allowed, *_BUILD.get("not_found_hashes", [])])
    if _serving():
        from course.sanitising.live_reload import write_live_reload_script

        write_live_reload_script(config.site_dir)  # loaded by the pages MkDocs serves (on_serve)
    finish_build(config.site_dir, _BUILD["inputs"], had_problems=bool(_BUILD.get("problems")))
    from course.lesson_format import background

    background.end_build()  # dev.py serve: the server rebuilds when the results it waited for are done
    from course.numbers.value_cache import flush_caches

    flush_caches()  # the computed figures not written yet, for the next build
    if _serving():
        from course.notebooks.scheduling import pages_written

        pages_written()  # the notebooks queued by on_nav start now: the server answers first
