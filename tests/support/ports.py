"""The port names of an op node checked against its registered prototype."""

from __future__ import annotations

import ascendir as air

# Types that frame the op nodes; their ports are not the frontends' choice.
FRAME = {"Data", "NetOutput", "Const"}


def prototype_ports(op_type: str, n_in: int, n_out: int) -> tuple[list[str], list[str]] | None:
    """The port names the registered prototype of ``op_type`` gives an op with ``n_in`` inputs
    and ``n_out`` outputs (trailing optional inputs left out, a dynamic port ``x`` expanded to
    ``x0, x1, ...``, the first ``n_out`` outputs); ``None`` when the counts do not fit it."""
    decl = air.ops.get(op_type)
    kinds = [i.kind for i in decl.inputs]
    fixed = sum(k != "dynamic" for k in kinds)
    required = sum(k == "required" for k in kinds)
    dynamic = len(kinds) - fixed
    if dynamic > 1:
        return None
    if dynamic == 0 and not required <= n_in <= fixed:
        return None
    if dynamic == 1 and n_in < fixed:
        return None
    ins: list[str] = []
    left, required_left = n_in, required
    for spec in decl.inputs:
        if spec.kind == "dynamic":
            ins += [f"{spec.name}{i}" for i in range(n_in - fixed)]
        elif spec.kind == "required":
            ins.append(spec.name)
            left -= 1
            required_left -= 1
        elif dynamic or left > required_left:
            ins.append(spec.name)
            left -= 1
    out_dynamic = any(o.kind == "dynamic" for o in decl.outputs)
    out_fixed = len(decl.outputs) - int(out_dynamic)
    if not out_dynamic and n_out > out_fixed:
        return None
    outs: list[str] = []
    for spec in decl.outputs:
        if spec.kind == "dynamic":
            outs += [f"{spec.name}{i}" for i in range(max(n_out - out_fixed, 0))]
        else:
            outs.append(spec.name)
    return ins, outs[:n_out]


def check_ports(node: air.Node) -> None:
    """``node``'s port names are those of its type's prototype."""
    desc = node.op_desc
    ins, outs = list(desc.input_names), list(desc.output_names)
    expected = prototype_ports(node.type, len(ins), len(outs))
    decl = air.ops.get(node.type)
    assert expected is not None, (
        f"{node.type} '{node.name}' has {len(ins)} inputs {ins} and {len(outs)} outputs "
        f"{outs}, which its prototype {decl.describe()} does not take"
    )
    assert (ins, outs) == expected, (
        f"{node.type} '{node.name}': ports {ins} -> {outs}, the registry has "
        f"{expected[0]} -> {expected[1]} ({decl.describe()})"
    )
