"""Checked numbers in prose: ``{{ expression | unit }}`` evaluated by the calculators (:mod:`.extension`)."""
