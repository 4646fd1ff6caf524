"""The page's scripts requested from its ``<head>``, so that they download while the lesson is parsed.

Material puts its scripts at the end of ``<body>`` (ours follow it there: ``search-on-demand.js`` before
Material's bundle, the ``extra_javascript`` after). A browser normally finds them early anyway: Chromium's
preload scanner reads ahead of the parser and requests them while the page is still being parsed. But it
reads no further than a Content-Security-Policy ``<meta>``, and ours is the first thing in every page's
``<head>`` (:mod:`course.sanitising.csp`). So a lesson's scripts were requested only when the parser reached
them, after the whole article: one more round trip, on a slow phone network, before the page's search,
palette, quizzes and widgets work. Measured in Lighthouse's trace of the batching lesson (unthrottled), the
bundle was requested 150 ms into the load, against 27 ms on the same page without our blocks (issue 23);
with the scripts in ``<head>``, 45 ms. Lighthouse's blocking time for the lesson went from 150 to 109 ms
(median of three runs each, its twin 50 ms).

The scripts move to the end of ``<head>``, in the same order, each with ``defer``. A deferred script runs
when the document has been parsed, before ``DOMContentLoaded``, in document order: where the end of
``<body>`` ran them, with the parsed page in place (Material's ``__config`` element included), and in the
order they had. Only external scripts after ``__config`` move; inline scripts stay where the theme put them
(their hashes are in the policy, and MkDocs' live-reload script under ``serve`` is one of them).
"""

from __future__ import annotations

import re

# Material's configuration block: the scripts that follow it in <body> are the page's.
_CONFIG_RE = re.compile(r'<script id="__config" type="application/json">.*?</script>', re.DOTALL)
_EXTERNAL_SCRIPT_RE = re.compile(r'<script src="(?P<src>[^"<>]+)"(?: defer)?></script>')
_HEAD_END = "</head>"


def scripts_in_head(page: str) -> str:
    """``page`` with the external scripts after Material's ``__config`` moved, deferred, into ``<head>``."""
    config = _CONFIG_RE.search(page)
    head_end = page.find(_HEAD_END)
    if config is None or head_end < 0 or head_end > config.start():
        return page
    tail = page[config.end() :]
    scripts = [match["src"] for match in _EXTERNAL_SCRIPT_RE.finditer(tail)]
    if not scripts:
        return page
    moved = "".join(f'<script src="{src}" defer></script>' for src in scripts)
    return page[:head_end] + moved + page[head_end : config.end()] + _EXTERNAL_SCRIPT_RE.sub("", tail)
