//! Anchor addresses. There are no edge objects: a link is a pair of mutual peer entries.

use crate::graph::NodeId;

/// Index of a control anchor.
pub const CONTROL: i32 = -1;

/// An output-side anchor: out-data `index ≥ 0`, or the out-control anchor (`index == -1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OutAnchor {
    /// The owning node.
    pub node: NodeId,
    /// The output index, or -1 for control.
    pub index: i32,
}

/// An input-side anchor: in-data `index ≥ 0`, or the in-control anchor (`index == -1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InAnchor {
    /// The owning node.
    pub node: NodeId,
    /// The input index, or -1 for control.
    pub index: i32,
}

impl OutAnchor {
    /// Out-data anchor `index` of `node`.
    pub fn data(node: NodeId, index: usize) -> Self {
        OutAnchor {
            node,
            index: index as i32,
        }
    }
    /// The out-control anchor of `node`.
    pub fn control(node: NodeId) -> Self {
        OutAnchor {
            node,
            index: CONTROL,
        }
    }
    /// Whether this is the control anchor.
    pub fn is_control(self) -> bool {
        self.index == CONTROL
    }
}

impl InAnchor {
    /// In-data anchor `index` of `node`.
    pub fn data(node: NodeId, index: usize) -> Self {
        InAnchor {
            node,
            index: index as i32,
        }
    }
    /// The in-control anchor of `node`.
    pub fn control(node: NodeId) -> Self {
        InAnchor {
            node,
            index: CONTROL,
        }
    }
    /// Whether this is the control anchor.
    pub fn is_control(self) -> bool {
        self.index == CONTROL
    }
}

/// Either side, for calls that accept any anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// An output-side anchor.
    Out(OutAnchor),
    /// An input-side anchor.
    In(InAnchor),
}

impl Anchor {
    /// The owning node.
    pub fn node(self) -> NodeId {
        match self {
            Anchor::Out(a) => a.node,
            Anchor::In(a) => a.node,
        }
    }
    /// The anchor index (-1 for control).
    pub fn index(self) -> i32 {
        match self {
            Anchor::Out(a) => a.index,
            Anchor::In(a) => a.index,
        }
    }
}
