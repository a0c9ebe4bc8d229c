"""Model paths and input names as users give them. A model path that is not a regular file (a
FIFO, a character device behind a symlink, a directory) is refused before it is opened, by
every reader: opening a FIFO would block until a writer comes, and ``/dev/zero`` would be read
without end. An input shape for a name that is not an input is an error, not ignored."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import ascendir as air

READERS = {
    "onnx.load": lambda p: air.onnx.load(p),
    "load_model": lambda p: air.load_model(p),
    "compile": lambda p: air.compile(p),
}


def refused_within(fn, path, seconds: float = 20.0) -> BaseException:
    """Run ``fn(path)`` in a thread; it must finish within ``seconds`` with an error."""
    out: list[BaseException | None] = []

    def run() -> None:
        try:
            fn(path)
        except BaseException as e:  # noqa: BLE001 - the error is the result
            out.append(e)
        else:
            out.append(None)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"reading {path} did not return within {seconds} s"
    assert out and out[0] is not None, f"reading {path} succeeded"
    return out[0]


@pytest.fixture
def paths(tmp_path):
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.onnx"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / "folder.onnx"
    folder.mkdir()
    return {"a FIFO": fifo, "a device": zero, "a directory": folder}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("kind", ["a FIFO", "a device", "a directory"])
def test_a_path_that_is_not_a_regular_file_is_refused(paths, reader, kind):
    err = refused_within(READERS[reader], paths[kind])
    assert isinstance(err, air.AscendIRError), repr(err)
    assert "regular file" in str(err), str(err)
    assert str(paths[kind]) in str(err)


@pytest.mark.parametrize("command", [["inspect"], ["compile", "-o", "out"]])
def test_the_cli_refuses_a_fifo_with_one_line(tmp_path, command):
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    res = subprocess.run([sys.executable, "-m", "ascendir", *command, str(fifo)],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert res.returncode != 0
    assert "regular file" in res.stderr, res.stderr


def _dynamic_model(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                           helper.make_node("Exp", ["r"], ["y"])], "m", [x], [y])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def test_input_shapes_naming_no_input_is_an_error(tmp_path):
    path = _dynamic_model(tmp_path)
    with pytest.raises(air.CompileError) as e:
        air.compile(str(path), input_shapes={"X": [4, 8]})
    assert "'X'" in str(e.value) and "its inputs: x" in str(e.value)
    assert air.compile(str(path), input_shapes={"x": [4, 8]}).kernels


def test_the_cli_refuses_an_input_shape_for_no_input(tmp_path):
    path = _dynamic_model(tmp_path)
    res = subprocess.run([sys.executable, "-m", "ascendir", "compile", str(path), "-o", "out",
                          "--no-cache", "--input-shape", "X:4,8"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert "'X'" in res.stderr and "not an input" in res.stderr, res.stderr
