"""``air.compiler.verify``: a model's repeated layers are built and run once per structure,
and each kernel's report says which built kernel stands for it."""

from __future__ import annotations

import numpy as np

import ascendir as air


def _layers(shapes: list[list[int]]) -> air.Graph:
    """One ``Add -> Mul -> Relu`` block per shape (the blocks differ only in names when their
    shapes agree, as a model's repeated layers do)."""
    g = air.Graph("layers")
    outs = []
    for i, shape in enumerate(shapes):
        td = air.TensorDesc(shape, air.float32)
        x, y = g.add_input(f"x{i}", td), g.add_input(f"y{i}", td)
        s = g.add_op("Add", [x, y], name=f"add{i}")
        m = g.add_op("Mul", [s, x], name=f"mul{i}")
        outs.append(g.add_op("Relu", [m], name=f"relu{i}"))
    g.set_outputs(outs)
    return g


def test_twin_kernels_are_built_once_and_named_in_the_report() -> None:
    cm = air.compile(_layers([[8, 64], [8, 64], [8, 64], [4, 32]]))
    assert len(cm.kernels) == 4
    names = [k.name for k in cm.kernels]
    hints = [k.hint.structure_bytes() for k in cm.kernels]
    assert hints[0] == hints[1] == hints[2] != hints[3]
    assert cm.kernels[0].hint.to_bytes() != cm.kernels[1].hint.to_bytes()  # names differ

    rep = air.compiler.verify(cm)
    assert rep.ok, rep.text()
    assert rep.twins == {names[1]: names[0], names[2]: names[0]}
    assert {c.kernel for c in rep.cases} == {names[0], names[3]}
    assert rep.summary().startswith(f"verified {len(rep.cases)} runs of 4 kernels (2 distinct)")
    # A twin asked for alone is built and run itself, with the same runs as its first.
    alone = air.compiler.verify(cm, kernels=[names[1]])
    assert alone.ok and alone.twins == {}
    assert [(c.template.removeprefix(names[1]), c.target, c.shape) for c in alone.cases] == [
        (c.template.removeprefix(names[0]), c.target, c.shape)
        for c in rep.cases if c.kernel == names[0]]
    feeds = {f"{v}{i}": np.random.default_rng(i).standard_normal(s).astype(np.float32)
             for i, s in enumerate([[8, 64]] * 3 + [[4, 32]]) for v in "xy"}
    want = air.evaluate(_layers([[8, 64], [8, 64], [8, 64], [4, 32]]), feeds)
    got = air.evaluate(cm.graph, feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
