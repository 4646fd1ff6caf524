"""The Chromium every browser user starts (course/browser_flags.py): the launcher's disabled features kept,
ours added, and the command line Chromium actually received."""

from __future__ import annotations

from typing import Any

from course.browser_flags import (
    DISABLE_FEATURES,
    FEATURES_OFF,
    command_line,
    disabled_features,
    features_flag_in,
)

VERSION_PAGE_LINE = (
    "/usr/lib/chromium/chromium --disable-extensions --disable-features=LensOverlay,MediaRouter,PaintHolding "
    "--enable-features=CDPScreenshotNewSurface --host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 "
    "--disable-features=Translate --remote-debugging-pipe"
)


def test_our_features_are_added_to_the_launchers_list_which_stays() -> None:
    # The launcher's flags come first on Chromium's command line and only the last --disable-features counts,
    # so losing its list would turn PaintHolding (Playwright's) or Translate (chrome-launcher's) back on.
    launcher = ["--disable-extensions", "--disable-features=Translate,MediaRouter", "--mute-audio"]
    assert disabled_features(launcher) == (
        "--disable-features=Translate,MediaRouter,WebUIOmniboxPopup,WebUIOmniboxAimPopup"
    )


def test_a_feature_the_launcher_already_turns_off_is_named_once() -> None:
    assert disabled_features(["--disable-features=WebUIOmniboxPopup,"]) == (
        "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup"
    )
    assert disabled_features([]) == "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup"


def test_the_first_features_flag_is_read_from_a_command_line_with_spaces_in_other_flags() -> None:
    assert features_flag_in(VERSION_PAGE_LINE) == "--disable-features=LensOverlay,MediaRouter,PaintHolding"
    assert features_flag_in("/usr/bin/chromium --headless --no-sandbox") is None


def test_the_browser_runs_with_playwrights_features_off_and_ours_in_one_flag(browser: Any) -> None:
    # What Chromium received, as it prints it: Playwright's list would be lost if ours replaced it, and ours
    # would be lost if Playwright's came last.
    flags = [flag for flag in command_line(browser).split() if flag.startswith(DISABLE_FEATURES)]
    assert len(flags) == 1, flags
    features = flags[0].split("=", 1)[1].split(",")
    assert "PaintHolding" in features  # Playwright's (microsoft/playwright#28023)
    assert set(FEATURES_OFF) <= set(features)
