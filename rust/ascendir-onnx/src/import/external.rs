//! External data and model files: paths confined to the model directory, regular files only,
//! byte ranges read into fallibly reserved buffers.

use std::path::{Component, Path};

use bytes::Bytes;

use super::Ctx;
use crate::error::{OnnxError, OnnxResult};

impl Ctx {
    /// The bytes `offset .. offset + length` (to the end without a length) of external data
    /// file `location` of tensor `tensor`, opened once per import.
    pub(super) fn external(
        &mut self,
        tensor: &str,
        location: &str,
        offset: u64,
        length: Option<u64>,
    ) -> OnnxResult<Bytes> {
        let base = self.base_dir.as_ref().ok_or_else(|| {
            OnnxError::Invalid(format!(
                "external data '{location}' needs the model's directory (load from a path)"
            ))
        })?;
        let rel = Path::new(location);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(OnnxError::Invalid(format!(
                "external data location '{location}' must be a relative path inside the model directory"
            )));
        }
        if !self.files.contains_key(location) {
            let file = open_external(base, rel, tensor, location)?;
            self.files.insert(location.to_string(), file);
        }
        let (file, size) = &self.files[location];
        let end = match length {
            Some(l) => offset.checked_add(l),
            None => Some(*size),
        };
        let Some(end) = end.filter(|&e| offset <= e && e <= *size) else {
            return Err(OnnxError::Invalid(format!(
                "external data '{location}' has {size} bytes; offset {offset} length {length:?} is out of range"
            )));
        };
        read_range(file, offset, end - offset).map_err(|e| OnnxError::ExternalData {
            tensor: tensor.to_string(),
            location: location.to_string(),
            kind: e.kind(),
            message: format!("cannot read bytes {offset}..{end}: {e}"),
        })
    }
}

/// Open the external data file `rel` of the model directory `base`: the path is resolved
/// (symbolic links followed) and must stay inside the resolved model directory, and it must be a
/// regular file (checked before opening, so a FIFO or device is never opened, and again on
/// the opened file). Returns the file and its size. A file that cannot be found or read is
/// [`OnnxError::ExternalData`] naming `tensor` and `location`.
fn open_external(
    base: &Path,
    rel: &Path,
    tensor: &str,
    location: &str,
) -> OnnxResult<(std::fs::File, u64)> {
    let io = |what: &str, p: &Path, e: std::io::Error| {
        OnnxError::Io(format!("cannot {what} '{}': {e}", p.display()))
    };
    let data = |e: std::io::Error| OnnxError::ExternalData {
        tensor: tensor.to_string(),
        location: location.to_string(),
        kind: e.kind(),
        message: e.to_string(),
    };
    // The directory of a bare file name ("model.onnx") is empty: the current directory.
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let root =
        std::fs::canonicalize(base).map_err(|e| io("resolve the model directory", base, e))?;
    let path = base.join(rel);
    let real = std::fs::canonicalize(&path).map_err(data)?;
    if !real.starts_with(&root) {
        return Err(OnnxError::Invalid(format!(
            "external data location '{location}' resolves to '{}', outside the model directory",
            real.display()
        )));
    }
    let not_regular = || {
        OnnxError::Invalid(format!(
            "external data location '{location}' is not a regular file"
        ))
    };
    let meta = std::fs::metadata(&real).map_err(data)?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let file = std::fs::File::open(&real).map_err(data)?;
    let meta = file.metadata().map_err(data)?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok((file, meta.len()))
}

/// The bytes of the model file at `path`, read into a buffer reserved fallibly: a model too
/// large for the memory left is [`OnnxError::OutOfMemory`], not an aborting allocation.
pub fn read_model_file(path: &std::path::Path) -> OnnxResult<Bytes> {
    let io = |e: std::io::Error| {
        OnnxError::Io(format!("cannot read ONNX model '{}': {e}", path.display()))
    };
    // Checked before opening: opening a FIFO blocks until a writer comes, and a device
    // (/dev/zero behind a model's name) has no end.
    if !std::fs::metadata(path).map_err(io)?.is_file() {
        return Err(OnnxError::Invalid(format!(
            "ONNX model '{}' is not a regular file (a directory, FIFO or device)",
            path.display()
        )));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    read_range(&file, 0, len).map_err(|e| {
        if e.kind() == std::io::ErrorKind::OutOfMemory {
            OnnxError::OutOfMemory {
                needed: usize::try_from(len).unwrap_or(usize::MAX),
                what: format!("read ONNX model '{}'", path.display()),
            }
        } else {
            io(e)
        }
    })
}

/// Read exactly `len` bytes of `file` from `offset`; the buffer is reserved fallibly.
fn read_range(mut file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<Bytes> {
    use std::io::{Read, Seek, SeekFrom};
    let n = usize::try_from(len)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::OutOfMemory, "range too large"))?;
    let mut buf: Vec<u8> = Vec::new();
    buf.try_reserve_exact(n)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::OutOfMemory, "out of memory"))?;
    file.seek(SeekFrom::Start(offset))?;
    file.take(len).read_to_end(&mut buf)?;
    if buf.len() != n {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the file ended after {} of {n} bytes", buf.len()),
        ));
    }
    Ok(Bytes::from(buf))
}
