"""Builders of hostile inputs for the hardening tests: protobuf wire bytes written by hand (so
that nesting and repetition cost nothing to generate) and a helper that measures the peak
memory of a snippet in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def varint(v: int) -> bytes:
    """``v`` as a protobuf varint (two's complement for negative numbers)."""
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def vfield(number: int, value: int) -> bytes:
    """A varint field."""
    return varint(number << 3) + varint(value)


def nested_modeldef(levels: int) -> bytes:
    """A ``ModelDef`` whose graphs nest ``levels`` deep: graph ``g<i>`` holds a
    ``PartitionedCall`` whose subgraph is ``g<i+1>`` (GE lists the graphs flat)."""
    parts = []
    for i in range(levels):
        op = field(1, "p") + field(2, "PartitionedCall") + field(35, f"g{i + 1}")
        parts.append(field(7, field(1, f"g{i}") + field(6, op)))
    parts.append(field(7, field(1, f"g{levels}")))
    return b"".join(parts)


def nested_onnx_if(levels: int) -> bytes:
    """An ONNX ``ModelProto`` of ``levels`` nested ``If`` bodies (``then_branch`` only),
    written inside out with lengths only, so the bytes are made in linear time."""
    inner = field(2, "leaf")  # GraphProto.name
    prefixes: list[bytes] = []
    length = len(inner)
    for _ in range(levels):
        # AttributeProto: name=1, g=6, type=20 (GRAPH = 5).
        attr_head = field(1, "then_branch") + vfield(20, 5) + varint(6 << 3 | 2) + varint(length)
        attr_len = len(attr_head) + length
        # NodeProto: input=1 (the condition, a graph input of the outermost graph), op_type=4,
        # attribute=5.
        node_head = field(1, "c") + field(4, "If") + varint(5 << 3 | 2) + varint(attr_len)
        node_len = len(node_head) + attr_len
        # GraphProto: node=1.
        graph_head = varint(1 << 3 | 2) + varint(node_len)
        length = len(graph_head) + node_len
        prefixes.append(graph_head + node_head + attr_head)
    # The outermost graph's content ends with the body: its input `c` (BOOL) goes after it.
    cond = field(1, "c") + field(2, field(1, vfield(1, 9)))
    body = b"".join(reversed(prefixes)) + inner + field(11, cond)
    opset = field(8, vfield(2, 17))
    return vfield(1, 8) + opset + varint(7 << 3 | 2) + varint(len(body)) + body


PEAK_PRELUDE = '''
import ascendir as air

def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key)

def measure(call):
    """Run call(); return (peak RSS growth in bytes, exception type name or None)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    base = _status("VmHWM")
    err = None
    try:
        call()
    except Exception as e:  # noqa: BLE001
        err = type(e).__name__ + ": " + str(e)[:200]
    return _status("VmHWM") - base, err
'''


def run_snippet(code: str, timeout: float = 300) -> str:
    """Run ``code`` (after :data:`PEAK_PRELUDE`) in a fresh interpreter; its stdout."""
    src = PEAK_PRELUDE + textwrap.dedent(code)
    out = subprocess.run(
        [sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout
    )
    assert out.returncode == 0, f"exit {out.returncode}\nstdout: {out.stdout}\nstderr: {out.stderr}"
    return out.stdout
