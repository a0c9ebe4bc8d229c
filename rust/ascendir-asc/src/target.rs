//! Hardware targets for the tiling solver and the UB allocator.

/// A vector-core target: core count, usable Unified Buffer bytes, block size and queue limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Target name (`ascend910b`, ...).
    pub name: String,
    /// Vector cores available (`block_dim` limit).
    pub core_num: i64,
    /// Unified Buffer bytes usable by the tiling.
    pub ub_size: i64,
    /// UB block size in bytes (alignment of every UB tensor).
    pub block_size: i64,
    /// Maximal number of VECIN queues the allocator may use.
    pub max_que_num: usize,
}

impl Target {
    /// Atlas A2 (Ascend910B1/B2): 48 vector cores, 196352 bytes of UB, 4 queues.
    pub fn ascend910b() -> Target {
        Target {
            name: "ascend910b".into(),
            core_num: 48,
            ub_size: 196352,
            block_size: 32,
            max_que_num: 4,
        }
    }

    /// Ascend910B3/B4: 40 vector cores, otherwise like [`Target::ascend910b`].
    pub fn ascend910b3() -> Target {
        Target {
            name: "ascend910b3".into(),
            core_num: 40,
            ..Target::ascend910b()
        }
    }

    /// Ascend950 (v2): 64 vector cores, UB 253952 − 256 bytes, 14 queues.
    pub fn ascend950() -> Target {
        Target {
            name: "ascend950".into(),
            core_num: 64,
            ub_size: 253952 - 256,
            block_size: 32,
            max_que_num: 14,
        }
    }

    /// A custom target; every value must be positive (the block size a power of two).
    pub fn custom(
        name: &str,
        core_num: i64,
        ub_size: i64,
        block_size: i64,
        max_que_num: usize,
    ) -> Result<Target, String> {
        if core_num <= 0 {
            return Err(format!(
                "target '{name}': core_num must be positive, got {core_num}"
            ));
        }
        if ub_size <= 0 {
            return Err(format!(
                "target '{name}': ub_size must be positive, got {ub_size}"
            ));
        }
        if block_size <= 0 || block_size & (block_size - 1) != 0 {
            return Err(format!(
                "target '{name}': block_size must be a positive power of two, got {block_size}"
            ));
        }
        if max_que_num == 0 {
            return Err(format!("target '{name}': max_que_num must be positive"));
        }
        Ok(Target {
            name: name.into(),
            core_num,
            ub_size,
            block_size,
            max_que_num,
        })
    }

    /// A predefined target by name.
    pub fn by_name(name: &str) -> Option<Target> {
        match name {
            "ascend910b" | "ascend910b1" | "ascend910b2" => Some(Target::ascend910b()),
            "ascend910b3" | "ascend910b4" => Some(Target::ascend910b3()),
            "ascend950" => Some(Target::ascend950()),
            _ => None,
        }
    }
}

impl Default for Target {
    fn default() -> Target {
        Target::ascend910b()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_targets() {
        assert_eq!(Target::ascend910b().core_num, 48);
        assert_eq!(Target::ascend910b().ub_size, 196352);
        assert_eq!(Target::ascend910b3().core_num, 40);
        assert_eq!(Target::ascend950().ub_size, 253696);
        assert!(Target::custom("x", 0, 1, 32, 4).is_err());
        assert!(Target::custom("x", 1, 1, 24, 4).is_err());
        assert_eq!(Target::by_name("ascend910b3").unwrap().core_num, 40);
    }
}
