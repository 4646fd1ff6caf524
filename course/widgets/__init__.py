"""Live widgets: the Markdown extension (:mod:`.extension`), the calculators archive the browser loads
(:mod:`.package`), the Pyodide runtime installed from the npm lock file (:mod:`.runtime`) and the widgets'
benchmark figures (:mod:`.benchmark`). The browser side is ``overrides/assets/ridgepoint/widgets.js``.
"""
