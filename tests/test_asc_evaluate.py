"""``asc.evaluate``, the reference interpreter of a HintGraph: symbol values inferred from the
input lengths, and a graph it cannot run refused with the node named."""

from __future__ import annotations

import numpy as np
import pytest

from ascendir import asc
from ascendir.asc.simulate import SimulationError, evaluate, infer_sizes
from support.hintgraph import F32, HB


def test_evaluate_infers_symbols_from_input_lengths() -> None:
    b = HB("Inf", ["s0", "s1"], F32)
    x = b.load()
    y = b.load()
    b.store(b.op("Add", x, y))
    inputs = b.make_inputs({"s0": 3, "s1": 7})
    assert infer_sizes(b.g, inputs, {"s1": 7}) == {"s0": 3, "s1": 7}
    got = evaluate(b.g, inputs, {"s1": 7})[b.outputs[0]]
    want = evaluate(b.g, inputs, {"s0": 3, "s1": 7})[b.outputs[0]]
    np.testing.assert_array_equal(got, want)
    one = HB("Inf1", ["s0"], F32)
    one.store(one.op("Neg", one.load()))
    feed = one.make_inputs({"s0": 11})
    assert infer_sizes(one.g, feed) == {"s0": 11}
    np.testing.assert_array_equal(evaluate(one.g, feed)[one.outputs[0]],
                                  -feed[one.inputs[0][0]])


def test_output_without_dtype_names_the_node() -> None:
    b = HB("AbsG", [8], F32)
    b.store(b.op("Abs", b.load()))
    out = next(n for n in b.g.nodes if n.type == "Output")
    out.outputs[0].dtype = asc.dtypes.undefined
    with pytest.raises(SimulationError, match=f"node '{out.name}' \\(Output\\) has no dtype"):
        evaluate(b.g, b.make_inputs({}))
