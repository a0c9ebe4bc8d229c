//! `Graph.add_op` for registered types: the inputs parsed (nodes, outputs, `(node, index)`
//! pairs, `None` for optional inputs), matched to the type's IR inputs, the attributes
//! defaulted and checked, and the node added and linked in one edit.

use super::*;

/// One positional input of `add_op`: unset, one source, or a group (dynamic input).
enum InputArg {
    Unset,
    One(OutAnchor),
    Group(Vec<OutAnchor>),
}

fn parse_input(graph: &Bound<'_, PyGraph>, obj: &Bound<'_, PyAny>) -> PyResult<InputArg> {
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

/// Map `add_op` inputs onto the prototype's IR inputs: one slot per required / optional input
/// (`None` unsets an optional one), a list per dynamic input. Without lists, a single dynamic
/// input takes the positional inputs left over. Returns the slots and the slot count of each
/// declared input.
fn plan_sources(
    proto: &OpProto,
    node: &str,
    args: Vec<InputArg>,
) -> Result<(Vec<Option<OutAnchor>>, Vec<usize>), String> {
    let grouped = args.iter().any(|a| matches!(a, InputArg::Group(_)));
    let mut slots = Vec::new();
    let mut counts = Vec::with_capacity(proto.inputs.len());
    if !grouped {
        let plan = proto
            .plan_inputs(args.len())
            .map_err(|m| format!("{} '{node}' {m}", proto.op_type))?;
        let mut it = args.into_iter();
        for (spec, count) in proto.inputs.iter().zip(plan) {
            if spec.kind == IrInputType::Optional && count == 0 {
                slots.push(None);
                counts.push(1);
                continue;
            }
            counts.push(count);
            for _ in 0..count {
                match it.next() {
                    Some(InputArg::One(s)) => slots.push(Some(s)),
                    Some(InputArg::Unset) if spec.kind == IrInputType::Optional => slots.push(None),
                    _ => {
                        return Err(format!(
                            "{} '{node}': input '{}' is required",
                            proto.op_type, spec.name
                        ))
                    }
                }
            }
        }
        return Ok((slots, counts));
    }
    if args.len() > proto.inputs.len() {
        return Err(format!(
            "{} '{node}' takes {} inputs (a list for each dynamic one), {} given",
            proto.op_type,
            proto.inputs.len(),
            args.len()
        ));
    }
    let mut args = args.into_iter();
    for spec in &proto.inputs {
        let arg = args.next().unwrap_or(InputArg::Unset);
        let before = slots.len();
        match (spec.kind, arg) {
            (IrInputType::Dynamic, InputArg::Group(v)) => slots.extend(v.into_iter().map(Some)),
            (IrInputType::Dynamic, InputArg::One(s)) => slots.push(Some(s)),
            (IrInputType::Dynamic, InputArg::Unset) => {}
            (IrInputType::Optional, InputArg::Unset) => slots.push(None),
            (_, InputArg::One(s)) => slots.push(Some(s)),
            (_, InputArg::Group(_)) => {
                return Err(format!(
                    "{} '{node}': input '{}' takes one tensor, not a list",
                    proto.op_type, spec.name
                ))
            }
            (_, InputArg::Unset) => {
                return Err(format!(
                    "{} '{node}': input '{}' is required",
                    proto.op_type, spec.name
                ))
            }
        }
        counts.push(slots.len() - before);
    }
    Ok((slots, counts))
}

/// Attributes for a registered type: declared ones converted to their kind.
fn attrs_for(proto: &OpProto, obj: Option<&Bound<'_, PyAny>>) -> PyResult<AttrMap> {
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
    let (sources, counts) = plan_sources(&proto, &node_name, args)
        .map_err(|m| raise(py, invalid_argument_error(py), m, &[]))?;
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
    let mut attr_map = attrs_for(&proto, attrs)?;
    // GE's `N` attribute counts the dynamic input instances; fill it when not given.
    let dyn_inputs: usize = proto
        .inputs
        .iter()
        .zip(&counts)
        .filter(|(s, _)| s.kind == IrInputType::Dynamic)
        .map(|(_, &c)| c)
        .sum();
    let has_dynamic_input = proto.inputs.iter().any(|i| i.kind == IrInputType::Dynamic);
    if has_dynamic_input && !attr_map.contains_key("N") {
        if let Some(spec) = proto.attr("N") {
            if spec.kind == ascendir_ir::AttrKind::Int {
                attr_map.insert("N", AttrValue::Int(dyn_inputs as i64));
            }
        }
    }
    let explicit_descs: Option<Vec<Arc<TensorDesc>>> = match output_descs {
        None => None,
        Some(list) => Some(
            list.try_iter()?
                .map(|d| PyTensorDesc::extract_arc(&d?))
                .collect::<PyResult<_>>()?,
        ),
    };
    let has_dynamic_output = proto
        .outputs
        .iter()
        .any(|o| o.kind == IrOutputType::Dynamic);
    let fixed_outputs = proto.outputs.len() - usize::from(has_dynamic_output);
    let dyn_outputs = match outputs {
        Some(o) => {
            let n: usize = o.extract().map_err(|_| {
                IrError::InvalidArgument(format!(
                    "op '{node_name}' ({}): outputs= must be the total output count for a registered type",
                    proto.op_type
                ))
            }).py()?;
            if !has_dynamic_output && n != fixed_outputs {
                return Err(IrError::InvalidArgument(format!(
                    "op '{node_name}' ({}) has {fixed_outputs} outputs, {n} requested",
                    proto.op_type
                )))
                .py();
            }
            n.saturating_sub(fixed_outputs)
        }
        None => match (&explicit_descs, &proto.dynamic_output_count_attr) {
            (Some(d), _) if has_dynamic_output => d.len().saturating_sub(fixed_outputs),
            (_, Some(a)) => match attr_map
                .get(a)
                .or_else(|| proto.attr(a).and_then(|s| s.default.as_ref()))
            {
                Some(AttrValue::Int(n)) if *n >= 0 => *n as usize,
                _ => 1,
            },
            _ if has_dynamic_output && has_dynamic_input => dyn_inputs.max(1),
            _ => usize::from(has_dynamic_output),
        },
    };
    let mut op = proto
        .build_planned(&node_name, &counts, &descs, dyn_outputs, attr_map)
        .map_err(|e| registry_err(py, e))?;
    proto.check_dtypes(&op, false).map_err(|m| {
        raise(
            py,
            invalid_argument_error(py),
            format!("op '{node_name}' ({}): {m}", proto.op_type),
            &[],
        )
    })?;
    // Value lookup by op input slot.
    let values = |i: usize| vals.get(i).cloned().flatten();
    run_verify(py, &op, &values)?;
    match &explicit_descs {
        Some(d) => {
            if d.len() != op.num_outputs() {
                return Err(IrError::InvalidArgument(format!(
                    "op '{node_name}' ({}) has {} outputs, {} output descs given",
                    proto.op_type,
                    op.num_outputs(),
                    d.len()
                )))
                .py();
            }
            for (i, desc) in d.iter().enumerate() {
                op.set_port_desc(ascendir_ir::Side::Output, i, desc.clone())
                    .py()?;
            }
        }
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
