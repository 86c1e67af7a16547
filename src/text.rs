//! Small text helpers shared by every layer: "did you mean" suggestions for
//! misspelt names, English plurals for messages, padded table cells.

/// The closest of `candidates` to `wanted`, when one is close enough to be
/// a likely typo ("did you mean").
pub fn did_you_mean<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = wanted.chars().count().div_ceil(3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(wanted, c), c))
        .filter(|(d, _)| *d <= limit)
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

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
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

    #[test]
    fn plurals() {
        assert_eq!(plural(1u8), "");
        assert_eq!(plural(2usize), "s");
        assert_eq!(plural(0u64), "s");
    }
}
