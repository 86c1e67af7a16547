//! Small text helpers shared by every layer: "did you mean" suggestions for
//! misspelt names, and English plurals for messages.

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
