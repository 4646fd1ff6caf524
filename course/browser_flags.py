"""How Ridgepoint starts Debian's Chromium: one place for the executable and its offline flags.

The browser tests and the PDF writer both drive the same headless Chromium, and both must keep it offline:
Chromium reaches for vendor hosts even with background networking off, so only loopback is allowed to resolve.
Keeping the flags here means a fix (a new flag, another path) reaches every user of the browser at once.
"""

from __future__ import annotations

import os

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
