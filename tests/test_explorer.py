"""ascendir.explorer and ``ascendir view``: Model Explorer's graph JSON of models nobody here
wrote (the 21k-node decoder, a compiled Hugging Face BERT), checked against the graphs and the
compile report, and the viewer itself in a real browser (headless Chromium)."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ascendir as air
from ascendir import explorer
from ascendir.explorer._build import HIDDEN, WIDE_LAYER

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import models  # noqa: E402


@pytest.fixture(scope="module")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> tuple[air.Graph, Path]:
    g = air.onnx.load(models.decoder())
    path = tmp_path_factory.mktemp("explorer") / "decoder.pb"
    air.save(g, path)
    return g, path


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, Path]:
    from support.torch_models import small_bert

    model, ids = small_bert()
    cm = air.compile(air.torch.export(model, (ids,)))
    out = tmp_path_factory.mktemp("explorer-bert")
    cm.save(out, ["pb", "report"], name="bert")
    return cm, out / "bert.pb", out / "report.json"


def _without_parts(namespace: str) -> str:
    return "/".join(c for c in namespace.split("/") if not c.startswith("part_"))


def test_graph_json_is_the_graph(decoder: tuple[air.Graph, Path]) -> None:
    g, _ = decoder
    data = explorer.graphs_json(g)
    assert json.dumps(data) == json.dumps(explorer.graphs_json(g))  # deterministic
    graphs = {x["id"]: x for x in data["graphs"]}
    assert [x["id"] for x in data["graphs"]] == [g.name] + [s.name for s in g.subgraphs]
    for graph in [g, *g.subgraphs]:
        shown = graphs[graph.name]
        assert shown["nodeLabelsToHide"] == list(HIDDEN)
        assert [n["id"] for n in shown["nodes"]] == [n.name for n in graph.nodes]
        for n, j in zip(graph.nodes, shown["nodes"], strict=True):
            assert j["label"] == n.type
            want = [(v.producer().name, str(v.index), str(i))
                    for i, v in enumerate(n.inputs) if v is not None]
            got = [(e["sourceNodeId"], e["sourceNodeOutputId"], e["targetNodeInputId"])
                   for e in j["incomingEdges"]]
            assert got == want
            for k, meta in enumerate(j["outputsMetadata"]):
                od = n.op_desc.output_desc(k)
                assert meta["attrs"][0]["value"] == f"{od.dtype.name.lower()}{list(od.shape)}"
            # The layers are the name's scopes, parts inserted where a layer is too wide.
            assert _without_parts(j["namespace"]) == explorer.scope_of(n.name)
            subs = j.get("subgraphIds", [])
            assert all(s in graphs for s in subs)
            assert len(subs) == len([s for s in n.op_desc.subgraph_names if s])
        layers: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
        for j in shown["nodes"]:
            parts = j["namespace"].split("/") if j["namespace"] else []
            layers[j["namespace"]].add(("node", j["id"]))
            for d in range(len(parts)):
                layers["/".join(parts[:d])].add(("layer", parts[d]))
        assert max(len(v) for v in layers.values()) <= WIDE_LAYER
    # The decoder's ops have no scopes: its top layer is split into parts of graph order.
    root = graphs[g.name]["nodes"]
    assert len({j["namespace"].split("/")[0] for j in root}) == -(-len(root) // WIDE_LAYER)


def test_a_compiled_graph_shows_kernels_as_groups_of_their_hint_graph(
        bert: tuple[Any, Path, Path]) -> None:
    cm, _, _ = bert
    report = cm.report.data
    data = explorer.graphs_json(cm)
    shown = data["graphs"][0]
    ids = {n["id"] for n in shown["nodes"]}
    for n in shown["nodes"]:
        for e in n["incomingEdges"]:
            assert e["sourceNodeId"] in ids, (n["id"], e)
    groups = shown["groupNodeAttributes"]
    assert len(groups) == len(cm.kernels) > 0
    kernels = {k.name: k for k in cm.kernels}

    def source_id(v: Any) -> str:
        """The node an edge from value ``v`` starts at: a kernel's value leaves its
        HintGraph's Output node of that index."""
        name = v.producer().name
        if name not in kernels:
            return str(name)
        out = next(h for h in kernels[name].hint.nodes
                   if h.type == "Output" and int(h.attr.ir_attr.index) == v.index)
        return f"{name}/{out.name}"

    by_layer = collections.defaultdict(list)
    for n in shown["nodes"]:
        by_layer[n["namespace"]].append(n)
    for k, entry in zip(cm.kernels, report["kernels"], strict=True):
        layer = next(ns for ns, a in groups.items() if a["kernel"] == k.name)
        attrs = groups[layer]
        assert attrs["members"] == ", ".join(k.members)
        assert attrs["bytes saved"] == str(entry["bytes_saved"])
        inside = by_layer[layer]
        hint = list(k.hint.nodes)
        assert [n["label"] for n in inside] == [h.type for h in hint]
        assert k.name not in ids  # the AscBackend node is its group
        # The kernel's inputs feed its Data nodes from the producers outside.
        data_in = [e["sourceNodeId"] for n in inside if n["label"] == "Data"
                   for e in n["incomingEdges"]]
        assert sorted(data_in) == sorted(source_id(v) for v in k.node.inputs
                                         if v is not None)
    refused = ({r[side] for r in report["rejected_pairs"] for side in ("a", "b")}
               | {b["name"] for b in report["barriers"]})
    noted = {n["id"] for n in shown["nodes"]
             if any(a["key"] == "fusion refusals" for a in n["attrs"])}
    assert noted == refused & ids and noted
    saved = explorer.node_data(cm)
    assert saved is not None
    results = saved[shown["id"]]["results"]
    assert set(results) == {n["id"] for layer in groups for n in by_layer[layer]}


def test_view_json_writes_the_graph_json(decoder: tuple[air.Graph, Path],
                                         tmp_path: Path) -> None:
    g, path = decoder
    out = tmp_path / "g.json"
    run = subprocess.run([sys.executable, "-m", "ascendir", "view", str(path), "--json",
                          str(out)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(out.read_text()) == explorer.graphs_json(air.load(path))


@pytest.fixture
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium")
    assert exe is not None, "headless Chromium (the Debian package 'chromium') is needed"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        yield browser
        browser.close()


def _serve(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    import portpicker

    port = portpicker.pick_unused_port()
    proc = subprocess.Popen([sys.executable, "-m", "ascendir", "view", *args, "--no-open",
                             "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("http://") and "data=" in line:
            return proc, line.strip()
    proc.wait()
    raise AssertionError(f"the viewer did not start (exit {proc.returncode})")


def _artifacts(tmp_path: Path) -> Path:
    """Where the screenshots go: $ASCENDIR_ARTIFACTS (CI keeps that folder), else tmp."""
    where = Path(os.environ.get("ASCENDIR_ARTIFACTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def _graph_info(page: Any) -> dict[str, str]:
    rows = page.locator("info-panel table.info-attrs tr")
    out = {}
    for i in range(rows.count()):
        key, _, value = rows.nth(i).inner_text().partition("\n")
        out[key.strip()] = value.strip()
    return out


def _shown_ops(data: dict[str, Any]) -> int:
    return sum(1 for n in data["graphs"][0]["nodes"] if n["label"] not in HIDDEN)


def test_the_viewer_renders_the_decoder_and_a_compiled_bert(
        chromium: Any, decoder: tuple[air.Graph, Path], bert: tuple[Any, Path, Path],
        tmp_path: Path) -> None:
    g, path = decoder
    proc, url = _serve([str(path)])
    try:
        page = chromium.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url)
        page.wait_for_selector("info-panel table.info-attrs tr", timeout=240_000)
        info = _graph_info(page)
        assert int(info["op node count"]) == _shown_ops(explorer.graphs_json(g))
        # Model Explorer counts layers of its own besides ours: at least our parts.
        assert int(info["layer count"]) >= -(-len(g) // WIDE_LAYER)
        page.screenshot(path=str(_artifacts(tmp_path) / "viewer-decoder.png"))
    finally:
        proc.terminate()
        proc.wait()
    cm, pb, report = bert
    proc, url = _serve([str(pb)])  # the report.json beside it is read
    try:
        page = chromium.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url)
        page.wait_for_selector("info-panel table.info-attrs tr", timeout=240_000)
        shown = explorer.graphs_json(air.load(pb), report=json.loads(report.read_text()))
        assert int(_graph_info(page)["op node count"]) == _shown_ops(shown)
        # The bytes-saved node data lists the kernels' nodes; choosing a Load (a node only
        # a kernel's HintGraph has) opens its kernel's group, and selecting the node shows
        # the kernel it belongs to.
        page.get_by_text("bytes saved", exact=True).first.wait_for(timeout=60_000)
        page.get_by_text("Load", exact=True).locator("visible=true").first.click()
        page.wait_for_timeout(2_000)
        box = page.locator("canvas.main").bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_timeout(1_000)
        cells = page.locator("info-panel table tr").all_inner_texts()
        kernel = [c.partition("\n")[2].strip() for c in cells if c.startswith("kernel")]
        assert kernel and kernel[0] in {k.name for k in cm.kernels}, cells
        page.screenshot(path=str(_artifacts(tmp_path) / "viewer-bert-kernel.png"))
    finally:
        proc.terminate()
        proc.wait()


def test_emit_svg_without_graphviz_warns_and_writes_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = air.Graph("small")
    x = g.add_input("x", air.TensorDesc([4, 16], air.float32))
    g.set_outputs([g.add_op("Add", [g.add_op("Exp", [g.add_op("Relu", [x])]), x])])
    src = tmp_path / "small.pb"
    air.save(g, src)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no Graphviz 'dot' on PATH
    cm = air.compile(g)
    with pytest.warns(air.compiler.ToolMissingWarning, match="dot' is not installed"):
        written = cm.save(tmp_path / "out", ["om", "svg", "report"])
    assert sorted(Path(p).name for p in written) == ["report.json", "small.om"]
    run = subprocess.run([sys.executable, "-m", "ascendir", "compile", str(src), "-o",
                          str(tmp_path / "cli"), "--emit", "om,svg"], capture_output=True,
                         text=True, check=False, env={"PATH": str(empty)})
    assert run.returncode == 0, run.stderr
    assert "dot' is not installed" in run.stderr
    assert (tmp_path / "cli" / "small.om").is_file()


def test_model_explorers_own_extension_loader_runs_the_adapter(
        bert: tuple[Any, Path, Path], tmp_path: Path) -> None:
    # What `model-explorer bert.pb --extensions=ascendir.explorer` does: import the package's
    # `main` module, find the adapter by id and run its `convert` command.
    from model_explorer.extension_manager import ExtensionManager

    _, pb, _ = bert
    manager = ExtensionManager(["ascendir.explorer"])
    manager.load_extensions()
    meta = {m["id"]: m for m in manager.get_extensions_metadata()}
    assert "pb" in meta["ascendir"]["fileExts"] and "om" in meta["ascendir"]["fileExts"]
    got = manager.run_cmd({"extensionId": "ascendir", "cmdId": "convert",
                           "modelPath": str(pb), "settings": {}})
    loaded = air.load(pb)
    report = explorer.report_beside(pb, loaded)  # the report.json `compile` saved beside it
    assert report is not None
    stale = tmp_path / "stale"
    stale.mkdir()
    shutil.copy(pb, stale / "bert.pb")
    (stale / "report.json").write_text(json.dumps({"kernels": [{"name": "another"}]}))
    assert explorer.report_beside(stale / "bert.pb", loaded) is None  # not this graph's
    want = explorer.graphs_json(loaded, report=report)
    assert all("bytes saved" in a for a in want["graphs"][0]["groupNodeAttributes"].values())
    assert [g["id"] for g in got["graphs"]] == [g["id"] for g in want["graphs"]]
    for g, w in zip(got["graphs"], want["graphs"], strict=True):
        assert g["groupNodeAttributes"] == w.get("groupNodeAttributes")
        for n, m in zip(g["nodes"], w["nodes"], strict=True):
            assert (n["id"], n["label"], n["namespace"]) == (m["id"], m["label"],
                                                             m["namespace"])
            assert n["incomingEdges"] == m["incomingEdges"]
            assert n["attrs"] == m["attrs"]


def test_view_without_model_explorer_says_how_to_install_it(
        decoder: tuple[air.Graph, Path]) -> None:
    _, path = decoder
    # The extra not installed: the import of model_explorer fails, as it does without it.
    code = ("import sys; sys.modules['model_explorer'] = None; "
            "from ascendir.cli import main; sys.exit(main(sys.argv[1:]))")
    run = subprocess.run([sys.executable, "-c", code, "view", str(path), "--no-open"],
                         capture_output=True, text=True, check=False, timeout=120)
    assert run.returncode == 1
    assert "pip install 'ascendir[explorer]'" in run.stderr
    assert "Traceback" not in run.stderr
