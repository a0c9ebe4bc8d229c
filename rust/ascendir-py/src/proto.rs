//! Bindings of GE ModelDef / text dump / OM interop: `Graph.to_bytes`, `Graph.from_bytes`,
//! `Graph.to_proto`, `Graph.from_proto`, pickling, and the private helpers behind
//! `ascendir.serialization` (`save`, `load`, `Model`). Every long call runs without the GIL.

use ascendir_ir::Graph;
use ascendir_proto::convert::Pieces;
use ascendir_proto::{ModelMeta, ProtoError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::errors::{enter, py_err, IntoPyResult};
use crate::ir::graph::{GraphSlot, PyGraph};
use crate::ir::tensor::PyBytesOwner;
use bytes::Bytes;

fn graph_object(py: Python<'_>, g: Graph) -> PyResult<Py<PyGraph>> {
    Py::new(py, PyGraph::from_graph(g))
}

/// Encode the graph of `this` as a binary ModelDef: a root with its subgraphs, or a subgraph
/// view with every subgraph below it.
fn encode_one(this: &Bound<'_, PyGraph>) -> PyResult<Vec<u8>> {
    Ok(encode_pieces(this)?.concat())
}

/// `encode_one` in pieces (copied straight into a Python `bytes` by `to_bytes`).
fn encode_pieces(this: &Bound<'_, PyGraph>) -> PyResult<Pieces> {
    let py = this.py();
    let sub = match &PyGraph::borrow_slot(this)?.slot {
        GraphSlot::Own(_) => None,
        GraphSlot::Sub { root, name, .. } => Some((root.clone_ref(py), name.clone())),
    };
    if sub.is_some() {
        // A stale view fails here (see `PyGraph::read`).
        PyGraph::read(this, |_| ())?;
    }
    match sub {
        None => PyGraph::read(this, |g| {
            enter(py, || ascendir_proto::encode_graph_pieces(g))
        })?,
        Some((root, name)) => PyGraph::read(root.bind(py), |r| {
            enter(py, || ascendir_proto::encode_subgraph_pieces(r, &name))
        })?,
    }
}

/// A Python `bytes` holding `pieces` (one copy, no joined buffer first).
fn pieces_to_bytes<'py>(py: Python<'py>, pieces: &Pieces) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, pieces.len(), |buf| {
        // `buf` has exactly `pieces.len()` bytes: every one is written.
        pieces.copy_to(buf);
        Ok(())
    })
}

pub(crate) fn decode_one(py: Python<'_>, data: Bytes) -> PyResult<Py<PyGraph>> {
    let g = enter(py, || {
        ascendir_proto::first_graph(ascendir_proto::decode_model_bytes(data)?)
    })?;
    graph_object(py, g)
}

/// The buffer of a Python `bytes` object, shared instead of copied (the decoder slices byte
/// payloads out of it, and the copy of a large model is not free); see [`PyBytesOwner::share`].
pub(crate) fn shared_input(data: &Bound<'_, PyBytes>) -> Bytes {
    PyBytesOwner::share(data)
}

#[pymethods]
impl PyGraph {
    /// This graph (and its subgraphs) as a binary GE `ModelDef` (`ge_ir.proto`), named after
    /// the graph, with GE's default model attributes.
    fn to_bytes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard_res(|| pieces_to_bytes(slf.py(), &encode_pieces(slf)?))
    }

    /// The main graph of a binary GE `ModelDef`. Malformed input raises
    /// `ascendir.errors.DecodeError` with `.offset` (bytes) or `.path` (field path).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Py<PyGraph>> {
        crate::errors::guard_res(|| decode_one(py, shared_input(data)))
    }

    /// This graph as protobuf text format (GE's `ge_proto_*.txt` dump layout).
    fn to_text(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            let data = encode_one(slf)?;
            enter(py, || ascendir_proto::text::print_bytes(&data, "ModelDef"))
        })
    }

    /// The main graph of a text-format ModelDef (a GE dump).
    #[staticmethod]
    fn from_text(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Py<PyGraph>> {
        crate::errors::guard_res(|| {
            let text = text_of(text)?;
            let data = enter(py, || {
                ascendir_proto::text::parse_to_bytes(&text, "ModelDef")
            })?;
            decode_one(py, Bytes::from(data))
        })
    }

    /// This graph as a `google.protobuf` `ModelDef` message (module
    /// `ascendir._proto.ge_ir_pb2`, imported on first use; needs the `protobuf` package).
    fn to_proto<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            let data = encode_one(slf)?;
            let module = py.import("ascendir._proto.ge_ir_pb2")?;
            module
                .getattr("ModelDef")?
                .call_method1("FromString", (crate::errors::py_bytes(py, &data)?,))
        })
    }

    /// The main graph of a `google.protobuf` `ModelDef` message (any generated class of
    /// `ge_ir.proto`; only `SerializeToString` is used).
    #[staticmethod]
    fn from_proto(py: Python<'_>, msg: &Bound<'_, PyAny>) -> PyResult<Py<PyGraph>> {
        crate::errors::guard_res(|| {
            let data = msg.call_method0("SerializeToString")?;
            decode_one(py, shared_input(data.cast::<PyBytes>()?))
        })
    }

    /// Pickle support: a graph pickles as its ModelDef bytes.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            let data = pieces_to_bytes(py, &encode_pieces(slf)?)?;
            let ctor = py.import("ascendir._core")?.getattr("_graph_from_bytes")?;
            PyTuple::new(py, [ctor, PyTuple::new(py, [data])?.into_any()])
        })
    }
}

/// Rebuild a graph from pickled bytes.
#[pyfunction]
fn _graph_from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Py<PyGraph>> {
    crate::errors::guard_res(|| decode_one(py, shared_input(data)))
}

type ModelParts = (String, u32, String, Py<PyGraph>, Vec<Py<PyGraph>>);

/// Decode a binary ModelDef into `(name, version, custom_version, attrs_holder, graphs)`; the
/// model attributes are the attributes of the empty holder graph.
#[pyfunction]
fn _model_from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<ModelParts> {
    crate::errors::guard_res(|| {
        let data = shared_input(data);
        let model = enter(py, || ascendir_proto::decode_model_bytes(data))?;
        let mut holder = Graph::new("__model_attrs__");
        holder.attrs = model.meta.attrs;
        let graphs = model
            .graphs
            .into_iter()
            .map(|g| graph_object(py, g))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((
            model.meta.name,
            model.meta.version,
            model.meta.custom_version,
            graph_object(py, holder)?,
            graphs,
        ))
    })
}

/// Encode a model: name, version, custom version, the attribute holder graph and the graphs.
#[pyfunction]
fn _model_to_bytes<'py>(
    py: Python<'py>,
    name: String,
    version: u32,
    custom_version: String,
    holder: &Bound<'py, PyGraph>,
    graphs: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyBytes>> {
    crate::errors::guard_res(|| {
        let attrs = PyGraph::read(holder, |g| g.attrs.clone())?;
        let meta = ModelMeta {
            name,
            version,
            custom_version,
            attrs,
        };
        let mut owned: Vec<Graph> = Vec::with_capacity(graphs.len());
        for item in graphs.iter() {
            let g = item.cast::<PyGraph>()?;
            owned.push(PyGraph::read(g, |g| g.clone())?);
        }
        let data = enter(py, || {
            let refs: Vec<&Graph> = owned.iter().collect();
            ascendir_proto::encode_model(&meta, &refs)
        })?;
        crate::errors::py_bytes(py, &data)
    })
}

/// GE's default model attributes (7 keys), as the attributes of a holder graph.
#[pyfunction]
fn _default_model_attrs(py: Python<'_>) -> PyResult<Py<PyGraph>> {
    crate::errors::guard_res(|| {
        let mut holder = Graph::new("__model_attrs__");
        holder.attrs = ModelMeta::new("").attrs;
        graph_object(py, holder)
    })
}

/// Text-format ModelDef → binary.
#[pyfunction]
fn _text_to_bytes<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyBytes>> {
    crate::errors::guard_res(|| {
        let text = text_of(text)?;
        let data = enter(py, || {
            ascendir_proto::text::parse_to_bytes(&text, "ModelDef")
        })?;
        crate::errors::py_bytes(py, &data)
    })
}

/// The text of a Python `str`; one holding lone surrogates (which UTF-8 cannot encode) is a
/// `DecodeError` naming the first one's character offset, line and column.
fn text_of<'a>(text: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, str>> {
    if let Ok(s) = text.to_str() {
        return Ok(std::borrow::Cow::Borrowed(s));
    }
    let raw = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    let raw = raw.cast::<PyBytes>()?;
    ascendir_proto::text::text_from_surrogatepass(raw.as_bytes())
        .map(|s| std::borrow::Cow::Owned(s.to_string()))
        .py()
}

/// GE's readable dump (`ge_readable*.txt`) of a graph and the subgraphs below it.
#[pyfunction]
fn _readable_to_text(graph: &Bound<'_, PyGraph>) -> PyResult<String> {
    crate::errors::guard_res(|| match PyGraph::sub_of(graph)? {
        None => PyGraph::read(graph, ascendir_proto::readable::print_readable),
        Some((root, name, _)) => {
            // A stale view fails here (see `PyGraph::read`).
            PyGraph::read(graph, |_| ())?;
            PyGraph::read(&root, |r| {
                ascendir_proto::readable::print_readable_from(r, &name).unwrap_or_default()
            })
        }
    })
}

/// The graph a readable dump describes; bad text raises `DecodeError` naming line and column.
#[pyfunction]
fn _readable_from_text(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Py<PyGraph>> {
    crate::errors::guard_res(|| {
        let text = text_of(text)?;
        let g = enter(py, || {
            ascendir_proto::readable::parse_readable(&text).map_err(ProtoError::Readable)
        })?;
        graph_object(py, g)
    })
}

/// Whether model bytes start like a readable dump (`graph("name"):`).
#[pyfunction]
fn _is_readable(data: &[u8]) -> PyResult<bool> {
    crate::errors::guard(|| ascendir_proto::readable::looks_readable(data))
}

/// GE's ONNX dump (`ge_onnx*.pbtxt`) of a graph and the subgraphs below it, with
/// `producer_name` set to `producer`; without `attributes` nodes carry none (GE's
/// `Graph::DumpToStream(kOnnx)`).
#[pyfunction]
#[pyo3(signature = (graph, producer, attributes = true))]
fn _ge_onnx_to_text(
    graph: &Bound<'_, PyGraph>,
    producer: &str,
    attributes: bool,
) -> PyResult<String> {
    crate::errors::guard_res(|| match PyGraph::sub_of(graph)? {
        None => PyGraph::read(graph, |g| {
            ascendir_proto::ge_onnx::print_ge_onnx_flat(
                &ascendir_proto::convert::with_subgraphs(&[g]),
                producer,
                attributes,
            )
        })?
        .py(),
        Some((root, name, _)) => {
            // A stale view fails here (see `PyGraph::read`).
            PyGraph::read(graph, |_| ())?;
            PyGraph::read(&root, |r| {
                let mut list: Vec<&Graph> = r.subgraph(&name).into_iter().collect();
                list.extend(ascendir_proto::descendants(r, &name));
                ascendir_proto::ge_onnx::print_ge_onnx_flat(&list, producer, attributes)
            })?
            .py()
        }
    })
}

/// The graph a GE ONNX dump text describes; bad text raises `DecodeError` naming line and
/// column, a model that is no GE graph names the field path.
#[pyfunction]
fn _ge_onnx_from_text(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Py<PyGraph>> {
    crate::errors::guard_res(|| {
        let text = text_of(text)?;
        let g = enter(py, || ascendir_proto::ge_onnx::parse_ge_onnx(&text))?;
        graph_object(py, g)
    })
}

/// Whether model bytes start like an ONNX `ModelProto` in text format (GE's ONNX dump)
/// rather than GE's `ModelDef` text.
#[pyfunction]
fn _is_ge_onnx(data: &[u8]) -> PyResult<bool> {
    crate::errors::guard(|| ascendir_proto::ge_onnx::looks_ge_onnx(data))
}

/// Binary ModelDef → text format.
#[pyfunction]
fn _bytes_to_text(py: Python<'_>, data: &[u8]) -> PyResult<String> {
    crate::errors::guard_res(|| enter(py, || ascendir_proto::text::print_bytes(data, "ModelDef")))
}

/// The pieces of a parsed OM file: name, MODEL_DEF, WEIGHTS_DATA, the first model's other
/// partitions (type number and payload, in file order) and the header's `model_num`.
type OmPieces<'py> = (
    String,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Vec<(u32, Bound<'py, PyBytes>)>,
    u32,
);

/// Parse an OM file: `(name, model_def, weights, other_partitions, model_num)`, where
/// `other_partitions` lists the first model's partitions besides its first MODEL_DEF and
/// WEIGHTS_DATA as `(type, bytes)`.
#[pyfunction]
fn _om_read<'py>(py: Python<'py>, data: &[u8]) -> PyResult<OmPieces<'py>> {
    crate::errors::guard_res(|| {
        use ascendir_proto::om::partition;
        let om = enter(py, || ascendir_proto::om::read(data))?;
        let def = om.model_def().map_err(py_err)?;
        let (mut seen_def, mut seen_weights) = (false, false);
        let mut others = Vec::new();
        for p in om.partitions.iter().filter(|p| p.model == 0) {
            if p.kind == partition::MODEL_DEF && !seen_def {
                seen_def = true;
            } else if p.kind == partition::WEIGHTS_DATA && !seen_weights {
                seen_weights = true;
            } else {
                others.push((p.kind, crate::errors::py_bytes(py, &p.data)?));
            }
        }
        Ok((
            om.name.clone(),
            crate::errors::py_bytes(py, def)?,
            crate::errors::py_bytes(py, &om.weights())?,
            others,
            om.model_num,
        ))
    })
}

/// Write an OM file with MODEL_DEF and WEIGHTS_DATA partitions, then `extra` partitions
/// (`(type, bytes)`, kept byte for byte).
#[pyfunction]
#[pyo3(signature = (name, model_def, weights, extra=Vec::new()))]
fn _om_write<'py>(
    py: Python<'py>,
    name: &str,
    model_def: &[u8],
    weights: &[u8],
    extra: Vec<(u32, Vec<u8>)>,
) -> PyResult<Bound<'py, PyBytes>> {
    crate::errors::guard_res(|| {
        use ascendir_proto::om::partition;
        let out = enter(py, || {
            let mut parts: Vec<(u32, &[u8])> = vec![
                (partition::MODEL_DEF, model_def),
                (partition::WEIGHTS_DATA, weights),
            ];
            parts.extend(extra.iter().map(|(k, d)| (*k, d.as_slice())));
            Ok::<_, crate::errors::Error>(ascendir_proto::om::write_partitions(name, &parts))
        })?;
        crate::errors::py_bytes(py, &out)
    })
}

/// Panic on purpose inside the binding's guard: the test of the error funnel (the panic must
/// reach Python as `InternalError`, never as `PanicException`). Not part of the API.
#[pyfunction]
fn _test_panic(py: Python<'_>) -> PyResult<()> {
    crate::errors::enter(py, || -> Result<(), crate::errors::Error> {
        panic!("deliberate panic of _test_panic")
    })
}

/// Whether `data` starts with the OM magic.
#[pyfunction]
fn _is_om(data: &[u8]) -> PyResult<bool> {
    crate::errors::guard(|| ascendir_proto::om::is_om(data))
}

/// Register the serialization functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_graph_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_model_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_model_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_default_model_attrs, m)?)?;
    m.add_function(wrap_pyfunction!(_text_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_bytes_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(_readable_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(_readable_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(_is_readable, m)?)?;
    m.add_function(wrap_pyfunction!(_ge_onnx_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(_ge_onnx_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(_is_ge_onnx, m)?)?;
    m.add_function(wrap_pyfunction!(_om_read, m)?)?;
    m.add_function(wrap_pyfunction!(_om_write, m)?)?;
    m.add_function(wrap_pyfunction!(_is_om, m)?)?;
    m.add_function(wrap_pyfunction!(_test_panic, m)?)?;
    Ok(())
}
