//! Conversion of small hand-written flattened programs.

use ascendir_ir::AttrValue;
use ascendir_torch::{convert, FxProgram, Symbol, TorchError};
use bytes::Bytes;

/// `x [s0, 4] f32 -> relu -> add(_, w [4]) -> output`.
fn program(target: &str) -> FxProgram {
    FxProgram {
        name: "g".into(),
        kinds: vec![0, 1, 2, 2, 3],
        names: vec![
            "x".into(),
            "w".into(),
            "relu".into(),
            "add".into(),
            "output".into(),
        ],
        targets: vec![
            "x".into(),
            "w".into(),
            target.into(),
            "aten.add.Tensor".into(),
            "output".into(),
        ],
        // relu(x); add(relu, w); output([add])
        code: vec![1, 0, 1, 2, 1, 1, 6, 1, 1, 3],
        code_off: vec![0, 0, 0, 2, 6, 10],
        meta: vec![
            1, 0, 2, -1, 4, 1, 0, 1, 4, 1, 0, 2, -1, 4, 1, 0, 2, -1, 4, 0,
        ],
        meta_off: vec![0, 5, 9, 14, 19, 20],
        info: vec![-1, -1, -1, -1, -1, -1, 2, 3, 4, -1, -1, 5, -1, -1, -1],
        strings: vec![
            "s0".into(),
            "unused".into(),
            "relu (torch.nn.modules.activation.ReLU)".into(),
            "model.py:3 in forward".into(),
            "aten::relu(Tensor self) -> Tensor".into(),
            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".into(),
        ],
        consts: vec![(1, Bytes::from(vec![0u8; 16]))],
        symbols: vec![Symbol {
            name: "s0".into(),
            min: 2,
            max: 8,
            source: "input 0 dim 0".into(),
        }],
        guards: vec!["Ge(s0, 2)".into()],
    }
}

#[test]
fn converts_a_small_program() {
    let (g, rep) = convert(&program("aten.relu.default")).unwrap();
    assert_eq!(rep.fx_nodes, 5);
    assert_eq!(rep.fx_calls, 2);
    assert_eq!((rep.inputs, rep.params), (1, 1));
    assert!(rep.unknown_ops.is_empty());
    let relu = g.op(g.find("relu").unwrap()).unwrap();
    assert_eq!(relu.op_type(), "Relu");
    assert_eq!(relu.output_desc(0).unwrap().shape.as_slice(), &[-1, 4]);
    assert_eq!(
        relu.attr(ascendir_torch::ATTR_MODULE)
            .and_then(|a| a.as_str()),
        Some("relu (torch.nn.modules.activation.ReLU)")
    );
    assert_eq!(
        relu.attr(ascendir_torch::ATTR_SOURCE)
            .and_then(|a| a.as_str()),
        Some("model.py:3 in forward")
    );
    let x = g.op(g.find("x").unwrap()).unwrap();
    assert_eq!(x.op_type(), "Data");
    let range = x
        .output_desc(0)
        .unwrap()
        .attrs
        .as_ref()
        .unwrap()
        .get("shape_range")
        .cloned();
    assert_eq!(
        range,
        Some(AttrValue::ListListInt(vec![vec![2, 8], vec![4, 4]]))
    );
    assert_eq!(g.op(g.find("add").unwrap()).unwrap().op_type(), "Add");
    assert!(g.net_output().is_some());
    assert!(g.attrs.get(ascendir_torch::ATTR_GUARDS).is_some());
}

#[test]
fn unknown_ops_are_kept() {
    let (g, rep) = convert(&program("aten.frobnicate.default")).unwrap();
    assert_eq!(rep.unknown_ops.get("aten::frobnicate"), Some(&1));
    let n = g.op(g.find("relu").unwrap()).unwrap();
    assert_eq!(n.op_type(), "aten::frobnicate");
    assert!(n.attr(ascendir_torch::ATTR_SCHEMA).is_some());
}

#[test]
fn non_aten_calls_name_the_node() {
    let mut p = program("torch.ops.higher_order.cond");
    p.info[8] = -1;
    match convert(&p) {
        Err(TorchError::Unsupported { node, target, .. }) => {
            assert_eq!(node, "relu");
            assert_eq!(target, "torch.ops.higher_order.cond");
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn malformed_streams_are_errors() {
    let mut p = program("aten.relu.default");
    p.code[1] = 7; // a reference to a later node
    assert!(matches!(convert(&p), Err(TorchError::Malformed(_))));
    let mut p = program("aten.relu.default");
    p.code_off[3] = 99;
    assert!(matches!(convert(&p), Err(TorchError::Malformed(_))));
    let mut p = program("aten.relu.default");
    p.consts[0].1 = Bytes::from(vec![0u8; 3]);
    assert!(matches!(convert(&p), Err(TorchError::Unsupported { .. })));
    let mut p = program("aten.relu.default");
    p.kinds.pop();
    assert!(matches!(convert(&p), Err(TorchError::Malformed(_))));
}
