//! Axes: the loop dimensions of an AscGraph.

use crate::expr::Expr;

/// An axis id: the axis' index in its graph (`-1` = none).
pub type AxisId = i64;

/// GE's `Axis::Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum AxisType {
    /// An axis of the original loop nest (0).
    Original = 0,
    /// Outer part of a block (multi-core) split (1).
    BlockOuter = 1,
    /// Inner part of a block split (2).
    BlockInner = 2,
    /// Outer part of a tile (UB) split (3).
    TileOuter = 3,
    /// Inner part of a tile split (4).
    TileInner = 4,
    /// A merge of several axes (5).
    Merged = 5,
    /// Invalid / unset (6).
    Invalid = 6,
}

impl AxisType {
    /// From GE's number (unknown numbers give `Invalid`).
    pub fn from_i32(v: i32) -> AxisType {
        match v {
            0 => AxisType::Original,
            1 => AxisType::BlockOuter,
            2 => AxisType::BlockInner,
            3 => AxisType::TileOuter,
            4 => AxisType::TileInner,
            5 => AxisType::Merged,
            _ => AxisType::Invalid,
        }
    }

    /// The name used by GE's text dump (`ORIGINAL`, `BLOCK_OUT`, ...).
    pub fn dump_name(self) -> &'static str {
        match self {
            AxisType::Original => "ORIGINAL",
            AxisType::BlockOuter => "BLOCK_OUT",
            AxisType::BlockInner => "BLOCK_IN",
            AxisType::TileOuter => "TILE_OUT",
            AxisType::TileInner => "TILE_IN",
            AxisType::Merged => "MERGED",
            AxisType::Invalid => "UNKNOWN",
        }
    }
}

/// One axis of a graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Index in the graph's axis list.
    pub id: AxisId,
    /// Unique name.
    pub name: String,
    /// Kind (only the last transform is recorded).
    pub axis_type: AxisType,
    /// Whether this is a block axis (serialized, rarely set).
    pub bind_block: bool,
    /// Length.
    pub size: Expr,
    /// Hard alignment of the tile size (1 from `create_axis`).
    pub align: Expr,
    /// Parent axes: `[parent]` for a split, the merged axes for a merge.
    pub from: Vec<AxisId>,
    /// The sibling produced by the same split, or -1.
    pub split_pair_other_id: AxisId,
    /// Allow padding beyond the size (tiling).
    pub allow_oversize_axis: bool,
    /// `false` requires `parent % child == 0` (tiling).
    pub allow_unaligned_tail: bool,
}

impl Axis {
    /// A fresh axis with GE's `CreateAxis` defaults.
    pub fn new(id: AxisId, name: &str, axis_type: AxisType, size: Expr) -> Axis {
        Axis {
            id,
            name: name.to_string(),
            axis_type,
            bind_block: false,
            size,
            align: Expr::int(1),
            from: Vec::new(),
            split_pair_other_id: -1,
            allow_oversize_axis: false,
            allow_unaligned_tail: true,
        }
    }
}
