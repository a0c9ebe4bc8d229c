//! Bindings of the graph diff (`ascendir_ir::diff`) and of the text dump reader
//! (`ascendir_ir::dump_read`): conversion and error mapping only.

use ascendir_ir::diff::{diff, DescInfo, GraphDiff};
use ascendir_ir::dump_read::read_dump_text;
use ascendir_ir::Side;
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::errors::IntoPyResult;
use crate::ir::graph::PyGraph;

fn source(s: &Option<(String, i32)>) -> Value {
    s.as_ref()
        .map_or(Value::Null, |(n, i)| Value::String(format!("{n}:{i}")))
}

fn desc(d: &Option<DescInfo>) -> Value {
    d.as_ref().map_or(
        Value::Null,
        |d| json!({"dtype": d.dtype, "shape": d.shape, "format": d.format}),
    )
}

fn side_word(side: Side) -> &'static str {
    match side {
        Side::Input => "input",
        Side::Output => "output",
    }
}

/// The diff as the JSON document `ascendir diff --json` prints (docs/VIEWING.md).
fn to_json(d: &GraphDiff) -> Value {
    let renamed = d
        .kept
        .iter()
        .filter(|m| m.by == ascendir_ir::diff::MatchedBy::Structure)
        .count();
    json!({
        "schema": "ascendir.diff/1",
        "old": {"graph": d.old_graph, "nodes": d.old_nodes},
        "new": {"graph": d.new_graph, "nodes": d.new_nodes},
        "summary": {
            "kept": d.kept.len(),
            "renamed": renamed,
            "added": d.added.len(),
            "removed": d.removed.len(),
            "retyped": d.retyped.len(),
            "data_edges": d.data_edges.len(),
            "control_edges": d.control_edges.len(),
            "attrs": d.attrs.len(),
            "descs": d.descs.len(),
        },
        "kept": d.kept.iter().map(|m| json!({"old": m.old, "new": m.new, "by": m.by.word()}))
            .collect::<Vec<_>>(),
        "added": d.added.iter().map(|n| json!({"name": n.name, "type": n.op_type}))
            .collect::<Vec<_>>(),
        "removed": d.removed.iter().map(|n| json!({"name": n.name, "type": n.op_type}))
            .collect::<Vec<_>>(),
        "retyped": d.retyped.iter().map(|r| json!({"node": r.node, "old": r.old, "new": r.new}))
            .collect::<Vec<_>>(),
        "data_edges": d.data_edges.iter().map(|e| json!({
            "node": e.node, "index": e.index, "old": source(&e.old), "new": source(&e.new)
        })).collect::<Vec<_>>(),
        "control_edges": d.control_edges.iter().map(|e| json!({
            "src": e.src, "dst": e.dst, "change": if e.added { "added" } else { "removed" }
        })).collect::<Vec<_>>(),
        "attrs": d.attrs.iter().map(|a| json!({
            "node": a.node, "key": a.key, "old": a.old, "new": a.new
        })).collect::<Vec<_>>(),
        "descs": d.descs.iter().map(|c| json!({
            "node": c.node, "side": side_word(c.side), "index": c.index,
            "old": desc(&c.old), "new": desc(&c.new)
        })).collect::<Vec<_>>(),
        "outputs": d.outputs.as_ref().map_or(Value::Null, |(o, n)| json!({"old": o, "new": n})),
    })
}

/// What changed from graph `old` to graph `new` (root graphs), as JSON text
/// (`ascendir.dumps.diff` parses it).
#[pyfunction]
fn _graph_diff(old: &Bound<'_, PyGraph>, new: &Bound<'_, PyGraph>) -> PyResult<String> {
    crate::errors::guard_res(|| {
        let d = PyGraph::read(old, |a| PyGraph::read(new, |b| diff(a, b)))??;
        Ok(to_json(&d).to_string())
    })
}

/// The graph of a text dump (`Graph.dump()`, the compiler's stage dumps); `DecodeError` with
/// the line and its byte offset when the text is not one.
#[pyfunction]
fn _read_dump_text(text: &str) -> PyResult<PyGraph> {
    crate::errors::guard_res(|| Ok(PyGraph::from_graph(read_dump_text(text).py()?)))
}

/// Register the diff functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_graph_diff, m)?)?;
    m.add_function(wrap_pyfunction!(_read_dump_text, m)?)?;
    Ok(())
}
