"""The Chromium flags Lighthouse runs the pages under (course/benchmarks/page_speed.py)."""

from __future__ import annotations

from course.benchmarks.page_speed import disabled_features


def test_our_features_are_added_to_the_launchers_list_which_stays() -> None:
    # chrome-launcher's flags come first on Chromium's command line and only the last --disable-features
    # counts, so losing its list would turn Translate and the media router back on.
    launcher = ["--disable-extensions", "--disable-features=Translate,MediaRouter", "--mute-audio"]
    assert disabled_features(launcher) == (
        "--disable-features=Translate,MediaRouter,WebUIOmniboxPopup,WebUIOmniboxAimPopup"
    )


def test_a_feature_the_launcher_already_turns_off_is_named_once() -> None:
    assert disabled_features(["--disable-features=WebUIOmniboxPopup,"]) == (
        "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup"
    )
    assert disabled_features([]) == "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup"
