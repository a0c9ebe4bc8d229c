//! GE `ge_ir.proto` interop: ModelDef binary and text format, OM containers, and the conversion
//! between ascendir graphs and ModelDef messages.
#![deny(missing_docs)]
