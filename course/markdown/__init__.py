"""Python-Markdown extensions for the blocks lessons use (numbers, charts, quizzes, widgets, math, safety)."""
