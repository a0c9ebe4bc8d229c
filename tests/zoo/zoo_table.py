"""The corpus table: the stages, and the rows the tests report (through each test report's
``user_properties``, so that the table is whole under ``pytest -n``)."""

from __future__ import annotations

STAGES = ("torch static", "torch dynamic", "compile", "sources", "cpu kernels", "onnx",
          "ge round trips", "onnx export")
#: How many kernels per model (the largest) the "cpu kernels" stage builds and runs.
CPU_SAMPLE = 5
KEY = "zoo"
