//! Relations a dbt model's rendered SQL names after `from` or `join`,
//! qualified (`main.orders_daily`): a read dbt does not know of when no
//! `ref()` or `source()` made it, which would otherwise leave impact short.

/// Whether `wanted` holds for a qualified name after `from`/`join` in
/// `sql`, comments and strings not told apart: a quick pass (a SIMD search
/// for the keywords' first letters, no allocation) whose few surprising
/// names [`qualified_reads`] then confirms.
pub(crate) fn any_candidate(sql: &str, mut wanted: impl FnMut(&str) -> bool) -> bool {
    let b = sql.as_bytes();
    let mut name = String::new();
    let boundary =
        |i: Option<&u8>| i.is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$'));
    let starts = memchr::memchr3_iter(b'f', b'j', b'F', b).chain(memchr::memchr_iter(b'J', b));
    for at in starts {
        let Some(word) = b.get(at..at + 4) else {
            continue;
        };
        if !(word.eq_ignore_ascii_case(b"from") || word.eq_ignore_ascii_case(b"join"))
            || !boundary(at.checked_sub(1).and_then(|i| b.get(i)))
            || !boundary(b.get(at + 4))
        {
            continue;
        }
        let mut i = at + 4;
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        name.clear();
        name_into(b, i, &mut name);
        if name.contains('.') && wanted(&name) {
            return true;
        }
    }
    false
}

/// The qualified names after `from`/`join` in `sql`, with the 1-based line
/// each is on: unquoted parts lower-cased, quoted ones as written. Comments
/// and string literals are skipped; unqualified names (CTEs, most often)
/// are not returned.
pub(crate) fn qualified_reads(sql: &str) -> Vec<(String, u32)> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1u32);
    // Whether the last word was `from` or `join`.
    let mut after_keyword = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    line += u32::from(b[i] == b'\n');
                    i += 1;
                }
                i += 2;
            }
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    line += u32::from(b[i] == b'\n');
                    i += 1;
                }
                i += 1;
                after_keyword = false;
            }
            b'"' | b'`' | b'[' => {
                let (name, end, lines) = name_at(b, i);
                if after_keyword && name.contains('.') {
                    out.push((name, line));
                }
                line += lines;
                i = end;
                after_keyword = false;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
                {
                    i += 1;
                }
                let word = &sql[start..i];
                if after_keyword && b.get(i) == Some(&b'.') {
                    let (name, end, lines) = name_at(b, start);
                    if name.contains('.') {
                        out.push((name, line));
                    }
                    line += lines;
                    i = end;
                    after_keyword = false;
                } else {
                    after_keyword =
                        word.eq_ignore_ascii_case("from") || word.eq_ignore_ascii_case("join");
                }
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                after_keyword = false;
                i += 1;
            }
        }
    }
    out
}

/// The dotted name starting at `i`: its text (unquoted parts lower-cased),
/// where it ends, and how many line breaks it holds.
fn name_at(b: &[u8], i: usize) -> (String, usize, u32) {
    let mut name = String::new();
    let (end, lines) = name_into(b, i, &mut name);
    (name, end, lines)
}

/// [`name_at`] into `name`: where it ends, and its line breaks.
fn name_into(b: &[u8], mut i: usize, name: &mut String) -> (usize, u32) {
    let mut lines = 0;
    loop {
        match b.get(i) {
            Some(&q @ (b'"' | b'`' | b'[')) => {
                let close = if q == b'[' { b']' } else { q };
                let start = i + 1;
                i = start;
                while i < b.len() && b[i] != close {
                    lines += u32::from(b[i] == b'\n');
                    i += 1;
                }
                name.push_str(&String::from_utf8_lossy(&b[start..i.min(b.len())]));
                i += 1;
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
                {
                    i += 1;
                }
                name.extend(
                    b[start..i]
                        .iter()
                        .map(|c| char::from(c.to_ascii_lowercase())),
                );
            }
            _ => break,
        }
        if b.get(i) == Some(&b'.') {
            name.push('.');
            i += 1;
        } else {
            break;
        }
    }
    // A trailing dot belongs to no name.
    if name.ends_with('.') {
        name.pop();
    }
    (i, lines)
}

/// A digest of the [`qualified_reads`] of `sql` that `explained` (the
/// relations its `ref()`/`source()` calls printed) does not account for,
/// with their lines: what the graph's hard-coded reads of a model are
/// found from. Kept with the model, so that an edit naming a table by hand
/// changes the model's lineage (a warm run otherwise served the graph of
/// before the edit), while an edit of its refs alone does not.
pub(crate) fn unexplained_digest(sql: &str, explained: &[String]) -> u64 {
    use std::hash::{Hash, Hasher};
    // Each printed relation and its shorter forms (`db.s.t` as `s.t`), as
    // the graph matches a name.
    // A handful per model: a list beats a set.
    let known: Vec<&str> = explained
        .iter()
        .flat_map(|n| {
            std::iter::once(n.as_str()).chain(n.match_indices('.').map(|(i, _)| &n[i + 1..]))
        })
        .collect();
    let explained = |name: &str| {
        std::iter::once(name)
            .chain(name.match_indices('.').map(|(i, _)| &name[i + 1..]))
            .any(|n| known.contains(&n))
    };
    let mut h = rustc_hash::FxHasher::default();
    // Most models name nothing by hand: the quick pass spares them the
    // careful scan, as the graph's does.
    if !any_candidate(sql, |n| !explained(n)) {
        return h.finish();
    }
    for (name, line) in qualified_reads(sql) {
        if !explained(&name) {
            name.hash(&mut h);
            line.hash(&mut h);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_pass_finds_every_name_the_careful_one_does() {
        let sql = "with x as (select * from Main.Orders_Daily)\n-- from main.commented\nselect 'from main.quoted', a.b, leftjoin.c\nfrom x JOIN \"main\".\"Stg\" s on true\nleft join analytics.dim_customers d using (id)\nfrom cte_only";
        let mut quick = Vec::new();
        any_candidate(sql, |n| {
            quick.push(n.to_string());
            false
        });
        for (name, _) in qualified_reads(sql) {
            assert!(quick.contains(&name), "{name}: {quick:?}");
        }
        assert!(!quick.iter().any(|n| n.contains("leftjoin")), "{quick:?}");
        assert!(any_candidate(sql, |n| n == "analytics.dim_customers"));
    }

    #[test]
    fn qualified_names_after_from_and_join_are_read_and_nothing_else() {
        let sql = "with x as (select * from Main.Orders_Daily)\n-- from main.commented\nselect 'from main.quoted', a.b\nfrom x join \"main\".\"Stg\" s on true\nleft join analytics.dim_customers d using (id)\nfrom cte_only";
        assert_eq!(
            qualified_reads(sql),
            [
                ("main.orders_daily".to_string(), 1),
                ("main.Stg".to_string(), 4),
                ("analytics.dim_customers".to_string(), 5),
            ]
        );
    }
}
