//! Decoding: one pass over the bytes of each op, desc and attribute map, straight into the IR,
//! with the reference path (prost messages, then conversion) for what it does not read.

use super::*;

mod attrs;
mod desc;
mod graph;
mod op;
mod ports;

pub(crate) use attrs::*;
pub(crate) use desc::*;
pub use graph::*;
pub(crate) use op::*;
pub(crate) use ports::*;
