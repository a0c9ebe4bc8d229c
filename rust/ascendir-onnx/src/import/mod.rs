//! ONNX `ModelProto` bytes → ascendir [`Graph`].
//!
//! Graph inputs become `Data` nodes, initializers `Const` nodes (payload shared with the input
//! buffer), every ONNX node one GE node (mapped through [`crate::ops`], or kept as
//! `onnx::<OpType>` with all its attributes), graph outputs the `NetOutput`. Subgraph bodies
//! (If, Loop, Scan, ...) become subgraphs registered on the root with parent links; values a
//! body reads from an enclosing graph become explicit inputs of the parent node and `Data`
//! nodes of the body, as GE requires. Every port desc carries the ONNX value name (`desc.name`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use ascendir_ir::{AttrValue, DataType, Graph, NodeId, OpDesc, TensorDesc};
use bytes::Bytes;
use prost::Message;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{OnnxError, OnnxResult};
use crate::export::ATTR_NUM_INPUTS;
use crate::ops::{self, Mapped};
use crate::pb;
use crate::types::{desc_from_type, tensor_from_proto};

mod external;
mod graph;
mod input_info;
mod unit_axis;

pub use external::read_model_file;
use graph::build_graph;

/// Options of [`import_model`].
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Directory that external data locations are relative to (the model file's directory).
    /// Without it, a model with external data fails to import.
    pub base_dir: Option<PathBuf>,
}

/// What an import found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportReport {
    /// ONNX nodes imported (all graphs).
    pub onnx_nodes: usize,
    /// ONNX nodes of the root graph.
    pub root_nodes: usize,
    /// Initializers (all graphs).
    pub initializers: usize,
    /// Extra `Const` nodes made for values GE takes as inputs where ONNX has attributes.
    pub aux_consts: usize,
    /// Ops kept unmapped, by GE type (`onnx::<OpType>`), with counts.
    pub unknown_ops: BTreeMap<String, usize>,
    /// Number of subgraphs.
    pub subgraphs: usize,
    /// Standard-domain opset version.
    pub opset: i64,
    /// ONNX IR version.
    pub ir_version: i64,
    /// Producer name and version.
    pub producer: String,
    /// The external data files the model read, by location (relative to its directory),
    /// sorted.
    pub external_files: Vec<String>,
}

/// The standard-domain opsets the mapping was written for (and checked on); a model outside
/// them imports with [`ImportReport::opset_mapped`] false (the Python layer warns).
pub const MAPPED_OPSETS: std::ops::RangeInclusive<i64> = 11..=21;

impl ImportReport {
    /// Whether the model's standard-domain opset is one the mapping was written for.
    pub fn opset_mapped(&self) -> bool {
        MAPPED_OPSETS.contains(&self.opset)
    }
}

/// The warning for a graph imported from ONNX at an opset the mapping was not written for
/// (read from its [`ATTR_OPSET`] attribute, which compiles keep); `None` for any other graph.
/// Every reader and the compiler say it in these words.
pub fn opset_warning(g: &Graph) -> Option<String> {
    let opset = match g.attrs.get(ATTR_OPSET) {
        Some(AttrValue::Int(v)) => *v,
        _ => return None,
    };
    if MAPPED_OPSETS.contains(&opset) {
        return None;
    }
    Some(format!(
        "ONNX import of a model at opset {opset}: the mapping was written for opsets {}-{}; \
         ops whose meaning changed in opset {opset} may be mapped by an older definition",
        MAPPED_OPSETS.start(),
        MAPPED_OPSETS.end()
    ))
}

/// Graph attribute holding the standard-domain opset the model was imported from.
pub const ATTR_OPSET: &str = "_onnx_opset";
/// Graph attribute holding every opset import as `domain:version`.
pub const ATTR_OPSET_IMPORT: &str = "_onnx_opset_import";
/// Graph attribute holding the ONNX IR version.
pub const ATTR_IR_VERSION: &str = "_onnx_ir_version";
/// Graph attribute holding the producer name.
pub const ATTR_PRODUCER: &str = "_onnx_producer_name";
/// Op attribute holding the domain of an unmapped op from a non-standard domain.
pub const ATTR_DOMAIN: &str = "_onnx_domain";
/// Op attribute marking a `Const` made for a GE input that ONNX holds as an attribute.
pub const ATTR_AUX: &str = "_onnx_aux";
/// Op attribute marking a `Const` that was an ONNX `Constant` node (not an initializer).
pub const ATTR_CONSTANT_NODE: &str = "_onnx_constant_node";

/// Decode ONNX bytes and build the graph. The buffer is kept alive by the graph's constants.
pub fn import_model(data: Bytes, opts: &ImportOptions) -> OnnxResult<(Graph, ImportReport)> {
    let nodes = crate::wire::precheck_nodes(&data)?;
    // The decoded model and the graph built from it are alive together: check up front that
    // both fit, so that memory pressure gives an error instead of an aborting allocation.
    ascendir_ir::memory::reserve(
        data.len().saturating_mul(IMPORT_RESERVE_PER_BYTE),
        nodes.saturating_mul(IMPORT_RESERVE_PER_NODE),
    )
    .map_err(|needed| OnnxError::OutOfMemory {
        needed,
        what: format!("import a model of {} bytes and {nodes} nodes", data.len()),
    })?;
    let model = pb::ModelProto::decode(data.clone()).map_err(|e| crate::wire::locate(&data, &e))?;
    let result = import_proto(&model, opts);
    // Freeing a large decoded model takes a while: off the caller's path when it is large.
    let items = model
        .graph
        .as_ref()
        .map_or(0, |g| g.node.len().saturating_add(g.initializer.len()));
    ascendir_ir::threads::free_in_background(model, items);
    result
}

/// Memory an import is expected to use per input byte (the decoded protobuf's strings and
/// repeated fields; tensor payloads are shared with the input).
pub const IMPORT_RESERVE_PER_BYTE: usize = 2;

/// Address space an import is expected to need per node beyond [`IMPORT_RESERVE_PER_BYTE`]:
/// the decoded `NodeProto` and the graph node built from it (descs, ports, name index) cost
/// several hundred bytes each however few bytes the node takes on the wire, and the
/// allocator maps about twice what it hands out. Only compared with an address-space limit
/// (`RLIMIT_AS`) when one is set.
pub const IMPORT_RESERVE_PER_NODE: usize = 4 << 10;

/// Build the graph of an already decoded model.
pub fn import_proto(
    model: &pb::ModelProto,
    opts: &ImportOptions,
) -> OnnxResult<(Graph, ImportReport)> {
    let gp = model
        .graph
        .as_ref()
        .ok_or_else(|| OnnxError::Invalid("the model has no graph".into()))?;
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(21, |o| o.version);
    let mut ctx = Ctx {
        opset,
        report: ImportReport {
            opset,
            ir_version: model.ir_version,
            producer: format!("{} {}", model.producer_name, model.producer_version)
                .trim()
                .to_string(),
            ..ImportReport::default()
        },
        base_dir: opts.base_dir.clone(),
        files: FxHashMap::default(),
        graph_names: FxHashSet::default(),
        graph_name_next: FxHashMap::default(),
    };
    let root_name = if gp.name.is_empty() {
        "main"
    } else {
        gp.name.as_str()
    };
    ctx.graph_names.insert(root_name.to_string());
    let (mut g, _, _) = build_graph(gp, root_name, &mut ctx, &[], &[], OuterValues::default())?;
    // ONNX graphs are acyclic (nodes are topologically sorted): a cycle is refused at load.
    for graph in std::iter::once(&g).chain(g.subgraphs.iter()) {
        if let Some(cycle) = graph.find_cycle() {
            let names: Vec<&str> = cycle
                .iter()
                .filter_map(|&id| graph.node(id).ok().map(|n| n.name()))
                .collect();
            return Err(OnnxError::Invalid(format!(
                "ONNX graph '{}' has a cycle: {}",
                graph.name(),
                names.join(" -> ")
            )));
        }
    }
    ctx.report.root_nodes = gp.node.len();
    let mut external: Vec<String> = ctx.files.keys().cloned().collect();
    external.sort();
    ctx.report.external_files = external;
    ctx.report.subgraphs = g.subgraphs.len();
    g.attrs.insert(ATTR_OPSET, AttrValue::Int(opset));
    g.attrs.insert(
        ATTR_OPSET_IMPORT,
        AttrValue::ListString(
            model
                .opset_import
                .iter()
                .map(|o| format!("{}:{}", o.domain, o.version))
                .collect(),
        ),
    );
    g.attrs
        .insert(ATTR_IR_VERSION, AttrValue::Int(model.ir_version));
    if !model.producer_name.is_empty() {
        g.attrs.insert(
            ATTR_PRODUCER,
            AttrValue::String(model.producer_name.clone()),
        );
    }
    Ok((g, ctx.report))
}

struct Ctx {
    opset: i64,
    report: ImportReport,
    base_dir: Option<PathBuf>,
    /// External data files opened so far, with their sizes.
    files: FxHashMap<String, (std::fs::File, u64)>,
    graph_names: FxHashSet<String>,
    /// Per base name, the next suffix `unique_graph_name` tries: every smaller one is taken,
    /// so a model whose bodies share a name is named in linear time.
    graph_name_next: FxHashMap<String, usize>,
}

impl Ctx {
    fn tensor(&mut self, t: &pb::TensorProto) -> OnnxResult<ascendir_ir::Tensor> {
        let name = t.name.as_str();
        let mut loader = |loc: &str, off: u64, len: Option<u64>| self.external(name, loc, off, len);
        tensor_from_proto(t, Some(&mut loader))
    }

    fn unique_graph_name(&mut self, wanted: &str, fallback: &str) -> String {
        let base = if wanted.is_empty() || self.graph_names.contains(wanted) {
            fallback
        } else {
            wanted
        };
        let name = next_free(base, &mut self.graph_name_next, |n| {
            self.graph_names.contains(n)
        });
        self.graph_names.insert(name.clone());
        name
    }
}

/// `base` when it is free, else the first free `base_k` (k = 1, 2, ...). `next` keeps, per
/// base, the suffix to try first: names are only ever added, so every smaller suffix is still
/// taken and n names sharing a base cost O(n) probes in all, not O(n^2). The result is the
/// same as probing from 1 each time.
fn next_free(
    base: &str,
    next: &mut FxHashMap<String, usize>,
    taken: impl Fn(&str) -> bool,
) -> String {
    if !taken(base) {
        return base.to_string();
    }
    let k = next.entry(base.to_string()).or_insert(1);
    loop {
        let name = format!("{base}_{k}");
        *k += 1;
        if !taken(&name) {
            return name;
        }
    }
}

/// What a body knows, at its import, of the enclosing graphs' values it reads.
#[derive(Default)]
struct OuterValues {
    types: FxHashMap<String, ascendir_ir::DataType>,
    dims: FxHashMap<String, Vec<i64>>,
}

/// A link to make after every node exists: GE input `port` of `node` reads value `name`.
struct Pending<'m> {
    node: NodeId,
    port: usize,
    name: &'m str,
}

struct Builder<'m, 'o> {
    g: Graph,
    values: FxHashMap<&'m str, (NodeId, usize)>,
    types: FxHashMap<&'m str, &'m pb::TypeProto>,
    descs: FxHashMap<&'m str, Arc<TensorDesc>>,
    consts: FxHashMap<&'m str, NodeId>,
    outer: &'o [&'o FxHashSet<&'m str>],
    captures: Vec<(String, NodeId)>,
    unknown: Arc<TensorDesc>,
    /// Element types traced through producers (`InputInfo::dtype`), by value name.
    traced: std::cell::RefCell<FxHashMap<String, Option<ascendir_ir::DataType>>>,
    /// Element types of the enclosing graphs' values this body reads (known at its import).
    outer_types: FxHashMap<String, ascendir_ir::DataType>,
    /// Dims of the enclosing graphs' values this body reads and does not define itself.
    outer_dims: FxHashMap<String, Vec<i64>>,
    /// Per base name, the next suffix `unique_node_name` tries (see [`next_free`]).
    node_name_next: std::cell::RefCell<FxHashMap<String, usize>>,
}

impl<'m> Builder<'m, '_> {
    fn desc(&mut self, name: &'m str) -> Arc<TensorDesc> {
        if name.is_empty() {
            return self.unknown.clone();
        }
        if let Some(d) = self.descs.get(name) {
            return d.clone();
        }
        let mut d = desc_from_type(self.types.get(name).copied());
        d.name = Some(name.into());
        let d = Arc::new(d);
        self.descs.insert(name, d.clone());
        d
    }

    fn unique_node_name<'a>(&self, base: &'a str) -> Cow<'a, str> {
        if self.g.find(base).is_none() {
            return Cow::Borrowed(base);
        }
        let mut next = self.node_name_next.borrow_mut();
        Cow::Owned(next_free(base, &mut next, |n| self.g.find(n).is_some()))
    }

    /// Resolve a value: a local producer, or (in a subgraph) a capture of an enclosing value.
    fn resolve(&mut self, name: &'m str) -> OnnxResult<Option<(NodeId, usize)>> {
        if let Some(v) = self.values.get(name) {
            return Ok(Some(*v));
        }
        if self.outer.iter().any(|s| s.contains(name)) {
            let desc = self.desc(name);
            let node_name = self.unique_node_name(name);
            let mut op = OpDesc::new(&node_name, "Data");
            op.add_input("x", desc.clone());
            op.add_output("y", desc)?;
            let id = self.g.add_node(op)?;
            self.values.insert(name, (id, 0));
            self.captures.push((name.to_string(), id));
            return Ok(Some((id, 0)));
        }
        Ok(None)
    }
}

/// The data type of a value desc for reports.
pub fn dtype_name(dt: DataType) -> &'static str {
    dt.name()
}
