//! The kernel plan with every size evaluated: what the numpy simulator and the reference
//! evaluator run (`asc.simulate.export_plan`).

use rustc_hash::FxHashMap;

use super::plan::{KernelPlan, PlanTensor};
use ascendir_asc::alloc::ContainerKind;
use ascendir_asc::axis::AxisType;
use ascendir_asc::error::{AscError, AscResult};
use ascendir_asc::expr::Expr;
use ascendir_asc::graph::{AttrValue, MemHardware};

/// An evaluated IR attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum NumAttr {
    /// Integer (also evaluated size expressions).
    Int(i64),
    /// Float.
    Float(f64),
    /// Bool.
    Bool(bool),
    /// String.
    Str(String),
}

/// An evaluated axis.
#[derive(Clone, Debug)]
pub struct NumAxis {
    /// Axis id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// `original`, `block_outer`, `block_inner`, `tile_outer`, `tile_inner`, `merged`,
    /// `invalid`.
    pub kind: &'static str,
    /// Length.
    pub size: i64,
    /// Parent axes.
    pub from: Vec<i64>,
    /// The other axis of its split, or -1.
    pub split_pair: i64,
}

/// An evaluated output view.
#[derive(Clone, Debug)]
pub struct NumTensor {
    /// GE dtype number.
    pub dtype: i32,
    /// Base axes of the GM view.
    pub base_axes: Vec<i64>,
    /// Extent per base axis.
    pub base_repeats: Vec<i64>,
    /// GM stride per base axis.
    pub base_strides: Vec<i64>,
    /// Vectorized axes.
    pub vect_axes: Vec<i64>,
    /// The single base axis of each vectorized axis, or -1.
    pub vect_base: Vec<i64>,
    /// Extent per vectorized axis.
    pub vect_repeats: Vec<i64>,
    /// UB stride per vectorized axis.
    pub vect_strides: Vec<i64>,
    /// Allocation kind name.
    pub alloc: &'static str,
    /// Memory name.
    pub hardware: &'static str,
    /// Position name.
    pub position: &'static str,
    /// Reuse id.
    pub reuse_id: i64,
    /// Queue id.
    pub que_id: i64,
    /// Queue depth.
    pub buf_num: i64,
    /// Buffer id.
    pub buf_id: i64,
    /// UB bytes (0 outside the UB).
    pub bytes: i64,
}

/// An evaluated node (inputs refer to node ids, as the graph does).
#[derive(Clone, Debug)]
pub struct NumNode {
    /// Node id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Operator type.
    pub op_type: String,
    /// Compute type name.
    pub compute_type: &'static str,
    /// Whether it computes.
    pub compute: bool,
    /// Producer `(node id, output)` per input.
    pub inputs: Vec<Option<(u32, u32)>>,
    /// Scheduled axes.
    pub sched: Vec<i64>,
    /// Loop axis.
    pub loop_axis: i64,
    /// Attributes (size expressions evaluated).
    pub attrs: Vec<(String, NumAttr)>,
    /// Outputs.
    pub outputs: Vec<NumTensor>,
}

/// An evaluated container.
#[derive(Clone, Debug)]
pub struct NumContainer {
    /// TilingData name.
    pub name: String,
    /// `queue`, `buffer` or `tmp`.
    pub kind: &'static str,
    /// que/buf id.
    pub id: i64,
    /// Slots.
    pub buf_num: i64,
    /// Bytes per slot.
    pub slot_bytes: i64,
    /// Members `(node id, output, reuse id)`.
    pub members: Vec<(u32, usize, i64)>,
}

/// A kernel plan with every size evaluated.
#[derive(Clone, Debug)]
pub struct NumericPlan {
    /// Graph name.
    pub name: String,
    /// Template key.
    pub tiling_key: i64,
    /// Whether it is an ImplGraph.
    pub is_impl: bool,
    /// Axes in graph order.
    pub axes: Vec<NumAxis>,
    /// Nodes in execution order.
    pub nodes: Vec<NumNode>,
    /// Containers (ImplGraphs only).
    pub containers: Vec<NumContainer>,
}

fn axis_kind(k: AxisType) -> &'static str {
    match k {
        AxisType::Original => "original",
        AxisType::BlockOuter => "block_outer",
        AxisType::BlockInner => "block_inner",
        AxisType::TileOuter => "tile_outer",
        AxisType::TileInner => "tile_inner",
        AxisType::Merged => "merged",
        AxisType::Invalid => "invalid",
    }
}

/// The integer a size stands for with `b`: the ceiling of its exact value.
fn ev(e: &Expr, b: &FxHashMap<String, i64>, what: &dyn Fn() -> String) -> AscResult<i64> {
    let r = e
        .evaluate_rational(b)
        .map_err(|x| AscError::InvalidArgument(format!("{}: {x}", what())))?;
    r.ceil()
        .to_i64()
        .ok_or_else(|| AscError::InvalidArgument(format!("{}: overflow", what())))
}

fn evs(v: &[Expr], b: &FxHashMap<String, i64>, what: &dyn Fn() -> String) -> AscResult<Vec<i64>> {
    v.iter().map(|e| ev(e, b, what)).collect()
}

impl KernelPlan {
    /// Every size evaluated with `b` (shape and tiling sizes).
    pub fn evaluate(&self, b: &FxHashMap<String, i64>) -> AscResult<NumericPlan> {
        let mut axes = Vec::with_capacity(self.axes.len());
        for a in &self.axes {
            axes.push(NumAxis {
                id: a.id,
                name: a.name.clone(),
                kind: axis_kind(a.kind),
                size: ev(&a.size, b, &|| format!("size of axis '{}'", a.name))?,
                from: a.from.clone(),
                split_pair: a.split_pair.unwrap_or(-1),
            });
        }
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            let mut attrs = Vec::new();
            for (k, v) in &n.attrs {
                let a = match v {
                    AttrValue::Int(i) => NumAttr::Int(*i),
                    AttrValue::Float(f) => NumAttr::Float(*f),
                    AttrValue::Bool(x) => NumAttr::Bool(*x),
                    AttrValue::Str(s) => NumAttr::Str(s.clone()),
                    AttrValue::Expr(e) => {
                        NumAttr::Int(ev(e, b, &|| format!("attribute '{k}' of '{}'", n.name))?)
                    }
                    _ => continue,
                };
                attrs.push((k.clone(), a));
            }
            let mut outputs = Vec::with_capacity(n.outputs.len());
            for t in &n.outputs {
                outputs.push(self.eval_tensor(t, &n.name, b)?);
            }
            nodes.push(NumNode {
                id: n.id.0,
                name: n.name.clone(),
                op_type: n.op_type.clone(),
                compute_type: n.compute_type.name(),
                compute: n.compute,
                inputs: n
                    .inputs
                    .iter()
                    .map(|i| i.map(|(q, o)| (self.nodes[q].id.0, o as u32)))
                    .collect(),
                sched: n.sched.clone(),
                loop_axis: n.loop_axis,
                attrs,
                outputs,
            });
        }
        let mut containers = Vec::with_capacity(self.containers.len());
        for c in &self.containers {
            containers.push(NumContainer {
                name: c.name.clone(),
                kind: match c.kind {
                    ContainerKind::Queue => "queue",
                    ContainerKind::Buffer => "buffer",
                    ContainerKind::Tmp => "tmp",
                },
                id: c.id,
                buf_num: c.buf_num,
                slot_bytes: ev(&c.slot_bytes, b, &|| "container size".to_string())?,
                members: c
                    .members
                    .iter()
                    .map(|(p, o, r)| (self.nodes[*p].id.0, *o, *r))
                    .collect(),
            });
        }
        Ok(NumericPlan {
            name: self.name.clone(),
            tiling_key: self.tiling_key,
            is_impl: self.is_impl,
            axes,
            nodes,
            containers,
        })
    }

    fn eval_tensor(
        &self,
        t: &PlanTensor,
        node: &str,
        b: &FxHashMap<String, i64>,
    ) -> AscResult<NumTensor> {
        Ok(NumTensor {
            dtype: t.dtype.ge_value(),
            base_axes: t.base_axes.clone(),
            base_repeats: evs(&t.base_repeats, b, &|| format!("repeat of '{node}'"))?,
            base_strides: evs(&t.base_strides, b, &|| format!("stride of '{node}'"))?,
            vect_axes: t.vect_axes.clone(),
            vect_base: t.vect_base.iter().map(|x| x.unwrap_or(-1)).collect(),
            vect_repeats: evs(&t.vect_repeats, b, &|| "vectorized repeat".to_string())?,
            vect_strides: evs(&t.vect_strides, b, &|| "vectorized stride".to_string())?,
            alloc: t.alloc.name(),
            hardware: t.hardware.name(),
            position: t.position.name(),
            reuse_id: t.reuse_id,
            que_id: t.que_id,
            buf_num: t.buf_num,
            buf_id: t.buf_id,
            bytes: if t.hardware == MemHardware::Ub {
                ev(&t.bytes, b, &|| "tensor bytes".to_string())?
            } else {
                0
            },
        })
    }
}
