"""Dump folders as a timeline, graph diffs and cycles: ``ascendir.dumps`` and the ``dumps``,
``diff`` and ``cycle`` commands, on GE's public dumps, on a real compile's stage dumps and on
graphs edited here."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import ascendir as air
from ascendir import dumps
from ascendir.cli import main

ROOT = Path(__file__).resolve().parents[1]
GE_DATA = ROOT / "tests" / "data" / "ge"
GE_17 = "ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt"
GE_46 = "ge_proto_00046_afterUBMatch.txt"
Cap = pytest.CaptureFixture[str]

sys.path.insert(0, str(ROOT / "benches"))
import models  # type: ignore[import-untyped]  # noqa: E402


def _cli(capsys: Cap, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _root_op_count(text: str) -> int:
    """Ops of the first graph of a GE text dump, counted from the text alone."""
    first = text.split("\ngraph {")[0]
    return sum(1 for line in first.splitlines() if line == "  op {")


@pytest.fixture(scope="module")
def ge_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GE's public dumps in a ``pid_123`` folder, as GE lays them out (46 written first)."""
    root = tmp_path_factory.mktemp("ge_dumps")
    pid = root / "pid_123"
    pid.mkdir()
    for name in (GE_46, GE_17):
        (pid / name).write_bytes(gzip.decompress((GE_DATA / f"{name}.gz").read_bytes()))
    (pid / "readme.txt").write_text("not a dump\n")
    return root


def _chain() -> air.Graph:
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([2, 8], air.float32))
    prev = x
    for i, ty in enumerate(["Relu", "Exp", "Sigmoid", "Tanh"]):
        prev = g.add_op(ty, [prev], name=f"n{i}", input_names=["x"], outputs=["y"],
                        output_descs=[air.TensorDesc([2, 8], air.float32)])
    g.set_outputs([prev])
    return g


# -- the folder index --------------------------------------------------------------------------


def test_a_ge_folder_indexes_in_stage_order_with_its_node_counts(ge_dir: Path) -> None:
    folder = dumps.open(ge_dir)
    assert [(e.number, e.stage, e.format, e.pid) for e in folder] == [
        (17, "OptimizeOriginalGraph_FeGraphFusionAfter", "ge_proto", 123),
        (46, "afterUBMatch", "ge_proto", 123),
    ]
    for e in folder:
        assert e.node_count == _root_op_count(Path(e.path).read_text())
        assert e.node_count == len(e.load())
    assert folder.get(46) is folder.get("afterUBMatch") is folder["46"]
    assert folder.pids == [123]
    with pytest.raises(air.NotFoundError, match="no dump of stage 5 under"):
        folder.get(5)
    with pytest.raises(AttributeError):
        folder.get(17).number = 3  # type: ignore[misc]


def test_ge_name_forms_and_several_pids(tmp_path: Path) -> None:
    names = {
        "pid_11_deviceid_0/ge_proto_00000003_graph_1_PreRunBegin.txt":
            (3, "PreRunBegin", "ge_proto", 1, 11, 0),
        "pid_11_deviceid_0/ge_onnx_00004_graph_1_PreRunAfterInfershape.pbtxt":
            (4, "PreRunAfterInfershape", "ge_onnx", 1, 11, 0),
        "pid_11_deviceid_0/ge_readable_00000005_aclop_graph_2_Build.txt":
            (5, "Build", "ge_readable", 2, 11, 0),
        "pid_12/ge_proto_00003_PreRunBegin.txt": (3, "PreRunBegin", "ge_proto", None, 12, None),
    }
    for rel in names:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("graph {\n}\n")
    folder = dumps.open(tmp_path)
    got = {str(Path(e.path).relative_to(tmp_path)): (e.number, e.stage, e.format, e.graph_id,
                                                     e.pid, e.device) for e in folder}
    assert got == names
    assert [e.number for e in folder] == [3, 3, 4, 5]
    with pytest.raises(air.InvalidArgumentError, match=r"stage 3 is in 2 dumps.*pid="):
        folder.get(3)
    assert folder.get(3, pid=12).pid == 12
    assert folder.pids == [11, 12]


# -- diffs -------------------------------------------------------------------------------------


def test_the_diff_of_two_ge_stages_is_deterministic_and_accounts_for_every_node(
        ge_dir: Path) -> None:
    folder = dumps.open(ge_dir)
    a, b = folder.get(17).load(), folder.get(46).load()
    d = dumps.diff(a, b)
    assert dumps.diff(folder.get(17), folder.get(46)).data == d.data
    old_names = [n.name for n in a.nodes]
    new_names = [n.name for n in b.nodes]
    kept_old = [o for o, _ in d.kept]
    kept_new = [n for _, n in d.kept]
    assert sorted(kept_old + d.removed) == sorted(old_names)
    assert sorted(kept_new + d.added) == sorted(new_names)
    assert not set(kept_new) & set(d.added) and not set(kept_old) & set(d.removed)
    s = d.data["summary"]
    assert s["kept"] + s["removed"] == len(a) and s["kept"] + s["added"] == len(b)
    # The kept nodes come in the new graph's order, the removed in the old graph's.
    order = {n: i for i, n in enumerate(new_names)}
    assert kept_new == sorted(kept_new, key=order.__getitem__)
    order = {n: i for i, n in enumerate(old_names)}
    assert d.removed == sorted(d.removed, key=order.__getitem__)


def test_renamed_nodes_are_matched_by_structure(ge_dir: Path) -> None:
    old = dumps.open(ge_dir).get(46).load()
    new = old.copy()
    ops = [n for n in new.nodes if n.type not in ("Data", "NetOutput")]
    renames = {n.name: f"renamed_{i}" for i, n in enumerate(ops[::7])}
    for name, to in renames.items():
        new.node(name).name = to
    d = dumps.diff(old, new)
    assert d.added == [] and d.removed == []
    assert dict(d.renamed) == renames
    assert d.data["data_edges"] == [] and d.data["control_edges"] == []
    assert d.data["attrs"] == [] and d.data["descs"] == [] and d.data["retyped"] == []
    assert not dumps.diff(old, old.copy()).renamed and dumps.diff(old, old.copy()).empty


def test_attribute_descriptor_type_and_link_changes(tmp_path: Path) -> None:
    old, new = _chain(), _chain()
    new.node("n1").op_desc.type = "Abs"
    new.node("n2").attrs["mode"] = 3
    new.node("n3").op_desc.output_desc(0).dtype = air.float16
    n0_in = new.node("n3").in_data_anchor(0)
    assert n0_in.peer is not None
    n0_in.unlink(n0_in.peer)
    new.node("n0").out_data_anchor(0).link_to(n0_in)
    d = dumps.diff(old, new)
    assert d.data["retyped"] == [{"node": "n1", "old": "Exp", "new": "Abs"}]
    assert d.data["attrs"] == [{"node": "n2", "key": "mode", "old": None, "new": "3"}]
    assert d.data["data_edges"] == [{"node": "n3", "index": 0, "old": "n2:0", "new": "n0:0"}]
    descs = d.data["descs"]
    assert [(c["node"], c["side"], c["index"], c["old"]["dtype"], c["new"]["dtype"])
            for c in descs] == [("n3", "output", 0, "DT_FLOAT", "DT_FLOAT16")]
    air.save(old, tmp_path / "a.pb")
    air.save(new, tmp_path / "b.pb")
    assert dumps.diff(tmp_path / "a.pb", tmp_path / "b.pb").data == d.data


def test_diff_json_round_trips_the_facts_of_the_text(ge_dir: Path, capsys: Cap) -> None:
    code, out, err = _cli(capsys, "diff", str(ge_dir), "17", "46", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["schema"] == "ascendir.diff/1"
    assert data["old"]["file"].endswith(GE_17) and data["new"]["file"].endswith(GE_46)
    folder = dumps.open(ge_dir)
    api = dumps.diff(folder.get(17), folder.get(46)).data
    assert {k: v for k, v in data.items() if k not in ("old", "new")} == \
        {k: v for k, v in api.items() if k not in ("old", "new")}
    code, out2, _ = _cli(capsys, "diff", f"{ge_dir}:OptimizeOriginalGraph_FeGraphFusionAfter",
                         f"{ge_dir}:46", "--json")
    assert code == 0 and json.loads(out2) == data
    code, text, _ = _cli(capsys, "diff", f"{ge_dir}:17", f"{ge_dir}:46")
    assert code == 0
    lines = text.splitlines()
    kinds = [line.split()[0] for line in lines[3:]]
    s = data["summary"]
    assert kinds.count("added") == s["added"] and kinds.count("removed") == s["removed"]
    assert kinds.count("relinked") == s["data_edges"] and kinds.count("attr") == s["attrs"]
    assert kinds.count("desc") == s["descs"] and kinds.count("renamed") == s["renamed"]
    added = {line.split()[1] for line in lines[3:] if line.startswith("added ")}
    assert added == {n["name"] for n in data["added"]}


# -- a real compile ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("compiled")
    graph = air.onnx.load(models.decoder(layers=1, hidden=16, heads=2))
    cm = air.compile(graph, dump_stages=True)
    cm.save(out, ["report"])
    return out, cm


def test_a_compile_diff_lists_exactly_the_changes_the_compiler_made(
        compiled: tuple[Path, Any], capsys: Cap) -> None:
    out, cm = compiled
    stages = out / "stages"
    folder = dumps.open(out)
    assert [e.stage for e in folder] == ["load", "infer", "simplify", "package"]
    assert folder.get("simplify").node_count == len(folder.get("simplify").load())
    assert folder.get("package").node_count == cm.report.nodes_after
    code, text, err = _cli(capsys, "diff", str(stages), "04", "12", "--json")
    assert code == 0, err
    d = json.loads(text)
    # The expected changes, from the compile report alone: every kernel replaces its member
    # nodes by one AscBackend node named after it; nothing else is added or removed.
    kernels = cm.report.data["kernels"]
    members = [m for k in kernels for m in k["members"]]
    assert sorted(n["name"] for n in d["removed"]) == sorted(members)
    assert sorted((n["name"], n["type"]) for n in d["added"]) == sorted(
        (k["name"], "AscBackend") for k in kernels)
    assert d["retyped"] == [] and d["summary"]["renamed"] == 0
    assert d["summary"]["kept"] == d["old"]["nodes"] - len(members)
    assert d["new"]["nodes"] == cm.report.nodes_after
    # Every relinked input now reads a kernel's output (a consumer of a fused region).
    kernel_names = {k["name"] for k in kernels}
    for e in d["data_edges"]:
        assert e["old"].rsplit(":", 1)[0] in members, e
        assert e["new"].rsplit(":", 1)[0] in kernel_names, e
    consumers = {e["node"] for e in d["data_edges"]}
    assert consumers  # the fused regions have consumers outside them


def test_a_stage_dump_reads_back(compiled: tuple[Path, Any]) -> None:
    out, cm = compiled
    g = dumps.open(out).get("package").load()
    assert g.dump().splitlines()[0] == cm.graph.dump().splitlines()[0]
    assert [n.name for n in g.nodes] == [n.name for n in cm.graph.nodes]
    assert [n.type for n in g.nodes] == [n.type for n in cm.graph.nodes]
    assert dumps.diff(cm.graph, g).data["data_edges"] == []


# -- cycles ------------------------------------------------------------------------------------


def test_cycle_prints_the_back_edge_loop(tmp_path: Path, capsys: Cap) -> None:
    g = _chain()
    n0_in = g.node("n0").in_data_anchor(0)
    assert n0_in.peer is not None
    n0_in.unlink(n0_in.peer)
    g.node("n2").out_data_anchor(0).link_to(n0_in)  # n0 -> n1 -> n2 -> n0
    air.save(g, tmp_path / "loop.pb")
    code, out, err = _cli(capsys, "cycle", str(tmp_path / "loop.pb"))
    assert code == 1
    links = [line.strip() for line in out.splitlines()[1:]]
    assert len(links) == 3
    # The cycle in link order, from wherever it starts: each link ends where the next begins.
    ring = ["n0:0 -> n1:0", "n1:0 -> n2:0", "n2:0 -> n0:0"]
    start = ring.index(links[0])
    assert links == ring[start:] + ring[:start]
    assert err.count("\n") == 1 and "has a cycle of 3 nodes" in err and "Traceback" not in err
    code, out, _ = _cli(capsys, "cycle", str(tmp_path / "loop.pb"), "--json")
    assert code == 1 and sorted(json.loads(out)["nodes"]) == ["n0", "n1", "n2"]
    air.save(_chain(), tmp_path / "ok.pb")
    code, out, err = _cli(capsys, "cycle", str(tmp_path / "ok.pb"))
    assert (code, err) == (0, "") and "is acyclic (6 nodes)" in out


# -- listing and errors ------------------------------------------------------------------------


def test_dumps_lists_the_timeline(ge_dir: Path, capsys: Cap) -> None:
    code, out, err = _cli(capsys, "dumps", str(ge_dir))
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["#", "stage", "format", "nodes", "file"]
    counts = [e.node_count for e in dumps.open(ge_dir)]
    assert [(r[0], r[3]) for r in rows[1:]] == [("17", str(counts[0])), ("46", str(counts[1]))]
    code, out, _ = _cli(capsys, "dumps", str(ge_dir), "--json")
    data = json.loads(out)
    assert [(d["number"], d["nodes"], d["pid"]) for d in data["dumps"]] == [
        (17, counts[0], 123), (46, counts[1], 123)]


@pytest.mark.parametrize("args, message", [
    (["dumps", "{tmp}/nope"], r"nope: the file does not exist \(a dump folder was expected\)"),
    (["diff", "{tmp}/garbage.txt", "{tmp}/garbage.txt"], r"garbage\.txt: "),
    (["diff", "{tmp}/nope.pb", "{tmp}/nope.pb"], r"nope\.pb: no such file"),
    (["diff", "{ge}:99", "{ge}:17"], r"no dump of stage 99"),
    (["diff", "{tmp}/bad_stage/04_simplify.txt", "{ge}:17"], r"line 3"),
    (["cycle", "{tmp}/garbage.txt"], r"garbage\.txt: "),
    (["cycle", "{tmp}/nope:3"], r"is not a dump folder"),
])
def test_bad_inputs_are_one_line_errors(tmp_path: Path, ge_dir: Path, capsys: Cap,
                                        args: list[str], message: str) -> None:
    (tmp_path / "garbage.txt").write_bytes(b"\x00\x01 garbage {{{")
    (tmp_path / "bad_stage").mkdir()
    (tmp_path / "bad_stage" / "04_simplify.txt").write_text(
        "graph g (1 nodes)\n  node a : Relu id=0 stream=0\n    in  0 x FLOAT[2, x] <- -\n")
    argv = [a.format(tmp=tmp_path, ge=ge_dir) for a in args]
    code, out, err = _cli(capsys, *argv)
    assert code == 1, (out, err)
    assert err.count("\n") == 1 and err.startswith("ascendir: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert re.search(message, err), err


def test_a_folder_operand_without_a_stage_is_a_usage_error(ge_dir: Path, capsys: Cap) -> None:
    code, _, err = _cli(capsys, "diff", str(ge_dir), str(ge_dir))
    assert code == 2 and "name a stage" in err


def test_the_diff_of_the_big_decoder_is_fast_and_matches_every_renamed_node() -> None:
    import time

    old = air.onnx.load(models.decoder())
    assert len(old) > 20_000
    new = old.copy()
    # Every third linked op renamed (a node without any link has nothing to match it by).
    ops = [n for n in new.nodes if n.type not in ("Data", "NetOutput")
           and (n.in_data_nodes or n.out_data_nodes)]
    renames = {n.name: f"renamed_{i}" for i, n in enumerate(ops[::3])}
    for name, to in renames.items():
        new.node(name).name = to
    t = time.perf_counter()
    d = dumps.diff(old, new)
    elapsed = time.perf_counter() - t
    assert dict(d.renamed) == renames
    assert d.added == [] and d.removed == [] and d.data["data_edges"] == []
    assert elapsed < 10.0, elapsed


def test_mangled_stage_dumps_fail_as_decode_errors_never_as_panics() -> None:
    import random

    text = _chain().dump()
    rng = random.Random(0)
    failures = 0
    for _ in range(300):
        chars = list(text)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(chars))
            chars[i] = rng.choice([" ", ",", ":", "[", "]", "{", "}", "\"", "\n", "x", "9", "-"])
        mangled = "".join(chars)
        try:
            air._core._read_dump_text(mangled)
        except air.DecodeError as e:
            assert "line " in str(e), e
            failures += 1
        except air.InternalError as e:  # a panic in the reader
            raise AssertionError(f"panic on {mangled!r}") from e
    assert failures > 0


def test_a_dump_that_does_not_load_is_listed_with_a_warning(tmp_path: Path, capsys: Cap) -> None:
    (tmp_path / "pid_5").mkdir()
    (tmp_path / "pid_5" / "ge_proto_00099_Broken.txt").write_text("graph { op { name: \n")
    air.save(_chain(), tmp_path / "pid_5" / "ge_proto_00098_Fine.txt")
    code, out, err = _cli(capsys, "dumps", str(tmp_path))
    assert code == 0
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [(r[0], r[1], r[3]) for r in rows] == [("98", "Fine", "6"), ("99", "Broken", "?")]
    assert err.count("\n") == 1 and "ge_proto_00099_Broken.txt: " in err
    assert err.startswith("ascendir: warning: ")
    with pytest.raises(air.DecodeError):
        dumps.open(tmp_path).get(99).load()
