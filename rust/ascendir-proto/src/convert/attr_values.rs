//! Attribute values: prost `AttrDef` messages to and from `AttrValue`s.

use super::*;

pub(crate) fn utf8(b: Bytes, what: &str) -> ProtoResult<String> {
    String::from_utf8(b.to_vec()).map_err(|e| {
        ProtoError::invalid(
            "",
            format!(
                "{what} is not valid UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

pub(crate) fn data_type_ge(v: i64) -> ProtoResult<DataType> {
    DataType::from_ge(v)
        .ok_or_else(|| ProtoError::invalid("", format!("unknown ge::DataType number {v}")))
}

pub(crate) fn attrs_from_map(
    map: BTreeMap<String, pb::AttrDef>,
    ctx: DecodeCtx,
) -> ProtoResult<AttrMap> {
    let mut out = AttrMap::new();
    for (k, v) in map {
        if let Some(value) = attr_value(v, ctx).map_err(|e| e.within(|| format!("attr[{k:?}]")))? {
            out.insert(k, value);
        }
    }
    Ok(out)
}

/// Every element of list field `field` converted by `f`; an error names the element.
pub(crate) fn each<T, U>(
    items: Vec<T>,
    field: &str,
    f: impl Fn(T) -> ProtoResult<U>,
) -> ProtoResult<Vec<U>> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, x)| f(x).map_err(|e| e.within(|| format!("list.{field}[{i}]"))))
        .collect()
}

/// Decode one `AttrDef`; `None` for a value GE skips (unset oneof, untyped list).
pub fn attr_from_def(def: pb::AttrDef) -> ProtoResult<Option<AttrValue>> {
    attr_value(def, DecodeCtx::detached())
}

/// [`attr_from_def`] within a decode.
pub(crate) fn attr_value(def: pb::AttrDef, ctx: DecodeCtx) -> ProtoResult<Option<AttrValue>> {
    let Some(value) = def.value else {
        return Ok(None);
    };
    Ok(Some(match value {
        // `s` is `bytes` in ge_ir.proto: a value that is not UTF-8 is kept as its bytes.
        V::S(s) => match std::str::from_utf8(&s) {
            Ok(text) => AttrValue::String(text.to_string()),
            Err(_) => AttrValue::RawString(s),
        },
        V::I(i) => AttrValue::Int(i),
        V::F(f) => AttrValue::Float(f),
        V::B(b) => AttrValue::Bool(b),
        V::Bt(b) => AttrValue::Bytes(b),
        V::Expression(s) => AttrValue::Expression(utf8(s, "expression")?),
        V::Dt(d) => AttrValue::DataType(data_type_ge(d)?),
        V::Func(na) => AttrValue::NamedAttrs(Box::new(named_from_def(na, ctx)?)),
        V::Td(td) => AttrValue::TensorDesc(Arc::new(desc_value(td, ctx)?)),
        V::T(t) => AttrValue::Tensor(tensor_from_def(t, ctx)?),
        V::G(g) => AttrValue::Graph(GraphAttr(Arc::new(graph_value(g, ctx)?))),
        V::ListListInt(l) => {
            AttrValue::ListListInt(l.list_list_i.into_iter().map(|x| x.list_i).collect())
        }
        V::ListListFloat(l) => {
            AttrValue::ListListFloat(l.list_list_f.into_iter().map(|x| x.list_f).collect())
        }
        V::List(l) => {
            let vt = Vt::try_from(l.val_type).unwrap_or(Vt::VtListNone);
            match vt {
                Vt::VtListNone => return Ok(None),
                Vt::VtListString => AttrValue::ListString(
                    l.s.into_iter()
                        .enumerate()
                        .map(|(i, s)| utf8(s, &format!("list.s[{i}]")))
                        .collect::<ProtoResult<_>>()?,
                ),
                Vt::VtListInt => AttrValue::ListInt(l.i),
                Vt::VtListFloat => AttrValue::ListFloat(l.f),
                Vt::VtListBool => AttrValue::ListBool(l.b),
                Vt::VtListBytes => AttrValue::ListBytes(l.bt),
                Vt::VtListTensorDesc => AttrValue::ListTensorDesc(each(l.td, "td", |td| {
                    desc_value(td, ctx).map(Arc::new)
                })?),
                Vt::VtListTensor => {
                    AttrValue::ListTensor(each(l.t, "t", |t| tensor_from_def(t, ctx))?)
                }
                Vt::VtListGraph => AttrValue::ListGraph(each(l.g, "g", |g| {
                    graph_value(g, ctx).map(|g| GraphAttr(Arc::new(g)))
                })?),
                Vt::VtListNamedAttrs => {
                    AttrValue::ListNamedAttrs(each(l.na, "na", |na| named_from_def(na, ctx))?)
                }
                Vt::VtListDataType => AttrValue::ListDataType(
                    l.dt.into_iter()
                        .map(data_type_ge)
                        .collect::<ProtoResult<_>>()?,
                ),
            }
        }
    }))
}

pub(crate) fn named_from_def(na: pb::NamedAttrs, ctx: DecodeCtx) -> ProtoResult<NamedAttrs> {
    Ok(NamedAttrs {
        name: na.name,
        attrs: attrs_from_map(na.attr, ctx)?,
    })
}

pub(crate) fn tensor_from_def(t: pb::TensorDef, ctx: DecodeCtx) -> ProtoResult<Tensor> {
    let desc =
        desc_value(t.desc.unwrap_or_default(), ctx).map_err(|e| e.within(|| "desc".to_string()))?;
    Ok(Tensor::new(desc, t.data))
}

pub(crate) fn list(vt: Vt, f: impl FnOnce(&mut pb::attr_def::ListValue)) -> V {
    let mut l = pb::attr_def::ListValue {
        val_type: vt as i32,
        ..Default::default()
    };
    f(&mut l);
    V::List(l)
}

/// Encode one attribute value.
pub fn attr_to_def(value: &AttrValue) -> ProtoResult<pb::AttrDef> {
    let v = match value {
        AttrValue::Int(i) => V::I(*i),
        AttrValue::Float(f) => V::F(*f),
        AttrValue::Bool(b) => V::B(*b),
        AttrValue::String(s) => V::S(Bytes::copy_from_slice(s.as_bytes())),
        AttrValue::RawString(b) => V::S(b.clone()),
        AttrValue::Bytes(b) => V::Bt(b.clone()),
        AttrValue::Expression(s) => V::Expression(Bytes::copy_from_slice(s.as_bytes())),
        AttrValue::DataType(d) => V::Dt(i64::from(d.ge_value())),
        AttrValue::TensorDesc(d) => V::Td(desc_to_def(d)?),
        AttrValue::Tensor(t) => V::T(tensor_to_def(t)?),
        AttrValue::Graph(g) => V::G(graph_to_def(&g.0)?),
        AttrValue::NamedAttrs(na) => V::Func(named_to_def(na)?),
        AttrValue::ListListInt(l) => V::ListListInt(pb::attr_def::ListListInt {
            list_list_i: l
                .iter()
                .map(|x| pb::attr_def::list_list_int::ListInt { list_i: x.clone() })
                .collect(),
        }),
        AttrValue::ListListFloat(l) => V::ListListFloat(pb::attr_def::ListListFloat {
            list_list_f: l
                .iter()
                .map(|x| pb::attr_def::list_list_float::ListFloat { list_f: x.clone() })
                .collect(),
        }),
        AttrValue::ListInt(x) => list(Vt::VtListInt, |l| l.i = x.clone()),
        AttrValue::ListFloat(x) => list(Vt::VtListFloat, |l| l.f = x.clone()),
        AttrValue::ListBool(x) => list(Vt::VtListBool, |l| l.b = x.clone()),
        AttrValue::ListString(x) => list(Vt::VtListString, |l| {
            l.s = x
                .iter()
                .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                .collect()
        }),
        AttrValue::ListBytes(x) => list(Vt::VtListBytes, |l| l.bt = x.clone()),
        AttrValue::ListDataType(x) => list(Vt::VtListDataType, |l| {
            l.dt = x.iter().map(|d| i64::from(d.ge_value())).collect()
        }),
        AttrValue::ListTensorDesc(x) => {
            let td = x
                .iter()
                .map(|d| desc_to_def(d))
                .collect::<ProtoResult<_>>()?;
            list(Vt::VtListTensorDesc, |l| l.td = td)
        }
        AttrValue::ListTensor(x) => {
            let t = x.iter().map(tensor_to_def).collect::<ProtoResult<_>>()?;
            list(Vt::VtListTensor, |l| l.t = t)
        }
        AttrValue::ListGraph(x) => {
            let g = x
                .iter()
                .map(|g| graph_to_def(&g.0))
                .collect::<ProtoResult<_>>()?;
            list(Vt::VtListGraph, |l| l.g = g)
        }
        AttrValue::ListNamedAttrs(x) => {
            let na = x.iter().map(named_to_def).collect::<ProtoResult<_>>()?;
            list(Vt::VtListNamedAttrs, |l| l.na = na)
        }
    };
    Ok(pb::AttrDef { value: Some(v) })
}

pub(crate) fn attrs_to_map(
    attrs: &AttrMap,
    skip: &[&str],
) -> ProtoResult<BTreeMap<String, pb::AttrDef>> {
    let mut out = BTreeMap::new();
    for (k, v) in attrs {
        if skip.contains(&k) || k == ASC_UNKNOWN || k == ASC_ATTR_UNKNOWN {
            continue;
        }
        out.insert(k.to_string(), attr_to_def(v)?);
    }
    Ok(out)
}

pub(crate) fn named_to_def(na: &NamedAttrs) -> ProtoResult<pb::NamedAttrs> {
    Ok(pb::NamedAttrs {
        name: na.name.clone(),
        attr: attrs_to_map(&na.attrs, &[])?,
    })
}

pub(crate) fn tensor_to_def(t: &Tensor) -> ProtoResult<pb::TensorDef> {
    Ok(pb::TensorDef {
        desc: Some(desc_to_def(&t.desc)?),
        data: t.data.clone(),
    })
}

pub(crate) fn s_attr(s: &str) -> pb::AttrDef {
    pb::AttrDef {
        value: Some(V::S(Bytes::copy_from_slice(s.as_bytes()))),
    }
}

// ---------------------------------------------------------------------------------------------
