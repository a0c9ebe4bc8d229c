"""Running a compiled kernel's HintGraph on the feeds of its GE inputs."""

from __future__ import annotations

import numpy as np

from ascendir import asc


def run_hint(cm, k, feeds):
    """Evaluate kernel ``k``'s HintGraph (``asc.evaluate``) on the feeds of its GE inputs,
    given by producer name; returns its one output."""
    data = sorted((n for n in k.hint.nodes if n.type == "Data"),
                  key=lambda n: n.attr.ir_attr.index)
    srcs = cm.graph.node(k.name).in_data_nodes
    inputs = {d.name: np.ascontiguousarray(feeds[s.name]).reshape(-1)
              for d, s in zip(data, srcs, strict=True)}
    (out,) = (n for n in k.hint.nodes if n.type == "Output")
    return np.asarray(asc.evaluate(k.hint, inputs, {})[out.name])
