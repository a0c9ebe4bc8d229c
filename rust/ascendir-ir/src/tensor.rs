//! Tensor descriptors (`GeTensorDesc`), shapes and constant tensors (`GeTensor`).

use std::sync::Arc;

use bytes::Bytes;
use smallvec::SmallVec;

use crate::attr::AttrMap;
use crate::dtype::DataType;
use crate::error::{IrError, IrResult};
use crate::format::{bits, Format};

/// Tensor dimensions; `-1` is an unknown size, `[-2]` an unknown rank, `[]` a scalar.
pub type Shape = SmallVec<[i64; 4]>;

/// Unknown dimension size.
pub const UNKNOWN_DIM: i64 = -1;
/// The single dimension of a shape whose rank is unknown.
pub const UNKNOWN_RANK: i64 = -2;

/// Where a tensor lives (`DeviceType`, serialized as `"NPU"` / `"CPU"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// The accelerator (default).
    #[default]
    Npu,
    /// The host CPU.
    Cpu,
}

/// GE's tensor extension metadata (sizes, offsets, reuse flags). Allocated only when set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub struct ExtMeta {
    pub size: i64,
    pub weight_size: i64,
    pub reuse_input: bool,
    pub output_tensor: bool,
    pub input_tensor: bool,
    pub device_type: DeviceType,
    pub real_dim_cnt: u32,
    pub reuse_input_index: u32,
    pub data_offset: i64,
    pub cmps_size: i64,
    pub cmps_tab: String,
    pub cmps_tab_offset: i64,
}

/// A tensor descriptor. Cheap to share: nodes hold `Arc<TensorDesc>` and copy on write.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorDesc {
    /// Dimensions.
    pub shape: Shape,
    /// Element type.
    pub dtype: DataType,
    /// Full format integer (primary, sub-format and C0 bits).
    pub format: i32,
    /// Format before optimization.
    pub origin_format: i32,
    /// Element type before optimization (`UNDEFINED` when never set).
    pub origin_dtype: DataType,
    /// Shape before optimization; `None` while not initialized.
    pub origin_shape: Option<Box<Shape>>,
    /// The descriptor's name (GE does not serialize it; we keep it).
    pub name: Option<Box<str>>,
    /// Extension metadata; `None` means every field is zero / default.
    pub ext: Option<Box<ExtMeta>>,
    /// Attributes, allocated on first use.
    pub attrs: Option<Box<AttrMap>>,
}

impl Default for TensorDesc {
    /// GE's default desc: scalar, ND, DT_FLOAT, origin format ND, origin dtype undefined.
    fn default() -> Self {
        TensorDesc {
            shape: Shape::new(),
            dtype: DataType::FLOAT,
            format: Format::ND.value(),
            origin_format: Format::ND.value(),
            origin_dtype: DataType::UNDEFINED,
            origin_shape: None,
            name: None,
            ext: None,
            attrs: None,
        }
    }
}

impl TensorDesc {
    /// A desc with the given shape, dtype and format (origin fields keep their defaults).
    pub fn new(shape: &[i64], dtype: DataType, format: Format) -> Self {
        TensorDesc {
            shape: Shape::from_slice(shape),
            dtype,
            format: format.value(),
            ..TensorDesc::default()
        }
    }

    /// The desc GE uses for an unset optional input (dtype UNDEFINED, format RESERVED).
    pub fn invalid() -> Self {
        TensorDesc {
            dtype: DataType::UNDEFINED,
            format: Format::RESERVED.value(),
            ..TensorDesc::default()
        }
    }

    /// Whether this desc marks an unset optional input.
    pub fn is_valid(&self) -> bool {
        !(self.dtype == DataType::UNDEFINED && self.format == Format::RESERVED.value())
    }

    /// The extension metadata, or the defaults when none is set.
    pub fn ext(&self) -> ExtMeta {
        self.ext.as_deref().cloned().unwrap_or_default()
    }

    /// Mutable extension metadata, allocated on first use.
    pub fn ext_mut(&mut self) -> &mut ExtMeta {
        self.ext.get_or_insert_with(Box::default)
    }

    /// Mutable attributes, allocated on first use.
    pub fn attrs_mut(&mut self) -> &mut AttrMap {
        self.attrs.get_or_insert_with(Box::default)
    }

    /// Whether any dim is unknown (`-1` or `-2`).
    pub fn is_unknown_shape(&self) -> bool {
        self.shape.iter().any(|&d| d < 0)
    }

    /// `GetShapeSize`: scalar → 0, any negative dim → -1, any zero dim → 0, overflow → -1.
    pub fn shape_size(&self) -> i64 {
        shape_size(&self.shape)
    }

    /// GE's `CalcTensorMemSize`: bytes of the payload without padding; -1 for unknown shapes or
    /// unsized types; an error for a format GE cannot size or an overflowing element count.
    pub fn mem_size(&self) -> IrResult<i64> {
        calc_tensor_mem_size(&self.shape, self.format, self.dtype)
    }
}

/// `GeShape::GetShapeSize`.
pub fn shape_size(shape: &[i64]) -> i64 {
    if shape.is_empty() {
        return 0;
    }
    let mut total: i64 = 1;
    for &d in shape {
        if d < 0 {
            return -1;
        }
        if d == 0 {
            return 0;
        }
        total = match total.checked_mul(d) {
            Some(v) => v,
            None => return -1,
        };
    }
    total
}

/// `TensorUtils::CalcTensorMemSize`.
pub fn calc_tensor_mem_size(shape: &[i64], format: i32, dtype: DataType) -> IrResult<i64> {
    let mut count: i64 = 1;
    let mut zero = false;
    for &d in shape {
        if d < 0 {
            return Ok(-1);
        }
        if d == 0 {
            zero = true;
            break;
        }
    }
    if zero {
        count = 0;
    } else {
        let primary = bits::primary(format);
        let supported =
            Format::from_value(i64::from(primary)).is_some_and(Format::supports_mem_size);
        if !supported {
            return Err(IrError::InvalidArgument(format!(
                "cannot compute the memory size of a tensor in format {}",
                bits::serial_string(format)
            )));
        }
        for &d in shape {
            count = count.checked_mul(d).ok_or_else(|| {
                IrError::Overflow(format!("element count of shape {shape:?} overflows int64"))
            })?;
        }
    }
    if matches!(dtype, DataType::STRING | DataType::STRING_REF) {
        return count.checked_mul(16).ok_or_else(|| {
            IrError::Overflow(format!("string tensor of {count} elements overflows int64"))
        });
    }
    Ok(crate::dtype::checked_size_in_bytes(count, dtype)?.unwrap_or(-1))
}

/// `GetTensorMemorySizeInBytes`: the size rounded up to 32 bytes plus 32 (0 → 32, 33 → 96).
/// The size rule of every size helper: -1 (any negative size) is unknown and stays -1; a size
/// whose rounding overflows is an `Overflow` error.
pub fn memory_size_in_bytes(size: i64) -> IrResult<i64> {
    if size < 0 {
        return Ok(-1);
    }
    let padded = size
        .checked_add(63)
        .ok_or_else(|| IrError::Overflow(format!("tensor size {size} overflows when aligned")))?;
    Ok(padded / 32 * 32)
}

/// A constant tensor: a descriptor plus an immutable, shared byte payload.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// The payload's descriptor.
    pub desc: Arc<TensorDesc>,
    /// The payload (shared, never copied on clone).
    pub data: Bytes,
}

impl Tensor {
    /// A tensor over `data` described by `desc`.
    pub fn new(desc: TensorDesc, data: Bytes) -> Self {
        Tensor {
            desc: Arc::new(desc),
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_sizes_follow_ge() {
        let nd = Format::ND.value();
        assert_eq!(
            calc_tensor_mem_size(&[2, 3], nd, DataType::FLOAT).unwrap(),
            24
        );
        assert_eq!(calc_tensor_mem_size(&[], nd, DataType::FLOAT).unwrap(), 4);
        assert_eq!(
            calc_tensor_mem_size(&[-1, 3], nd, DataType::FLOAT).unwrap(),
            -1
        );
        assert_eq!(
            calc_tensor_mem_size(&[-2], nd, DataType::FLOAT).unwrap(),
            -1
        );
        assert_eq!(
            calc_tensor_mem_size(&[0, 3], Format::NC.value(), DataType::FLOAT).unwrap(),
            0
        );
        assert!(calc_tensor_mem_size(&[2, 3], Format::NC.value(), DataType::FLOAT).is_err());
        assert_eq!(
            calc_tensor_mem_size(&[3], nd, DataType::STRING).unwrap(),
            48
        );
        assert_eq!(calc_tensor_mem_size(&[9], nd, DataType::INT4).unwrap(), 5);
        assert_eq!(
            calc_tensor_mem_size(&[2], nd, DataType::UNDEFINED).unwrap(),
            -1
        );
        assert!(calc_tensor_mem_size(&[i64::MAX, 2], nd, DataType::FLOAT).is_err());
        let fz16 = bits::with_sub_format(Format::FRACTAL_Z.value(), 16);
        assert_eq!(
            calc_tensor_mem_size(&[4, 4], fz16, DataType::FLOAT16).unwrap(),
            32
        );
    }

    #[test]
    fn memory_rounding() {
        for (size, want) in [(0, 32), (4, 64), (32, 64), (33, 96), (240, 288)] {
            assert_eq!(memory_size_in_bytes(size).unwrap(), want);
        }
        assert_eq!(memory_size_in_bytes(-1).unwrap(), -1);
        assert!(memory_size_in_bytes(i64::MAX).is_err());
    }

    #[test]
    fn shape_sizes() {
        assert_eq!(shape_size(&[]), 0);
        assert_eq!(shape_size(&[2, -1]), -1);
        assert_eq!(shape_size(&[2, 0]), 0);
        assert_eq!(shape_size(&[2, 3]), 6);
        assert_eq!(shape_size(&[i64::MAX, 2]), -1);
    }

    #[test]
    fn default_and_invalid_descs() {
        let d = TensorDesc::default();
        assert_eq!(d.dtype, DataType::FLOAT);
        assert_eq!(d.format, Format::ND.value());
        assert_eq!(d.origin_dtype, DataType::UNDEFINED);
        assert!(d.is_valid());
        assert!(!TensorDesc::invalid().is_valid());
    }
}
