"""Math in lessons: the extension that turns ``$...$`` LaTeX into MathML and checks it (:mod:`.extension`)."""
