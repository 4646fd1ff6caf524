"""The "not found" page (``overrides/404.html``), made to work at any base path after the build
(:mod:`.page`).
"""
