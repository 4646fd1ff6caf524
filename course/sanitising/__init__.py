"""Lessons are untrusted input: nothing in a lesson can run script, load from elsewhere, or hang the build.

- :mod:`.policy`: the allow-list of HTML tags, attributes and URL schemes, applied with nh3 (a maintained
  sanitiser), and the same allow-list read back as problems with file, line and fix for ``dev.py check``.
- :mod:`.trusted`: :func:`~.trusted.store_trusted`, the one way our own blocks put HTML into a page; the
  Markdown extension (:mod:`.extension`) sanitises everything else before those blocks are inserted.
- :mod:`.front_matter`: front-matter and tracks.yml strings are plain text, checked and escaped.
- :mod:`.source_files`: bounded reading of lesson files (size, UTF-8, no BOM), YAML without aliases, and
  the kinds of file allowed under docs/.
- :mod:`.csp`: the Content-Security-Policy of every page (a ``<meta>`` and the ``_headers`` file).
- :mod:`.external_loads`: a static scan of built HTML, CSS and JS for loads from other hosts (the notebooks'
  template guard); the proof of "no other host" is the browser test of the attack corpus.
"""
