//! `ge::DataType`: the API numbering, the wire (proto) numbering, element sizes and names.

use crate::error::IrError;

/// Offset GE adds to a bit count to mark a sub-byte type in `GetSizeByDataType`.
pub const SIZE_BIT_OFFSET: i32 = 1000;

macro_rules! data_types {
    ($( $variant:ident = $value:literal, $proto:literal, $size:literal, $serial:literal; )*) => {
        /// A GE tensor element type, numbered as `ge::DataType` (the API numbering).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(non_camel_case_types)]
        #[repr(u8)]
        pub enum DataType {
            $(
                #[doc = concat!("`DT_", stringify!($variant), "` (", stringify!($value), ")")]
                $variant = $value,
            )*
        }

        impl DataType {
            /// Every data type, in numeric order.
            pub const VALUES: &'static [DataType] = &[$(DataType::$variant),*];

            /// The type with the `ge::DataType` number `value`.
            pub fn from_ge(value: i64) -> Option<Self> {
                match value {
                    $($value => Some(DataType::$variant),)*
                    _ => None,
                }
            }

            /// The `ge.proto.DataType` number written in `TensorDescriptor.dtype`.
            pub fn to_proto(self) -> i32 {
                match self { $(DataType::$variant => $proto,)* }
            }

            /// The type with the wire number `value`; unmapped numbers load as `UNDEFINED`, as in GE.
            pub fn from_proto(value: i32) -> Self {
                match value {
                    $($proto => DataType::$variant,)*
                    _ => DataType::UNDEFINED,
                }
            }

            /// GE's `GetSizeByDataType`: bytes per element, `1000 + bits` for sub-byte types,
            /// -1 for types without a size.
            pub fn size_code(self) -> i32 {
                match self { $(DataType::$variant => $size,)* }
            }

            /// GE's serial string (`DataTypeToSerialString`), e.g. `"DT_BFLOAT16"`.
            pub fn serial_name(self) -> &'static str {
                match self { $(DataType::$variant => $serial,)* }
            }

            /// The enum name without the `DT_` prefix, as the Python enum spells it.
            pub fn name(self) -> &'static str {
                match self { $(DataType::$variant => stringify!($variant),)* }
            }
        }
    };
}

data_types! {
    FLOAT = 0, 1, 4, "DT_FLOAT";
    FLOAT16 = 1, 2, 2, "DT_FLOAT16";
    INT8 = 2, 3, 1, "DT_INT8";
    INT32 = 3, 7, 4, "DT_INT32";
    UINT8 = 4, 4, 1, "DT_UINT8";
    INT16 = 6, 5, 2, "DT_INT16";
    UINT16 = 7, 6, 2, "DT_UINT16";
    UINT32 = 8, 9, 4, "DT_UINT32";
    INT64 = 9, 8, 8, "DT_INT64";
    UINT64 = 10, 10, 8, "DT_UINT64";
    DOUBLE = 11, 12, 8, "DT_DOUBLE";
    BOOL = 12, 11, 1, "DT_BOOL";
    STRING = 13, 13, -1, "DT_STRING";
    DUAL_SUB_INT8 = 14, 14, 1, "DT_DUAL_SUB_INT8";
    DUAL_SUB_UINT8 = 15, 15, 1, "DT_DUAL_SUB_UINT8";
    COMPLEX64 = 16, 16, 8, "DT_COMPLEX64";
    COMPLEX128 = 17, 17, 16, "DT_COMPLEX128";
    QINT8 = 18, 18, 1, "DT_QINT8";
    QINT16 = 19, 19, 2, "DT_QINT16";
    QINT32 = 20, 20, 4, "DT_QINT32";
    QUINT8 = 21, 21, 1, "DT_QUINT8";
    QUINT16 = 22, 22, 2, "DT_QUINT16";
    RESOURCE = 23, 23, 8, "DT_RESOURCE";
    STRING_REF = 24, 24, -1, "DT_STRING_REF";
    DUAL = 25, 25, 5, "DT_DUAL";
    VARIANT = 26, 26, 8, "DT_VARIANT";
    BF16 = 27, 27, 2, "DT_BFLOAT16";
    UNDEFINED = 28, 0, -1, "DT_UNDEFINED";
    INT4 = 29, 28, 1004, "DT_INT4";
    UINT1 = 30, 29, 1001, "DT_UINT1";
    INT2 = 31, 30, 1002, "DT_INT2";
    UINT2 = 32, 31, 1002, "DT_UINT2";
    COMPLEX32 = 33, 32, 4, "DT_COMPLEX32";
    HIFLOAT8 = 34, 33, 1, "DT_HIFLOAT8";
    FLOAT8_E5M2 = 35, 34, 1, "DT_FLOAT8_E5M2";
    FLOAT8_E4M3FN = 36, 35, 1, "DT_FLOAT8_E4M3FN";
    FLOAT8_E8M0 = 37, 36, 1, "DT_FLOAT8_E8M0";
    FLOAT6_E3M2 = 38, 37, 1006, "DT_FLOAT6_E3M2";
    FLOAT6_E2M3 = 39, 38, 1006, "DT_FLOAT6_E2M3";
    FLOAT4_E2M1 = 40, 39, 1004, "DT_FLOAT4_E2M1";
    FLOAT4_E1M2 = 41, 40, 1004, "DT_FLOAT4_E1M2";
    HIFLOAT4 = 42, 41, 1004, "DT_HIFLOAT4";
}

impl DataType {
    /// The `ge::DataType` number.
    pub fn ge_value(self) -> i32 {
        self as i32
    }

    /// The element type's name in the array libraries (numpy, `ml_dtypes`, torch):
    /// `"float32"`, `"bfloat16"`, `"float8_e4m3fn"`, ...; `None` for the GE types they lack.
    /// The one table the Python side derives its numpy and torch dtype maps from.
    pub fn array_name(self) -> Option<&'static str> {
        Some(match self {
            DataType::FLOAT => "float32",
            DataType::FLOAT16 => "float16",
            DataType::DOUBLE => "float64",
            DataType::INT8 => "int8",
            DataType::INT16 => "int16",
            DataType::INT32 => "int32",
            DataType::INT64 => "int64",
            DataType::UINT8 => "uint8",
            DataType::UINT16 => "uint16",
            DataType::UINT32 => "uint32",
            DataType::UINT64 => "uint64",
            DataType::BOOL => "bool",
            DataType::COMPLEX64 => "complex64",
            DataType::COMPLEX128 => "complex128",
            DataType::BF16 => "bfloat16",
            DataType::FLOAT8_E5M2 => "float8_e5m2",
            DataType::FLOAT8_E4M3FN => "float8_e4m3fn",
            DataType::FLOAT8_E8M0 => "float8_e8m0fnu",
            DataType::FLOAT4_E2M1 => "float4_e2m1fn",
            DataType::INT4 => "int4",
            DataType::INT2 => "int2",
            DataType::UINT2 => "uint2",
            _ => return None,
        })
    }

    /// Width of one element in bits, or `None` for types without a size (STRING, UNDEFINED).
    pub fn bit_width(self) -> Option<u32> {
        let code = self.size_code();
        if code > SIZE_BIT_OFFSET {
            Some((code - SIZE_BIT_OFFSET) as u32)
        } else if code > 0 {
            Some(code as u32 * 8)
        } else {
            None
        }
    }

    /// GE's `SerialStringToDataType`: also accepts `DT_FLOAT32` and `RESERVED`; unknown → `UNDEFINED`.
    pub fn from_serial_name(text: &str) -> Self {
        match text {
            "DT_FLOAT32" => DataType::FLOAT,
            "RESERVED" => DataType::UNDEFINED,
            _ => DataType::VALUES
                .iter()
                .copied()
                .find(|dt| dt.serial_name() == text)
                .unwrap_or(DataType::UNDEFINED),
        }
    }

    /// Look a type up by its Python-side name (`FLOAT16`), its serial name (`DT_FLOAT16`) or a
    /// numpy-style alias (`float32`, `float64`, `bfloat16`), ignoring case.
    pub fn from_name(text: &str) -> Result<Self, IrError> {
        let upper = text.to_ascii_uppercase();
        let bare = match upper.strip_prefix("DT_").unwrap_or(&upper) {
            "FLOAT32" => "FLOAT",
            "FLOAT64" => "DOUBLE",
            "BFLOAT16" => "BF16",
            other => other,
        };
        DataType::VALUES
            .iter()
            .copied()
            .find(|dt| dt.name() == bare || dt.serial_name() == upper)
            .ok_or_else(|| IrError::InvalidArgument(format!("unknown data type name '{text}'")))
    }
}

/// GE's `GetSizeInBytes(count, dtype)`: -1 for a negative count, a type without a size, or overflow;
/// sub-byte types are rounded up to whole bytes.
pub fn size_in_bytes(count: i64, dtype: DataType) -> i64 {
    if count < 0 {
        return -1;
    }
    let code = dtype.size_code();
    if code <= 0 {
        return -1;
    }
    if code > SIZE_BIT_OFFSET {
        let bits = i64::from(code - SIZE_BIT_OFFSET);
        match count.checked_mul(bits) {
            Some(total) => (total + 7) / 8,
            None => -1,
        }
    } else {
        count.checked_mul(i64::from(code)).unwrap_or(-1)
    }
}

/// [`size_in_bytes`] with the size rule of the public size helpers: `Ok(None)` when the size
/// is unknown (a negative count, or a type without a size), `Err(IrError::Overflow)` when it
/// does not fit in 64 bits, never a sentinel for overflow.
pub fn checked_size_in_bytes(count: i64, dtype: DataType) -> crate::IrResult<Option<i64>> {
    if count < 0 {
        return Ok(None);
    }
    let code = dtype.size_code();
    if code <= 0 {
        return Ok(None);
    }
    let overflow = || {
        crate::IrError::Overflow(format!(
            "{count} elements of {} do not fit in 64-bit byte sizes",
            dtype.serial_name()
        ))
    };
    if code > SIZE_BIT_OFFSET {
        let bits = i64::from(code - SIZE_BIT_OFFSET);
        let total = count
            .checked_mul(bits)
            .and_then(|t| t.checked_add(7))
            .ok_or_else(overflow)?;
        Ok(Some(total / 8))
    } else {
        count
            .checked_mul(i64::from(code))
            .map(Some)
            .ok_or_else(overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_and_proto_mapping() {
        assert_eq!(DataType::FLOAT16.ge_value(), 1);
        assert_eq!(DataType::FLOAT16.to_proto(), 2);
        assert_eq!(DataType::from_proto(0), DataType::UNDEFINED);
        assert_eq!(DataType::from_proto(9999), DataType::UNDEFINED);
        assert_eq!(DataType::from_ge(5), None);
        assert_eq!(DataType::BF16.serial_name(), "DT_BFLOAT16");
        assert_eq!(DataType::from_serial_name("DT_FLOAT32"), DataType::FLOAT);
        assert_eq!(DataType::from_serial_name("DT_BF16"), DataType::UNDEFINED);
        for dt in DataType::VALUES {
            if *dt != DataType::UNDEFINED {
                assert_eq!(DataType::from_proto(dt.to_proto()), *dt);
            }
        }
    }

    #[test]
    fn sizes_follow_ge() {
        assert_eq!(size_in_bytes(7, DataType::INT4), 4);
        assert_eq!(size_in_bytes(8, DataType::INT4), 4);
        assert_eq!(size_in_bytes(9, DataType::INT4), 5);
        assert_eq!(size_in_bytes(0, DataType::UINT1), 0);
        assert_eq!(size_in_bytes(10, DataType::FLOAT), 40);
        assert_eq!(size_in_bytes(-1, DataType::FLOAT), -1);
        assert_eq!(size_in_bytes(10, DataType::UNDEFINED), -1);
        assert_eq!(size_in_bytes(i64::MAX, DataType::FLOAT), -1);
        assert_eq!(DataType::INT4.bit_width(), Some(4));
        assert_eq!(DataType::FLOAT.bit_width(), Some(32));
        assert_eq!(DataType::STRING.bit_width(), None);
    }
}
