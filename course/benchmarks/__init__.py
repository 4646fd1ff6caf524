"""What the course's features cost, against the same pages on plain Material: ``python -m course.benchmarks``.

:mod:`course.benchmarks.harness` builds the sites and holds the registry of figures; each feature that has a
cost of its own registers its figures from its own package (``course.notebooks.benchmark``,
``course.widgets.benchmark``), and ``__main__`` imports them all and prints every figure.
"""
