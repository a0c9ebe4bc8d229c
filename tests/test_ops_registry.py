"""Operator registration: declarations, the Rust registry, overrides, libraries, add_op checks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid

import numpy as np
import pytest

import ascendir as air
from ascendir import ops
from ascendir.infer import same_as


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def f32(*shape: int) -> air.TensorDesc:
    return air.TensorDesc(list(shape), air.float32)


def test_declaration_is_pushed_to_rust_and_drives_add_op():
    name = unique("MyLeaky")

    @ops.register_op(name)
    class MyLeaky(ops.OpDef):
        x = ops.Input("T")
        y = ops.Output("T")
        negative_slope = ops.Attr(float, default=0.0)
        T = ops.TypeVar(air.float16, air.float32)
        infer = same_as("x")

    assert ops.get(name) is MyLeaky
    assert MyLeaky.op_type == name
    assert MyLeaky.input_names() == ["x"] and MyLeaky.output_names() == ["y"]
    assert ops.is_registered(name) and name in ops.list_ops()
    assert "negative_slope: FLOAT = 0.0" in MyLeaky.describe()
    g = air.Graph()
    x = g.add_input("x", f32(2, 3))
    n = g.add_op(name, [x], attrs={"negative_slope": 1})  # int converted to the declared float
    assert n.op_desc.input_names == ["x"] and n.op_desc.output_names == ["y"]
    assert n.attrs["negative_slope"] == 1.0
    assert n.attrs.kind("negative_slope") == air.AttrKind.FLOAT
    assert n.op_desc.output_desc(0).shape == (2, 3)
    # Defaults are filled in.
    m = g.add_op(name, [x])
    assert m.attrs["negative_slope"] == 0.0
    ops.unregister(name)


def test_duplicate_registration_fails_and_override_needs_a_library_window(tmp_path):
    name = unique("Dup")
    decl = {"x": ops.Input(), "y": ops.Output(), "infer": same_as("x")}
    ops.register_op(name)(type(name, (ops.OpDef,), dict(decl)))
    with pytest.raises(air.RegistryError, match="already registered"):
        ops.register_op(name)(type(name, (ops.OpDef,), dict(decl)))
    with pytest.raises(air.RegistryError, match="only while an op library is loading"):
        ops.register_op(name, override=True)(type(name, (ops.OpDef,), dict(decl)))
    # A library file may override.
    lib = tmp_path / "mylib.py"
    lib.write_text(
        textwrap.dedent(
            f"""
            import ascendir as air
            from ascendir import ops

            @ops.register_op("{name}", override=True)
            class Replacement(ops.OpDef):
                x = ops.Input()
                extra = ops.OptionalInput()
                y = ops.Output()
                infer = air.infer.same_as("x")
            """
        )
    )
    ops.load_library(lib)
    assert ops.get(name).input_names() == ["x", "extra"]
    g = air.Graph()
    n = g.add_op(name, [g.add_input("x", f32(4))])
    assert n.op_desc.input_names == ["x", "extra"]
    assert n.op_desc.num_inputs == 2
    ops.unregister(name)


def test_broken_library_is_named(tmp_path):
    lib = tmp_path / "broken.py"
    lib.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(air.RegistryError, match="broken.py"):
        ops.load_library(lib)


def test_ops_path_and_lazy_builtins_in_a_fresh_process(tmp_path):
    lib = tmp_path / "pathlib_ops.py"
    lib.write_text(
        textwrap.dedent(
            """
            from ascendir import ops
            import ascendir as air

            @ops.register_op("FromOpsPath")
            class FromOpsPath(ops.OpDef):
                x = ops.Input()
                y = ops.Output()
                infer = air.infer.same_as("x")

            @ops.register_op("Relu", override=True)
            class MyRelu(ops.OpDef):
                x = ops.Input()
                y = ops.Output()
                alpha = ops.Attr(float, 0.5)
                infer = air.infer.same_as("x")
            """
        )
    )
    code = textwrap.dedent(
        """
        import sys
        import ascendir as air
        assert "ascendir.ops" not in sys.modules, "import ascendir must not load the library"
        g = air.Graph()
        x = g.add_input("x", air.TensorDesc([2], air.float32))
        r = g.add_op("Relu", [x])
        assert r.attrs["alpha"] == 0.5, dict(r.attrs)
        n = g.add_op("FromOpsPath", [r])
        assert n.op_desc.input_names == ["x"]
        assert air.ops.get("Conv2D").op_type == "Conv2D"
        print("ok")
        """
    )
    env = dict(os.environ, ASCENDIR_OPS_PATH=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_inputs_optional_dynamic_and_errors():
    g = air.Graph()
    x = g.add_input("x", air.TensorDesc([1, 8, 16, 16], air.float32, format="NCHW"))
    w = g.add_const("w", np.zeros((4, 8, 3, 3), np.float32))
    b = g.add_const("b", np.zeros((4,), np.float32))
    conv = g.add_op("Conv2D", [x, w, b], attrs={"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1]})
    assert conv.op_desc.input_names == ["x", "filter", "bias", "offset_w"]
    assert conv.op_desc.input_desc(3).dtype == air.DataType.UNDEFINED  # unset optional slot
    assert conv.in_data_nodes == [x, w, b]
    conv2 = g.add_op("Conv2D", [x, w, None, None], attrs={"strides": [1, 1, 1, 1]})
    assert conv2.op_desc.output_desc(0).shape == (1, 4, 14, 14)
    with pytest.raises(air.InvalidArgumentError, match="required attribute 'strides'"):
        g.add_op("Conv2D", [x, w])
    with pytest.raises(air.InvalidArgumentError, match="takes 2 to 4 inputs"):
        g.add_op("Conv2D", [x])
    with pytest.raises(air.InvalidArgumentError, match="strides"):
        g.add_op("Conv2D", [x, w], attrs={"strides": "fast"})
    # Dynamic inputs: a list per dynamic input, or the positional inputs left over.
    axis = g.add_const("axis", np.array(1, np.int32))
    c1 = g.add_op("ConcatV2", [[x, x, x], axis])
    assert c1.op_desc.input_names == ["x0", "x1", "x2", "concat_dim"]
    assert c1.attrs["N"] == 3
    assert c1.op_desc.output_desc(0).shape == (1, 24, 16, 16)
    c2 = g.add_op("ConcatV2", [x, x, axis])
    assert c2.op_desc.input_names == ["x0", "x1", "concat_dim"]
    with pytest.raises(air.InvalidArgumentError, match="not a list"):
        g.add_op("Relu", [[x, x]])
    before = g.dump()
    with pytest.raises(air.InvalidArgumentError):
        g.add_op("Add", [x])
    assert g.dump() == before


def test_dtype_type_variables_are_checked():
    g = air.Graph()
    a = g.add_input("a", air.TensorDesc([2], air.float32))
    b = g.add_input("b", air.TensorDesc([2], air.int32))
    with pytest.raises(air.InvalidArgumentError, match="both are T"):
        g.add_op("Add", [a, b])
    name = unique("OnlyHalf")

    @ops.register_op(name)
    class OnlyHalf(ops.OpDef):
        x = ops.Input("T")
        y = ops.Output("T")
        T = ops.TypeVar(air.float16)
        infer = same_as("x")

    with pytest.raises(air.InvalidArgumentError, match="allows only FLOAT16"):
        g.add_op(name, [a])
    ops.unregister(name)


def test_python_infer_and_verify_functions():
    name = unique("Dup2")
    calls = []

    def infer(ctx: ops.InferContext):
        calls.append(ctx.name)
        s = list(ctx.input("x").shape)
        return [(s + s, air.int64), air.TensorDesc([1], air.bool_)]

    def verify(ctx: ops.InferContext):
        if ctx.attr("ok") is False:
            return "ok is False"
        return None

    ns = {"x": ops.Input(), "y": ops.Output(), "z": ops.Output(), "ok": ops.Attr(bool, True)}
    cls = type(name, (ops.OpDef,), {**ns, "infer": infer, "verify": verify})
    ops.register_op(name)(cls)
    assert cls.rule is None and cls.infer_fn is infer
    g = air.Graph()
    x = g.add_input("x", f32(3))
    n = g.add_op(name, [x], name="d")
    assert n.op_desc.output_desc(0).shape == (3, 3) and n.op_desc.output_desc(0).dtype == air.int64
    assert n.op_desc.output_desc(1).dtype == air.bool_
    with pytest.raises(air.InvalidArgumentError, match="ok is False"):
        g.add_op(name, [x], attrs={"ok": False})
    # The Python function also runs inside Graph.infer_shapes (GIL re-acquired).
    x.op_desc.input_desc(0).shape = [5]
    g.infer_shapes()
    assert n.op_desc.output_desc(0).shape == (5, 5)
    assert calls.count("d") >= 2
    ops.unregister(name)


def test_bad_declarations_are_refused():
    with pytest.raises(air.RegistryError, match="not declared"):

        @ops.register_op(unique("BadVar"))
        class BadVar(ops.OpDef):
            x = ops.Input("T")
            y = ops.Output()

    with pytest.raises(air.RegistryError, match="neither an input nor an attribute"):

        @ops.register_op(unique("BadRule"))
        class BadRule(ops.OpDef):
            x = ops.Input()
            y = ops.Output()
            infer = air.infer.reduce(axes="nope")

    with pytest.raises(air.RegistryError, match="infer must be"):

        @ops.register_op(unique("BadInfer"))
        class BadInfer(ops.OpDef):
            x = ops.Input()
            infer = 42

    with pytest.raises(TypeError):
        ops.Attr(object)
    with pytest.raises(air.NotFoundError):
        ops.get("NoSuchOpType")


def test_registered_types_keep_the_low_level_path_with_explicit_ports():
    g = air.Graph()
    x = g.add_input("x", f32(2))
    n = g.add_op("Relu", [x], input_names=["features"], outputs=["activations"])
    assert n.op_desc.input_names == ["features"]
    assert n.op_desc.output_names == ["activations"]
    u = g.add_op("NotARegisteredType", [x, None], outputs=2, allow_unregistered=True)
    assert u.op_desc.input_names == ["__input0", "__input1"]
    assert u.op_desc.output_names == ["__output0", "__output1"]


def test_unknown_op_type_is_refused_with_the_nearest_registered_types():
    g = air.Graph()
    x = g.add_input("x", f32(2))
    before = g.to_bytes()
    with pytest.raises(air.NotFoundError) as info:
        g.add_op("Rleu", [x])
    err = info.value
    assert str(err).startswith("unknown op type 'Rleu'; did you mean 'Relu', 'Relu6'")
    assert "allow_unregistered=True" in str(err)
    assert err.op_type == "Rleu" and err.suggestions[:2] == ["Relu", "Relu6"]
    assert g.to_bytes() == before and len(g.nodes) == 1
    # An explicit port layout does not make a typo a new type.
    with pytest.raises(air.NotFoundError, match="did you mean 'Conv2D'"):
        g.add_op("Conv2d", [x], input_names=["x"], outputs=["y"])
    # Nothing near: no suggestion.
    with pytest.raises(air.NotFoundError) as info:
        g.add_op("QuiteUnlikeAnyOperatorName", [x])
    assert info.value.suggestions == [] and "did you mean" not in str(info.value)
    assert g.to_bytes() == before


def test_allow_unregistered_builds_the_ports_as_given():
    g = air.Graph()
    x = g.add_input("x", f32(2))
    n = g.add_op("Rleu", [x], allow_unregistered=True)
    assert n.type == "Rleu"
    assert n.op_desc.input_names == ["__input0"] and n.op_desc.output_names == ["__output0"]
    m = g.add_op("MyOp", [n, None], input_names=["a", "b"], outputs=["y", "z"],
                 allow_unregistered=True)
    assert m.op_desc.input_names == ["a", "b"] and m.op_desc.output_names == ["y", "z"]
    # A registered type ignores the flag.
    r = g.add_op("Relu", [x], allow_unregistered=True)
    assert r.op_desc.input_names == ["x"]


def test_subgraph_slots_and_dynamic_outputs_from_the_prototype():
    g = air.Graph()
    c = g.add_input("c", air.TensorDesc([], air.bool_))
    x = g.add_input("x", f32(2))
    n = g.add_op("If", [c, [x, x]])
    assert n.op_desc.input_names == ["cond", "input0", "input1"]
    assert n.op_desc.output_names == ["output0", "output1"]
    assert list(n.op_desc.subgraph_names) == ["", ""]  # two empty static slots
    then = air.Graph("then")
    then.set_outputs([then.add_op("Relu", [then.add_input("t", f32(2))])])
    assert g.add_subgraph(then, parent=n, slot="then_branch") == "then_branch"
    assert list(n.op_desc.subgraph_names) == ["then", ""]
    s = g.add_op("SplitD", [x], attrs={"split_dim": 0, "num_split": 2})
    assert s.op_desc.output_names == ["y0", "y1"]
    assert s.op_desc.output_desc(1).shape == (1,)


def test_entry_point_libraries_are_discovered(tmp_path):
    dist = tmp_path / "fake_oplib-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-oplib\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[ascendir.op_libraries]\nfake = fake_oplib_mod:load\n")
    (tmp_path / "fake_oplib_mod.py").write_text(
        textwrap.dedent(
            """
            import ascendir as air
            from ascendir import ops

            def load():
                @ops.register_op("FromEntryPoint")
                class FromEntryPoint(ops.OpDef):
                    x = ops.Input()
                    y = ops.Output()
                    infer = air.infer.same_as("x")

                @ops.register_op("Abs", override=True)
                class MyAbs(ops.OpDef):
                    x = ops.Input()
                    y = ops.Output()
                    flavour = ops.Attr(str, "entry point")
                    infer = air.infer.same_as("x")
            """
        )
    )
    code = textwrap.dedent(
        """
        import ascendir as air
        assert air.ops.get("FromEntryPoint").input_names() == ["x"]
        g = air.Graph()
        a = g.add_op("Abs", [g.add_input("x", air.TensorDesc([3], air.float32))])
        assert a.attrs["flavour"] == "entry point"
        print("ok")
        """
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
