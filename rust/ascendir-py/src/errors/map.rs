//! The one conversion of an [`Error`] into a Python exception of `ascendir.errors`: the class
//! for each engine error and the fields it carries as exception attributes.

use ascendir_asc::expr::EvalError;
use ascendir_asc::tiling::TilingError;
use ascendir_asc::AscError;
use ascendir_compiler::{CompileError, ErrorKind};
use ascendir_ir::dump_read::DumpTextError;
use ascendir_ir::infer::InferError;
use ascendir_ir::instantiate::InstantiateError;
use ascendir_ir::registry::RegistryError;
use ascendir_ir::IrError;
use ascendir_onnx::OnnxError;
use ascendir_proto::ProtoError;
use ascendir_torch::TorchError;
use pyo3::exceptions::{PyMemoryError, PyOSError};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use super::*;

/// `value` as a Python object, `None` when it cannot be built.
fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> Py<PyAny> {
    value.into_py_any(py).unwrap_or_else(|_| py.None())
}

impl Error {
    /// The Python exception of this error.
    pub(super) fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Error::Py(e) => e,
            Error::Ir(e) => ir(py, e),
            Error::Proto(e) => proto(py, e),
            Error::Onnx(e) => onnx(py, e),
            Error::Torch(e) => torch(py, e),
            Error::Asc(e) => asc(py, e),
            Error::Tiling(e) => tiling(py, e),
            Error::Compile(e) => compile(py, e),
            Error::Registry(e) => registry(py, e),
            Error::Infer(e) => infer(py, &e),
            Error::Instantiate(InstantiateError::Build(e)) => registry(py, e),
            Error::Instantiate(e) => raise(py, invalid_argument_error(py), e.to_string(), &[]),
            Error::DumpText(e) => dump_text(py, &e),
        }
    }
}

fn ir(py: Python<'_>, err: IrError) -> PyErr {
    let msg = err.to_string();
    match err {
        IrError::InvalidArgument(_) => raise(py, invalid_argument_error(py), msg, &[]),
        IrError::StaleHandle { .. } | IrError::StaleSubgraph(_) => {
            raise(py, stale_handle_error(py), msg, &[])
        }
        IrError::NotFound(_) | IrError::AnchorOutOfRange { .. } => {
            raise(py, not_found_error(py), msg, &[])
        }
        IrError::Duplicate(_) => raise(py, duplicate_error(py), msg, &[]),
        IrError::Link(_) | IrError::NotLinked { .. } => raise(py, link_error(py), msg, &[]),
        IrError::Overflow(_) => raise(py, overflow_error(py), msg, &[]),
        IrError::Cycle { nodes, .. } => {
            let nodes = obj(py, nodes);
            raise(py, cycle_error(py), msg, &[("nodes", nodes)])
        }
        IrError::Validation { problems, .. } => {
            let problems = obj(py, problems);
            raise(py, validation_error(py), msg, &[("problems", problems)])
        }
        // A variant added to the IR later and not mapped here yet: the base class.
        _ => raise(py, base_error(py), msg, &[]),
    }
}

/// `DecodeError` with `.offset` (the byte offset of the line at fault) for a text dump.
fn dump_text(py: Python<'_>, err: &DumpTextError) -> PyErr {
    decode(py, err.to_string(), err.offset(), py.None())
}

/// `DecodeError` with `.offset` / `.path` (GE ModelDef, text and OM decoding).
fn proto(py: Python<'_>, err: ProtoError) -> PyErr {
    let msg = err.to_string();
    match &err {
        ProtoError::Encode(_) => raise(py, invalid_argument_error(py), msg, &[]),
        ProtoError::Io(_) => PyOSError::new_err(msg),
        ProtoError::OutOfMemory { .. } => PyMemoryError::new_err(msg),
        _ => decode(py, msg, err.offset(), err.path()),
    }
}

/// `DecodeError` with `.offset` (bytes into the input, None when unknown) and `.path` (the
/// field path of the message being decoded): the one shape of every decoder's error.
fn decode<'py>(
    py: Python<'py>,
    msg: String,
    offset: impl IntoPyObject<'py>,
    path: impl IntoPyObject<'py>,
) -> PyErr {
    let offset = obj(py, offset);
    let path = obj(py, path);
    raise(
        py,
        decode_error(py),
        msg,
        &[("offset", offset), ("path", path)],
    )
}

fn onnx(py: Python<'_>, err: OnnxError) -> PyErr {
    let msg = err.to_string();
    match err {
        OnnxError::Decode { offset, path, .. } => decode(py, msg, offset, path),
        OnnxError::Io(_) => PyOSError::new_err(msg),
        OnnxError::ExternalData {
            tensor, location, ..
        } => {
            let tensor = obj(py, tensor);
            let location = obj(py, location);
            raise(
                py,
                external_data_error(py),
                msg,
                &[("tensor", tensor), ("location", location)],
            )
        }
        OnnxError::DuplicateValue {
            graph,
            value,
            first,
            second,
        } => {
            let fields = [
                ("graph", obj(py, graph)),
                ("value", obj(py, value)),
                ("first", obj(py, first)),
                ("second", obj(py, second)),
            ];
            raise(py, duplicate_error(py), msg, &fields)
        }
        OnnxError::OutOfMemory { .. } => PyMemoryError::new_err(msg),
        OnnxError::Invalid(_) | OnnxError::Unsupported(_) => {
            raise(py, invalid_argument_error(py), msg, &[])
        }
        OnnxError::Ir(e) => ir(py, e),
    }
}

/// `TorchExportError` with `.node` / `.target` for an op the frontend cannot convert.
fn torch(py: Python<'_>, err: TorchError) -> PyErr {
    let msg = err.to_string();
    match err {
        TorchError::Unsupported { node, target, .. } => {
            let node = obj(py, node);
            let target = obj(py, target);
            raise(
                py,
                torch_export_error(py),
                msg,
                &[("node", node), ("target", target)],
            )
        }
        TorchError::Malformed(_) => raise(py, invalid_argument_error(py), msg, &[]),
        TorchError::Ir(e) => ir(py, e),
    }
}

fn asc(py: Python<'_>, err: AscError) -> PyErr {
    let msg = err.to_string();
    match err {
        AscError::InvalidArgument(_) => raise(py, invalid_argument_error(py), msg, &[]),
        AscError::NotFound(_) => raise(py, not_found_error(py), msg, &[]),
        AscError::Registry(_) => raise(py, registry_error(py), msg, &[]),
        AscError::Inference(_) => raise(py, inference_error(py), msg, &[]),
        AscError::Validation { problems, .. } => {
            let problems = obj(py, problems);
            raise(py, validation_error(py), msg, &[("problems", problems)])
        }
        AscError::Decode { path, .. } => {
            let path = obj(py, path);
            raise(py, decode_error(py), msg, &[("path", path)])
        }
        AscError::Parse(p) => {
            let offset = obj(py, p.offset);
            raise(py, invalid_argument_error(py), msg, &[("offset", offset)])
        }
        AscError::Eval(EvalError::Overflow(_)) => raise(py, overflow_error(py), msg, &[]),
        AscError::Eval(EvalError::Unbound(_)) => raise(py, not_found_error(py), msg, &[]),
        AscError::Eval(_) => raise(py, invalid_argument_error(py), msg, &[]),
    }
}

/// `TilingError` with `.constraint` and `.excess`.
fn tiling(py: Python<'_>, e: TilingError) -> PyErr {
    let constraint = obj(py, e.constraint);
    let excess = obj(py, e.excess);
    raise(
        py,
        tiling_error(py),
        e.message,
        &[("constraint", constraint), ("excess", excess)],
    )
}

/// `CompileError` with `.stage`, `.node`, `.reason`, `.offset`, `.kind` and, for a tiling
/// failure, `.constraint` and `.excess` (None otherwise).
fn compile(py: Python<'_>, e: CompileError) -> PyErr {
    let msg = e.to_string();
    let (constraint, excess) = match &*e.kind {
        ErrorKind::Tiling {
            constraint, excess, ..
        } => (Some(constraint.clone()), Some(*excess)),
        _ => (None, None),
    };
    let fields = [
        ("stage", obj(py, e.stage.name())),
        ("node", obj(py, e.node)),
        ("reason", obj(py, e.reason)),
        ("offset", obj(py, e.offset)),
        ("kind", obj(py, e.kind.name())),
        ("constraint", obj(py, constraint)),
        ("excess", obj(py, excess)),
    ];
    raise(py, compile_error(py), msg, &fields)
}

fn registry(py: Python<'_>, e: RegistryError) -> PyErr {
    match e {
        RegistryError::Registration(m) => raise(py, registry_error(py), m, &[]),
        RegistryError::Invalid(m) => raise(py, invalid_argument_error(py), m, &[]),
        RegistryError::UnknownType {
            ref op_type,
            ref suggestions,
        } => {
            let msg = format!(
                "{e} (register it with ascendir.register_op, or pass allow_unregistered=True to \
                 add it with the ports as given)"
            );
            let fields = [
                ("op_type", obj(py, op_type.as_str())),
                ("suggestions", obj(py, suggestions.clone())),
            ];
            raise(py, not_found_error(py), msg, &fields)
        }
    }
}

/// `InferenceError` (or `SizeOverflowError`) with `.node` and `.rule`.
fn infer(py: Python<'_>, e: &InferError) -> PyErr {
    let cls = if e.is_overflow() {
        overflow_error(py)
    } else {
        inference_error(py)
    };
    let node = obj(py, e.node.as_str());
    let rule = obj(py, e.rule.as_str());
    raise(py, cls, e.to_string(), &[("node", node), ("rule", rule)])
}
