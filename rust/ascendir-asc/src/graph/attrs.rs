//! Attribute types of graphs, nodes and tensors: graph and compute types, API info, scheduling
//! info, memory, queue, buffer and legacy optimization attributes, and IR attribute values.

use ascendir_ir::DataType;

use crate::axis::AxisId;
use crate::error::{AscError, AscResult};
use crate::expr::Expr;

/// `HINT` (0) or `IMPL` (1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphType {
    /// What is computed.
    Hint = 0,
    /// How it is computed (after scheduling).
    Impl = 1,
}

macro_rules! int_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:expr => $s:expr),* $(,)? } default $d:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $v = $n),* }
        impl $name {
            /// From the GE number (unknown numbers give the invalid/default value).
            pub fn from_i64(v: i64) -> $name {
                match v { $($n => $name::$v,)* _ => $name::$d }
            }
            /// The GE number.
            pub fn code(self) -> i64 { self as i64 }
            /// The lower-case name used by the Python API and dumps.
            pub fn name(self) -> &'static str {
                match self { $($name::$v => $s),* }
            }
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$v),*];
        }
        impl Default for $name {
            fn default() -> $name { $name::$d }
        }
    };
}

int_enum! {
    /// GE's `ComputeType`.
    ComputeType {
        /// GM → UB copy.
        Load = 0 => "load",
        /// UB → GM copy.
        Store = 1 => "store",
        /// Store with reduction.
        ReduceStore = 2 => "reduce_store",
        /// Elementwise.
        Elewise = 3 => "elewise",
        /// Broadcast.
        Broadcast = 4 => "broadcast",
        /// Reduction.
        Reduce = 5 => "reduce",
        /// Transpose.
        Transpose = 6 => "transpose",
        /// Concat.
        Concat = 7 => "concat",
        /// Gather.
        Gather = 8 => "gather",
        /// Cube (matmul).
        Cube = 9 => "cube",
        /// Split.
        Split = 10 => "split",
        /// Not a compute node (buffers).
        Invalid = 11 => "invalid",
    } default Invalid
}

impl ComputeType {
    /// Parse a Python name (`"elemwise"` is accepted for `elewise`).
    pub fn parse(s: &str) -> AscResult<ComputeType> {
        if s == "elemwise" {
            return Ok(ComputeType::Elewise);
        }
        ComputeType::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| AscError::InvalidArgument(format!("unknown compute type '{s}'")))
    }

    /// GE's API completion: the API type and compute unit of this compute type.
    pub fn api_completion(self) -> (ApiType, ComputeUnit) {
        match self {
            ComputeType::Invalid => (ApiType::Buffer, ComputeUnit::None),
            // GE records Store on MTE2 as well (sic).
            ComputeType::Load | ComputeType::Store | ComputeType::Gather => {
                (ApiType::Compute, ComputeUnit::Mte2)
            }
            ComputeType::Cube => (ApiType::Compute, ComputeUnit::Cube),
            _ => (ApiType::Compute, ComputeUnit::Vector),
        }
    }
}

int_enum! {
    /// GE's `ApiType`.
    ApiType { /// Buffer op.
        Buffer = 0 => "buffer", /// Compute op.
        Compute = 1 => "compute", /// Unset.
        Invalid = 2 => "invalid" } default Invalid
}

int_enum! {
    /// GE's `ComputeUnit`.
    ComputeUnit { /// None.
        None = 0 => "none", /// MTE1.
        Mte1 = 1 => "mte1", /// MTE2.
        Mte2 = 2 => "mte2", /// MTE3.
        Mte3 = 3 => "mte3", /// Scalar.
        Scalar = 4 => "scalar", /// Vector.
        Vector = 5 => "vector", /// Cube.
        Cube = 6 => "cube", /// Invalid.
        Invalid = 7 => "invalid" } default Invalid
}

int_enum! {
    /// GE's `ExecuteCondition`.
    ExecCondition { /// No caching.
        NoCache = 0 => "no_cache", /// Cache across a block-split fused broadcast axis.
        CacheBlockSplitFusedBroadcastAxis = 1 => "cache_block_split_fused_brc_axis", /// Cache across a block-split original broadcast axis.
        CacheBlockSplitOriginBroadcastAxis = 2 => "cache_block_split_origin_brc_axis", /// Invalid.
        Invalid = 3 => "invalid" } default NoCache
}

int_enum! {
    /// GE's `AllocType`.
    AllocType { /// Global memory.
        Global = 0 => "global", /// L1.
        L1 = 1 => "l1", /// L2.
        L2 = 2 => "l2", /// A TBuf.
        Buffer = 3 => "buffer", /// A TQue.
        Queue = 4 => "queue", /// Invalid.
        Invalid = 5 => "invalid" } default Global
}

int_enum! {
    /// GE's `MemHardware`.
    MemHardware { /// Global memory.
        Gm = 0 => "gm", /// Unified buffer.
        Ub = 1 => "ub", /// Invalid.
        Invalid = 2 => "invalid" } default Gm
}

int_enum! {
    /// GE's `Position` (TPosition).
    Position { /// GM.
        Gm = 0 => "gm", /// VECIN.
        VecIn = 1 => "vecin", /// VECOUT.
        VecOut = 2 => "vecout", /// VECCALC.
        VecCalc = 3 => "veccalc", /// Invalid.
        Invalid = 4 => "invalid" } default Gm
}

/// An IR attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// Integer.
    Int(i64),
    /// Float.
    Float(f64),
    /// Bool.
    Bool(bool),
    /// String.
    Str(String),
    /// Size expression.
    Expr(Expr),
    /// List of integers.
    ListInt(Vec<i64>),
    /// Data type.
    DType(DataType),
}

/// Scheduling info of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedInfo {
    /// Execution order (-1 = node order).
    pub exec_order: i64,
    /// Loop axes, outer → inner.
    pub axis: Vec<AxisId>,
    /// Innermost axis that is still a loop (-1 = unset).
    pub loop_axis: AxisId,
    /// Caching condition.
    pub exec_condition: ExecCondition,
}

impl Default for SchedInfo {
    fn default() -> SchedInfo {
        SchedInfo {
            exec_order: -1,
            axis: Vec::new(),
            loop_axis: -1,
            exec_condition: ExecCondition::NoCache,
        }
    }
}

/// API info of a node.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ApiInfo {
    /// Buffer or compute.
    pub api_type: ApiType,
    /// Compute type.
    pub compute_type: ComputeType,
    /// Hardware unit.
    pub unit: ComputeUnit,
}

/// Memory placement of a tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct MemAttr {
    /// Tensor id (-1 = unset).
    pub tensor_id: i64,
    /// Allocation kind.
    pub alloc_type: AllocType,
    /// Hardware.
    pub hardware: MemHardware,
    /// TPosition.
    pub position: Position,
    /// Reuse id (-1 = none).
    pub reuse_id: i64,
    /// Legacy buffer ids.
    pub buf_ids: Vec<i64>,
    /// Legacy name.
    pub name: String,
}

impl Default for MemAttr {
    fn default() -> MemAttr {
        MemAttr {
            tensor_id: -1,
            alloc_type: AllocType::Global,
            hardware: MemHardware::Gm,
            position: Position::Gm,
            reuse_id: -1,
            buf_ids: Vec::new(),
            name: String::new(),
        }
    }
}

/// Queue binding (TQue).
#[derive(Clone, Debug, PartialEq)]
pub struct QueAttr {
    /// Queue id (-1 = none).
    pub id: i64,
    /// Depth.
    pub depth: i64,
    /// Buffer count.
    pub buf_num: i64,
    /// Legacy name.
    pub name: String,
}

impl Default for QueAttr {
    fn default() -> QueAttr {
        QueAttr {
            id: -1,
            depth: -1,
            buf_num: -1,
            name: String::new(),
        }
    }
}

/// Buffer binding (TBuf).
#[derive(Clone, Debug, PartialEq)]
pub struct BufAttr {
    /// Buffer id (-1 = none).
    pub id: i64,
    /// Legacy name.
    pub name: String,
}

impl Default for BufAttr {
    fn default() -> BufAttr {
        BufAttr {
            id: -1,
            name: String::new(),
        }
    }
}

/// Legacy optimization attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct OptAttr {
    /// Legacy reuse id.
    pub reuse_id: i64,
    /// Referenced tensor.
    pub ref_tensor: i64,
    /// Merge scope.
    pub merge_scope: i64,
}

impl Default for OptAttr {
    fn default() -> OptAttr {
        OptAttr {
            reuse_id: -1,
            ref_tensor: -1,
            merge_scope: -1,
        }
    }
}
