"""Kernel text printers (spec compiler.md §5, checks C18–C19): GE's TilingData header byte for
byte, the field layout, the Ascend C kernel structure and its golden files.

Golden files live in ``tests/golden/codegen/``; regenerate them after an intended change with
``ASCENDIR_UPDATE_GOLDEN=1 python -m pytest tests/test_codegen_text.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascendir import asc
from ascendir.asc import codegen
from ascendir.asc.schedule import schedule
from test_asc_sim_helpers import F32, HB

GOLDEN = Path(__file__).parent / "golden" / "codegen"
UPDATE = os.environ.get("ASCENDIR_UPDATE_GOLDEN") == "1"

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
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"golden file {path.name} missing: run with ASCENDIR_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


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
        "abs_add_infershape.cpp",
        "abs_add_tiling_func.cpp",
        "ascendir_tiling_rt.h",
        "autofuse_tiling_data.h",
    ]
    assert files == asc.generate_kernel(impls, "abs_add", hint=b.g)  # deterministic
    paths = asc.write_kernel(tmp_path / "k", impls, "abs_add", hint=b.g)
    assert [p.name for p in paths] == sorted(files)
    assert all(p.read_text() == files[p.name] for p in paths)


def test_generate_kernel_errors_name_the_kernel() -> None:
    from ascendir.errors import AscendIRError

    impls = schedule(_abs_add().g)
    with pytest.raises(AscendIRError, match="not a C identifier"):
        asc.generate_kernel(impls, "bad-name")
    with pytest.raises(AscendIRError, match="no ImplGraph"):
        asc.generate_kernel([], "k")
    with pytest.raises(AscendIRError, match="one schedule group"):
        asc.generate_kernel([[impls, impls]], "k")
