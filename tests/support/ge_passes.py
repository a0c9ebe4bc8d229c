"""Shared pieces of the ascendir.ge.passes tests: the ops GE's samples use that ascendir's
builtin library lacks (registered once, with numpy kernels), the add-zero sample pass and
its graph, and graph helpers."""

from __future__ import annotations

from collections.abc import Iterator
from math import fabs
from typing import Any

import numpy as np
import pytest

import ascendir as air
from ascendir.evaluator import kernel, kernels
from ascendir.ge.es import GraphBuilder
from ascendir.ge.es.math import Add
from ascendir.ge.graph import DataType, Graph, Tensor
from ascendir.ge.passes import (
    PassStage,
    PatternFusionPass,
    clear_registered_passes,
    pattern,
    register_fusion_pass,
)


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    """Every test starts and ends with an empty pass registry."""
    clear_registered_passes()
    yield
    clear_registered_passes()


# --- the op the samples use that ascendir's builtin library lacks -------------------------
# Sample 5's AddCustom is a custom op: registered here with air.register_op and a numpy kernel
# for air.evaluate, as a GE user registers a custom op package. GEMM (samples 1-3) and
# TensorMove (sample 5) are builtins.

def register_sample_ops() -> None:
    if not air.ops.is_registered("AddCustom"):
        @air.register_op("AddCustom")
        class AddCustom(air.OpDef):
            x = air.Input("T")
            y = air.Input("T")
            z = air.Output("T")
            T = air.TypeVar(air.float16, air.float32)
            infer = air.infer.same_as("x")
    if "AddCustom" not in kernels():
        @kernel("AddCustom")
        def _add_custom(ctx: Any, ins: list[Any]) -> np.ndarray:
            return np.asarray(ins[0] + ins[1]).astype(np.asarray(ins[0]).dtype)


def op_types(g: Graph | air.Graph) -> list[str]:
    """The node types of ``g`` in order."""
    ag = g.air if isinstance(g, Graph) else g
    return [n.type for n in ag.nodes]


def random_feeds(g: air.Graph, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for n in g.nodes:
        if n.type == "Data":
            d = n.op_desc.output_desc(0)
            feeds[n.name] = rng.standard_normal(list(d.shape)).astype(d.dtype.to_numpy())
    return feeds


def assert_same(before: air.Graph, after: air.Graph, rtol: float = 1e-5) -> None:
    feeds = random_feeds(before)
    want = list(air.evaluate(before, feeds).values())
    got = list(air.evaluate(after, feeds).values())
    assert len(want) == len(got)
    for w, r in zip(want, got, strict=True):
        assert w.shape == r.shape and w.dtype == r.dtype
        np.testing.assert_allclose(r, w, rtol=rtol, atol=rtol)


def extract_scalar_value(value: Any) -> Any:
    while isinstance(value, list):
        if len(value) != 1:
            return None
        value = value[0]
    return value


def is_zero(tensor: Tensor) -> bool:
    scalar_value = extract_scalar_value(tensor.data)
    if scalar_value is None:
        return False
    if tensor.data_type == DataType.DT_FLOAT:
        return fabs(float(scalar_value)) < 1e-6
    if tensor.data_type == DataType.DT_FLOAT16:
        return fabs(float(scalar_value)) < 1e-3
    if tensor.data_type == DataType.DT_INT32:
        return int(scalar_value) == 0
    return False


def define_add_zero_pass() -> type:
    # pattern_base_pass/4 python_add_zero_pass.py: GE's default config (any Const), the
    # value checked in meet_requirements.
    @register_fusion_pass(name="PythonAddZeroPass", stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonAddZeroPass(PatternFusionPass):
        @pattern
        def add_zero(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0] + 0

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            captured_input = match_result.get_captured_tensor(0)
            for node in match_result.get_matched_nodes():
                if node.type != "Const":
                    continue
                const_tensor = node.get_attr("value")
                zero = is_zero(const_tensor)
                print(f"[PythonAddZeroPass] matched={match_result.get_pattern_graph_name()} "
                      f"captured={captured_input.node.name}:{captured_input.index} "
                      f"const_dtype={const_tensor.data_type.name} zero={zero}")
                return zero
            return True

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0]

    return PythonAddZeroPass


def add_zero_graph() -> Graph:
    # cpp/data/torch_forward.py: add(add(x, 0.0), y), x and y [2, 2]; and an Add(y, 1.0)
    # the pass must leave.
    b = GraphBuilder("add_zero")
    x = b.create_input(0, shape=[2, 2])
    y = b.create_input(1, shape=[2, 2])
    return b.build_and_reset([Add(Add(x, 0.0), y) + 1.0])


