"""The whole course as one PDF, made offline from the built site.

Three steps, each a module of plain functions:

1. ``course.pdf.mkdocs_hooks`` (loaded only by ``mkdocs-pdf.yml``) records the navigation MkDocs built and,
   after the build, calls :mod:`course.pdf.combine`, which writes a combined print page (every page of the
   navigation, in order, with ids made unique and links between lessons turned into links inside the document)
   and a cover.
2. :mod:`course.pdf.render` prints the cover and the combined page with headless Debian Chromium (Playwright
   ``page.pdf``), twice for the body so the table of contents can show page numbers, and checks the layout
   (nothing wider than the page, no renderer error text) and that no request left the machine.
3. The same module joins the cover and the body with pypdf and writes the outline, metadata and page labels.

``python -m course.pdf`` (the ``pdf`` nox session) runs all three.
"""
