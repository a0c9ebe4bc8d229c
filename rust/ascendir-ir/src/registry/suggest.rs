//! Near matches of an unknown op type among the registered ones, for "did you mean" messages:
//! ranked by a case-insensitive edit distance (insertions, deletions, substitutions and swaps
//! of adjacent characters each cost 1).

/// At most this many suggestions are given.
pub const MAX_SUGGESTIONS: usize = 5;

/// The edit distance between `a` and `b` (optimal string alignment: adjacent transpositions
/// count 1), compared case-insensitively.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    // Three rows of the dynamic programme: i-2, i-1, i.
    let width = b.len() + 1;
    let mut prev2 = vec![0usize; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut cur = vec![0usize; width];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..width {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[width - 1]
}

/// The largest distance a suggestion for a name of `len` characters may have: 2, and one more
/// per 4 characters past 8 (long names take proportionally more typos).
fn max_distance(len: usize) -> usize {
    2 + len.saturating_sub(8) / 4
}

/// How many leading characters `a` and `b` share, compared case-insensitively.
fn common_prefix(a: &str, b: &str) -> usize {
    a.chars()
        .flat_map(char::to_lowercase)
        .zip(b.chars().flat_map(char::to_lowercase))
        .take_while(|(x, y)| x == y)
        .count()
}

/// The candidates nearest to `wanted`, best first (by distance, then the longer common
/// prefix, then the closer length, then by name), at most [`MAX_SUGGESTIONS`], none farther
/// than a few edits.
pub fn near_matches<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let len = wanted.chars().count();
    let limit = max_distance(len);
    let mut ranked: Vec<(usize, std::cmp::Reverse<usize>, usize, &str)> = candidates
        .into_iter()
        .filter(|c| *c != wanted)
        .filter_map(|c| {
            let n = c.chars().count();
            // The distance is at least the length difference: skip the far ones cheaply.
            if n.abs_diff(len) > limit {
                return None;
            }
            let d = edit_distance(wanted, c);
            let prefix = std::cmp::Reverse(common_prefix(wanted, c));
            (d <= limit).then_some((d, prefix, n.abs_diff(len), c))
        })
        .collect();
    ranked.sort_unstable();
    ranked
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, _, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_swaps_and_ignores_case() {
        assert_eq!(edit_distance("Rleu", "Relu"), 1);
        assert_eq!(edit_distance("Rleu", "Relu6"), 2);
        assert_eq!(edit_distance("relu", "Relu"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("Conv2D", "Conv3D"), 1);
    }

    #[test]
    fn near_matches_rank_by_distance() {
        let types = ["Relu", "Relu6", "Elu", "Add", "Conv2D", "LeakyRelu"];
        let got = near_matches("Rleu", types);
        assert_eq!(got[..2], ["Relu".to_string(), "Relu6".to_string()]);
        assert!(!got.contains(&"Conv2D".to_string()));
        assert!(near_matches("Completely", types).is_empty());
    }
}
