"""The reference for lesson authors, generated from the code: its sections (:mod:`.sections`) and the
Markdown extension that puts them into a page (:mod:`.extension`).
"""
