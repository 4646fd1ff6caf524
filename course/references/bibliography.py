"""The course's bibliography, docs/references.yml: read and check it, and say how an entry is cited.

One file holds every identifier (arXiv id, DOI, address), so a wrong one is fixed in one place for every
lesson that cites it, and the PDF, built from the same pages, carries the same lists. Parsing never raises: it
returns the entries it could read and a :class:`~course.lesson_format.problems.Problem` for each mistake,
naming the key, the field and a fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import yaml

from course.lesson_format.problems import Problem
from course.sanitising.source_files import MAX_YAML_FILE_CHARS, load_yaml, read_source, yaml_problem

REFERENCES_FILE = "references.yml"
KEY_RE = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")
ARXIV_RE = re.compile(r"^\d{4}\.\d{4,5}$")  # the post-2007 scheme, without version suffix
DOI_RE = re.compile(r"^10\.\d{4,9}/\S+$")
FIELDS = ("authors", "title", "venue", "year", "arxiv", "doi", "url", "cite_as")
EXAMPLE = (
    'vllm:\n  authors: [Woosuk Kwon, Zhuohan Li]\n  title: "Efficient Memory Management ..."\n'
    '  venue: SOSP\n  year: 2023\n  arxiv: "2309.06180"'
)


@dataclass(frozen=True)
class Reference:
    """One entry of the bibliography."""

    key: str
    authors: tuple[str, ...]
    title: str
    venue: str
    year: int
    arxiv: str = ""
    doi: str = ""
    url: str = ""
    cite_as: str = ""  # the name a citation shows when it is not the first author's surname
    year_suffix: str = ""  # "a", "b"... when two entries would otherwise read the same ("DeepSeek-AI, 2024a")

    @property
    def link(self) -> str:
        """Where the entry's title links: its own address, else its arXiv abstract page, else its DOI."""
        if self.url:
            return self.url
        if self.arxiv:
            return f"https://arxiv.org/abs/{self.arxiv}"
        return f"https://doi.org/{self.doi}"

    @property
    def label(self) -> str:
        """How a citation reads in the text: ``Agrawal et al., 2024``, ``Shazeer, 2019``."""
        first = self.cite_as or self.authors[0].split()[-1]
        if self.cite_as or len(self.authors) == 1:
            names = first
        elif len(self.authors) == 2:
            names = f"{first} and {self.authors[1].split()[-1]}"
        else:
            names = f"{first} et al."
        return f"{names}, {self.year}{self.year_suffix}"

    @property
    def identifier(self) -> str:
        """The identifier shown in the list: ``arXiv:2403.02310``, ``doi:10.1145/...``, "" for an address."""
        if self.arxiv:
            return f"arXiv:{self.arxiv}"
        if self.doi:
            return f"doi:{self.doi}"
        return ""


def parse_bibliography(text: str, path: str = REFERENCES_FILE) -> tuple[dict[str, Reference], list[Problem]]:
    """The entries of a references.yml text, by key, and every problem found."""
    try:
        data = load_yaml(text, MAX_YAML_FILE_CHARS)  # the one bounded reader: no aliases, depth, size
    except yaml.YAMLError as error:
        return {}, [yaml_problem(error, path, "references", EXAMPLE)]
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        return {}, [Problem(path, "references", "expected a mapping of key: entry", EXAMPLE)]
    entries: dict[str, Reference] = {}
    problems: list[Problem] = []
    for key, entry in data.items():
        found = _entry_problems(key, entry, path)
        if found:
            problems.extend(found)
            continue
        entries[key] = Reference(
            key,
            tuple(a.strip() for a in entry["authors"]),
            entry["title"].strip(),
            str(entry["venue"]).strip(),
            entry["year"],
            str(entry.get("arxiv") or ""),
            str(entry.get("doi") or ""),
            str(entry.get("url") or ""),
            str(entry.get("cite_as") or ""),
        )
    return _disambiguated(entries), problems


def _disambiguated(entries: dict[str, Reference]) -> dict[str, Reference]:
    """Entries whose citations would read alike get year suffixes a, b, ... in the file's order."""
    by_label: dict[str, list[str]] = {}
    for key, reference in entries.items():
        by_label.setdefault(reference.label, []).append(key)
    result = dict(entries)
    for keys in by_label.values():
        if len(keys) > 1:
            for index, key in enumerate(keys):
                result[key] = replace(entries[key], year_suffix="abcdefghijklmnopqrstuvwxyz"[index % 26])
    return result


def _entry_problems(key: object, entry: object, path: str) -> list[Problem]:
    where = f"reference {key!r}"
    if not isinstance(key, str) or not KEY_RE.match(key):
        return [Problem(path, where, "a key is lowercase words joined by - (or .)", "sarathi-serve:")]
    if not isinstance(entry, dict):
        return [Problem(path, where, "expected the entry's fields", EXAMPLE)]
    problems: list[Problem] = []
    unknown = sorted(set(map(str, entry)) - set(FIELDS))
    if unknown:
        problems.append(
            Problem(
                path,
                f"{where} {unknown[0]}",
                f"is not a field (known: {', '.join(FIELDS)})",
                "remove it or fix its spelling",
            )
        )
    authors = entry.get("authors")
    if (
        not isinstance(authors, list)
        or not authors
        or not all(isinstance(a, str) and a.strip() for a in authors)
    ):
        problems.append(
            Problem(
                path, f"{where} authors", "expected a list of names", "authors: [Amey Agrawal, Nitin Kedia]"
            )
        )
    for name in ("title", "venue"):
        if not isinstance(entry.get(name), (str, int)) or not str(entry.get(name)).strip():
            problems.append(Problem(path, f"{where} {name}", "is required", f"{name}: ..."))
    year = entry.get("year")
    if isinstance(year, bool) or not isinstance(year, int) or not 1900 <= year <= 2100:
        problems.append(Problem(path, f"{where} year", f"expected a year, got {year!r}", "year: 2024"))
    arxiv, doi, url = (entry.get(name) for name in ("arxiv", "doi", "url"))
    if not (arxiv or doi or url):
        problems.append(
            Problem(
                path, where, "has no arxiv, doi or url, so a reader cannot find it", 'arxiv: "2403.02310"'
            )
        )
    if arxiv is not None and (not isinstance(arxiv, str) or not ARXIV_RE.match(arxiv)):
        problems.append(
            Problem(
                path,
                f"{where} arxiv",
                "expected an arXiv id like 2403.02310, in quotes (YAML reads 2403.02310 as a number), "
                f"got {arxiv!r}",
                'arxiv: "2403.02310"',
            )
        )
    if doi is not None and (not isinstance(doi, str) or not DOI_RE.match(doi)):
        problems.append(
            Problem(
                path,
                f"{where} doi",
                f"expected a DOI like 10.1145/..., got {doi!r}",
                "doi: 10.1145/1498765.1498785",
            )
        )
    if url is not None and (not isinstance(url, str) or not url.startswith("https://")):
        problems.append(
            Problem(path, f"{where} url", f"expected an https:// address, got {url!r}", "url: https://...")
        )
    return problems


@lru_cache(maxsize=8)
def _load(file: str, mtime: float) -> tuple[dict[str, Reference], tuple[Problem, ...]]:
    text, unreadable = read_source(Path(file), REFERENCES_FILE)  # size, UTF-8, line endings
    if text is None:
        return {}, tuple(unreadable)
    entries, problems = parse_bibliography(text)
    return entries, tuple(problems)


def load_bibliography(docs_dir: Path | str) -> tuple[dict[str, Reference], list[Problem]]:
    """The bibliography in ``docs_dir``/references.yml (empty when absent), read once per change."""
    file = Path(docs_dir) / REFERENCES_FILE
    if file.is_symlink() or not file.is_file():
        return {}, []  # absent, or a link or a pipe: refused by the file checks (source_tree), never read
    entries, problems = _load(str(file.resolve()), file.stat().st_mtime)
    return entries, list(problems)


def bibliography_problems(docs_dir: Path | str) -> list[Problem]:
    """Problems of docs/references.yml, for the build and the lesson check."""
    return load_bibliography(docs_dir)[1]
