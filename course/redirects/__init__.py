"""Redirects: a page that moves keeps its old address working (docs/redirects.yml, pages made at build)."""
