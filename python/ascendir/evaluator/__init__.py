"""The numpy reference interpreter of GE graphs: :func:`evaluate` (``air.evaluate``).

It runs a :class:`~ascendir.Graph` node by node in topological order with one numpy kernel
per GE op type (GE semantics and attribute names: ``data_format``, ``pads`` order,
``keep_dims``, ``dst_type``, ...), subgraphs of If / Case / While / Loop / PartitionedCall,
Const weights as zero-copy views of their tensors, and the compiler's ``AscBackend`` nodes
through ``asc.evaluate`` of their HintGraph. It is the oracle for the compiler and the
frontends: right before fast.

>>> import numpy as np, ascendir as air
>>> g = air.Graph("g")
>>> x = g.add_input("x", air.TensorDesc([2, 3], air.float32))
>>> _ = g.set_outputs([g.add_op("Relu", [x], name="r")])
>>> air.evaluate(g, {"x": -np.ones((2, 3), np.float32)})["r"].max()
np.float32(0.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core import Graph
from ..errors import EvaluateError, UnsupportedOpError
from . import (  # noqa: F401  (kernels)
    _control,
    _elementwise,
    _extra,
    _frontend,
    _ge,
    _nn,
    _reduce,
    _rnn,
    _shape,
)
from ._core import MAX_DEPTH, Ctx, kernel, kernels, output_keys, run

__all__ = [
    "MAX_DEPTH",
    "Ctx",
    "EvaluateError",
    "UnsupportedOpError",
    "evaluate",
    "kernel",
    "output_keys",
    "supported_ops",
]


def evaluate(graph: Graph, feeds: Mapping[str, Any] | Sequence[Any]) -> dict[str, np.ndarray]:
    """Run ``graph`` on ``feeds`` with numpy; returns ``{output key: array}``.

    ``feeds`` maps each graph input (``Data`` node) name to an array, or lists the arrays in
    :attr:`Graph.inputs` order. An ndarray must have the input's dtype and a shape that
    matches its known dims (``-1`` matches anything); other values (lists, scalars) are
    converted to the input's dtype.

    Outputs come in NetOutput input order, keyed as :func:`output_keys` says: the value
    name recorded on NetOutput's input desc (an ONNX output name), else the producing node's
    name (``"node"`` for output 0, ``"node:k"`` otherwise; an AscBackend output counts as the
    node it replaced), so a graph and its ``air.compile`` result give the same keys.

    Raises :class:`~ascendir.UnsupportedOpError` (also a ``NotImplementedError``) naming the
    first nodes without a kernel, before anything runs, and :class:`~ascendir.EvaluateError`
    naming the node (``.node``, ``.op_type``) or the feed (``.input``) on any other failure.
    """
    return run(graph, feeds)


def supported_ops() -> list[str]:
    """The GE op types :func:`evaluate` has kernels for (plus Data, RefData, NetOutput)."""
    return sorted({*kernels(), "Data", "RefData", "NetOutput"})
