"""Registry safety: builtins load first and all-or-nothing; builtin names are protected."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import ascendir as air
from ascendir import _core, ops


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, check=False, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_builtin_name_outside_a_library_fails_and_changes_nothing() -> None:
    before_decl = ops.get("LeakyRelu")
    before_types = _core._ops_types()
    with pytest.raises(air.RegistryError) as info:

        @air.register_op("LeakyRelu")
        class LeakyRelu(air.OpDef):
            x = air.Input("T")
            y = air.Output("T")
            T = air.TypeVar(air.float32)
            infer = air.infer.same_as("x")

    msg = str(info.value)
    assert "'LeakyRelu'" in msg and "builtin" in msg and "negative_slope" in msg
    assert _core._ops_types() == before_types
    assert ops.get("LeakyRelu") is before_decl
    assert ops.is_builtin("LeakyRelu") and not ops.is_builtin("NoSuchOpAnywhere")
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    leaky = g.add_op("LeakyRelu", [x])
    assert leaky.attrs["negative_slope"] == 0.0


def test_first_user_registration_of_a_builtin_name_in_a_fresh_process() -> None:
    # The sequence: register LeakyRelu first thing, then build with builtins.
    out = _fresh(
        """
        import ascendir as air
        try:
            @air.register_op("LeakyRelu")
            class LeakyRelu(air.OpDef):
                x = air.Input("T")
                y = air.Output("T")
                T = air.TypeVar(air.float16, air.float32)
                infer = air.infer.same_as("x")
        except air.RegistryError as e:
            print("refused:", "builtin" in str(e))
        g = air.Graph("g")
        x = g.add_input("x", air.TensorDesc([2], air.float32))
        r = g.add_op("Relu", [x])
        l = g.add_op("LeakyRelu", [r])
        print(len(air.ops.list_ops()) >= 170, l.attrs["negative_slope"])
        """
    )
    assert out.splitlines() == ["refused: True", "True 0.0"]


def test_override_inside_a_library_window_is_allowed() -> None:
    original = ops.get("Softsign")
    try:
        with ops.library("test"):

            @air.register_op("Softsign", override=True)
            class MySoftsign(air.OpDef):
                x = air.Input()
                y = air.Output()
                flavour = air.Attr(str, "mine")
                infer = air.infer.same_as("x")

        assert ops.get("Softsign") is MySoftsign
    finally:
        with ops.library("restore"):
            spec_cls = type("Softsign", (air.OpDef,), {})
            for d in (*original.inputs, *original.outputs, *original.attrs,
                      *original.type_vars, *original.subgraphs):
                setattr(spec_cls, d.name, d)
            spec_cls.infer = original.rule if original.rule is not None else original.infer_fn
            air.register_op("Softsign", override=True)(spec_cls)
    assert ops.get("Softsign").describe() == original.describe()


def test_builtin_prototypes_are_in_the_rust_registry_before_the_python_library() -> None:
    # The builtin table is read by the Rust registry on its first use: a registration of a
    # builtin name is refused before any Python declaration ran, and the Python side then
    # loads whole, one declaration per registered builtin.
    out = _fresh(
        """
        import sys
        import ascendir as air
        from ascendir import _core, ops
        assert "ascendir.ops.builtin" not in sys.modules
        try:
            _core._ops_register({"type": "Relu", "inputs": [("x", "required", None)],
                                 "outputs": [("y", "required", None)], "attrs": [],
                                 "type_vars": [], "subgraphs": [], "rule": ("none", {}),
                                 "dynamic_output_count_attr": None})
            print("registered?")
        except air.RegistryError as e:
            print("refused:", "Relu" in str(e))
        print(ops.list_ops() == _core._ops_types(), ops.is_builtin("Data"))
        print(ops.get("Relu").input_names())
        """
    )
    lines = out.splitlines()
    assert lines[0] == "refused: True"
    assert lines[1] == "True True"
    assert lines[2] == "['x']"

