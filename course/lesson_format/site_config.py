"""Derived MkDocs configurations: the real ``mkdocs.yml`` built against another docs folder or output.

Tests build broken-lesson fixtures and the benchmark builds stripped pages with the course's own settings. A
config elsewhere than the project root cannot reuse relative paths, so the derived one ``INHERIT``s the real
config and restates its path-valued settings as absolute paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
MAIN_CONFIG = ROOT / "mkdocs.yml"


def read_site_config(path: Path = MAIN_CONFIG) -> dict[str, Any]:
    """The raw settings of ``mkdocs.yml`` (before MkDocs validates them), read with MkDocs' own YAML loader.

    Plain ``yaml.safe_load`` fails on the ``!ENV`` and ``!relative`` tags the config uses.
    """
    from mkdocs.utils.yaml import yaml_load

    with path.open("rb") as config:
        loaded = yaml_load(config)
    return dict(loaded or {})


def write_derived_config(destination: Path, docs_dir: Path, **overrides: Any) -> Path:
    """Write ``destination`` (a .yml) inheriting the real config, with ``docs_dir`` and ``overrides`` set."""
    settings: dict[str, Any] = {
        "INHERIT": str(MAIN_CONFIG),
        "docs_dir": str(docs_dir.resolve()),
        "hooks": [str(ROOT / "course" / "mkdocs_hooks.py")],
        "theme": {"name": "material", "custom_dir": str(ROOT / "overrides")},
        "watch": [],
    }
    settings.update(overrides)
    destination.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return destination
