"""``python -m course.pdf``: build the site with ``mkdocs-pdf.yml`` and print the whole course to one PDF,
offline.

Prints how long each step took and the size of the PDF (the ``pdf`` nox session runs this).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from course.pdf.render import PAPERS, PdfError, print_course

ROOT = Path(__file__).resolve().parents[2]


def build_site(site_dir: Path, config: Path = ROOT / "mkdocs-pdf.yml") -> None:
    """Build the site and its combined print page with ``--strict``; raises PdfError with MkDocs' output."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config), "-d", str(site_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    if result.returncode != 0:
        raise PdfError(f"mkdocs build -f {config.name} failed:\n{result.stdout}{result.stderr}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.pdf", description=__doc__.splitlines()[0])
    parser.add_argument("--paper", choices=sorted(PAPERS), default="a4", help="paper size (default: a4)")
    parser.add_argument(
        "--output", type=Path, default=None, help="the PDF to write (default: build/ridgepoint-PAPER.pdf)"
    )
    parser.add_argument(
        "--site-dir", type=Path, default=ROOT / "build" / "pdf-site", help="where to build the site"
    )
    parser.add_argument("--no-build", action="store_true", help="print the site already built in --site-dir")
    parser.add_argument(
        "--keep-going", action="store_true", help="write the PDF even when it has problems, and list them"
    )
    args = parser.parse_args(argv)
    output = args.output or ROOT / "build" / f"ridgepoint-{args.paper}.pdf"
    started = time.perf_counter()
    try:
        if not args.no_build:
            build_site(args.site_dir)
        built = time.perf_counter()
        report = print_course(args.site_dir, output, paper=args.paper, strict=not args.keep_going)
    except PdfError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    total = time.perf_counter() - started
    for problem in report.problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"wrote {report.path} ({args.paper}): {report.pages} pages, {report.size_bytes / 1e6:.2f} MB")
    print(f"time: {total:.1f} s in all; site build {built - started:.1f} s, printing {report.seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
