//! Lowering rows whose form depends on the node (AddN, BiasAdd, Tile, the matrix-vector form and the
//! gradient rows): the operand count (AddN), the data format's channel axis (BiasAdd,
//! BiasAddGrad), constant inputs (Tile's multiples) and input shapes (the matrix-vector
//! product). Each `adapt` function returns the row for one node or the barrier saying why not.

use ascendir_ir::{Graph, NodeId, OpDesc};

use super::table::{bcast, mask, red, row, st};
use super::{
    attr_ints, const_ints, Arg, AxesSrc, Barrier, Category, Lowering, ShapeRule, SliceDim,
    StepAttr, StepDtype, Target,
};
use crate::options::Family;

use Arg::{In, Step as S};

/// Rows whose form depends on the node (operand counts, data formats, constant inputs).
pub(super) fn node_specific_rows() -> Vec<Lowering> {
    let mut v = Vec::new();
    // AddN (ONNX Sum): a chain of Add over every operand.
    let mut add_n = row(
        "AddN",
        Family::Elementwise,
        bcast(2),
        vec![st("Add", vec![In(0), In(1)])],
    );
    add_n.adapt = Some(adapt_add_n);
    v.push(add_n);
    // BiasAdd: the bias broadcast along the channel axis of the data format.
    let mut bias_add = row(
        "BiasAdd",
        Family::Broadcast,
        bcast(2),
        vec![st("Add", vec![In(0), In(1)])],
    );
    bias_add.adapt = Some(adapt_bias_add);
    v.push(bias_add);
    // BiasAddGrad: the sum over every axis but the channel axis.
    let mut bias_grad = row(
        "BiasAddGrad",
        Family::Reduce,
        ShapeRule::Reduce,
        vec![red("Sum", In(0))],
    );
    bias_grad.data_inputs = Some(1);
    bias_grad.axes = Some(AxesSrc::Fixed(Vec::new()));
    bias_grad.keep_dims_default = false;
    bias_grad.adapt = Some(adapt_bias_add_grad);
    v.push(bias_grad);
    // Gelu: the tanh form (the AscIR Gelu) unless `approximate` is "none", the erf form
    // x · ½ · (1 + erf(x / √2)) that torch's default and ONNX's exact Gelu compute.
    let mut gelu = row(
        "Gelu",
        Family::Elementwise,
        bcast(1),
        vec![st("Gelu", vec![In(0)])],
    );
    gelu.adapt = Some(adapt_gelu);
    v.push(gelu);
    // Tile with every tiled dim of size 1: a broadcast (GE; the concat form is not lowered).
    for ge in ["Tile", "TileD"] {
        let mut l = row(ge, Family::Broadcast, bcast(1), Vec::new());
        l.data_inputs = Some(1);
        l.adapt = Some(adapt_tile);
        v.push(l);
    }
    // Fill (ONNX ConstantOfShape): the value broadcast to the dims.
    let mut fill = row("Fill", Family::Broadcast, bcast(1), Vec::new());
    fill.first_input = 1;
    fill.data_inputs = Some(1);
    fill.target = Target::Input(0);
    v.push(fill);
    // ArgMax over one axis (int64 in AscIR, stored in the node's dtype).
    for (ge, axes) in [
        (
            "ArgMaxD",
            AxesSrc::Attr {
                name: "dimension".into(),
                empty_all: false,
            },
        ),
        ("ArgMaxV2", AxesSrc::AttrOrConstInput("dimension".into(), 1)),
    ] {
        let mut s = red("ArgMax", In(0));
        s.dtype = StepDtype::Fixed(ascendir_ir::DataType::INT64);
        let mut l = row(ge, Family::Reduce, ShapeRule::Reduce, vec![s]);
        l.data_inputs = Some(1);
        l.axes = Some(axes);
        l.keep_dims_attr = Some("keep_dims".into());
        l.keep_dims_default = false;
        l.guard = Some(arg_max_guard);
        v.push(l);
    }
    // x1 @ x2 with N = 1 and a small constant K on the vector unit (GE's matmul_vector).
    for ge in ["MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2"] {
        let mut l = row(
            ge,
            Family::MatmulVector,
            ShapeRule::MatVec {
                x2_transposed: false,
            },
            vec![st("Mul", vec![In(0), In(1)]), red("Sum", S(0))],
        );
        l.data_inputs = Some(2);
        l.axes = Some(AxesSrc::Fixed(vec![-1]));
        l.adapt = Some(adapt_mat_vec);
        v.push(l);
    }
    // Slices: a Load with an offset and strides (GE's strided Load view).
    for ge in [
        "Slice",
        "SliceD",
        "StridedSlice",
        "StridedSliceD",
        "StridedSliceV2",
    ] {
        let mut l = row(
            ge,
            Family::Slice,
            ShapeRule::Slice { dims: Vec::new() },
            Vec::new(),
        );
        l.data_inputs = Some(1);
        l.adapt = Some(adapt_slice);
        v.push(l);
    }
    // Concat: the operands (read from outside the kernel) joined along one axis.
    for ge in ["ConcatV2D", "ConcatD", "ConcatV2", "Concat"] {
        let mut l = row(
            ge,
            Family::Concat,
            ShapeRule::Concat {
                axis: 0,
                stack: false,
            },
            vec![st("Concat", vec![In(0)])],
        );
        l.adapt = Some(adapt_concat);
        v.push(l);
    }
    // Pack: a Concat of the operands, each one slice along the new dim.
    let mut pack = row(
        "Pack",
        Family::Concat,
        ShapeRule::Concat {
            axis: 0,
            stack: true,
        },
        vec![st("Concat", vec![In(0)])],
    );
    pack.adapt = Some(adapt_concat);
    v.push(pack);
    // Gather (batch_dims 0): params and indices read from memory by an AscIR Gather.
    for ge in ["GatherV2D", "GatherV2", "Gather"] {
        let mut s = st("Gather", vec![In(0), In(1)]);
        s.attrs = vec![StepAttr::Fixed(
            "negative_index_support".into(),
            ascendir_asc::AttrValue::Bool(true),
        )];
        let mut l = row(ge, Family::Gather, ShapeRule::Gather { axis: 0 }, vec![s]);
        l.data_inputs = Some(2);
        l.adapt = Some(adapt_gather);
        v.push(l);
    }
    // Transpose: an AscIR Transpose, the last op of its kernel (its producers fuse).
    for ge in ["TransposeD", "Transpose"] {
        let mut l = row(
            ge,
            Family::Transpose,
            ShapeRule::Transpose { perm: Vec::new() },
            vec![st("Transpose", vec![In(0)])],
        );
        l.data_inputs = Some(1);
        l.adapt = Some(adapt_transpose);
        v.push(l);
    }
    // Celu: x > 0 ? x : alpha · (exp(x / alpha) − 1).
    v.push(row(
        "Celu",
        Family::Elementwise,
        bcast(1),
        vec![
            st("TrueDiv", vec![In(0), Arg::AttrScalar("alpha".into(), 1.0)]),
            st("Exp", vec![S(0)]),
            st("Sub", vec![S(1), Arg::Scalar(1.0)]),
            st("Mul", vec![S(2), Arg::AttrScalar("alpha".into(), 1.0)]),
            mask("Gt", vec![In(0), Arg::Scalar(0.0)]),
            st("Where", vec![S(4), In(0), S(3)]),
        ],
    ));
    // LeakyReluGrad(gradients, features): features > 0 ? dy : dy · negative_slope.
    v.push(row(
        "LeakyReluGrad",
        Family::Elementwise,
        bcast(2),
        vec![
            mask("Gt", vec![In(1), Arg::Scalar(0.0)]),
            st(
                "Mul",
                vec![In(0), Arg::AttrScalar("negative_slope".into(), 0.0)],
            ),
            st("Where", vec![S(0), In(0), S(1)]),
        ],
    ));
    // EluGrad(gradients, activations): y > 0 ? dy : dy · (y + 1).
    v.push(row(
        "EluGrad",
        Family::Elementwise,
        bcast(2),
        vec![
            st("Add", vec![In(1), Arg::Scalar(1.0)]),
            st("Mul", vec![In(0), S(0)]),
            mask("Gt", vec![In(1), Arg::Scalar(0.0)]),
            st("Where", vec![S(2), In(0), S(1)]),
        ],
    ));
    v
}

fn refuse(category: Category, reason: impl Into<String>) -> Barrier {
    Barrier {
        category,
        reason: reason.into(),
    }
}

fn adapt_gelu(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let op = g
        .op(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let exact = op.attr("approximate").and_then(|v| v.as_str()) == Some("none");
    let mut a = l.clone();
    if exact {
        a.steps = vec![
            st(
                "Mul",
                vec![In(0), Arg::Scalar(std::f64::consts::FRAC_1_SQRT_2)],
            ),
            st("Erf", vec![S(0)]),
            st("Add", vec![S(1), Arg::Scalar(1.0)]),
            st("Mul", vec![In(0), S(2)]),
            st("Mul", vec![S(3), Arg::Scalar(0.5)]),
        ];
        a.out = S(4);
    }
    Ok(a)
}

fn adapt_add_n(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let node = g
        .node(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let n = node.num_in_data();
    if (0..n).any(|k| node.in_data_peer(k).is_none()) {
        return Err(refuse(
            Category::NodeInfoIncorrect,
            "an AddN input is not connected",
        ));
    }
    if n < 2 {
        return Err(refuse(
            Category::TemporarySkip,
            "AddN of one input is a copy (nothing to compute)",
        ));
    }
    let mut a = l.clone();
    a.shape = bcast(n);
    a.steps = (1..n)
        .map(|k| {
            let acc = if k == 1 { In(0) } else { S(k - 2) };
            st("Add", vec![acc, In(k)])
        })
        .collect();
    a.out = S(n - 2);
    Ok(a)
}

/// The channel axis of input 0 of `op` (rank `rank`): the desc format when it is NCHW / NHWC,
/// else the `data_format` attribute, else NHWC (the last axis).
fn channel_axis(op: &OpDesc, rank: usize) -> usize {
    let format = op
        .inputs()
        .first()
        .and_then(|p| ascendir_ir::Format::from_value(i64::from(p.desc.format)));
    let fmt = match format {
        Some(ascendir_ir::Format::NCHW) => "NCHW",
        Some(ascendir_ir::Format::NHWC) => "NHWC",
        _ => op
            .attr("data_format")
            .and_then(|v| v.as_str())
            .unwrap_or("NHWC"),
    };
    if fmt == "NHWC" || rank < 2 {
        rank.saturating_sub(1)
    } else {
        1
    }
}

/// The rank of input `k` of `op`, when its desc records one.
fn input_rank(op: &OpDesc, k: usize) -> Result<usize, Barrier> {
    let shape = op.inputs().get(k).map(|p| &p.desc.shape).ok_or_else(|| {
        refuse(
            Category::NodeInfoIncorrect,
            format!("input {k} has no description"),
        )
    })?;
    if shape.iter().any(|&d| d < -1) {
        return Err(refuse(
            Category::NodeInfoIncorrect,
            format!("input {k} has an unknown rank"),
        ));
    }
    Ok(shape.len())
}

fn adapt_bias_add(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let op = g
        .op(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let rank = input_rank(op, 0)?;
    if input_rank(op, 1)? != 1 {
        return Err(refuse(
            Category::NodeInfoIncorrect,
            "the bias of a BiasAdd is not 1-D",
        ));
    }
    let c = channel_axis(op, rank);
    let mut a = l.clone();
    a.shape = ShapeRule::Broadcast {
        align: vec![None, (c + 1 != rank).then_some(c)],
    };
    Ok(a)
}

fn adapt_bias_add_grad(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let op = g
        .op(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let rank = input_rank(op, 0)?;
    if rank < 2 {
        return Err(refuse(
            Category::NodeInfoIncorrect,
            "BiasAddGrad of a tensor of rank below 2",
        ));
    }
    let c = channel_axis(op, rank);
    let mut a = l.clone();
    a.axes = Some(AxesSrc::Fixed(
        (0..rank).filter(|&j| j != c).map(|j| j as i64).collect(),
    ));
    Ok(a)
}

fn adapt_tile(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let node = g
        .node(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let op = node.op();
    let multiples = if op.op_type() == "TileD" {
        attr_ints(op, "multiples")
    } else {
        node.in_data_peer(1).and_then(|p| const_ints(g, p.node))
    }
    .ok_or_else(|| {
        refuse(
            Category::TemporarySkip,
            "the Tile multiples are not constant",
        )
    })?;
    let in_shape = &op
        .inputs()
        .first()
        .ok_or_else(|| refuse(Category::NodeInfoIncorrect, "Tile without an input"))?
        .desc
        .shape;
    if multiples.len() < in_shape.len() || in_shape.iter().any(|&d| d < -1) {
        return Err(refuse(
            Category::NodeInfoIncorrect,
            "the Tile multiples do not cover every input dim",
        ));
    }
    let off = multiples.len() - in_shape.len();
    for (j, &m) in multiples.iter().enumerate() {
        if m < 1 {
            return Err(refuse(
                Category::NodeInfoIncorrect,
                format!("Tile multiple {m} is below 1"),
            ));
        }
        let dim = if j < off { 1 } else { in_shape[j - off] };
        if m != 1 && dim != 1 {
            return Err(refuse(
                Category::TemporarySkip,
                "a Tile of a dim of size other than 1 (the concat form) is not lowered",
            ));
        }
    }
    let mut a = l.clone();
    a.target = Target::Multiples(multiples);
    Ok(a)
}

/// A concat's operands and axis: `ConcatV2D` / `ConcatD` (`concat_dim` attribute), `ConcatV2`
/// (the axis a constant last input), `Concat` (the axis a constant first input), `Pack` (the
/// `axis` attribute, a new dim).
fn adapt_concat(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let node = g
        .node(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let op = node.op();
    let n_in = node.num_in_data();
    let const_axis = |k: usize| {
        node.in_data_peer(k)
            .and_then(|p| const_ints(g, p.node))
            .and_then(|v| (v.len() == 1).then(|| v[0]))
            .ok_or_else(|| refuse(Category::TemporarySkip, "the concat axis is not constant"))
    };
    let (first, count, axis) = match op.op_type() {
        "ConcatV2" => (
            0,
            n_in.saturating_sub(1),
            const_axis(n_in.saturating_sub(1))?,
        ),
        "Concat" => (1, n_in.saturating_sub(1), const_axis(0)?),
        "Pack" => (
            0,
            n_in,
            op.attr("axis").and_then(|a| a.as_int()).unwrap_or(0),
        ),
        _ => {
            let axis = op
                .attr("concat_dim")
                .and_then(|a| a.as_int())
                .ok_or_else(|| refuse(Category::NodeInfoIncorrect, "no concat_dim"))?;
            (0, n_in, axis)
        }
    };
    if count == 0 {
        return Err(refuse(
            Category::NodeInfoIncorrect,
            "a concat without operands",
        ));
    }
    if (first..first + count).any(|k| node.in_data_peer(k).is_none()) {
        return Err(refuse(
            Category::NodeInfoIncorrect,
            "a concat operand is not connected",
        ));
    }
    let mut a = l.clone();
    a.first_input = first;
    a.data_inputs = Some(count);
    a.shape = ShapeRule::Concat {
        axis,
        stack: op.op_type() == "Pack",
    };
    a.steps = vec![st("Concat", (0..count).map(In).collect())];
    a.out = S(0);
    Ok(a)
}

/// A gather's axis: `GatherV2D`'s attribute, `GatherV2`'s constant third input, 0 for
/// `Gather`; `batch_dims` must be 0.
fn adapt_gather(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let node = g
        .node(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let op = node.op();
    if op.attr("batch_dims").and_then(|a| a.as_int()).unwrap_or(0) != 0 {
        return Err(refuse(
            Category::TemporarySkip,
            "a gather with batch_dims is not lowered",
        ));
    }
    let axis = match op.op_type() {
        "GatherV2D" => op
            .attr("axis")
            .and_then(|a| a.as_int())
            .ok_or_else(|| refuse(Category::NodeInfoIncorrect, "no axis"))?,
        "GatherV2" => node
            .in_data_peer(2)
            .and_then(|p| const_ints(g, p.node))
            .and_then(|v| (v.len() == 1).then(|| v[0]))
            .ok_or_else(|| refuse(Category::TemporarySkip, "the gather axis is not constant"))?,
        _ => 0,
    };
    let mut a = l.clone();
    a.shape = ShapeRule::Gather { axis };
    Ok(a)
}

/// A transpose's permutation: `TransposeD`'s `perm` attribute, `Transpose`'s constant input.
fn adapt_transpose(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let node = g
        .node(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let op = node.op();
    let perm = if op.op_type() == "TransposeD" {
        attr_ints(op, "perm")
    } else {
        node.in_data_peer(1).and_then(|p| const_ints(g, p.node))
    }
    .ok_or_else(|| refuse(Category::TemporarySkip, "the permutation is not constant"))?;
    let mut a = l.clone();
    a.shape = ShapeRule::Transpose { perm };
    Ok(a)
}

fn arg_max_guard(op: &OpDesc) -> Result<(), String> {
    if op.attr("select_last_index").and_then(|v| v.as_bool()) == Some(true)
        || op.attr("select_last_index").and_then(|v| v.as_int()) == Some(1)
    {
        return Err("ArgMax with select_last_index is not lowered".into());
    }
    Ok(())
}

/// An `end` at least this large means "to the end of the dim" (ONNX and TF write INT_MAX).
const TO_END: i64 = i32::MAX as i64;

/// One dim's slice spec before it is resolved against the dim's size.
struct DimSpec {
    begin: i64,
    end: Option<i64>,
    step: i64,
}

/// Resolve `spec` for a dim of size `dim` (-1: dynamic) with Python's clamping (`clamp`) or
/// TF Slice's bounds check (`!clamp`).
fn resolve_dim(spec: &DimSpec, dim: i64, clamp: bool) -> Result<SliceDim, String> {
    if spec.step <= 0 {
        return Err("a slice with a step below 1 is not lowered".into());
    }
    let to_end = spec.end.is_none_or(|e| e >= TO_END);
    if dim < 0 {
        return if spec.begin == 0 && spec.step == 1 && to_end {
            Ok(SliceDim {
                begin: 0,
                step: 1,
                size: None,
            })
        } else {
            Err("a slice of a dynamic dim is not lowered".into())
        };
    }
    let (d, s) = (i128::from(dim), i128::from(spec.step));
    let norm = |v: i64| -> i128 {
        let v = i128::from(v);
        let v = if v < 0 { v + d } else { v };
        v.clamp(0, d)
    };
    let (b, e) = if clamp {
        (norm(spec.begin), spec.end.map_or(d, norm))
    } else {
        let b = i128::from(spec.begin);
        let e = spec.end.map_or(d, i128::from);
        if b < 0 || e > d || e < b {
            return Err(format!("the slice [{b}, {e}) is outside a dim of {dim}"));
        }
        (b, e)
    };
    let size = if e > b { (e - b + s - 1) / s } else { 0 };
    if size == 0 {
        return Err("an empty slice is not lowered".into());
    }
    let (begin, size) = (b as i64, size as i64);
    Ok(if begin == 0 && spec.step == 1 && size == dim {
        SliceDim {
            begin: 0,
            step: 1,
            size: None,
        }
    } else {
        SliceDim {
            begin,
            step: spec.step,
            size: Some(size),
        }
    })
}

fn adapt_slice(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let node = g
        .node(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let op = node.op();
    let skip = |why: String| refuse(Category::TemporarySkip, why);
    let rank = input_rank(op, 0)?;
    let in_shape = op.inputs()[0].desc.shape.clone();
    let from_input = |k: usize| node.in_data_peer(k).and_then(|p| const_ints(g, p.node));
    let given = |name: &str, k: usize| attr_ints(op, name).or_else(|| from_input(k));
    let need = |name: &str, k: usize| {
        given(name, k).ok_or_else(|| skip(format!("the slice's {name} are not constant")))
    };
    let mask = |name: &str| op.attr(name).and_then(|v| v.as_int()).unwrap_or(0);
    let bit = |m: i64, i: usize| i < 63 && (m >> i) & 1 == 1;
    let ty = op.op_type();
    // (axis, spec) per sliced dim.
    let mut specs: Vec<(usize, DimSpec)> = Vec::new();
    let clamp = ty != "Slice" && ty != "SliceD";
    if !clamp {
        let (off, size) = (need("offsets", 1)?, need("size", 2)?);
        if off.len() != rank || size.len() != rank {
            return Err(refuse(
                Category::NodeInfoIncorrect,
                format!("the slice has offsets and sizes for other than {rank} dims"),
            ));
        }
        for (j, (&b, &n)) in off.iter().zip(&size).enumerate() {
            let end = if n == -1 {
                None
            } else {
                Some(
                    b.checked_add(n)
                        .ok_or_else(|| skip("a slice end overflows".into()))?,
                )
            };
            specs.push((
                j,
                DimSpec {
                    begin: b,
                    end,
                    step: 1,
                },
            ));
        }
    } else {
        if ["ellipsis_mask", "new_axis_mask", "shrink_axis_mask"]
            .iter()
            .any(|m| mask(m) != 0)
        {
            return Err(skip(
                "a strided slice with ellipsis, new-axis or shrink masks is not lowered".into(),
            ));
        }
        let (bm, em) = (mask("begin_mask"), mask("end_mask"));
        let begin = need("begin", 1)?;
        let end = need("end", 2)?;
        let (axes, strides) = if ty == "StridedSliceV2" {
            let axes = match node.in_data_peer(3) {
                None => (0..begin.len() as i64).collect(),
                Some(_) => need("axes", 3)?,
            };
            let strides = match node.in_data_peer(4) {
                None => vec![1; begin.len()],
                Some(_) => need("strides", 4)?,
            };
            (axes, strides)
        } else {
            ((0..begin.len() as i64).collect(), need("strides", 3)?)
        };
        let n = begin.len();
        if end.len() != n || strides.len() != n || axes.len() != n || n > rank {
            return Err(refuse(
                Category::NodeInfoIncorrect,
                "the slice's begin, end, axes and strides differ in length",
            ));
        }
        for i in 0..n {
            let a = axes[i];
            let a = if a < 0 { a + rank as i64 } else { a };
            if a < 0 || a >= rank as i64 || specs.iter().any(|(x, _)| *x as i64 == a) {
                return Err(refuse(
                    Category::NodeInfoIncorrect,
                    format!("slice axis {} is out of range or repeated", axes[i]),
                ));
            }
            specs.push((
                a as usize,
                DimSpec {
                    begin: if bit(bm, i) { 0 } else { begin[i] },
                    end: if bit(em, i) { None } else { Some(end[i]) },
                    step: strides[i],
                },
            ));
        }
    }
    let mut dims = vec![
        SliceDim {
            begin: 0,
            step: 1,
            size: None,
        };
        rank
    ];
    for (a, spec) in &specs {
        dims[*a] = resolve_dim(spec, in_shape[*a], clamp).map_err(skip)?;
    }
    let mut out = l.clone();
    out.shape = ShapeRule::Slice { dims };
    Ok(out)
}

/// GE's matmul_vector bound on the contracted dim.
const MATVEC_MAX_K: i64 = 32;

fn adapt_mat_vec(g: &Graph, id: NodeId, l: &Lowering) -> Result<Lowering, Barrier> {
    let node = g
        .node(id)
        .map_err(|e| refuse(Category::NodeInfoIncorrect, e.to_string()))?;
    let op = node.op();
    let skip = |why: &str| Err(refuse(Category::TemporarySkip, why.to_string()));
    let (t1, t2) = if op.op_type().starts_with("Batch") {
        ("adj_x1", "adj_x2")
    } else {
        ("transpose_x1", "transpose_x2")
    };
    let flag = |n: &str| op.attr(n).and_then(|v| v.as_bool()).unwrap_or(false);
    if flag(t1) {
        return skip("a matrix-vector product with x1 transposed is not lowered");
    }
    if (2..node.num_in_data()).any(|k| node.in_data_peer(k).is_some()) {
        return skip("a matrix product with a bias or offset is not lowered");
    }
    let shape = |k: usize| op.inputs().get(k).map(|p| p.desc.shape.clone());
    let (Some(s1), Some(s2)) = (shape(0), shape(1)) else {
        return skip("a matrix product without input descriptions");
    };
    if s1.len() < 2 || s2.len() < 2 {
        return skip("a matrix product of rank below 2 is not lowered");
    }
    let x2_transposed = flag(t2);
    let (k2, n) = if x2_transposed {
        (s2[s2.len() - 1], s2[s2.len() - 2])
    } else {
        (s2[s2.len() - 2], s2[s2.len() - 1])
    };
    if n != 1 {
        return skip("a matrix product with N other than 1 runs on the cube unit");
    }
    let k1 = s1[s1.len() - 1];
    if k1 < 0 || k1 != k2 || k1 > MATVEC_MAX_K {
        return skip("a matrix-vector product needs a constant K of at most 32");
    }
    let mut a = l.clone();
    a.shape = ShapeRule::MatVec { x2_transposed };
    Ok(a)
}
