//! Encoding: graphs, ops, descs and attribute maps written straight to the wire.

use super::*;

mod attrs;
mod desc;
mod graph;
mod op;

pub(crate) use attrs::*;
pub(crate) use desc::*;
pub use graph::*;
pub(crate) use op::*;
