"""Lessons are untrusted input: nothing in a lesson can run script, load from elsewhere, or hang the build.

- :mod:`.policy`: the allow-list of HTML tags, attributes and URL schemes, applied with nh3 (a maintained
  sanitiser), and the same allow-list read back as problems with file, line and fix for ``dev.py check``.
- :mod:`.trusted`: :func:`~.trusted.store_trusted`, the one way our own blocks put HTML into a page, and the
  one sanitiser pass on each page's final HTML (:func:`~.trusted.sanitise_final_page`) that keeps only them;
  the Markdown extension (:mod:`.extension`) marks them (or, without the MkDocs hook, sanitises there).
- :mod:`.front_matter`: front-matter and tracks.yml strings are plain text, checked and escaped.
- :mod:`.source_files`: bounded reading of lesson files (size, UTF-8, no BOM), YAML without aliases, and
  the kinds of file allowed under docs/.
- :mod:`.titles`: page titles, table-of-contents labels and edit addresses as plain text, escaped once.
- :mod:`.csp`: the Content-Security-Policy of every page (a ``<meta>`` and the ``_headers`` file), allowing
  the theme's inline scripts only, hashed from its templates.
- :mod:`.live_reload`: MkDocs' live reload under ``serve`` as a script file the same policy allows.
- :mod:`.external_loads`: a static scan of built HTML, CSS and JS for loads from other hosts (the notebooks'
  template guard); the proof of "no other host" is the browser test of the attack corpus.
"""
