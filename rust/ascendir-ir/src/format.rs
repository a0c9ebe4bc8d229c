//! `ge::Format`: numbers, serial names, the sub-format / C0 bit layout and size support.

use crate::error::IrError;

macro_rules! formats {
    ($( $variant:ident = $value:literal, $serial:literal, $calc:literal; )*) => {
        /// A primary tensor layout, numbered as `ge::Format`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(non_camel_case_types)]
        #[repr(u8)]
        pub enum Format {
            $(
                #[doc = concat!("`FORMAT_", stringify!($variant), "` (", stringify!($value), ")")]
                $variant = $value,
            )*
        }

        impl Format {
            /// Every primary format, in numeric order.
            pub const VALUES: &'static [Format] = &[$(Format::$variant),*];

            /// The primary format numbered `value`.
            pub fn from_value(value: i64) -> Option<Self> {
                match value {
                    $($value => Some(Format::$variant),)*
                    _ => None,
                }
            }

            /// GE's `FormatToSerialString` for the primary format (`"RESERVED"` for FRACTAL_ZZ,
            /// which GE cannot name).
            pub fn serial_name(self) -> &'static str {
                match self { $(Format::$variant => $serial,)* }
            }

            /// The enum name without the `FORMAT_` prefix, as the Python enum spells it.
            pub fn name(self) -> &'static str {
                match self { $(Format::$variant => stringify!($variant),)* }
            }

            /// Whether `CalcTensorMemSize` accepts this primary format.
            pub fn supports_mem_size(self) -> bool {
                match self { $(Format::$variant => $calc,)* }
            }
        }
    };
}

formats! {
    NCHW = 0, "NCHW", true;
    NHWC = 1, "NHWC", true;
    ND = 2, "ND", true;
    NC1HWC0 = 3, "NC1HWC0", true;
    FRACTAL_Z = 4, "FRACTAL_Z", true;
    NC1C0HWPAD = 5, "NC1C0HWPAD", false;
    NHWC1C0 = 6, "NHWC1C0", false;
    FSR_NCHW = 7, "FSR_NCHW", false;
    FRACTAL_DECONV = 8, "FRACTAL_DECONV", false;
    C1HWNC0 = 9, "C1HWNC0", false;
    FRACTAL_DECONV_TRANSPOSE = 10, "FRACTAL_DECONV_TRANSPOSE", false;
    FRACTAL_DECONV_SP_STRIDE_TRANS = 11, "FRACTAL_DECONV_SP_STRIDE_TRANS", false;
    NC1HWC0_C04 = 12, "NC1HWC0_C04", true;
    FRACTAL_Z_C04 = 13, "FRACTAL_Z_C04", true;
    CHWN = 14, "CHWN", true;
    FRACTAL_DECONV_SP_STRIDE8_TRANS = 15, "DECONV_SP_STRIDE8_TRANS", false;
    HWCN = 16, "HWCN", true;
    NC1KHKWHWC0 = 17, "NC1KHKWHWC0", false;
    BN_WEIGHT = 18, "BN_WEIGHT", false;
    FILTER_HWCK = 19, "FILTER_HWCK", true;
    HASHTABLE_LOOKUP_LOOKUPS = 20, "LOOKUP_LOOKUPS", false;
    HASHTABLE_LOOKUP_KEYS = 21, "LOOKUP_KEYS", false;
    HASHTABLE_LOOKUP_VALUE = 22, "LOOKUP_VALUE", false;
    HASHTABLE_LOOKUP_OUTPUT = 23, "LOOKUP_OUTPUT", false;
    HASHTABLE_LOOKUP_HITS = 24, "LOOKUP_HITS", false;
    C1HWNCoC0 = 25, "C1HWNCoC0", true;
    MD = 26, "MD", true;
    NDHWC = 27, "NDHWC", true;
    FRACTAL_ZZ = 28, "RESERVED", true;
    FRACTAL_NZ = 29, "FRACTAL_NZ", true;
    NCDHW = 30, "NCDHW", true;
    DHWCN = 31, "DHWCN", true;
    NDC1HWC0 = 32, "NDC1HWC0", true;
    FRACTAL_Z_3D = 33, "FRACTAL_Z_3D", true;
    CN = 34, "CN", false;
    NC = 35, "NC", false;
    DHWNC = 36, "DHWNC", true;
    FRACTAL_Z_3D_TRANSPOSE = 37, "FRACTAL_Z_3D_TRANSPOSE", true;
    FRACTAL_ZN_LSTM = 38, "FRACTAL_ZN_LSTM", true;
    FRACTAL_Z_G = 39, "FRACTAL_Z_G", false;
    RESERVED = 40, "FORMAT_RESERVED", false;
    ALL = 41, "ALL", false;
    NULL = 42, "NULL", false;
    ND_RNN_BIAS = 43, "ND_RNN_BIAS", true;
    FRACTAL_ZN_RNN = 44, "FRACTAL_ZN_RNN", true;
    NYUV = 45, "NYUV", true;
    NYUV_A = 46, "NYUV_A", true;
    NCL = 47, "NCL", true;
    FRACTAL_Z_WINO = 48, "FRACTAL_Z_WINO", true;
    C1HWC0 = 49, "C1HWC0", true;
    FRACTAL_NZ_C0_16 = 50, "FRACTAL_NZ_C0_16", true;
    FRACTAL_NZ_C0_32 = 51, "FRACTAL_NZ_C0_32", true;
    FRACTAL_NZ_C0_2 = 52, "FRACTAL_NZ_C0_2", true;
    FRACTAL_NZ_C0_4 = 53, "FRACTAL_NZ_C0_4", true;
    FRACTAL_NZ_C0_8 = 54, "FRACTAL_NZ_C0_8", true;
    END = 55, "END", false;
    MAX = 255, "MAX", false;
}

impl Format {
    /// The `ge::Format` number.
    pub fn value(self) -> i32 {
        self as i32
    }

    /// Look a primary format up by enum name (`FRACTAL_Z`) or by GE serial name.
    pub fn from_name(text: &str) -> Result<Self, IrError> {
        let upper = text.to_ascii_uppercase();
        let bare = upper.strip_prefix("FORMAT_").unwrap_or(&upper);
        Format::VALUES
            .iter()
            .copied()
            .find(|f| f.name() == bare || f.serial_name() == upper)
            .ok_or_else(|| IrError::InvalidArgument(format!("unknown format name '{text}'")))
    }
}

/// A full GE format integer: primary (bits 0–7) | sub-format (8–23) | C0 format (24–27).
pub mod bits {
    use super::Format;

    /// `GetPrimaryFormat`.
    pub fn primary(format: i32) -> i32 {
        format & 0xFF
    }
    /// `GetSubFormat`.
    pub fn sub_format(format: i32) -> i32 {
        (format & 0x00FF_FF00) >> 8
    }
    /// `HasSubFormat`.
    pub fn has_sub_format(format: i32) -> bool {
        sub_format(format) > 0
    }
    /// `GetFormatFromSub`.
    pub fn with_sub_format(primary: i32, sub: i32) -> i32 {
        (primary & 0xFF) | ((sub & 0xFFFF) << 8)
    }
    /// `GetFormatFromC0`.
    pub fn with_c0_format(format: i32, c0_format: i32) -> i32 {
        (format & 0x00FF_FFFF) | ((c0_format & 0xF) << 24)
    }
    /// The C0 format field (bits 24–27).
    pub fn c0_format(format: i32) -> i32 {
        (format >> 24) & 0xF
    }
    /// `HasC0Format`.
    pub fn has_c0_format(format: i32) -> bool {
        c0_format(format) > 0
    }
    /// `GetC0Value`: `2^(c0_format - 1)`, or -1 when no C0 format is set.
    pub fn c0_value(format: i32) -> i64 {
        match c0_format(format) {
            0 => -1,
            c => 1i64 << (c - 1),
        }
    }

    /// GE's `FormatToSerialString` of a full format integer (`"FRACTAL_Z:16"`; C0 bits omitted).
    pub fn serial_string(format: i32) -> String {
        let name = Format::from_value(i64::from(primary(format)))
            .map(Format::serial_name)
            .unwrap_or("RESERVED");
        if has_sub_format(format) {
            format!("{name}:{}", sub_format(format))
        } else {
            name.to_string()
        }
    }

    /// GE's `SerialStringToFormat`: `"PRIMARY[:sub]"`; anything unknown → RESERVED (40).
    pub fn parse_serial_string(text: &str) -> i32 {
        let reserved = Format::RESERVED.value();
        let (head, sub) = match text.split_once(':') {
            Some((head, sub)) => (head, Some(sub)),
            None => (text, None),
        };
        let primary = match head {
            "RESERVED" | "UNDEFINED" => return reserved,
            "END" | "MAX" => return reserved,
            _ => match Format::VALUES.iter().find(|f| {
                f.serial_name() == head && **f != Format::FRACTAL_ZZ && **f != Format::END
            }) {
                Some(f) => f.value(),
                None => return reserved,
            },
        };
        match sub {
            None => primary,
            Some(sub) => {
                if sub.is_empty() || !sub.bytes().all(|b| b.is_ascii_digit()) {
                    return reserved;
                }
                match sub.parse::<u32>() {
                    Ok(v) if v <= 0xFFFF => with_sub_format(primary, v as i32),
                    _ => reserved,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_layout() {
        let f = bits::with_sub_format(Format::FRACTAL_Z.value(), 16);
        assert_eq!(f, 4100);
        assert_eq!(bits::serial_string(f), "FRACTAL_Z:16");
        assert_eq!(bits::parse_serial_string("FRACTAL_Z:16"), 4100);
        assert_eq!(bits::parse_serial_string("FRACTAL_Z:x"), 40);
        assert_eq!(bits::parse_serial_string("FRACTAL_Z:70000"), 40);
        assert_eq!(bits::parse_serial_string("UNDEFINED"), 40);
        let c0 = bits::with_c0_format(f, 5);
        assert_eq!(bits::c0_value(c0), 16);
        assert_eq!(bits::primary(c0), 4);
        assert_eq!(bits::c0_value(4), -1);
        assert_eq!(bits::serial_string(c0), "FRACTAL_Z:16");
    }

    #[test]
    fn names() {
        assert_eq!(Format::from_name("nchw").unwrap(), Format::NCHW);
        assert_eq!(Format::RESERVED.serial_name(), "FORMAT_RESERVED");
        assert!(Format::from_name("nope").is_err());
        assert_eq!(bits::serial_string(28), "RESERVED");
    }
}
