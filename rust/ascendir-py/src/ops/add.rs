//! `Graph.add_op` for registered types: the inputs parsed (nodes, outputs, `(node, index)`
//! pairs, `None` for optional inputs) and the attributes converted; the op is built by its
//! prototype (`OpProto::instantiate`), verified, inferred, and added and linked in one edit.

use ascendir_ir::instantiate::{InputArg, InputPlan, OutputRequest};

use super::*;

fn parse_input(
    graph: &Bound<'_, PyGraph>,
    obj: &Bound<'_, PyAny>,
) -> PyResult<InputArg<OutAnchor>> {
    if obj.is_none() {
        return Ok(InputArg::Unset);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut v = Vec::new();
        for item in obj.try_iter()? {
            v.push(extract_source(graph, &item?)?);
        }
        return Ok(InputArg::Group(v));
    }
    Ok(InputArg::One(extract_source(graph, obj)?))
}

/// Attributes for a registered type: declared ones converted to their kind.
pub fn attrs_for(proto: &OpProto, obj: Option<&Bound<'_, PyAny>>) -> PyResult<AttrMap> {
    let mut map = AttrMap::new();
    let Some(obj) = obj else { return Ok(map) };
    let d = obj.cast::<PyDict>()?;
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        let value = match proto.attr(&key) {
            Some(spec) => match py_to_attr(&key, &v, Some(spec.kind)) {
                Ok(a) => a,
                Err(first) => {
                    let kind = infer_kind(&key, &v)?;
                    let raw = py_to_attr(&key, &v, Some(kind))?;
                    registry::coerce_attr(spec.kind, raw).ok_or(first)?
                }
            },
            None => py_to_attr(&key, &v, None)?,
        };
        map.insert(key, value);
    }
    Ok(map)
}

/// The registered-type path of `Graph.add_op`.
#[allow(clippy::too_many_arguments)]
pub fn add_registered(
    slf: &Bound<'_, PyGraph>,
    proto: Arc<OpProto>,
    inputs: Option<&Bound<'_, PyAny>>,
    name: Option<&str>,
    attrs: Option<&Bound<'_, PyAny>>,
    outputs: Option<&Bound<'_, PyAny>>,
    output_descs: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyNode>> {
    let py = slf.py();
    let mut args = Vec::new();
    if let Some(list) = inputs {
        for item in list.try_iter()? {
            args.push(parse_input(slf, &item?)?);
        }
    }
    let node_name = match name {
        Some(n) => n.to_string(),
        None => PyGraph::read(slf, |g| {
            let mut k = g.len();
            loop {
                let c = format!("{}_{k}", proto.op_type);
                if g.find(&c).is_none() {
                    break c;
                }
                k += 1;
            }
        })?,
    };
    let InputPlan {
        slots: sources,
        counts,
    } = proto.plan_args(&node_name, args).map_err(py_err)?;
    for s in sources.iter().flatten() {
        if s.is_control() {
            return Err(IrError::InvalidArgument(format!(
                "op '{node_name}': a control anchor cannot feed a data input"
            )))
            .py();
        }
    }
    // Producer descs and constant values (read once, then the graph is released).
    let (descs, vals): (Vec<Option<Arc<TensorDesc>>>, Vec<Option<Tensor>>) =
        PyGraph::try_read(slf, |g| {
            let mut descs = Vec::with_capacity(sources.len());
            let mut vals = Vec::with_capacity(sources.len());
            for s in &sources {
                match s {
                    Some(s) => {
                        let op = g.op(s.node)?;
                        descs.push(Some(op.output_desc(s.index as usize)?.clone()));
                        vals.push(infer::engine::const_value(op));
                    }
                    None => {
                        descs.push(None);
                        vals.push(None);
                    }
                }
            }
            Ok((descs, vals))
        })?;
    let attr_map = attrs_for(&proto, attrs)?;
    let explicit_descs: Option<Vec<Arc<TensorDesc>>> = match output_descs {
        None => None,
        Some(list) => Some(
            list.try_iter()?
                .map(|d| PyTensorDesc::extract_arc(&d?))
                .collect::<PyResult<_>>()?,
        ),
    };
    let count = match outputs {
        Some(o) => Some(o.extract::<usize>().map_err(|_| {
            raise(
                py,
                invalid_argument_error(py),
                format!(
                    "op '{node_name}' ({}): outputs= must be the total output count for a registered type",
                    proto.op_type
                ),
                &[],
            )
        })?),
        None => None,
    };
    let request = OutputRequest {
        count,
        descs: explicit_descs.as_ref().map(Vec::len),
    };
    let mut op = proto
        .instantiate(&node_name, &counts, &descs, attr_map, request)
        .map_err(py_err)?;
    // Value lookup by op input slot.
    let values = |i: usize| vals.get(i).cloned().flatten();
    run_verify(py, &op, &values)?;
    match &explicit_descs {
        Some(d) => proto.set_output_descs(&mut op, d).map_err(py_err)?,
        None => {
            // Best effort: a rule that cannot run (inputs not described yet) leaves the
            // outputs as declared; `Graph.infer_shapes` reports such failures.
            if let Ok(outs) = infer::infer_op(&proto, &op, &values, &mut PyCustom) {
                if infer::engine::write_outputs(&mut op, &outs).is_ok()
                    && !matches!(proto.rule.params.get("format"), Some(Param::Str(s)) if s == "keep")
                {
                    infer::format::default_infer_format(&mut op);
                }
            }
        }
    }
    let id: NodeId = PyGraph::try_write(slf, |g| g.add_node_linked(op, &sources))?;
    Py::new(py, PyNode::new(slf.clone().unbind(), id))
}
