"""Kernel text printers (docs/CODEGEN.md): GE's TilingData header byte for
byte, the field layout, the Ascend C kernel structure and its golden files.

Golden files live in ``tests/golden/codegen/``; regenerate them after an intended change with
``ASCENDIR_UPDATE_GOLDEN=1 python -m pytest tests/test_codegen_text.py`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendir import asc
from ascendir.asc import codegen
from ascendir.asc.schedule import schedule
from support.golden_files import assert_golden
from support.hintgraph import F16, F32, HB

_MACROS = (
    "#include <stdint.h>\n"
    '#include "kernel_tiling/kernel_tiling.h"\n'
    "#define BEGIN_TILING_DATA_DEF_T(name) struct name {\n"
    "#define TILING_DATA_FIELD_DEF_T(type, name) \\\n"
    "  type name; \\\n"
    "  inline void set_##name(type value) { name = value; } \\\n"
    "  inline type get_##name() { return name; } \\\n"
    "  inline type* get_addr_##name() {return &name;}\n"
    "#define END_TILING_DATA_DEF_T };\n"
    "#define TILING_DATA_FIELD_DEF_T_STRUCT(struct_type, filed_name) \\\n"
    "  struct_type filed_name;\n"
)

_TAIL = (
    "using AutofuseTilingData = TestKernelTilingData;\n"
    "struct AutofuseTilingDataPerf {\n"
    "  AutofuseTilingData tiling_data;\n"
    "  double best_perf;\n"
    "};\n"
    "#endif\n"
)


def _fields(names: list[str]) -> str:
    return "".join(f"  TILING_DATA_FIELD_DEF_T(uint32_t, {n});\n" for n in names)


_COMMON = ["block_dim", "corenum", "ub_size", "hbm_size"]


def _graph(name: str, sizes: list[str]) -> asc.ImplGraph:
    g = asc.ImplGraph(name)
    for s in sizes:
        g.create_size(s)
    return g


def _assert_golden(name: str, text: str) -> None:
    assert_golden(f"codegen/{name}", text)


# ----- C18: GE's SingleGroupGenerateTilingData / MultiGroupGenerateTilingData ------------------


def test_c18_single_group_tiling_data() -> None:
    g0 = _graph("test_graph0", ["s0", "s1"])
    g1 = _graph("test_graph1", ["s1", "s2"])
    expected = (
        "#ifndef __TestKernel_Tiling_Data_H__\n#define __TestKernel_Tiling_Data_H__\n"
        + _MACROS
        + "\nBEGIN_TILING_DATA_DEF_T(TestKernelTilingData)\n"
        + _fields([*_COMMON, "tiling_key", "s0", "s1", "s2"])
        + "END_TILING_DATA_DEF_T;\n\n"
        + _TAIL
    )
    assert codegen.tiling_data_header([g0, g1], "TestKernel") == expected
    fields = codegen.tiling_fields([g0, g1])
    assert fields == [
        (n, 4 * k)
        for k, n in enumerate([*_COMMON, "tiling_key", "s0", "s1", "s2"])
    ]


def test_c18_single_group_with_transpose() -> None:
    g0 = _graph("test_graph0", ["s0", "s1"])
    g1 = _graph("test_graph1", ["s1", "s2"])
    asc.ops.Transpose("Transpose", g1)
    expected = (
        "#ifndef __TestKernel_Tiling_Data_H__\n#define __TestKernel_Tiling_Data_H__\n"
        + _MACROS
        + "\nBEGIN_TILING_DATA_DEF_T(TestKernelTilingData)\n"
        + _fields([*_COMMON, "tiling_key", "s0", "s1", "s2"])
        + "  TILING_DATA_FIELD_DEF_T_STRUCT(ConfusionTransposeTiling, Transpose_tilingData_1);\n"
        + "END_TILING_DATA_DEF_T;\n\n"
        + _TAIL
    )
    assert codegen.tiling_data_header([g0, g1], "TestKernel") == expected
    fields = codegen.tiling_fields([g0, g1])
    assert len(fields) == 8 + 18
    assert fields[8] == ("Transpose_tilingData_1.param0", 32)
    assert fields[-1] == ("Transpose_tilingData_1.param17", 4 * 25)


def test_c18_multi_group_tiling_data() -> None:
    gs = [_graph(f"test_graph{k}", ["s0", "s1"] if k % 2 == 0 else ["s1", "s2"]) for k in range(6)]
    results = [[[gs[0], gs[1]]], [[gs[2], gs[3]], [gs[4], gs[5]]]]
    group = _fields([*_COMMON, "tiling_key", "s0", "s1", "s2"]) + "END_TILING_DATA_DEF_T;\n\n"
    expected = (
        "#ifndef __TestKernel_Tiling_Data_H__\n#define __TestKernel_Tiling_Data_H__\n"
        + _MACROS
        + "\nBEGIN_TILING_DATA_DEF_T(AscGraph0ScheduleResult0G0TilingData)\n"
        + group
        + "BEGIN_TILING_DATA_DEF_T(AscGraph0ScheduleResult1G0TilingData)\n"
        + group
        + "BEGIN_TILING_DATA_DEF_T(AscGraph0ScheduleResult1G1TilingData)\n"
        + group
        + "BEGIN_TILING_DATA_DEF_T(TestKernelTilingData)\n"
        + _fields([*_COMMON, "graph0_tiling_key"])
        + "  TILING_DATA_FIELD_DEF_T_STRUCT(AscGraph0ScheduleResult0G0TilingData, "
        "graph0_result0_g0_tiling_data);\n"
        "  TILING_DATA_FIELD_DEF_T_STRUCT(AscGraph0ScheduleResult1G0TilingData, "
        "graph0_result1_g0_tiling_data);\n"
        "  TILING_DATA_FIELD_DEF_T_STRUCT(AscGraph0ScheduleResult1G1TilingData, "
        "graph0_result1_g1_tiling_data);\n"
        "END_TILING_DATA_DEF_T;\n\n" + _TAIL
    )
    assert codegen.tiling_data_header(results, "TestKernel") == expected
    fields = codegen.tiling_fields(results)
    assert fields[4] == ("graph0_tiling_key", 16)
    assert fields[5] == ("graph0_result0_g0_tiling_data.block_dim", 20)
    assert fields[5 + 8] == ("graph0_result1_g0_tiling_data.block_dim", 20 + 32)
    assert fields[-1] == ("graph0_result1_g1_tiling_data.s2", 20 + 3 * 32 - 4)


def _abs_add() -> HB:
    b = HB("AbsAdd", ["s2", "s3"], F32)
    x = b.load()
    y = b.load()
    b.store(b.op("Add", b.op("Abs", x), y))
    return b


def test_tiling_data_of_a_scheduled_kernel_follows_ge_kernel_tool() -> None:
    # GE's kernel_tool example: Abs(x) + y over (s2, s3) merged, tiled and block-split; the
    # kernel named "Autofuse" has the struct AutofuseTilingData itself (no using line).
    impls = schedule(_abs_add().g)
    text = codegen.tiling_data_header(impls[:1], "Autofuse")
    assert "BEGIN_TILING_DATA_DEF_T(AutofuseTilingData)\n" in text
    assert "using AutofuseTilingData" not in text
    body = text.split("BEGIN_TILING_DATA_DEF_T(AutofuseTilingData)\n")[1].split("END_")[0]
    assert body == _fields(
        [*_COMMON, "tiling_key", "s2", "s3", "z0z1t_size", "z0z1Tb_size",
         "q0_size", "q1_size", "q2_size", "b0_size"]
    )


def test_generate_and_write_kernel(tmp_path: Path) -> None:
    b = _abs_add()
    impls = schedule(b.g)
    files = asc.generate_kernel(impls, "abs_add", hint=b.g)
    assert sorted(files) == [
        "abs_add.json",
        "abs_add_cpu.cpp",
        "abs_add_infershape.cpp",
        "abs_add_op_kernel.cpp",
        "abs_add_tiling_func.cpp",
        "ascendir_cpu_rt.h",
        "ascendir_tiling_rt.h",
        "autofuse_tiling_data.h",
        "kernel_tiling/kernel_tiling.h",
    ]
    assert files["kernel_tiling/kernel_tiling.h"] == codegen.kernel_tiling_stub()
    assert "extern \"C\" int ascendir_kernel_abs_add(" in files["abs_add_cpu.cpp"]
    assert files == asc.generate_kernel(impls, "abs_add", hint=b.g)  # deterministic
    paths = asc.write_kernel(tmp_path / "k", impls, "abs_add", hint=b.g)
    rel = [p.relative_to(tmp_path / "k").as_posix() for p in paths]
    assert rel == sorted(files)
    assert all(p.read_text() == files[r] for p, r in zip(paths, rel, strict=True))


def test_generate_kernel_errors_name_the_kernel() -> None:
    from ascendir.errors import AscendIRError

    impls = schedule(_abs_add().g)
    with pytest.raises(AscendIRError, match="not a C identifier"):
        asc.generate_kernel(impls, "bad-name")
    with pytest.raises(AscendIRError, match="no ImplGraph"):
        asc.generate_kernel([], "k")
    with pytest.raises(AscendIRError, match="one schedule group"):
        asc.generate_kernel([[impls, impls]], "k")


def test_generate_kernels_equals_one_call_per_kernel_on_any_thread_count() -> None:
    import ascendir as air
    from ascendir.errors import AscendIRError

    a, b = _abs_add(), _load_abs_store()
    ia, ib = schedule(a.g), schedule(b.g)
    alone = [asc.generate_kernel(ia, "abs_add", hint=a.g, cache_key="k1"),
             asc.generate_kernel(ib, "load_abs_store")]
    items = [(ia, "abs_add", a.g, "k1"), (ib, "load_abs_store")]
    threads = air.get_num_threads()
    try:
        for n in (1, 2):
            air.set_num_threads(n)
            assert asc.generate_kernels(items) == alone
            assert asc.generate_kernels(items * 3) == alone * 3  # in input order
    finally:
        air.set_num_threads(threads)
    assert asc.generate_kernels([]) == []
    # The first failing kernel (in input order) is the one reported.
    with pytest.raises(AscendIRError, match="kernel name 'bad-1'"):
        asc.generate_kernels([(ia, "ok"), (ia, "bad-1"), (ib, "bad-2")])
    with pytest.raises(AscendIRError, match="kernel 0 is not"):
        asc.generate_kernels([(ia,)])


# ----- C19: the Ascend C kernel (<name>_op_kernel.cpp) ------------------------------------------


def _load_abs_store() -> HB:
    # GE's codegen ST case: Load -> Abs -> Store in half over (s0, s1, s2).
    b = HB("LoadAbsStore", ["s0", "s1", "s2"], F16)
    b.store(b.op("Abs", b.load()))
    return b


def test_c19_three_templates_dispatch_in_tiling_key_order() -> None:
    # GE's Kernel_GenerateKernel_Single_ScheduleGroup: three ImplGraphs, three branches.
    b = _load_abs_store()
    base = schedule(b.g)[0]
    impls = []
    for key in (2, 0, 1):  # given out of order: the entry still dispatches 0, 1, 2
        g = base.copy()
        g.name = f"test_kernel_general_{key}_nil_{key}_nil"
        g.tiling_key = key
        impls.append(g)
    text = asc.generate_kernel(impls, "test_kernel", hint=b.g)["test_kernel_op_kernel.cpp"]
    x, y = _io_names(b)
    args = f"{x}, {y}, workspace, &t"
    entry = (
        f'extern "C" __global__ __aicore__ void test_kernel(GM_ADDR {x}, GM_ADDR {y}, '
        "GM_ADDR workspace, GM_ADDR gm_tiling_data) {\n"
        "  REGISTER_TILING_DEFAULT(AutofuseTilingData);\n"
        "  GET_TILING_DATA(t, gm_tiling_data);\n"
        "  if (TILING_KEY_IS(0)) {\n"
        f"    test_kernel_general_0_nil_0_nil({args});\n"
        "  } else if (TILING_KEY_IS(1)) {\n"
        f"    test_kernel_general_1_nil_1_nil({args});\n"
        "  } else if (TILING_KEY_IS(2)) {\n"
        f"    test_kernel_general_2_nil_2_nil({args});\n"
        "  }\n"
        "}\n"
    )
    assert text.endswith(entry)
    heads = [
        f"inline __aicore__ void test_kernel_general_{k}_nil_{k}_nil(GM_ADDR {x}, GM_ADDR {y}, "
        "GM_ADDR workspace, const AutofuseTilingData *t) {\n"
        for k in range(3)
    ]
    at = [text.index(h) for h in heads]
    assert at == sorted(at)
    assert text.count("inline __aicore__ void test_kernel_general_") == 3
    assert text.startswith("// Ascend C kernel 'test_kernel'")
    for inc in ('#include "kernel_operator.h"\n', '#include "autofuse_tiling_data.h"\n'):
        assert inc in text
    assert "using namespace AscendC;\n\nKERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);\n" in text


def test_c19_duplicate_tiling_keys_are_rejected() -> None:
    from ascendir.errors import AscendIRError

    b = _load_abs_store()
    g = schedule(b.g)[0]
    h = g.copy()
    h.name = "other"
    with pytest.raises(AscendIRError, match="share a tiling key"):
        asc.generate_kernel([g, h], "k", hint=b.g)


def _io_names(b: HB) -> tuple[str, str]:
    ins = [n.name for n in b.g.nodes if n.type == "Data"]
    outs = [n.name for n in b.g.nodes if n.type == "Output"]
    return ins[0], outs[0]


def test_c19_loop_nest_follows_ge_looper() -> None:
    # GE's Looper_GenerateLoop / kernel_tool text: the axis trios, the block selection, the
    # block-inner loop with its offset, the tile tail.
    b = _abs_add()
    text = asc.generate_kernel(schedule(b.g), "abs_add", hint=b.g)["abs_add_op_kernel.cpp"]
    expected = (
        "const int z0z1_axis_size = (t->s2 * t->s3);\n"
        "const int z0z1_loop_size = z0z1_axis_size;\n"
        "const int z0z1_actual_size = z0z1_axis_size;\n"
        "const int z0z1t_axis_size = t->z0z1t_size;\n"
        "const int z0z1t_tail_size = z0z1_loop_size % z0z1t_axis_size;\n"
        "const int z0z1T_axis_size = z0z1_loop_size / z0z1t_axis_size;\n"
        "const int z0z1T_loop_size = z0z1T_axis_size + (z0z1t_tail_size > 0);\n"
        "const int z0z1Tb_axis_size = t->z0z1Tb_size;\n"
        "const int z0z1Tb_tail_size = z0z1T_loop_size % z0z1Tb_axis_size;\n"
        "const int z0z1TB_axis_size = z0z1T_loop_size / z0z1Tb_axis_size;\n"
        "const int z0z1TB_loop_size = z0z1TB_axis_size + (z0z1Tb_tail_size > 0);\n"
        "int block_dim = GetBlockIdx();\n"
        "if (block_dim >= t->block_dim) { \n"
        "  return;\n"
        "}\n"
        "const int z0z1TB = block_dim % z0z1TB_loop_size; \n"
    )
    assert expected in text
    loop = (
        "int z0z1Tb_actual_size = "
        "z0z1TB < z0z1TB_axis_size ? z0z1Tb_axis_size : z0z1Tb_tail_size;\n"
        "int z0z1Tb_loop_size = z0z1Tb_actual_size;\n"
        "int32_t block_dim_offset = z0z1TB * t->z0z1Tb_size;\n"
        "for (int z0z1Tb = 0; z0z1Tb < z0z1Tb_loop_size; z0z1Tb++) {\n"
        "int z0z1T = block_dim_offset + z0z1Tb;\n"
        "int z0z1t_actual_size = z0z1T < z0z1T_axis_size ? z0z1t_axis_size : z0z1t_tail_size;\n"
        "int z0z1t_loop_size = z0z1t_actual_size;\n"
    )
    assert loop in text
    # Containers initialised with the TilingData sizes GE's allocator names.
    for q, pos in (("q0", "VECIN"), ("q1", "VECIN"), ("q2", "VECOUT")):
        init = f"tpipe.InitBuffer({q}, {q}_buf_num, t->{q}_size);\n"
        assert f"TQue<TPosition::{pos}, 1> {q};\n" + init in text
    assert "tpipe.InitBuffer(b0, t->b0_size);\n" in text


def test_c19_sync_rules() -> None:
    b = _abs_add()
    text = asc.generate_kernel(schedule(b.g), "abs_add", hint=b.g)["abs_add_op_kernel.cpp"]
    body = text[text.index("for (int z0z1Tb"):]
    # x: allocated, loaded, enqueued; dequeued by Abs (its first reader), freed after it.
    load_x = body.index("DataCopyPadExtend(local_1, global_0[")
    assert body.index("LocalTensor<uint8_t> q0_buf = q0.AllocTensor<uint8_t>();") < load_x
    assert body.index("q0.EnQue(q0_buf);") > load_x
    abs_at = body.index("Abs(local_4[0], local_1[0], local_4_actual_size);")
    deq = body.index("q0_buf = q0.DeQue<uint8_t>();")
    assert deq < abs_at < body.index("q0.FreeTensor(q0_buf);")
    # Add reads the vector result of Abs: a PIPE_V barrier first.
    add_at = body.index("Add(local_5[0], local_4[0], local_3[0], local_5_actual_size);")
    assert "AscendC::PipeBarrier<PIPE_V>();\nq1_buf = q1.DeQue<uint8_t>();" in body
    assert body.index("AscendC::PipeBarrier<PIPE_V>();") < add_at
    # Two live allocations of q2 (Abs result, Add result) use two buffer variables.
    assert "LocalTensor<uint8_t> q2_buf1 = q2.AllocTensor<uint8_t>();" in body
    store = body.index("DataCopyPadExtend(global_7[")
    deq = body.index("q2_buf1 = q2.DeQue<uint8_t>();")
    assert deq < store < body.index("q2.FreeTensor(q2_buf1);")


def test_c19_load_feeding_store_waits_on_an_mte2_mte3_event() -> None:
    b = HB("Copy", ["s0"], F32)
    b.store(b.load())
    text = asc.generate_kernel(schedule(b.g), "copy", hint=b.g)["copy_op_kernel.cpp"]
    event = (
        "q0.EnQue(q0_buf);\n\n"
        "auto local_1_e = tpipe.AllocEventID<HardEvent::MTE2_MTE3>();\n"
        "TQueSync<PIPE_MTE2, PIPE_MTE3> local_1_s;\n"
        "local_1_s.SetFlag(local_1_e);\n"
        "local_1_s.WaitFlag(local_1_e);\n"
        "tpipe.ReleaseEventID<HardEvent::MTE2_MTE3>(local_1_e);\n\n"
        "q0_buf = q0.DeQue<uint8_t>();\n"
        "DataCopyPadExtend(global_"
    )
    assert event in text


def test_c19_golden_load_abs_store() -> None:
    b = _load_abs_store()
    files = asc.generate_kernel(schedule(b.g), "load_abs_store", hint=b.g)
    _assert_golden("load_abs_store_op_kernel.cpp", files["load_abs_store_op_kernel.cpp"])


def test_c19_golden_load_abs_add_store() -> None:
    b = _abs_add()
    files = asc.generate_kernel(schedule(b.g), "abs_add", hint=b.g)
    _assert_golden("abs_add_op_kernel.cpp", files["abs_add_op_kernel.cpp"])


# ----- <name>.json ------------------------------------------------------------------------------


def test_kernel_json_reads_back_with_every_field() -> None:
    import json

    b = _abs_add()
    impls = schedule(b.g)
    files = asc.generate_kernel(impls, "abs_add", hint=b.g, cache_key='k"\\\n1')
    meta = json.loads(files["abs_add.json"])
    assert meta["kernel"] == "abs_add"
    x, y = _io_names(b)
    ins = [n.name for n in b.g.nodes if n.type == "Data"]
    assert [d["name"] for d in meta["inputs"]] == ins
    assert [d["index"] for d in meta["inputs"]] == [0, 1]
    assert [d["name"] for d in meta["outputs"]] == [y]
    for d in meta["inputs"] + meta["outputs"]:
        assert d["dtype"] == "FLOAT"
        assert d["shape"] == ["s2", "s3"]
    assert [(t["graph"], t["tiling_key"]) for t in meta["templates"]] == [
        (g.name, g.tiling_key) for g in sorted(impls, key=lambda g: g.tiling_key)
    ]
    td = meta["tiling_data"]
    assert td["struct"] == "abs_addTilingData"
    assert [(f["name"], f["offset"]) for f in td["fields"]] == codegen.tiling_fields(impls)
    assert td["size"] == 4 * len(td["fields"])
    assert all(f["type"] == "uint32_t" for f in td["fields"])
    conts = meta["templates"][0]["containers"]
    assert [(c["name"], c["kind"], c["position"], c["buf_num"]) for c in conts] == [
        ("q0", "queue", "vecin", 2),
        ("q1", "queue", "vecin", 2),
        ("q2", "queue", "vecout", 2),
        ("b0", "tmp_buffer", "veccalc", 1),
    ]
    names = {f["name"] for f in td["fields"]}
    for c in conts:
        assert c["size_field"] == f"{c['name']}_size" and c["size_field"] in names
        assert c["id"] == int(c["name"][1:])
    assert "z0z1t_size" in conts[0]["slot_bytes"]
    assert conts[3]["slot_bytes"] == "8192"
    assert meta["cache_key"] == 'k"\\\n1'
    assert json.loads(asc.generate_kernel(impls, "abs_add", hint=b.g)["abs_add.json"])[
        "cache_key"
    ] is None


def test_pow_and_concat_kernels_print() -> None:
    """Kernels holding Pow (x², RMSNorm; x^y) and Concat (RoPE's rotate_half, ViT's class
    token) print as Ascend C: x² as one multiply, other powers through Power, a Concat as
    each operand placed at its offset on the concat axis."""
    import numpy as np

    import ascendir as air

    g = air.Graph("pow_concat")
    x = g.add_input("x", air.TensorDesc([4, 16], air.float32))
    y = g.add_input("y", air.TensorDesc([4, 16], air.float32))
    sq = g.add_op("Pow", [x, g.add_const("two", np.float32(2.0))], name="sq")
    cube = g.add_op("Pow", [x, g.add_const("three", np.float32(3.0))], name="cube")
    pw = g.add_op("Pow", [g.add_op("Abs", [x], name="ax"), y], name="pw")
    s = g.add_op("Add", [g.add_op("Add", [sq, cube], name="s1"), pw], name="s")
    left = g.add_op("Relu", [s], name="left")
    right = g.add_op("Neg", [x], name="right")
    cat = g.add_op("ConcatV2D", [left, right], name="cat", attrs={"concat_dim": 1, "N": 2})
    g.set_outputs([g.add_op("Mul", [cat, cat], name="out")])
    g.infer_shapes()
    cm = air.compile(g)
    texts = []
    for k in cm.kernels:
        files = k.sources
        texts.extend(v for name, v in files.items() if name.endswith(".cpp"))
    text = "\n".join(texts)
    assert "Power(" in text
    assert ".SetValue(" in text and ".GetValue(" in text
    feeds = [np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32) for _ in "xy"]
    want = list(air.evaluate(g, feeds).values())[0]
    got = list(air.evaluate(cm.graph, feeds).values())[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.sweep
@pytest.mark.parametrize("which", ["bert", "decoder", "resnet50"])
def test_every_kernel_of_the_benchmark_models_prints(which: str) -> None:
    """Every kernel ``air.compile`` admits for the models of ``benches/models.py`` (their
    benchmark configurations: BERT-base's layout, the 180-layer decoder, ResNet-50) prints as
    Ascend C: what the fuser admits, the printer prints."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    import ascendir as air
    import models

    model = {"bert": models.bert, "decoder": models.decoder, "resnet50": models.resnet50}[which]
    cm = air.compile(air.onnx.load(model(), warn_unknown=False))
    assert cm.kernels
    refused = []
    for k in cm.kernels:
        try:
            files = k.sources
        except air.AscendIRError as ex:
            refused.append(f"{k.name}: {ex}")
            continue
        assert any(name.endswith(".cpp") for name in files), k.name
    assert not refused, f"{len(refused)} of {len(cm.kernels)} kernels refused; {refused[0]}"
