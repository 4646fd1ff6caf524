"""Attack payloads on the files a build reads (issue 24, families 4, 6, 7 and 8), beside attack_corpus.py.

That corpus puts hostile Markdown into lessons; this one plants hostile *files* in a small fixture project
(test_attack_corpus_files.py): symbolic and hard links, pipes, odd names and duplicate addresses
under docs/, overrides/ and the snippet folder (4); redirects.yml paths that leave the site or land on a
page (6); YAML that is deep, aliased, long or written with carriage returns in every YAML file contributors
write (7); ``name=``, ``class`` and bare words in attribute lists, and file names that would start a CI log
command (8).

Each payload names the file the check's problem is about (as ``check`` reports it: relative to docs/, or
ending with the path of a folder outside it), the words its message must contain, and its stage: ``early``
payloads stop the build before MkDocs reads anything (field ``file``), ``late`` ones fail a strict build when
its problems are reported and are inert in a build that skips the checks. The project holds a canary secret
in a file beside it, in its ``.git/config`` and in the builder's environment; no payload may bring it into
site/.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SECRET = "rp-files-canary-7d41e9"  # beside the repository, in .git/config and in the build's environment
SECRET_FILE = "secret.txt"  # beside the project folder
OUTSIDE = "/tmp/ridgepoint-corpus-files-pwned"  # an absolute redirect would write here

Plant = Callable[[Path], None]  # receives the project folder: docs/, overrides/, snippets/, .git/


@dataclass(frozen=True)
class FilePayload:
    """One hostile file: its id, family, the file its problem names, the message's words, how it is made."""

    id: str
    family: str
    file: str  # relative to docs/, or the end of a path outside it
    message: str
    plant: Plant
    stage: str = "early"  # or "late"
    field: str = ""  # where several payloads share a file (redirects.yml): the problem's field

    def matches(self, problem_file: str, problem_field: str, text: str) -> bool:
        """Whether a problem (its file, field and full text) is this payload's."""
        same_file = problem_file == self.file or problem_file.endswith("/" + self.file)
        return same_file and (not self.field or problem_field == self.field) and self.message in text


LINKS = "4 links, odd files and duplicate addresses"
REDIRECTS = "6 redirects.yml paths"
YAML = "7 bounded YAML"
ATTRIBUTES = "8 names, classes, bare words and log lines"

LESSON = (
    "---\ntitle: {title}\nsummary: A hostile lesson.\ntrack: foundations\norder: {order}\n"
    "takeaways: [Nothing in a lesson runs.]\n---\n# {title}\n\nProse before the payload.\n\n{body}\n"
)


def lesson(order: int, body: str, title: str = "Payload") -> str:
    return LESSON.format(title=title, order=order, body=body)


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _link(relative: str, target: str) -> Plant:
    def plant(project: Path) -> None:
        where = project / relative
        where.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, where)

    return plant


def _files(files: dict[str, str | bytes]) -> Plant:
    def plant(project: Path) -> None:
        for relative, text in files.items():
            _write(project / relative, text)

    return plant


def _fifo(project: Path) -> None:
    os.mkfifo(project / "docs/foundations/pipe.md")


def _hard_link(project: Path) -> None:
    beside = project.parent / "beside-lesson.md"
    beside.write_text(lesson(90, SECRET), encoding="utf-8")
    os.link(beside, project / "docs/foundations/hard.md")


def _linked_folder(project: Path) -> None:
    outside = project.parent / "outside-assets"
    _write(outside / "evil.html", "<script>alert(1)</script>")
    _write(outside / "evil.js", "alert(1)")
    _write(outside / "evil.svg", '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>')
    os.symlink(outside, project / "docs/shared")


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _bomb(newline: str) -> str:
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)]
    return newline.join(["---", *levels, "---", "Body.", ""])


NOTEBOOK_HEADER = (
    "# ---\n# jupyter:\n#   ridgepoint:\n#     lesson: good-lesson\n{extra}# ---\n\n"
    "# %% [markdown]\n# # A notebook\n"
)


def _notebook(extra: str) -> str:
    return NOTEBOOK_HEADER.format(extra="".join(f"# {line}\n" for line in extra.splitlines()))


REDIRECT_ENTRIES: dict[str, tuple[str, str]] = {
    # id: (old, new)
    "redirect-absolute-old": (f"{OUTSIDE}/x.md", "foundations/good-lesson.md"),
    "redirect-dotdot-old": ("../../pwned/x.md", "foundations/good-lesson.md"),
    "redirect-dotdot-new": ("moved-a.md", "../secret.md"),
    "redirect-https-folder": ("moved-b.md", "https:/evil.example/x.md"),
    "redirect-scheme-old": ("https://evil.example/x.md", "foundations/good-lesson.md"),
    "redirect-double-slash": ("moved-c.md", "//evil.example/x.md"),
    "redirect-backslash": ("moved-d.md", "\\\\evil.example\\x.md"),
    "redirect-percent-dots": ("moved-e.md", "%2e%2e/%2e%2e/x.md"),
    "redirect-unicode-dots": ("moved-f.md", "\u2024\u2024/x.md"),
    "redirect-fullwidth-slash": ("moved-g.md", "..\uff0fx.md"),
    "redirect-newline": ("moved-h.md", "foundations/x\n::error::pwned.md"),
    "redirect-onto-page-address": ("foundations/good-lesson/index.md", "foundations/index.md"),
    "redirect-old-is-page": ("foundations/index.md", "foundations/good-lesson.md"),
}
REDIRECT_MESSAGES = {
    "redirect-absolute-old": "absolute path",
    "redirect-dotdot-old": "'..' segment",
    "redirect-dotdot-new": "'..' segment",
    "redirect-https-folder": "segment 'https:'",
    "redirect-scheme-old": "segment 'https:'",
    "redirect-double-slash": "absolute path",
    "redirect-backslash": "absolute path",
    "redirect-percent-dots": "segment '%2e%2e'",
    "redirect-unicode-dots": "characters other than letters",
    "redirect-fullwidth-slash": "characters other than letters",
    "redirect-newline": "x\\n::error::pwned.md",
    "redirect-onto-page-address": "still exists at foundations/good-lesson/",
    "redirect-old-is-page": "still exists",
}


def _redirects(project: Path) -> None:
    """Every redirect payload in the one redirects.yml (JSON is YAML, and quotes any character)."""
    entries = dict(REDIRECT_ENTRIES.values())
    _write(project / "docs/redirects.yml", json.dumps(entries, indent=1))


def _printable_field(old: str) -> str:
    from course.lesson_format.problems import printable

    return f"redirect {printable(old)!r}"


PAYLOADS: tuple[FilePayload, ...] = (
    # --- 4: links, pipes, hard links, names and addresses under docs/, overrides/ and the snippet folder
    FilePayload(
        "link-environ",
        LINKS,
        "foundations/environ.md",
        "symbolic link",
        _link("docs/foundations/environ.md", "/proc/self/environ"),
    ),
    FilePayload(
        "link-git-config",
        LINKS,
        "foundations/git-config.md",
        "symbolic link",
        _link("docs/foundations/git-config.md", "../../.git/config"),
    ),
    FilePayload(
        "link-secret-as-image",
        LINKS,
        "foundations/chart.png",
        "symbolic link",
        _link("docs/foundations/chart.png", f"../../../{SECRET_FILE}"),
    ),
    FilePayload("link-folder-of-scripts", LINKS, "shared", "symbolic link", _linked_folder),
    FilePayload(
        "link-to-parent-folder", LINKS, "foundations/up", "symbolic link", _link("docs/foundations/up", "..")
    ),
    FilePayload(
        "link-proc-mem",
        LINKS,
        "foundations/memory.png",
        "symbolic link",
        _link("docs/foundations/memory.png", "/proc/self/mem"),  # reading it fails: hashing it crashed check
    ),
    FilePayload(
        "link-dangling",
        LINKS,
        "foundations/gone.md",
        "symbolic link",
        _link("docs/foundations/gone.md", "/nonexistent/gone.md"),
    ),
    FilePayload(
        "link-in-overrides",
        LINKS,
        "overrides/partials/secret.html",
        "symbolic link",
        _link("overrides/partials/secret.html", f"../../../{SECRET_FILE}"),
    ),
    FilePayload(
        "link-in-snippets",
        LINKS,
        "snippets/environ.md",
        "symbolic link",
        _link("snippets/environ.md", "/proc/self/environ"),
    ),
    FilePayload("fifo-lesson", LINKS, "foundations/pipe.md", "not a regular file", _fifo),
    FilePayload("hard-link", LINKS, "foundations/hard.md", "hard link", _hard_link),
    FilePayload(
        "name-https-folder",
        LINKS,
        "https:",
        "its name 'https:'",
        _files({"docs/https:/evil.example/page.md": "# Off-site\n"}),
    ),
    FilePayload(
        "name-unicode-dots",
        LINKS,
        "\u2024\u2024",
        "characters other than letters",
        _files({"docs/\u2024\u2024/page.md": "# Dots\n"}),
    ),
    FilePayload(
        "duplicate-index",
        LINKS,
        "foundations/dup/index.md",
        "same address as foundations/dup.md",
        _files({"docs/foundations/dup.md": "# One\n", "docs/foundations/dup/index.md": "# Two\n"}),
    ),
    FilePayload(
        "duplicate-readme",
        LINKS,
        "foundations/other/README.md",
        "same address as foundations/other.md",
        _files({"docs/foundations/other.md": "# One\n", "docs/foundations/other/README.md": "# Two\n"}),
    ),
    # --- 7: bounded YAML in every YAML file contributors write
    FilePayload(
        "yaml-deep-front-matter",
        YAML,
        "foundations/deep.md",
        "nested more than",
        _files({"docs/foundations/deep.md": f"---\ntitle: Deep\nextra: {_deep(5000)}\n---\nBody.\n"}),
    ),
    FilePayload(
        "yaml-cr-alias-bomb",
        YAML,
        "foundations/cr-bomb.md",
        "aliases",
        _files({"docs/foundations/cr-bomb.md": _bomb("\r")}),
    ),
    FilePayload(
        "yaml-crlf-alias-bomb",
        YAML,
        "foundations/crlf-bomb.md",
        "aliases",
        _files({"docs/foundations/crlf-bomb.md": _bomb("\r\n")}),
    ),
    FilePayload(
        "yaml-long-front-matter",
        YAML,
        "foundations/long.md",
        "at most",
        _files({"docs/foundations/long.md": "---\ntitle: Long\nx: '" + "a" * 40_000 + "'\n---\nBody.\n"}),
    ),
    FilePayload(
        "yaml-deep-tracks",
        YAML,
        "tracks.yml",
        "nested more than",
        _files({"docs/tracks.yml": f"- {_deep(3000)}\n"}),
    ),
    FilePayload(
        "yaml-deep-redirects",
        YAML,
        "redirects.yml",
        "nested more than",
        _files({"docs/redirects.yml": f"a.md: {_deep(3000)}\n"}),
    ),
    FilePayload(
        "yaml-deep-glossary",
        YAML,
        "glossary.yml",
        "nested more than",
        _files({"docs/glossary.yml": f"- term: {_deep(3000)}\n"}),
    ),
    FilePayload(
        "yaml-references-alias-bomb",
        YAML,
        "references.yml",
        "aliases",
        _files({"docs/references.yml": _bomb("\n").removeprefix("---\n").split("---")[0]}),
    ),
    FilePayload(
        "yaml-notebook-header-bomb",
        YAML,
        "foundations/notebooks/bomb.py",
        "aliases",
        _files({"docs/foundations/notebooks/bomb.py": _notebook("x: &x [1, 2]\ny: [*x, *x]")}),
    ),
    FilePayload(
        "yaml-notebook-header-unspaced-bomb",
        YAML,
        "foundations/notebooks/unspaced.py",
        "aliases",
        _files(
            {
                "docs/foundations/notebooks/unspaced.py": (
                    "#---\n#jupyter:\n#  x: &x [1, 2]\n#  y: [*x, *x]\n#---\n\n"
                    "# %% [markdown]\n# # A notebook\n"
                )
            }
        ),  # jupytext reads "#---" as a header's delimiter too; our reading once did not
    ),
    FilePayload(
        "yaml-notebook-header-deep",
        YAML,
        "foundations/notebooks/deep.py",
        "nested more than",
        _files({"docs/foundations/notebooks/deep.py": _notebook(f"x: {_deep(3000)}")}),
    ),
    FilePayload(
        "yaml-deep-quiz",
        YAML,
        "foundations/deep-quiz.md",
        "nested more than",
        _files(
            {
                "docs/foundations/deep-quiz.md": lesson(
                    40, f"## Check your understanding\n\n```quiz\nquestions: {_deep(3000)}\n```"
                )
            }
        ),
        "late",
    ),
    FilePayload(
        "yaml-deep-chart",
        YAML,
        "foundations/deep-chart.md",
        "nested more than",
        _files(
            {
                "docs/foundations/deep-chart.md": lesson(
                    41, f"```chart\nname: ridge-points\nx: {_deep(3000)}\n```"
                )
            }
        ),
        "late",
    ),
    FilePayload(
        "yaml-deep-mapping-takeaways",
        YAML,
        "foundations/deep-map.md",
        "nested more than",
        _files(
            {
                "docs/foundations/deep-map.md": "---\ntakeaways: "
                + "{a: " * 3000
                + "1"
                + "}" * 3000
                + "\n---\n"
            }
        ),
    ),
    # --- 6: redirects.yml (one file, one entry per payload; all late: reported with the page problems)
    *(
        FilePayload(
            ident,
            REDIRECTS,
            "redirects.yml",
            REDIRECT_MESSAGES[ident],
            _redirects,
            "late",
            _printable_field(old),
        )
        for ident, (old, _) in REDIRECT_ENTRIES.items()
    ),
    # --- 8: names, classes and bare words in lessons; file names in the check's output
    FilePayload(
        "name-md-scope",
        ATTRIBUTES,
        "foundations/name-scope.md",
        "reserved",
        _files({"docs/foundations/name-scope.md": lesson(50, '<a name="__md_scope">x</a>')}),
        "late",
    ),
    FilePayload(
        "name-rp-attr-list",
        ATTRIBUTES,
        "foundations/name-rp.md",
        "reserved",
        _files({"docs/foundations/name-rp.md": lesson(51, '[x](#a){ name="rp-quiz" }')}),
        "late",
    ),
    FilePayload(
        "class-md-html",
        ATTRIBUTES,
        "foundations/class-md.md",
        "class",
        _files(
            {"docs/foundations/class-md.md": lesson(52, '<div class="md-banner">Your session expired</div>')}
        ),
        "late",
    ),
    FilePayload(
        "class-rp-attr-list",
        ATTRIBUTES,
        "foundations/class-rp.md",
        "class",
        _files({"docs/foundations/class-rp.md": lesson(53, "A fake problem box\n{: .rp-problems }")}),
        "late",
    ),
    FilePayload(
        "class-admonition-type",
        ATTRIBUTES,
        "foundations/class-admonition.md",
        "class",
        _files(
            {
                "docs/foundations/class-admonition.md": lesson(
                    54, '!!! md-header "Sign in"\n    Enter your password.'
                )
            }
        ),
        "late",
    ),
    FilePayload(
        "class-details-type",
        ATTRIBUTES,
        "foundations/class-details.md",
        "class",
        _files(
            {
                "docs/foundations/class-details.md": lesson(
                    57, '??? rp-quiz "Answer"\n    The site asks you to sign in.'
                )
            }
        ),
        "late",
    ),
    FilePayload(
        "bare-word-hides-handler",
        ATTRIBUTES,
        "foundations/bare-word.md",
        "inline event handler",
        _files({"docs/foundations/bare-word.md": lesson(55, '**bold**{ hidden onclick="alert(1)" }')}),
        "late",
    ),
    FilePayload(
        "bare-word-block",
        ATTRIBUTES,
        "foundations/bare-block.md",
        "inline event handler",
        _files({"docs/foundations/bare-block.md": lesson(56, "Hover me\n{: x onmouseover=alert(1) }")}),
        "late",
    ),
    FilePayload(
        "newline-file-name",
        ATTRIBUTES,
        "foundations/x\n::error::pwned.md",
        "its name",
        _files({"docs/foundations/x\n::error::pwned.md": "# Log injection\n"}),
    ),
)


def pipe_and_link_files(project: Path) -> None:
    """The course's own files as a pipe and links, with tracks.yml gone: each is refused, none is read (a
    pipe read by the build would wait for ever)."""
    docs = project / "docs"
    (docs / "tracks.yml").unlink()
    os.mkfifo(docs / "references.yml")
    os.symlink("/proc/self/environ", docs / "redirects.yml")
    os.symlink(f"../../{SECRET_FILE}", docs / "glossary.yml")
    os.symlink("/proc/self/mem", docs / "foundations" / "memory.png")
