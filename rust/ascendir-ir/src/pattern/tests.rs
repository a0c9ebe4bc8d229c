use std::sync::Arc;

use bytes::Bytes;

use super::*;
use crate::anchor::InAnchor;
use crate::dtype::DataType;
use crate::format::Format;
use crate::op_desc::OpDesc;
use crate::tensor::TensorDesc;

fn op(g: &mut Graph, name: &str, ty: &str, ins: &[NodeId], attrs: &[(&str, AttrValue)]) -> NodeId {
    let mut o = OpDesc::new(name, ty);
    for i in 0..ins.len() {
        o.add_input(&format!("x{i}"), Arc::new(TensorDesc::default()));
    }
    o.add_output("y", Arc::new(TensorDesc::default())).unwrap();
    for (k, v) in attrs {
        o.set_attr(k, v.clone());
    }
    let id = g.add_node(o).unwrap();
    for (i, &src) in ins.iter().enumerate() {
        g.link(OutAnchor::data(src, 0), InAnchor::data(id, i))
            .unwrap();
    }
    id
}

fn konst(g: &mut Graph, name: &str, vals: &[f32]) -> NodeId {
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let desc = TensorDesc::new(&[vals.len() as i64], DataType::FLOAT, Format::ND);
    let t = Tensor::new(desc, Bytes::from(data));
    op(g, name, "Const", &[], &[("value", AttrValue::Tensor(t))])
}

/// Pattern `Relu(Mul(x, 1))` and `Mul(x, 1)`.
fn patterns() -> (Graph, Graph) {
    let mut p = Graph::new("relu_mul_one");
    let x = op(&mut p, "x", "Data", &[], &[]);
    let one = konst(&mut p, "one", &[1.0]);
    let m = op(&mut p, "m", "Mul", &[x, one], &[]);
    let r = op(&mut p, "r", "Relu", &[m], &[]);
    p.add_output_node(r, 0).unwrap();
    let mut q = Graph::new("mul_one");
    let x = op(&mut q, "x", "Data", &[], &[]);
    let one = konst(&mut q, "one", &[1.0]);
    let m = op(&mut q, "m", "Mul", &[x, one], &[]);
    q.add_output_node(m, 0).unwrap();
    (p, q)
}

#[test]
fn merged_matcher_finds_matches_and_explains_misses() {
    let (p, q) = patterns();
    let set = PatternSet::new(&[("a".into(), &p), ("b".into(), &q)]).unwrap();
    // x, one and Mul(x, one) are shared by both rules.
    assert_eq!(set.shared_len(), 4);
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let one = konst(&mut g, "c1", &[1.0, 1.0]);
    let two = konst(&mut g, "c2", &[2.0]);
    let m1 = op(&mut g, "m1", "Mul", &[x, one], &[]);
    let r1 = op(&mut g, "r1", "Relu", &[m1], &[]);
    let m2 = op(&mut g, "m2", "Mul", &[r1, two], &[]);
    let r2 = op(&mut g, "r2", "Relu", &[m2], &[]);
    g.add_output_node(r2, 0).unwrap();
    let ms = set.find_matches(&g, true);
    assert_eq!(ms.len(), 1);
    assert_eq!(ms[0].rule, 0);
    assert_eq!(ms[0].root, r1);
    assert_eq!(ms[0].nodes.to_vec(), vec![one, m1, r1]);
    assert_eq!(
        ms[0].captures.to_vec(),
        vec![(std::sync::Arc::from("x"), OutAnchor::data(x, 0))]
    );
    // Without greedy selection the Mul also matches rule b on its own.
    assert_eq!(set.find_matches(&g, false).len(), 2);
    let why = set.why_not(&g, 0, r2).unwrap().unwrap();
    assert!(why.contains("Const value is 2.0, not 1.0"), "{why}");
    assert!(why.contains("input 1 of Mul 'm'"), "{why}");
    let why = set.why_not(&g, 0, m1).unwrap().unwrap();
    assert!(why.contains("op type is Mul, not Relu"), "{why}");
    assert_eq!(set.why_not(&g, 0, r1).unwrap(), None);
    assert!(set.why_not(&g, 5, r1).is_err());
    // An extra use of the intermediate Mul stops the match.
    op(&mut g, "spy", "Abs", &[m1], &[]);
    let why = set.why_not(&g, 0, r1).unwrap().unwrap();
    assert!(why.contains("has 2 uses, the pattern allows 1"), "{why}");
    assert!(set.find_matches(&g, true).iter().all(|m| m.rule == 1));
}

#[test]
fn attributes_and_bad_patterns() {
    let mut p = Graph::new("p");
    let x = op(&mut p, "x", "Data", &[], &[]);
    let keys = AttrValue::ListString(vec!["axis".into()]);
    let s = op(
        &mut p,
        "s",
        "Softmax",
        &[x],
        &[("axis", AttrValue::Int(-1)), (PATTERN_ATTRS, keys)],
    );
    p.add_output_node(s, 0).unwrap();
    let set = PatternSet::new(&[("sm".into(), &p)]).unwrap();
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let s = op(
        &mut g,
        "s1",
        "Softmax",
        &[x],
        &[("axis", AttrValue::Int(1))],
    );
    let why = set.why_not(&g, 0, s).unwrap().unwrap();
    assert!(
        why.contains("attribute 'axis' is Int(1), not Int(-1)"),
        "{why}"
    );
    // A pattern without an output, or rooted at a capture, is refused.
    let empty = Graph::new("e");
    assert!(matches!(
        PatternSet::new(&[("e".into(), &empty)]),
        Err(PatternError::NoRoot(_))
    ));
    let mut cap = Graph::new("c");
    let x = op(&mut cap, "x", "Data", &[], &[]);
    cap.add_output_node(x, 0).unwrap();
    assert!(matches!(
        PatternSet::new(&[("c".into(), &cap)]),
        Err(PatternError::RootNotOp(_))
    ));
}

#[test]
fn half_precision_constants_decode() {
    assert_eq!(compile::tensor_values_for_test(0x3c00), 1.0);
    assert_eq!(compile::tensor_values_for_test(0xc000), -2.0);
    assert_eq!(compile::tensor_values_for_test(0x0000), 0.0);
}

/// `Mul(x, c)` for a scalar `c`.
fn mul_by(c: f32) -> Graph {
    let mut p = Graph::new("mul_by");
    let x = op(&mut p, "x", "Data", &[], &[]);
    let k = konst(&mut p, "k", &[c]);
    let m = op(&mut p, "m", "Mul", &[x, k], &[]);
    p.add_output_node(m, 0).unwrap();
    p
}

#[test]
fn scalar_inputs_pick_the_rules_to_try() {
    let pats: Vec<Graph> = [3.0, 2.0, f32::NAN, -0.0]
        .iter()
        .map(|c| mul_by(*c))
        .collect();
    let named: Vec<(String, &Graph)> = pats
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("r{i}"), p))
        .collect();
    let set = PatternSet::new(&named).unwrap();
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let two = konst(&mut g, "two", &[2.0, 2.0]);
    let zero = konst(&mut g, "zero", &[0.0]);
    let nan = konst(&mut g, "nan", &[f32::NAN]);
    let a = op(&mut g, "a", "Mul", &[x, two], &[]);
    let b = op(&mut g, "b", "Mul", &[x, zero], &[]);
    let c = op(&mut g, "c", "Mul", &[x, nan], &[]);
    let got: Vec<(usize, NodeId)> = set
        .find_matches(&g, false)
        .iter()
        .map(|m| (m.rule, m.root))
        .collect();
    // -0.0 equals 0.0; NaN equals nothing.
    assert_eq!(got, vec![(1, a), (3, b)]);
    let why = set.why_not(&g, 2, c).unwrap().unwrap();
    assert!(why.contains("Const value is NaN, not NaN"), "{why}");
}

#[test]
fn capture_rewrites_in_bulk() {
    let (_, q) = patterns();
    let set = PatternSet::new(&[("mul1".into(), &q)]).unwrap();
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let one = konst(&mut g, "c1", &[1.0]);
    let m1 = op(&mut g, "m1", "Mul", &[x, one], &[]);
    let m2 = op(&mut g, "m2", "Mul", &[m1, one], &[]);
    let r = op(&mut g, "r", "Relu", &[m2], &[]);
    g.add_output_node(m2, 0).unwrap();
    let n = set
        .rewrite_to_captures(&mut g, None, &[Some("x".into())])
        .unwrap();
    assert_eq!(n, 2);
    assert!(!g.contains(m1) && !g.contains(m2) && !g.contains(one));
    assert_eq!(
        g.uses(OutAnchor::data(x, 0)).unwrap(),
        vec![InAnchor::data(r, 0)]
    );
    assert_eq!(g.outputs(), &[(x, 0)]);
    assert_eq!(set.rewrite_to_captures(&mut g, None, &[None]).unwrap(), 0);
}

#[test]
fn bulk_rewrite_keeps_a_shared_constant_that_is_still_read() {
    // Many `Mul(h, one)` over one shared constant, which one other node (an `Add`) also
    // reads: every Mul goes, the constant stays with exactly that reader.
    let (_, q) = patterns();
    let set = PatternSet::new(&[("mul1".into(), &q)]).unwrap();
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let one = konst(&mut g, "c1", &[1.0]);
    let mut h = x;
    let mut muls = Vec::new();
    for i in 0..50 {
        let m = op(&mut g, &format!("m{i}"), "Mul", &[h, one], &[]);
        muls.push(m);
        h = op(&mut g, &format!("r{i}"), "Relu", &[m], &[]);
    }
    let add = op(&mut g, "add", "Add", &[h, one], &[]);
    g.add_output_node(add, 0).unwrap();
    let n = set
        .rewrite_to_captures(&mut g, None, &[Some("x".into())])
        .unwrap();
    assert_eq!(n, 50);
    assert!(muls.iter().all(|m| !g.contains(*m)));
    assert_eq!(
        g.uses(OutAnchor::data(one, 0)).unwrap(),
        vec![InAnchor::data(add, 1)]
    );
    g.validate().unwrap();
    assert_eq!(g.len(), 2 + 50 + 1);
}

#[test]
fn removing_a_set_detaches_each_producer_list_once() {
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let one = konst(&mut g, "c1", &[1.0]);
    let muls: Vec<NodeId> = (0..20)
        .map(|i| op(&mut g, &format!("m{i}"), "Mul", &[x, one], &[]))
        .collect();
    let keep = op(&mut g, "keep", "Add", &[x, one], &[]);
    let gone: Vec<NodeId> = muls.iter().copied().step_by(2).collect();
    g.remove_nodes(&gone, true).unwrap();
    // The survivors keep their link order on both producers.
    let want: Vec<InAnchor> = muls
        .iter()
        .skip(1)
        .step_by(2)
        .map(|m| InAnchor::data(*m, 1))
        .chain([InAnchor::data(keep, 1)])
        .collect();
    assert_eq!(g.uses(OutAnchor::data(one, 0)).unwrap(), want);
    assert_eq!(g.uses(OutAnchor::data(x, 0)).unwrap().len(), 11);
    g.validate().unwrap();
}

/// Pattern of two outputs: `a = Relu(x)`, outputs `Add(a, y)` and `Mul(Exp(x), a)`.
fn two_outputs() -> Graph {
    let mut p = Graph::new("two");
    let x = op(&mut p, "x", "Data", &[], &[]);
    let y = op(&mut p, "y", "Data", &[], &[]);
    let a = op(&mut p, "a", "Relu", &[x], &[]);
    let add = op(&mut p, "add", "Add", &[a, y], &[]);
    let e = op(&mut p, "e", "Exp", &[x], &[]);
    let mul = op(&mut p, "mul", "Mul", &[e, a], &[]);
    p.add_output_node(add, 0).unwrap();
    p.add_output_node(mul, 0).unwrap();
    p
}

#[test]
fn a_pattern_of_several_outputs_binds_them_all() {
    let p = two_outputs();
    let set = PatternSet::new(&[("two".into(), &p)]).unwrap();
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let y = op(&mut g, "in2", "Data", &[], &[]);
    // A decoy Exp of x read by nothing of the pattern, then the real one.
    let decoy = op(&mut g, "decoy", "Exp", &[x], &[]);
    let a = op(&mut g, "a1", "Relu", &[x], &[]);
    let add = op(&mut g, "add1", "Add", &[a, y], &[]);
    let e = op(&mut g, "e1", "Exp", &[x], &[]);
    let mul = op(&mut g, "mul1", "Mul", &[e, a], &[]);
    // The outputs may be read outside the match, and be graph outputs.
    let tail = op(&mut g, "tail", "Abs", &[add], &[]);
    g.add_output_node(tail, 0).unwrap();
    g.add_output_node(mul, 0).unwrap();
    g.add_output_node(decoy, 0).unwrap();
    let ms = set.find_matches(&g, true);
    assert_eq!(ms.len(), 1, "{ms:?}");
    assert_eq!(ms[0].root, add);
    assert_eq!(
        ms[0].outputs.to_vec(),
        vec![OutAnchor::data(add, 0), OutAnchor::data(mul, 0)]
    );
    // Pattern order: the root's cone (post-order), then the second output's new nodes.
    assert_eq!(ms[0].nodes.to_vec(), vec![a, add, e, mul]);
    // The intermediate Relu is read by both outputs: a third reader stops the match.
    let spy = op(&mut g, "spy", "Neg", &[a], &[]);
    let why = set.why_not(&g, 0, add).unwrap().unwrap();
    assert!(why.contains("has 3 uses, the pattern allows 2"), "{why}");
    g.remove_node(spy).unwrap();
    assert_eq!(set.why_not(&g, 0, add).unwrap(), None);
    // With the Mul reading the Exp and the Relu the other way round, the second output is
    // not found.
    g.remove_node(mul).unwrap();
    op(&mut g, "mul2", "Mul", &[a, e], &[]);
    let why = set.why_not(&g, 0, add).unwrap().unwrap();
    assert!(why.starts_with("output 1:"), "{why}");
}

#[test]
fn outputs_are_checked_when_compiling() {
    // An output that shares nothing with the ones before it cannot be found.
    let mut p = Graph::new("apart");
    let x = op(&mut p, "x", "Data", &[], &[]);
    let y = op(&mut p, "y", "Data", &[], &[]);
    let a = op(&mut p, "a", "Relu", &[x], &[]);
    let b = op(&mut p, "b", "Exp", &[y], &[]);
    p.add_output_node(a, 0).unwrap();
    p.add_output_node(b, 0).unwrap();
    let err = PatternSet::new(&[("apart".into(), &p)]).unwrap_err();
    assert!(err.to_string().contains("shares no node"), "{err}");
    // A capture as a later output is refused.
    let mut q = Graph::new("cap");
    let x = op(&mut q, "x", "Data", &[], &[]);
    let a = op(&mut q, "a", "Relu", &[x], &[]);
    q.add_output_node(a, 0).unwrap();
    q.add_output_node(x, 0).unwrap();
    let err = PatternSet::new(&[("cap".into(), &q)]).unwrap_err();
    assert!(err.to_string().contains("capture or a constant"), "{err}");
}

#[test]
fn an_output_inside_the_root_cone_may_have_outside_readers() {
    // Outputs `Relu(Exp(x))` and its inner `Exp(x)`: the Exp is read outside the match.
    let mut p = Graph::new("inner");
    let x = op(&mut p, "x", "Data", &[], &[]);
    let e = op(&mut p, "e", "Exp", &[x], &[]);
    let r = op(&mut p, "r", "Relu", &[e], &[]);
    p.add_output_node(r, 0).unwrap();
    p.add_output_node(e, 0).unwrap();
    let set = PatternSet::new(&[("inner".into(), &p)]).unwrap();
    let mut g = Graph::new("g");
    let x = op(&mut g, "in", "Data", &[], &[]);
    let e = op(&mut g, "e1", "Exp", &[x], &[]);
    let r = op(&mut g, "r1", "Relu", &[e], &[]);
    let other = op(&mut g, "other", "Abs", &[e], &[]);
    g.add_output_node(r, 0).unwrap();
    g.add_output_node(other, 0).unwrap();
    let ms = set.find_matches(&g, true);
    assert_eq!(ms.len(), 1);
    assert_eq!(
        ms[0].outputs.to_vec(),
        vec![OutAnchor::data(r, 0), OutAnchor::data(e, 0)]
    );
    // A rewrite to a capture replaces one value: refused for such a rule.
    let mut g2 = g.clone();
    assert!(set
        .rewrite_to_captures(&mut g2, None, &[Some("x".into())])
        .is_err());
}
