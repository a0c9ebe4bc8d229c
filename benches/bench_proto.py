"""GE ModelDef interop: binary encode / decode of G(n) and of the real GE dumps side by side with
python protobuf (upb) ``SerializeToString`` / ``ParseFromString`` of the same bytes, and text
dump parse / print side by side with ``google.protobuf.text_format``.

Ours decodes into a full graph (nodes, anchors, descs, attributes); upb only parses the message.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import measure, measure_alternating, row  # noqa: E402
from workloads import build_g_n_bulk  # noqa: E402

DUMPS = HERE.parent.parent / "shared" / "testdata" / "ge"


def _pb2():
    try:
        from ascendir._proto import ge_ir_pb2

        return ge_ir_pb2
    except ImportError:
        return None


def _binary_rows(label: str, data: bytes, repeat: int) -> list[dict]:
    import ascendir as air

    pb2 = _pb2()
    g = air.Graph.from_bytes(data)
    peer_dec = peer_enc = None
    if len(data) < 10_000_000 and pb2 is not None:
        # Millisecond calls on a shared machine: many calls, ours and upb's in alternating
        # blocks so that both see the same drift of the machine's load.
        msg = pb2.ModelDef.FromString(data)
        calls = max(repeat, 300)
        ours_dec, peer_dec = measure_alternating(
            [lambda: air.Graph.from_bytes(data), lambda: pb2.ModelDef.FromString(data)], calls
        )
        ours_enc, peer_enc = measure_alternating([g.to_bytes, msg.SerializeToString], calls)
        del msg
    else:
        ours_dec = measure(lambda: air.Graph.from_bytes(data), repeat)[0]
        ours_enc = measure(g.to_bytes, repeat)[0]
        if pb2 is not None:
            msg = pb2.ModelDef.FromString(data)
            peer_dec = measure(lambda: pb2.ModelDef.FromString(data), repeat)[0]
            peer_enc = measure(msg.SerializeToString, repeat)[0]
            del msg
    mb = len(data) / 1e6
    rows = [
        row(f"ModelDef decode {label} ({mb:.1f} MB) into a graph", ours_dec,
            "protobuf(upb) ParseFromString", peer_dec),
        row(f"ModelDef encode {label}", ours_enc, "protobuf(upb) SerializeToString", peer_enc),
    ]
    del g
    gc.collect()
    return rows


def _text_rows(label: str, text: str, repeat: int) -> list[dict]:
    import ascendir as air
    from ascendir import _core

    pb2 = _pb2()
    data = _core._text_to_bytes(text)
    ours_parse = measure(lambda: air.Graph.from_text(text), repeat)[0]
    ours_parse_msg = measure(lambda: _core._text_to_bytes(text), repeat)[0]
    ours_print = measure(lambda: _core._bytes_to_text(data), repeat)[0]
    peer_parse = peer_print = None
    if pb2 is not None:
        from google.protobuf import text_format

        msg = pb2.ModelDef()
        peer_repeat = max(1, repeat // 2)
        peer_parse = measure(lambda: text_format.Parse(text, pb2.ModelDef()), peer_repeat)[0]
        text_format.Parse(text, msg)
        peer_print = measure(lambda: text_format.MessageToString(msg), peer_repeat)[0]
    kb = len(text) / 1e3
    return [
        row(f"text parse {label} ({kb:.0f} KB) into a graph", ours_parse,
            "protobuf text_format.Parse", peer_parse),
        row(f"text parse {label} to ModelDef bytes", ours_parse_msg,
            "protobuf text_format.Parse", peer_parse),
        row(f"text print {label}", ours_print, "protobuf text_format.MessageToString", peer_print),
    ]


def run(quick: bool) -> list[dict]:
    """Benchmark rows (see ``benches/run.py``).

    The real dumps come first, in the fresh process: parsing and freeing the 550 MB G(1M)
    ModelDef changes the state of glibc's heap that upb allocates from, after which upb parses
    dump 00046 about twice as fast (0.36 instead of 0.75 ms); docs/WIRE_FORMAT.md gives both.
    """
    repeat = 3 if quick else 5
    rows: list[dict] = []
    if DUMPS.exists():
        from ascendir import _core

        for path in sorted(DUMPS.glob("ge_proto_*.txt")):
            text = path.read_text()
            label = path.name.split("_")[2]
            rows += _binary_rows(f"GE dump {label}", _core._text_to_bytes(text), repeat)
            rows += _text_rows(f"GE dump {label}", text, repeat)
    for n in ((100_000,) if quick else (1_000_000,)):
        g = build_g_n_bulk(n)
        data = g.to_bytes()
        del g
        gc.collect()
        rows += _binary_rows(f"G({n})", data, repeat)
        del data
        gc.collect()
    return rows


if __name__ == "__main__":
    quick_run = "--quick" in sys.argv
    for r in run(quick_run):
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
        peer = f"{r['peer_s']:.4f}s" if r["peer_s"] else "-"
        print(f"{r['name']:<58} ours {r['ours_s']:.4f}s  {r['peer']:<38} {peer:>9}  {ratio}")
