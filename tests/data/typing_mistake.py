"""Input for tests/test_stubs.py: two mistakes ``mypy --strict`` must report (not a test)."""

import ascendir as air

g = air.Graph("g")
x = g.add_input(3, air.TensorDesc([2], air.DataType.FLAOT16))
