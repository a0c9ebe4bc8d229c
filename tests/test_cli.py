"""The installed ``ascendir`` command: one line per error, documented exit codes, no traceback."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

import ascendir as air
from ascendir.cli import build_parser
from support.cli import script

EXAMPLE_ONNX = Path(__file__).resolve().parents[1] / "examples" / "transformer_block.onnx"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([script(), *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300, check=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of good and bad model files (names as the table below uses them)."""
    d = tmp_path_factory.mktemp("cli")
    shutil.copy(EXAMPLE_ONNX, d / "m.onnx")
    model = air.serialization.load_model(d / "m.onnx")
    air.save(model, d / "m.pb")
    air.save(model, d / "m.om")
    air.save(model, d / "m.txt")
    (d / "empty.onnx").write_bytes(b"")
    (d / "empty.pb").write_bytes(b"")
    (d / "empty.om").write_bytes(b"")
    for name in ("m.onnx", "m.pb", "m.om"):
        data = (d / name).read_bytes()
        stem, suffix = os.path.splitext(name)
        (d / f"trunc{suffix}").write_bytes(data[: len(data) // 3])
    txt = (d / "m.txt").read_text()
    (d / "trunc.txt").write_text(txt[: len(txt) // 2])
    (d / "latin1.txt").write_bytes(b"name: \"caf\xe9\"\n")
    (d / "noise.onnx").write_bytes(bytes(range(255, 0, -3)) * 8)
    (d / "noise.xyz").write_bytes(b"\xff\xfe\xfd\x00\x01\x02" * 20)
    (d / "model.dir").mkdir()
    (d / "adir.onnx").mkdir()
    (d / "bad.toml").write_text("max_fusion_size = [\n")
    (d / "outfile").write_text("not a directory")
    return d


# (arguments, exit code, the file the error line names or None for a usage error)
BAD_INPUTS: list[tuple[list[str], int, str | None]] = [
    # inspect
    (["inspect", "missing.onnx"], 1, "missing.onnx"),
    (["inspect", "empty.onnx"], 1, "empty.onnx"),
    (["inspect", "empty.pb"], 1, "empty.pb"),
    (["inspect", "trunc.onnx"], 1, "trunc.onnx"),
    (["inspect", "trunc.pb"], 1, "trunc.pb"),
    (["inspect", "trunc.om"], 1, "trunc.om"),
    (["inspect", "trunc.txt"], 1, "trunc.txt"),
    (["inspect", "latin1.txt"], 1, "latin1.txt"),
    (["inspect", "adir.onnx"], 1, "adir.onnx"),
    (["inspect", "model.dir"], 1, "model.dir"),
    (["inspect", "noise.onnx"], 1, "noise.onnx"),
    (["inspect", "noise.xyz"], 1, "noise.xyz"),
    (["inspect", "--format", "om", "m.onnx"], 1, "m.onnx"),
    (["inspect", "--format", "xml", "m.onnx"], 2, None),
    (["inspect"], 2, None),
    (["inspect", "m.onnx", "--frobnicate"], 2, None),
    # convert
    (["convert", "missing.onnx", "out.pb"], 1, "missing.onnx"),
    (["convert", "empty.om", "out.pb"], 1, "empty.om"),
    (["convert", "trunc.onnx", "out.pb"], 1, "trunc.onnx"),
    (["convert", "trunc.om", "out.onnx"], 1, "trunc.om"),
    (["convert", "adir.onnx", "out.pb"], 1, "adir.onnx"),
    (["convert", "noise.xyz", "out.pb"], 1, "noise.xyz"),
    (["convert", "m.onnx", "out.xyz"], 2, None),
    (["convert", "m.onnx", "model.dir"], 2, None),
    (["convert", "m.onnx", "adir.onnx"], 1, "adir.onnx"),
    (["convert", "m.onnx", "no/such/dir/out.pb"], 1, "no/such/dir/out.pb"),
    (["convert", "m.onnx", "out.pb", "--to", "xml"], 2, None),
    (["convert", "m.onnx"], 2, None),
    # compile
    (["compile", "missing.onnx", "-o", "out"], 1, "missing.onnx"),
    (["compile", "empty.onnx", "-o", "out"], 1, "empty.onnx"),
    (["compile", "trunc.onnx", "-o", "out"], 1, "trunc.onnx"),
    (["compile", "adir.onnx", "-o", "out"], 1, "adir.onnx"),
    (["compile", "noise.xyz", "-o", "out"], 1, "noise.xyz"),
    (["compile", "m.onnx", "-o", "out", "--config", "missing.toml"], 1, "missing.toml"),
    (["compile", "m.onnx", "-o", "out", "--config", "bad.toml"], 1, "bad.toml"),
    (["compile", "m.onnx", "-o", "outfile"], 1, "m.onnx"),
    (["compile", "m.onnx"], 2, None),
    (["compile", "m.onnx", "-o", "out", "--emit", "zip"], 2, None),
    (["compile", "m.onnx", "-o", "out", "--target", "gpu"], 2, None),
    (["compile", "m.onnx", "-o", "out", "--input-shape", "x"], 2, None),
    (["compile", "m.onnx", "-o", "out", "--max-fusion-size", "many"], 2, None),
    # demo and the command itself
    (["demo", "--mode", "sideways"], 2, None),
    ([], 2, None),
    (["frobnicate"], 2, None),
    (["--frobnicate", "inspect", "m.onnx"], 2, None),
]


def test_the_table_holds_at_least_the_issue_inputs() -> None:
    assert len(BAD_INPUTS) >= 28
    assert len({tuple(a) for a, _, _ in BAD_INPUTS}) == len(BAD_INPUTS)


@pytest.mark.parametrize(("args", "code", "file"), BAD_INPUTS,
                         ids=[" ".join(a) or "<none>" for a, _, _ in BAD_INPUTS])
def test_bad_input_gives_one_line_and_the_exit_code(
    files: Path, args: list[str], code: int, file: str | None
) -> None:
    r = _run(args, files)
    lines = r.stderr.splitlines()
    assert r.returncode == code, r.stderr
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert "Traceback" not in r.stderr
    if file is None:
        assert re.fullmatch(r"ascendir: error: .+ \(see 'ascendir( \w+)? --help'\)", line), line
    else:
        assert line.startswith(f"ascendir: error: {file}: "), line
        assert len(line) > len(f"ascendir: error: {file}: ") + 5, line
        assert "internal error" not in line, line


def test_debug_shows_the_traceback(files: Path) -> None:
    r = _run(["--debug", "inspect", "trunc.onnx"], files)
    assert r.returncode == 1
    assert "Traceback" in r.stderr
    assert r.stderr.splitlines()[-1].startswith("ascendir: error: trunc.onnx: ")
    r = _run(["inspect", "trunc.onnx", "--debug"], files)
    assert r.returncode == 1 and "Traceback" in r.stderr


def test_version_and_python_m(files: Path) -> None:
    r = _run(["--version"], files)
    assert r.returncode == 0 and r.stdout.strip() == f"ascendir {air.__version__}"
    m = subprocess.run([sys.executable, "-m", "ascendir", "inspect", "m.onnx"], cwd=files,
                       capture_output=True, text=True, check=False, timeout=300)
    assert m.returncode == 0, m.stderr
    assert m.stdout == _run(["inspect", "m.onnx"], files).stdout
    assert "graph 'transformer_block'" in m.stdout


def test_every_option_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    parsers = {"": parser, **sub.choices}
    assert set(parsers) >= {"", "demo", "convert", "inspect", "compile"}
    for name, p in parsers.items():
        for action in p._actions:
            assert action.help and action.help.strip(), (name, action.dest)
        text = p.format_help()
        assert text.count("\n") > 3, name


def test_broken_pipe_is_quiet(files: Path) -> None:
    r_fd, w_fd = os.pipe()
    err = subprocess.PIPE
    proc = subprocess.Popen([script(), "inspect", "m.onnx"], cwd=files, stdout=w_fd,
                            stderr=err, stdin=subprocess.DEVNULL)
    os.close(w_fd)
    os.close(r_fd)  # nobody reads: the first write fails with EPIPE
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 141
    assert stderr == b""


def test_progress_is_shown_on_a_terminal(files: Path) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen([script(), "convert", "m.onnx", "tty.om"], cwd=files,
                            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    out, _ = proc.communicate(timeout=300)
    seen = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "ascendir: reading m.onnx" in seen and "ascendir: writing tty.om" in seen
    assert seen.endswith("\r\x1b[K")  # the line is cleared at the end
    assert out.decode().startswith("wrote tty.om")
    r = _run(["convert", "m.onnx", "piped.om"], files)
    assert r.returncode == 0 and r.stderr == ""


def test_compile_progress_on_a_terminal(files: Path) -> None:
    master, slave = pty.openpty()
    # A terminal of 24 rows, 100 columns (a pty starts as 0 x 0, where no bar fits).
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen([script(), "compile", "m.onnx", "missing.onnx", "-o", "cout"],
                            cwd=files, stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    out, _ = proc.communicate(timeout=300)
    seen = b"".join(chunks).decode()
    assert proc.returncode == 1
    # A progress bar (done/total, failures, elapsed, rate) and one line per failure.
    assert "ascendir: compiling" in seen and "2/2" in seen and "failed=1" in seen
    assert "model/s" in seen or "s/model" in seen
    assert "ascendir: error: missing.onnx: no such file or directory" in seen
    table = out.decode()
    # The test's own compile cache is empty: the good model is compiled, not found there.
    assert "ok" in table and "cached" not in table and "failed" in table


def test_format_is_sniffed_when_the_suffix_is_wrong_or_unknown(files: Path) -> None:
    for src, name in (("m.onnx", "onnx_as.pb"), ("m.pb", "pb_as.onnx"), ("m.om", "om_as.bin"),
                      ("m.txt", "txt_as.model"), ("m.onnx", "onnx_as.data")):
        shutil.copy(files / src, files / name)
        r = _run(["inspect", name], files)
        assert r.returncode == 0, r.stderr
        assert "graph 'transformer_block': 60 nodes" in r.stdout
    r = _run(["inspect", "onnx_as.pb"], files)
    assert "format: ONNX" in r.stdout
    r = _run(["inspect", "om_as.bin"], files)
    assert "format: OM file" in r.stdout


def test_pbtxt_and_forced_output_format(files: Path) -> None:
    r = _run(["convert", "m.onnx", "m.pbtxt"], files)
    assert r.returncode == 0, r.stderr
    assert (files / "m.pbtxt").read_text().lstrip().startswith(("name", "graph", "version"))
    r = _run(["inspect", "m.pbtxt"], files)
    assert r.returncode == 0 and "format: GE ModelDef (text)" in r.stdout
    r = _run(["convert", "m.pbtxt", "forced.model", "--to", "om"], files)
    assert r.returncode == 0, r.stderr
    assert (files / "forced.model").read_bytes()[:4] == b"IMOD"


def test_failed_convert_leaves_no_partial_file(files: Path) -> None:
    before = set(os.listdir(files))
    r = _run(["convert", "trunc.onnx", "never.pb"], files)
    assert r.returncode == 1
    assert set(os.listdir(files)) == before


def test_compile_and_convert_a_bare_file_name_with_external_data(tmp_path: Path) -> None:
    import numpy as np

    from support.external_data import mul_exp_model

    w = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    mul_exp_model(tmp_path, w, location="model.data")
    r = _run(["compile", "model.onnx", "-o", "out", "--no-cache"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "1 compiled, 0 failed" in r.stdout
    r = _run(["convert", "model.onnx", "model.om"], tmp_path)
    assert r.returncode == 0, r.stderr
    g = air.serialization.load_model(tmp_path / "model.om").graph
    np.testing.assert_array_equal(np.asarray(g.node("w").attrs["value"].numpy()), w)


def test_verify_of_a_model_without_kernels_succeeds(tmp_path: Path) -> None:
    g = air.Graph("mm")
    a = g.add_input("a", air.TensorDesc([4, 8], air.float32))
    b = g.add_input("b", air.TensorDesc([8, 4], air.float32))
    g.set_outputs([g.add_op("MatMul", [a, b], name="mm")])
    air.save(g, tmp_path / "mm.om")
    assert air.compile(g).kernels == []
    r = _run(["compile", "mm.om", "-o", "out", "--verify", "--no-cache", "--no-progress"],
             tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ascendir: mm.om: no kernels to verify" in r.stderr
    assert "1 compiled, 0 failed" in r.stdout


def test_verify_report_lists_one_failure_a_line() -> None:
    from ascendir.compiler.verify import VerifyCase, VerifyReport

    assert VerifyReport().ok and "no kernels" in VerifyReport().text()
    assert not VerifyReport(kernels=1).ok  # a kernel that gave no run is not verified
    err = "build: g++ failed:\n" + "error: x\n" * 40
    cases = [VerifyCase(f"k{i}", "t0", "ascend910b", {"s0": i}, False, error=err)
             for i in range(25)]
    rep = VerifyReport(cases + [VerifyCase("ok", "t0", "tails", {}, True)], kernels=26)
    assert not rep.ok
    lines = rep.text().splitlines()
    assert lines[0] == "verified 26 runs of 26 kernels: 25 failed"
    assert len(lines) == 1 + VerifyReport.MAX_LISTED + 1
    assert lines[1].startswith("  k0 [t0] ascend910b {'s0': 0}: build: g++ failed: error: x")
    assert lines[-1] == "  ... and 5 more failures"


def test_convert_warnings_name_the_destination_not_the_temporary_file(tmp_path: Path) -> None:
    from ascendir.serialization import Model

    g = air.Graph("m")
    x = g.add_input("x", air.TensorDesc([2, 3], air.float32))
    g.set_outputs([g.add_op("Relu", [x], name="r")])
    air.save(Model("m", [g], partitions=[(2, b"tasks")]), tmp_path / "p.om")
    r = _run(["convert", "p.om", "out.pb"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ascendir: warning: p.om: 'out.pb' (pb) cannot hold the model's OM partitions" in (
        r.stderr)
    assert ".part" not in r.stderr
    # An export that fails after the writer warned: no warning names the temporary file.
    f = air.Graph("f")
    dims = f.add_input("dims", air.TensorDesc([2], air.int64))
    v = f.add_input("v", air.TensorDesc([], air.float32))
    f.set_outputs([f.add_op("Fill", [dims, v], name="fill")])
    air.save(Model("f", [f], partitions=[(2, b"tasks")]), tmp_path / "f.om")
    r = _run(["convert", "f.om", "out.onnx"], tmp_path)
    assert r.returncode == 1
    assert "Fill 'fill'" in r.stderr and ".part" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.om", "out.pb", "p.om"]


def test_every_command_shows_the_opset_warning_the_api_gives(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    def model(opset: int) -> bytes:
        g = helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 3
        return bytes(m.SerializeToString())

    (tmp_path / "old.onnx").write_bytes(model(3))
    (tmp_path / "new.onnx").write_bytes(model(17))
    with pytest.warns(air.onnx.OpsetWarning) as caught:
        air.onnx.load(tmp_path / "old.onnx")
    api = str(caught[0].message)
    assert "opset 3" in api
    with pytest.warns(air.onnx.OpsetWarning, match="opset 3"):
        air.compile(tmp_path / "old.onnx")
    runs = {
        "inspect": ["inspect", "old.onnx"],
        "convert": ["convert", "old.onnx", "old.pb"],
        "compile": ["compile", "old.onnx", "-o", "out"],
    }
    for command, args in runs.items():
        r = _run(args, tmp_path)
        assert r.returncode == 0, (command, r.stderr)
        assert f"ascendir: warning: old.onnx: {api}" in r.stderr, (command, r.stderr)
    # A GE file written from the old import keeps its opset, and says so when read back.
    r = _run(["inspect", "old.pb"], tmp_path)
    assert f"ascendir: warning: old.pb: {api}" in r.stderr, r.stderr
    # A model at a mapped opset: no warning anywhere.
    for args in (["inspect", "new.onnx"], ["compile", "new.onnx", "-o", "out2"]):
        r = _run(args, tmp_path)
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
