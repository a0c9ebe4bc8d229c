use super::*;
use crate::dtype::DataType;
use crate::format::Format;
use crate::infer::InferRule;
use crate::registry::{AttrSpec, InputSpec, OutputSpec, TypeVarSpec};

fn input(name: &str, kind: IrInputType, tv: Option<&str>) -> InputSpec {
    InputSpec {
        name: name.into(),
        kind,
        type_var: tv.map(Into::into),
    }
}

fn output(name: &str, kind: IrOutputType) -> OutputSpec {
    OutputSpec {
        name: name.into(),
        kind,
        type_var: None,
    }
}

/// `Conv2D`'s ports: `x, filter, ?bias, ?offset_w -> y`, a required and a defaulted attribute.
fn conv() -> OpProto {
    let mut p = OpProto::new("InstConv");
    p.inputs = vec![
        input("x", IrInputType::Required, Some("T")),
        input("filter", IrInputType::Required, Some("T")),
        input("bias", IrInputType::Optional, None),
        input("offset_w", IrInputType::Optional, None),
    ];
    p.outputs = vec![output("y", IrOutputType::Required)];
    p.attrs = vec![
        AttrSpec {
            name: "strides".into(),
            kind: AttrKind::ListInt,
            default: None,
        },
        AttrSpec {
            name: "groups".into(),
            kind: AttrKind::Int,
            default: Some(AttrValue::Int(1)),
        },
    ];
    p.type_vars = vec![TypeVarSpec {
        name: "T".into(),
        allowed: vec![],
    }];
    p
}

/// `ConcatV2D`-like: a dynamic input with GE's `N`, one output.
fn concat() -> OpProto {
    let mut p = OpProto::new("InstConcat");
    p.inputs = vec![input("x", IrInputType::Dynamic, None)];
    p.outputs = vec![output("y", IrOutputType::Required)];
    p.attrs = vec![AttrSpec {
        name: "N".into(),
        kind: AttrKind::Int,
        default: Some(AttrValue::Int(1)),
    }];
    p
}

/// `SplitD`-like: a dynamic output counted by `num_split`.
fn split() -> OpProto {
    let mut p = OpProto::new("InstSplit");
    p.inputs = vec![input("x", IrInputType::Required, None)];
    p.outputs = vec![output("y", IrOutputType::Dynamic)];
    p.attrs = vec![AttrSpec {
        name: "num_split".into(),
        kind: AttrKind::Int,
        default: None,
    }];
    p.dynamic_output_count_attr = Some("num_split".into());
    p
}

fn desc(dt: DataType) -> Option<Arc<TensorDesc>> {
    Some(Arc::new(TensorDesc::new(&[2, 3], dt, Format::ND)))
}

fn strides() -> AttrMap {
    let mut a = AttrMap::new();
    a.insert("strides", AttrValue::ListInt(vec![1, 1, 1, 1]));
    a
}

fn names(op: &OpDesc, side: Side) -> Vec<String> {
    let ports = match side {
        Side::Input => op.inputs(),
        Side::Output => op.outputs(),
    };
    ports.iter().map(|p| p.name.to_string()).collect()
}

#[test]
fn optional_inputs_are_created_unset_and_defaults_filled() {
    let p = conv();
    let args = vec![
        InputArg::One(desc(DataType::FLOAT)),
        InputArg::One(desc(DataType::FLOAT)),
    ];
    let plan = p.plan_args("c", args).unwrap();
    assert_eq!(plan.counts, vec![1, 1, 1, 1]);
    let descs: Vec<_> = plan.slots.into_iter().map(Option::flatten).collect();
    let op = p
        .instantiate(
            "c",
            &plan.counts,
            &descs,
            strides(),
            OutputRequest::default(),
        )
        .unwrap();
    assert_eq!(op.name(), "c");
    assert_eq!(op.op_type(), "InstConv");
    assert_eq!(names(&op, Side::Input), ["x", "filter", "bias", "offset_w"]);
    assert_eq!(names(&op, Side::Output), ["y"]);
    assert!(!op.inputs()[2].desc.is_valid());
    assert!(op.is_optional_input("bias"));
    assert_eq!(op.attr("groups"), Some(&AttrValue::Int(1)));
    // `None` in the middle unsets one optional input, the next one is set.
    let args = vec![
        InputArg::One(desc(DataType::FLOAT)),
        InputArg::One(desc(DataType::FLOAT)),
        InputArg::Unset,
        InputArg::One(desc(DataType::INT8)),
    ];
    let plan = p.plan_args("c", args).unwrap();
    assert!(plan.slots[2].is_none() && plan.slots[3].is_some());
}

#[test]
fn input_count_and_attribute_errors_have_fields_and_messages() {
    let p = conv();
    let e = p.plan_args("c", vec![InputArg::One(())]).unwrap_err();
    assert_eq!(
        e,
        InstantiateError::InputCount {
            op_type: "InstConv".into(),
            node: "c".into(),
            detail: "takes 2 to 4 inputs, 1 given".into(),
        }
    );
    assert_eq!(e.to_string(), "InstConv 'c' takes 2 to 4 inputs, 1 given");
    let e = p
        .plan_args("c", vec![InputArg::Unset, InputArg::One(())])
        .unwrap_err();
    assert_eq!(e.to_string(), "InstConv 'c': input 'x' is required");
    let e = p
        .plan_args("c", vec![InputArg::Group(vec![()]), InputArg::One(())])
        .unwrap_err();
    assert!(matches!(e, InstantiateError::NotAList { ref input, .. } if input == "x"));
    let e = p
        .plan_args("c", vec![InputArg::Group(vec![()]); 5])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "InstConv 'c' takes 4 inputs (a list for each dynamic one), 5 given"
    );
    // A missing required attribute is the registry's error, unchanged.
    let e = p
        .instantiate(
            "c",
            &[1, 1, 1, 1],
            &[None, None, None, None],
            AttrMap::new(),
            OutputRequest::default(),
        )
        .unwrap_err();
    assert!(matches!(
        e,
        InstantiateError::Build(RegistryError::Invalid(_))
    ));
    assert!(
        e.to_string().contains("required attribute 'strides'"),
        "{e}"
    );
    // Mixed dtypes on one type variable.
    let e = p
        .instantiate(
            "c",
            &[1, 1, 1, 1],
            &[desc(DataType::FLOAT), desc(DataType::FLOAT16), None, None],
            strides(),
            OutputRequest::default(),
        )
        .unwrap_err();
    assert!(matches!(e, InstantiateError::Dtype { .. }), "{e}");
    assert!(e.to_string().starts_with("op 'c' (InstConv): "), "{e}");
    let e = p
        .instantiate(
            "c",
            &[1, 1, 1, 1],
            &[None, None, None, None],
            strides(),
            OutputRequest {
                count: Some(2),
                descs: None,
            },
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "op 'c' (InstConv) has 1 outputs, 2 requested"
    );
}

#[test]
fn dynamic_inputs_expand_and_fill_n() {
    let p = concat();
    let args = vec![InputArg::One(()), InputArg::One(()), InputArg::One(())];
    let plan = p.plan_args("cat", args).unwrap();
    assert_eq!(plan.counts, vec![3]);
    let op = p
        .instantiate(
            "cat",
            &plan.counts,
            &[None, None, None],
            AttrMap::new(),
            OutputRequest::default(),
        )
        .unwrap();
    assert_eq!(names(&op, Side::Input), ["x0", "x1", "x2"]);
    assert_eq!(op.attr("N"), Some(&AttrValue::Int(3)));
    // A list for the dynamic input gives the same op.
    let plan = p
        .plan_args("cat", vec![InputArg::Group(vec![(), ()])])
        .unwrap();
    assert_eq!(plan.counts, vec![2]);
}

#[test]
fn dynamic_outputs_follow_the_count_attribute_or_the_request() {
    let p = split();
    let mut a = AttrMap::new();
    a.insert("num_split", AttrValue::Int(3));
    let op = p
        .instantiate("s", &[1], &[None], a.clone(), OutputRequest::default())
        .unwrap();
    assert_eq!(names(&op, Side::Output), ["y0", "y1", "y2"]);
    let req = OutputRequest {
        count: None,
        descs: Some(2),
    };
    let mut op = p.instantiate("s", &[1], &[None], a.clone(), req).unwrap();
    assert_eq!(op.num_outputs(), 2);
    let d = Arc::new(TensorDesc::new(&[4], DataType::FLOAT, Format::ND));
    p.set_output_descs(&mut op, &[d.clone(), d.clone()])
        .unwrap();
    assert_eq!(op.outputs()[1].desc.dtype, DataType::FLOAT);
    let e = p.set_output_descs(&mut op, &[d]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "op 's' (InstSplit) has 2 outputs, 1 output descs given"
    );
}

#[test]
fn port_names_follow_the_prototype() {
    let p = conv();
    let n = p.port_names(3, 1).unwrap();
    assert_eq!(n.inputs[..], ["x", "filter", "bias"]);
    assert_eq!(n.outputs[..], ["y"]);
    assert!(p.port_names(5, 1).is_none());
    assert!(p.port_names(2, 2).is_none());
    let cat = concat();
    assert_eq!(cat.port_names(2, 1).unwrap().inputs[..], ["x0", "x1"]);
    let sp = split();
    assert_eq!(sp.port_names(1, 3).unwrap().outputs[..], ["y0", "y1", "y2"]);
    // Fewer outputs than declared: the first ones.
    let mut bn = OpProto::new("InstBn");
    bn.inputs = vec![input("x", IrInputType::Required, None)];
    bn.outputs = vec![
        output("y", IrOutputType::Required),
        output("batch_mean", IrOutputType::Required),
        output("reserve", IrOutputType::Required),
    ];
    assert_eq!(
        bn.port_names(1, 2).unwrap().outputs[..],
        ["y", "batch_mean"]
    );
}

#[test]
fn unbuilt_port_names_compare_as_the_built_ones() {
    // A dynamic instance matches its exact decimal name only.
    let x12 = PortName {
        declared: "x",
        instance: Some(12),
    };
    assert!(x12.is("x12"));
    for other in ["x", "x1", "x012", "x120", "y12", "x+12", "X12"] {
        assert!(!x12.is(other), "{other}");
    }
    let x0 = PortName {
        declared: "x",
        instance: Some(0),
    };
    assert!(x0.is("x0") && !x0.is("x00") && !x0.is("x"));
    let big = PortName {
        declared: "x",
        instance: Some(usize::MAX),
    };
    assert!(big.is(&format!("x{}", usize::MAX)));
    let y = PortName {
        declared: "y",
        instance: None,
    };
    assert!(y.is("y") && !y.is("y0"));
    assert_eq!(
        (x12.to_string(), y.to_cow()),
        ("x12".to_string(), "y".into())
    );
    // The visit hands out exactly the names `port_names` builds, and nothing when the counts
    // do not fit.
    let mut mixed = OpProto::new("InstMixed");
    mixed.inputs = vec![
        input("a", IrInputType::Required, None),
        input("x", IrInputType::Dynamic, None),
        input("b", IrInputType::Required, None),
    ];
    mixed.outputs = vec![
        output("first", IrOutputType::Required),
        output("y", IrOutputType::Dynamic),
        output("last", IrOutputType::Required),
    ];
    let outs = (0..6).map(|n| (4, n));
    for (p, counts) in [
        (mixed, outs.chain([(1, 1), (2, 2)]).collect()),
        (
            conv(),
            vec![(1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (3, 2), (3, 0)],
        ),
        (concat(), vec![(0, 1), (1, 1), (3, 1), (12, 1), (2, 2)]),
        (split(), vec![(1, 0), (1, 1), (1, 3), (1, 11), (2, 3)]),
    ] {
        for (n_in, n_out) in counts {
            let mut seen = (Vec::new(), Vec::new());
            let fits = p.visit_port_names(n_in, n_out, |side, n| match side {
                Side::Input => seen.0.push(n.to_string()),
                Side::Output => seen.1.push(n.to_string()),
            });
            match p.port_names(n_in, n_out) {
                Some(names) => {
                    assert!(fits);
                    assert_eq!(seen.0, names.inputs.to_vec(), "{n_in} {n_out}");
                    assert_eq!(seen.1, names.outputs.to_vec(), "{n_in} {n_out}");
                }
                None => assert!(!fits && seen.0.is_empty() && seen.1.is_empty()),
            }
        }
    }
}

#[test]
fn instantiate_by_type_looks_the_prototype_up() {
    let e = instantiate(
        "InstNoSuchType",
        "n",
        vec![],
        AttrMap::new(),
        OutputRequest::default(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        InstantiateError::UnknownType {
            op_type: "InstNoSuchType".into()
        }
    );
    let mut p = concat();
    p.op_type = "InstRegistered".into();
    p.rule = InferRule::none();
    registry::register(p, false).unwrap();
    let op = instantiate(
        "InstRegistered",
        "n",
        vec![desc(DataType::FLOAT), desc(DataType::FLOAT)],
        AttrMap::new(),
        OutputRequest::default(),
    )
    .unwrap();
    assert_eq!(names(&op, Side::Input), ["x0", "x1"]);
    assert!(registry::unregister("InstRegistered"));
}
