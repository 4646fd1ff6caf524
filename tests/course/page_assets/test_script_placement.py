"""The page's scripts move into <head>, deferred and in order (course.page_assets.script_placement)."""

from __future__ import annotations

from course.page_assets.script_placement import scripts_in_head

PAGE = (
    '<html><head><meta http-equiv="Content-Security-Policy" content="x"><link rel="stylesheet" href="a.css">'
    "<script>var inHead = 1;</script></head><body><article>lesson</article>"
    '<script id="__config" type="application/json">{"base": "."}</script>'
    '<script src="sod.js"></script><script src="bundle.js"></script>'
    '<script src="quiz.js" defer></script><script>/* live reload */</script></body></html>'
)


def test_the_scripts_after_the_config_move_to_the_end_of_head_deferred_in_their_order() -> None:
    page = scripts_in_head(PAGE)
    head, body = page.split("</head>")
    assert head.endswith(
        '<script src="sod.js" defer></script><script src="bundle.js" defer></script>'
        '<script src="quiz.js" defer></script>'
    )
    assert head.index("Content-Security-Policy") < head.index("sod.js")  # the policy still comes first
    assert "src=" not in body.split("__config")[1]
    assert '<script id="__config" type="application/json">{"base": "."}</script>' in body
    assert "<script>/* live reload */</script></body>" in body  # inline scripts stay where they were
    assert "<script>var inHead = 1;</script>" in head


def test_a_page_without_materials_config_is_left_as_it_is() -> None:
    page = '<html><head></head><body><script src="x.js"></script></body></html>'
    assert scripts_in_head(page) == page


def test_a_script_before_the_config_stays_in_the_body() -> None:
    page = PAGE.replace("<article>", '<script src="early.js"></script><article>')
    moved = scripts_in_head(page)
    assert '<script src="early.js"></script><article>' in moved
    assert moved.split("</head>")[0].count("<script src=") == 3
