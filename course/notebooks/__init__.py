"""Worked notebooks: their headers, navigation place, pages and downloads (:mod:`.lesson_notebooks`), the
chart renderer the notebooks enable (:mod:`.renderer`) and their benchmark figures (:mod:`.benchmark`).
"""
