//! Small text helpers shared by every layer: "did you mean" suggestions for
//! misspelt names, English plurals for messages, padded table cells.

/// The closest of `candidates` to `wanted`, when one is close enough to be
/// a likely typo ("did you mean"). Bounded: a candidate whose length alone
/// puts it past the limit is skipped, and a distance is abandoned as soon
/// as a row of it exceeds the limit (80 unknown refs against 12,000 names
/// took two seconds when every pair was computed in full).
pub fn did_you_mean<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let wanted: Vec<char> = wanted.chars().collect();
    let limit = wanted.len().div_ceil(3).max(1);
    candidates
        .into_iter()
        .filter_map(|c| distance_within(&wanted, c, limit).map(|d| (d, c)))
        .min()
        .map(|(_, c)| c)
}

/// Appends `cell` left-aligned in a column `width` characters wide, then
/// the two-space gutter. By hand: `format!("{:<w$}")` panics on widths
/// past 65,535, and a cell listing 16,000 tables is wider.
pub fn push_padded(line: &mut String, cell: &str, width: usize) {
    line.push_str(cell);
    let pad = width.saturating_sub(cell.chars().count()) + 2;
    line.extend(std::iter::repeat_n(' ', pad));
}

/// Levenshtein distance over characters between `a` and `b`, or `None`
/// when it exceeds `limit` (decided as early as the rows allow).
fn distance_within(a: &[char], b: &str, limit: usize) -> Option<usize> {
    let b_len = b.chars().count();
    if a.len().abs_diff(b_len) > limit {
        return None;
    }
    let mut row: Vec<usize> = (0..=b_len).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        let mut best = row[0];
        for (j, cb) in b.chars().enumerate() {
            let next = (diag + usize::from(*ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
            best = best.min(next);
        }
        // Every later row is at least this row's minimum.
        if best > limit {
            return None;
        }
    }
    Some(row[b_len]).filter(|&d| d <= limit)
}

/// The plural suffix for `n` things in English prose.
pub fn plural<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_pad_to_any_width() {
        let mut line = String::new();
        push_padded(&mut line, "ab", 4);
        assert_eq!(line, "ab    ");
        let wide = "x".repeat(70_000);
        let mut line = String::new();
        push_padded(&mut line, "y", wide.len());
        assert_eq!(line.len(), 70_002);
    }

    #[test]
    fn close_names_are_suggested_far_ones_not() {
        assert_eq!(
            did_you_mean("stg_ordrs", ["stg_orders", "orders"]),
            Some("stg_orders")
        );
        assert_eq!(did_you_mean("grian", ["grain", "start"]), Some("grain"));
        assert_eq!(did_you_mean("zzz", ["grain", "start"]), None);
    }

    /// Full Levenshtein, no bounds: what the bounded search must agree with.
    fn full_distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut diag = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let next = (diag + usize::from(ca != *cb))
                    .min(row[j] + 1)
                    .min(row[j + 1] + 1);
                diag = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    }

    proptest::proptest! {
        #[test]
        fn bounded_suggestions_equal_the_full_search(
            wanted in "[a-d_]{0,8}",
            names in proptest::collection::vec("[a-d_]{0,10}", 0..30),
        ) {
            let limit = wanted.chars().count().div_ceil(3).max(1);
            let expected = names
                .iter()
                .map(|c| (full_distance(&wanted, c), c.as_str()))
                .filter(|(d, _)| *d <= limit)
                .min()
                .map(|(_, c)| c);
            proptest::prop_assert_eq!(did_you_mean(&wanted, names.iter().map(String::as_str)), expected);
        }
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1u8), "");
        assert_eq!(plural(2usize), "s");
        assert_eq!(plural(0u64), "s");
    }
}
