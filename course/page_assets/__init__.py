"""How the site's own stylesheets and scripts reach a page (issue 16, page speed): our stylesheets as one
minified file with its content hash in its name (:mod:`.bundle`), our scripts minified in place.
"""
