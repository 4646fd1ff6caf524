"""Live reload under ``mkdocs serve`` that the site's own Content-Security-Policy allows.

MkDocs' server writes an inline ``<script>`` into every page it serves (its text holds the build's epoch and a
request number, so no hash can name it), and the site's policy refuses inline scripts: the browser blocked it
and a saved lesson never reloaded (issue 23). Under ``serve`` only, the hook hands the server
:func:`serve_with_live_reload`: each served page gets ``<script src>`` of :data:`SCRIPT_PATH` instead, with
the epoch in its ``data-`` attributes, and :func:`write_live_reload_script` puts that file into the served
site. A file of the site's own origin is what ``script-src 'self'`` already allows, so the served pages keep
the published policy, with nothing added; a built site never holds the file."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

SCRIPT_PATH = "assets/ridgepoint/live-reload.js"
_SOURCE = Path(__file__).with_name("live-reload.js")


def live_reload_tag(mount_path: str, epoch: int) -> bytes:
    """The tag that loads the live-reload script for a page built at ``epoch``."""
    request = time.monotonic_ns() // 1000  # the server only needs a number that tells pages apart
    return (
        f'<script src="{mount_path}{SCRIPT_PATH}" data-epoch="{int(epoch)}" data-request-id="{request}">'
        "</script>"
    ).encode()


def serve_with_live_reload(server: Any) -> None:
    """Make MkDocs' live-reload ``server`` load :data:`SCRIPT_PATH` in each page, not an inline script.

    Replaces the server's (private) ``_inject_js_into_html``, MkDocs' one place that writes the script; the
    serve browser test fails if a MkDocs release moves it.
    """
    mount_path = str(getattr(server, "mount_path", "/"))

    def inject(content: bytes, epoch: int) -> bytes:
        end = content.rfind(b"</body>")
        end = len(content) if end < 0 else end
        return content[:end] + live_reload_tag(mount_path, epoch) + content[end:]

    server._inject_js_into_html = inject


def write_live_reload_script(site_dir: str | Path) -> Path:
    """Copy the live-reload script into the served site (under ``serve`` only)."""
    target = Path(site_dir) / SCRIPT_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_SOURCE, target)
    return target
