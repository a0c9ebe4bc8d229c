"""The corpus table: the stages, and the rows the tests report (through each test report's
``user_properties``, so that the table is whole under ``pytest -n``)."""

from __future__ import annotations

STAGES = ("torch static", "torch dynamic", "compile", "sources", "onnx", "ge round trips",
          "onnx export")
KEY = "zoo"
