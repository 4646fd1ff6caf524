"""The browser side of the widgets: the thin Python that runs in the reader's page under Pyodide.

A widget's controls send their raw values here; these modules turn them into calls of the calculators
(``Scenario`` and friends), and return JSON-able numbers, display strings and chart data rows. Nothing here
computes a quantity itself, so a widget shows exactly what the lessons and the build show. Bad input is not
pre-checked either: it is passed on, and the calculators' own ``ValueError`` message is what the reader sees.

The build calls the same functions to render each widget's default state, and ``protocol.handle`` is the one
entry point the Web Worker calls (JSON text in, JSON text out, so it works with any Pyodide version's FFI).
Only the standard library is used: this package is zipped with the core and shipped to the browser.
"""

from calculators.browser.protocol import WIDGETS, compute, handle

__all__ = ["WIDGETS", "compute", "handle"]
