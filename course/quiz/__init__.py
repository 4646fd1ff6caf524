"""Quiz blocks: the YAML model and its checks (:mod:`.model`), the HTML (:mod:`.html`) and the Markdown
extension that joins them (:mod:`.extension`). The browser side is ``overrides/assets/ridgepoint/quiz.js``.
"""
