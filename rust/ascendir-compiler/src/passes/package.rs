//! Stage 12, [`Package`]: name the built kernels, rename their graphs, replace every cluster by
//! its AscBackend node, order the graph (memory priority) and validate it; and the model's
//! traffic, before and after, for the report.

use std::collections::BTreeMap;

use ascendir_asc::AscGraph;
use ascendir_ir::{Graph, TopoMode, TopoOptions};
use bytes::Bytes;

use crate::cache::cache_key;
use crate::error::{CompileError, CompileResult, Stage};
use crate::fuse::tensor_bytes;
use crate::lower::{is_plumbing, Decision};
use crate::model::Kernel;
use crate::package::{replace_cluster, BackendSpec};
use crate::passes::build::Built;
use crate::passes::{CompileCtx, Pass};
use crate::symbolize::{SymTable, TRef};

/// Read + write bytes of every non-plumbing node at the hints.
pub(crate) fn traffic(g: &Graph, syms: Option<&SymTable>) -> i64 {
    let mut total: i64 = 0;
    for id in g.node_ids() {
        let Ok(n) = g.node(id) else { continue };
        if is_plumbing(n.op_type()) && n.op_type() != "AscBackend" {
            continue;
        }
        let op = n.op();
        let bytes = |t: TRef, desc: &ascendir_ir::TensorDesc| -> i64 {
            match syms.and_then(|s| s.shape(t).map(|_| tensor_bytes(g, s, t))) {
                Some(b) => b,
                None => {
                    let n = desc
                        .shape
                        .iter()
                        .try_fold(1i64, |a, &d| (d >= 0).then(|| a.saturating_mul(d)))
                        .unwrap_or(0);
                    crate::fuse::saturating_bytes(n, desc.dtype)
                }
            }
        };
        for (k, p) in op.outputs().iter().enumerate() {
            total = total.saturating_add(bytes((id, k as u32), &p.desc));
        }
        for k in 0..n.num_in_data() {
            if let Some(src) = n.in_data_peer(k) {
                if let Ok(sop) = g.op(src.node) {
                    if let Some(p) = sop.outputs().get(src.index as usize) {
                        total = total.saturating_add(bytes((src.node, src.index as u32), &p.desc));
                    }
                }
            }
        }
    }
    total
}

fn compress_types(types: &[String]) -> String {
    let mut v: Vec<&str> = Vec::new();
    for t in types {
        if v.last() != Some(&t.as_str()) {
            v.push(t);
        }
    }
    v.join("_")
}

fn kernel_name(fuse_type: &str, n: usize, types: &[String]) -> String {
    let mut s = format!("autofuse_{fuse_type}_{n}_{}", compress_types(types));
    if s.len() > 140 {
        let mut cut = 140;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// What replacing a cluster needs besides its [`Built`]: the kernel's name, graphs' bytes,
/// symbols, output shapes and cache key.
type Spec = (
    String,
    Bytes,
    Vec<Bytes>,
    Vec<String>,
    Vec<Vec<String>>,
    String,
);

/// Stage dumps 07 (HintGraphs), 08 (ImplGraphs) and 09 (tilings), by kernel name.
#[derive(Default)]
struct KernelDumps {
    realize: String,
    schedule: String,
    tile: Vec<serde_json::Value>,
}

impl KernelDumps {
    fn add(
        &mut self,
        name: &str,
        hint: &[u8],
        impls: &[Bytes],
        t: &ascendir_asc::tiling::TilingData,
    ) {
        let text = |bytes: &[u8]| {
            AscGraph::from_bytes(bytes)
                .map(|a| a.debug_str(false))
                .unwrap_or_else(|e| format!("(cannot decode: {e})\n"))
        };
        self.realize
            .push_str(&format!("== {name}\n{}\n", text(hint)));
        for i in impls {
            self.schedule.push_str(&format!("== {name}\n{}\n", text(i)));
        }
        self.tile.push(serde_json::json!({
            "kernel": name, "graph": t.graph, "tiling_key": t.tiling_key,
            "block_dim": t.block_dim, "ub_used": t.ub_used, "ub_size": t.ub_size,
            "sizes": t.sizes, "shape": t.shape,
        }));
    }
}

/// Name built kernel `b` (the `n`th of its fuse type) and rename its graphs; its [`Kernel`]
/// and what replacing its cluster needs.
fn name_kernel(
    cx: &CompileCtx<'_>,
    b: &mut Built,
    n: usize,
    opts_json: &str,
    dumps: &mut Option<KernelDumps>,
) -> CompileResult<(Kernel, Spec)> {
    let (g, syms) = (&cx.graph, &cx.syms);
    let types: Vec<String> = b
        .members
        .iter()
        .filter_map(|id| g.op(*id).ok().map(|o| o.op_type().to_string()))
        .collect();
    let name = kernel_name(b.fuse_type, n, &types);
    let renamed = |old: &str, k: usize| match old.strip_prefix("cluster") {
        Some(rest) => format!("{name}{rest}"),
        None => format!("{name}_{k}"),
    };
    let rename = |bytes: &[u8], new: &str| {
        AscGraph::rename_bytes(bytes, new)
            .map(Bytes::from)
            .map_err(|e| CompileError::from_kind(Stage::Package, e.into()).with_node(&name))
    };
    let hint_bytes = rename(&std::mem::take(&mut b.hint), &name)?;
    let mut templates = Vec::new();
    let mut impl_bytes = Vec::new();
    for (k, (old, bytes)) in std::mem::take(&mut b.impls).into_iter().enumerate() {
        let new = renamed(&old, k);
        impl_bytes.push(rename(&bytes, &new)?);
        if b.tiling.graph == old {
            b.tiling.graph = new.clone();
        }
        templates.push(new);
    }
    if let Some(d) = dumps {
        d.add(&name, &hint_bytes, &impl_bytes, &b.tiling);
    }
    let key = cache_key(&hint_bytes, &cx.opts.target, opts_json);
    let symbols: Vec<String> = b
        .used_syms
        .iter()
        .map(|s| format!("{s}: {}", syms.sources.get(s).cloned().unwrap_or_default()))
        .collect();
    let out_shapes: Vec<Vec<String>> = b
        .outputs
        .iter()
        .map(|t| {
            syms.shape(*t)
                .map(|v| v.iter().map(|e| e.to_string()).collect())
                .unwrap_or_default()
        })
        .collect();
    let member_bytes: i64 = b
        .members
        .iter()
        .map(|id| {
            let l = match cx.decisions.get(id) {
                Some(Decision::Lowered(l)) => l,
                _ => return 0,
            };
            let ins: i64 = l
                .inputs
                .iter()
                .flatten()
                .map(|t| tensor_bytes(g, syms, *t))
                .sum();
            ins + tensor_bytes(g, syms, (*id, 0))
        })
        .sum();
    let kernel_bytes: i64 = b
        .inputs
        .iter()
        .chain(&b.outputs)
        .map(|t| tensor_bytes(g, syms, *t))
        .sum();
    let members = b
        .members
        .iter()
        .filter_map(|id| g.op(*id).ok().map(|o| o.name().to_string()))
        .collect();
    let kernel = Kernel {
        name: name.clone(),
        fuse_type: b.fuse_type.to_string(),
        members,
        member_types: types,
        hint: hint_bytes.clone(),
        impls: impl_bytes.clone(),
        templates,
        asc_nodes: b.asc_nodes,
        tiling: b.tiling.clone(),
        io: (b.inputs.len(), b.outputs.len()),
        bytes: (member_bytes, kernel_bytes),
        compute_ops: b.compute_ops,
        cache_key: key.clone(),
        from_cache: b.from_cache,
    };
    Ok((
        kernel,
        (name, hint_bytes, impl_bytes, symbols, out_shapes, key),
    ))
}

/// Replace every built cluster by its AscBackend node, in order (a kernel reading another
/// kernel's output reads it from the AscBackend node that took it).
fn replace_clusters(
    cx: &mut CompileCtx<'_>,
    built: &[Built],
    specs: Vec<Spec>,
) -> CompileResult<()> {
    let mut moved: rustc_hash::FxHashMap<TRef, TRef> = rustc_hash::FxHashMap::default();
    for (index, (b, (name, hint_bytes, impl_bytes, symbols, out_shapes, key))) in
        built.iter().zip(specs).enumerate()
    {
        let inputs: Vec<TRef> = b
            .inputs
            .iter()
            .map(|t| moved.get(t).copied().unwrap_or(*t))
            .collect();
        let spec = BackendSpec {
            name: &name,
            fuse_type: b.fuse_type,
            members: &b.members,
            inputs: &inputs,
            outputs: &b.outputs,
            hint_bytes,
            impl_bytes,
            symbols,
            output_symbol_shape: out_shapes,
            guards: cx.syms.guards.clone(),
            cache_key: key,
            index,
        };
        let k = replace_cluster(&mut cx.graph, &spec)
            .map_err(|e| CompileError::from_kind(Stage::Package, e).with_node(&name))?;
        for (j, t) in b.outputs.iter().enumerate() {
            moved.insert(*t, (k, j as u32));
        }
    }
    Ok(())
}

/// Stage 12: kernels named, clusters replaced by AscBackend nodes, the graph ordered.
#[derive(Debug)]
pub struct Package;

impl Pass for Package {
    fn name(&self) -> &'static str {
        "package"
    }

    fn stage(&self) -> Stage {
        Stage::Package
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        let mut built = std::mem::take(&mut cx.built);
        let opts_json = cx.opts.kernel_json();
        let mut counters: BTreeMap<&str, usize> = BTreeMap::new();
        let mut specs = Vec::with_capacity(built.len());
        let mut dumps = cx.dump.then(KernelDumps::default);
        for b in built.iter_mut() {
            let n = counters.entry(b.fuse_type).or_insert(0);
            let (kernel, spec) = name_kernel(cx, b, *n, &opts_json, &mut dumps)?;
            *n += 1;
            cx.kernels.push(kernel);
            specs.push(spec);
        }
        if let Some(d) = dumps {
            cx.dump_as(Stage::Realize, "realize.txt", |_| d.realize);
            cx.dump_as(Stage::Schedule, "schedule.txt", |_| d.schedule);
            cx.dump_as(Stage::Tile, "tile.json", |_| {
                serde_json::to_string_pretty(&d.tile).unwrap_or_default()
            });
        }
        cx.barriers = crate::report::barriers(&cx.graph, &cx.order, &cx.decisions);
        replace_clusters(cx, &built, specs)?;
        let mut order_opts = TopoOptions::new(TopoMode::Dfs);
        order_opts.memory_priority = true;
        cx.graph
            .topo_sort(&order_opts)
            .map_err(|e| CompileError::from_kind(Stage::Package, e.into()))?;
        cx.graph.validate().map_err(|e| {
            CompileError::new(
                Stage::Package,
                format!("the compiled graph is invalid: {e}"),
            )
        })?;
        cx.dump_as(Stage::Package, "package.txt", |cx| cx.graph.dump());
        Ok(true)
    }
}
