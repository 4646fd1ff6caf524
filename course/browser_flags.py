"""How Ridgepoint starts Debian's Chromium: one place for the executable, its offline flags, and the
features it runs without.

The browser tests, the PDF writer and the benchmarks all drive the same headless Chromium, and all must keep
it offline: Chromium reaches for vendor hosts even with background networking off, so only loopback is
allowed to resolve. Keeping the flags here means a fix (a new flag, another path) reaches every user of the
browser at once.

Features are the other half. Headless Chromium 156 starts a renderer for its WebUI omnibox popup beside every
browser context it opens (``ps``: one more renderer per context), and on two cores that process competes with
the page under test: twenty contexts, each opening a blank page, took 4.8-5.0 s with it and 3.2 s without it
(December 2026, two runs each way). Chromium keeps only the last ``--disable-features`` on its command line
(checked: a second one after ours turns the renderer back on), and Playwright and chrome-launcher
(Lighthouse's) each pass a list of their own before the flags they are given, PaintHolding among
Playwright's. So a list of ours must repeat theirs: :func:`disabled_features` merges them, and
:func:`launch_options` reads Playwright's from the command line its Chromium reports (``chrome://version``),
since Playwright does not export it, and starts Chromium with that flag swapped for the merged one.
"""

from __future__ import annotations

import os
from typing import Any

CHROMIUM = os.environ.get("RIDGEPOINT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Only loopback resolves, so a stray request to another host fails fast and is recorded.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]

# Off in every Chromium we start, on top of the launcher's own list: see the module's docstring.
FEATURES_OFF = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
DISABLE_FEATURES = "--disable-features="

# Playwright's own --disable-features flag ("" where it passes none), read once per process.
_playwright_flag: str | None = None


def disabled_features(launcher_flags: list[str]) -> str:
    """One ``--disable-features`` flag: every feature the launcher's flags turn off, then
    :data:`FEATURES_OFF`, each named once."""
    features = [
        name
        for flag in launcher_flags
        if flag.startswith(DISABLE_FEATURES)
        for name in flag[len(DISABLE_FEATURES) :].split(",")
    ]
    return DISABLE_FEATURES + ",".join(dict.fromkeys(name for name in (*features, *FEATURES_OFF) if name))


def features_flag_in(command_line: str) -> str | None:
    """The first ``--disable-features`` flag of a command line as ``chrome://version`` prints it (flags
    separated by spaces; a feature list holds none), or None."""
    return next((flag for flag in command_line.split() if flag.startswith(DISABLE_FEATURES)), None)


def command_line(browser: Any) -> str:
    """The command line a running Chromium was started with, as ``chrome://version`` prints it.

    No wait for the element: a page without it (another Chromium) gives an empty line, the launch goes on
    with our list after Playwright's, and tests/course/test_browser_flags.py fails on the two flags.
    """
    page = browser.new_page()
    try:
        page.goto("chrome://version")
        line: str = page.evaluate("document.getElementById('command_line')?.textContent ?? ''")
    finally:
        page.close()
    return line


def _read_playwright_flag(browser_type: Any) -> str | None:
    """Start Chromium as Playwright would and read back the ``--disable-features`` flag it was given."""
    browser = browser_type.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        return features_flag_in(command_line(browser))
    finally:
        browser.close()


def launch_options(browser_type: Any) -> dict[str, Any]:
    """Keyword arguments for Playwright's ``launch`` or ``launch_persistent_context`` of ``browser_type``
    (Chromium): Debian's executable, headless, the offline flags, and Playwright's ``--disable-features``
    replaced by one that keeps its list and adds :data:`FEATURES_OFF`.

    The first call in a process starts Chromium once more to read Playwright's flag (about half a second).
    """
    global _playwright_flag
    if _playwright_flag is None:
        _playwright_flag = _read_playwright_flag(browser_type) or ""
    theirs = _playwright_flag
    options: dict[str, Any] = {
        "executable_path": CHROMIUM,
        "headless": True,
        "args": [*CHROMIUM_ARGS, disabled_features([theirs])],
    }
    if theirs:
        options["ignore_default_args"] = [theirs]
    return options
