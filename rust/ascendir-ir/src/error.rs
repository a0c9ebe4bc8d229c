//! The structured error type of the graph IR.

use thiserror::Error;

use crate::graph::NodeId;
use crate::op_desc::Side;

/// Every way an IR operation can fail. Each message names the node, anchor or field involved.
///
/// The fielded variants carry what identifies the failure; the string variants carry their
/// message. New variants may be added: matches outside this crate need a catch-all arm.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IrError {
    /// An argument is malformed (bad index, unknown name, wrong kind).
    #[error("{0}")]
    InvalidArgument(String),
    /// A node id no longer resolves: the node was removed.
    #[error("stale node handle: node {node:?} is not in graph '{graph}'")]
    StaleHandle {
        /// The id that no longer resolves.
        node: NodeId,
        /// The graph it was looked up in.
        graph: String,
    },
    /// Any other handle that no longer resolves (a subgraph no longer registered on its root).
    #[error("stale node handle: {0}")]
    StaleSubgraph(String),
    /// An anchor index past the end of its node's data anchors on `side`.
    #[error(
        "node '{node}' has no {} anchor {index} (it has {len} {}s)",
        side.word(),
        side.word()
    )]
    AnchorOutOfRange {
        /// The node's name.
        node: String,
        /// Input or output anchors.
        side: Side,
        /// The index asked for.
        index: i32,
        /// How many data anchors the node has on `side`.
        len: usize,
    },
    /// A lookup by name or index found nothing.
    #[error("{0}")]
    NotFound(String),
    /// A name that must be unique is taken.
    #[error("{0}")]
    Duplicate(String),
    /// A link or unlink violates the anchor rules.
    #[error("{0}")]
    Link(String),
    /// An unlink, peer replacement or insertion needs a link `src -> dst` that is not there.
    /// `src` and `dst` are the anchors as [`crate::Graph::describe`] names them; the message
    /// leads with the anchor of `seen_from` (the side the call started from).
    #[error("{}", not_linked_text(src, dst, *seen_from))]
    NotLinked {
        /// The output-side anchor.
        src: String,
        /// The input-side anchor.
        dst: String,
        /// Which anchor the message names first.
        seen_from: Side,
    },
    /// The graph has a cycle; `nodes` lists one cycle in order.
    #[error("graph '{graph}' has a cycle: {}", nodes.join(" -> "))]
    Cycle {
        /// The graph that was being sorted.
        graph: String,
        /// The node names of one cycle, in edge order.
        nodes: Vec<String>,
    },
    /// The verifier found broken invariants (one message each).
    #[error("graph '{graph}' is invalid:\n  {}", problems.join("\n  "))]
    Validation {
        /// The graph that was checked.
        graph: String,
        /// Every problem found.
        problems: Vec<String>,
    },
    /// An arithmetic result does not fit (element counts, byte sizes).
    #[error("{0}")]
    Overflow(String),
}

fn not_linked_text(src: &str, dst: &str, seen_from: Side) -> String {
    match seen_from {
        Side::Output => format!("{src} is not linked to {dst}"),
        Side::Input => format!("{dst} is not linked to {src}"),
    }
}

/// Shorthand for results of IR operations.
pub type IrResult<T> = Result<T, IrError>;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::anchor::{InAnchor, OutAnchor};
    use crate::graph::Graph;
    use crate::op_desc::OpDesc;
    use crate::tensor::TensorDesc;

    fn op(name: &str, inputs: usize, outputs: usize) -> OpDesc {
        let d = Arc::new(TensorDesc::default());
        let mut op = OpDesc::new(name, "Op");
        for i in 0..inputs {
            op.add_input(&format!("x{i}"), d.clone());
        }
        for i in 0..outputs {
            op.add_output(&format!("y{i}"), d.clone()).unwrap();
        }
        op
    }

    /// `a` (1 output) and `b` (2 inputs) with `a:0 -> b:0`, `c` (1 output) unlinked.
    fn graph() -> (Graph, NodeId, NodeId, NodeId) {
        let mut g = Graph::new("g");
        let a = g.add_node(op("a", 0, 1)).unwrap();
        let b = g.add_node(op("b", 2, 0)).unwrap();
        let c = g.add_node(op("c", 0, 1)).unwrap();
        g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
        (g, a, b, c)
    }

    #[test]
    fn stale_handles_carry_the_node_and_graph() {
        let (mut g, a, _, _) = graph();
        g.erase_node(a).unwrap();
        let e = g.op(a).unwrap_err();
        assert_eq!(
            e,
            IrError::StaleHandle {
                node: a,
                graph: "g".into()
            }
        );
        assert_eq!(
            e.to_string(),
            format!("stale node handle: node {a:?} is not in graph 'g'")
        );
        let e = g.remove_node(a).unwrap_err();
        assert!(matches!(e, IrError::StaleHandle { node, .. } if node == a));
        let e = IrError::StaleSubgraph("subgraph 's' is no longer registered".into());
        assert_eq!(
            e.to_string(),
            "stale node handle: subgraph 's' is no longer registered"
        );
    }

    #[test]
    fn anchors_out_of_range_carry_node_side_index_and_count() {
        let (mut g, a, b, _) = graph();
        let e = g
            .link(OutAnchor::data(a, 3), InAnchor::data(b, 1))
            .unwrap_err();
        assert_eq!(
            e,
            IrError::AnchorOutOfRange {
                node: "a".into(),
                side: Side::Output,
                index: 3,
                len: 1
            }
        );
        assert_eq!(
            e.to_string(),
            "node 'a' has no output anchor 3 (it has 1 outputs)"
        );
        let e = g
            .unlink(OutAnchor::data(a, 0), InAnchor { node: b, index: -2 })
            .unwrap_err();
        assert_eq!(
            e,
            IrError::AnchorOutOfRange {
                node: "b".into(),
                side: Side::Input,
                index: -2,
                len: 2
            }
        );
        assert_eq!(
            e.to_string(),
            "node 'b' has no input anchor -2 (it has 2 inputs)"
        );
        assert!(matches!(
            g.check_anchor(crate::anchor::Anchor::In(InAnchor::data(b, 2))),
            Err(IrError::AnchorOutOfRange {
                index: 2,
                len: 2,
                ..
            })
        ));
    }

    #[test]
    fn missing_links_carry_both_anchors_in_the_old_wording() {
        let (mut g, a, b, c) = graph();
        let not_linked = |e: IrError, from: Side| {
            assert_eq!(
                e,
                IrError::NotLinked {
                    src: "'a' output 0".into(),
                    dst: "'b' input 1".into(),
                    seen_from: from
                }
            );
            e.to_string()
        };
        let a0 = OutAnchor::data(a, 0);
        let b1 = InAnchor::data(b, 1);
        let from_src = "'a' output 0 is not linked to 'b' input 1";
        let e = g.unlink(a0, b1).unwrap_err();
        assert_eq!(not_linked(e, Side::Output), from_src);
        let n = g.add_node(op("n", 1, 1)).unwrap();
        let e = g
            .replace_out_peer(a0, b1, InAnchor::data(n, 0))
            .unwrap_err();
        assert_eq!(not_linked(e, Side::Output), from_src);
        let e = g
            .replace_in_peer(b1, a0, OutAnchor::data(c, 0))
            .unwrap_err();
        assert_eq!(
            not_linked(e, Side::Input),
            "'b' input 1 is not linked to 'a' output 0"
        );
        let e = g
            .insert_between(a0, b1, InAnchor::data(n, 0), OutAnchor::data(n, 0))
            .unwrap_err();
        assert_eq!(not_linked(e, Side::Output), from_src);
        let e = g.insert_after(a0, &[b1], op("m", 1, 1), 0, 0).unwrap_err();
        assert_eq!(not_linked(e, Side::Output), from_src);
        assert!(g.find("m").is_none());
    }
}
