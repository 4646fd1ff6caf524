# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   ridgepoint:
#     lesson: LESSON_ID
# ---

# %% [markdown]
# # LESSON_TITLE, worked through in Python
#
# This file was written by `python3 dev.py new_lesson`: it is the lesson's worked notebook, shown right after
# the lesson in the navigation and offered as a `.ipynb` download. Replace the example below with the
# lesson's own figures, each derived by hand first and then checked against the course's `calculators`.
# The build executes every cell: a failing cell or assertion fails the build, naming the cell.

# %%
import math

from calculators import Scenario, format_value, get_gpu, get_model

# %% [markdown]
# ## A decode step, by hand and from the calculators
#
# At batch size 1 a decode step reads every weight once, so its time is close to the weights' bytes divided
# by the memory bandwidth.

# %%
model = get_model("dense-8b")
gpu = get_gpu("h100-sxm")
weight_bytes = model.params * 2  # BF16: 2 bytes per parameter
by_hand = weight_bytes / gpu.memory_bandwidth_bytes_per_s
from_calculators = Scenario().decode().time_s

print(f"by hand:     {format_value(by_hand, 'ms')}")
print(f"calculators: {format_value(from_calculators, 'ms')}")
assert math.isclose(by_hand, from_calculators, rel_tol=0.05)  # the KV cache and activations add a little
