//! Text appended without `core::fmt`: the printers' hot lines are runs of string pieces and
//! integers, which [`put!`] appends directly (`core::fmt`'s per-argument dispatch and padding
//! checks cost more than the copy on lines this short).

/// A piece of generated text.
pub(crate) trait Piece {
    /// Append `self` to `out`.
    fn put(self, out: &mut String);
}

impl Piece for &str {
    fn put(self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for &String {
    fn put(self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for char {
    fn put(self, out: &mut String) {
        out.push(self);
    }
}

/// Decimal digits of `v` appended to `out`.
fn put_u64(mut v: u64, out: &mut String) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        // `v % 10` is below 10: the cast keeps the digit.
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // The buffer holds ASCII digits only.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
}

impl Piece for u64 {
    fn put(self, out: &mut String) {
        put_u64(self, out);
    }
}

impl Piece for usize {
    fn put(self, out: &mut String) {
        put_u64(self as u64, out);
    }
}

impl Piece for u32 {
    fn put(self, out: &mut String) {
        put_u64(u64::from(self), out);
    }
}

impl Piece for i64 {
    fn put(self, out: &mut String) {
        if self < 0 {
            out.push('-');
        }
        put_u64(self.unsigned_abs(), out);
    }
}

/// Append every piece to the `String` `out`: `put!(out; "x", n, "y")`.
macro_rules! put {
    ($out:expr; $($p:expr),* $(,)?) => {{
        let out: &mut String = $out;
        $( $crate::text::Piece::put($p, out); )*
    }};
}
pub(crate) use put;

#[cfg(test)]
mod tests {
    #[test]
    fn integers_and_strings_as_display_prints_them() {
        let mut s = String::new();
        for v in [0i64, 7, -7, 10, 1234567890, i64::MIN, i64::MAX] {
            s.clear();
            put!(&mut s; "a", v, 'c', &String::from("d"));
            assert_eq!(s, format!("a{v}cd"));
        }
        s.clear();
        put!(&mut s; usize::MAX, u32::MAX, u64::MAX);
        assert_eq!(s, format!("{}{}{}", usize::MAX, u32::MAX, u64::MAX));
    }
}
