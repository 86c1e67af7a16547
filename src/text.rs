//! Small text helpers shared by every layer: "did you mean" suggestions for
//! misspelt names, English plurals for messages, padded table cells.

/// The closest of `candidates` to `wanted`, when one is close enough to be
/// a likely typo ("did you mean"): within a third of its length in edits,
/// the first by name among the closest. For many questions against the
/// same names, build [`Suggestions`] once.
pub fn did_you_mean<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    Suggestions::new(candidates).best(wanted)
}

/// "Did you mean" over one set of names, asked many times (every unknown
/// ref of a project): the names sorted once, each distinct question
/// answered once. A search skips names whose length alone is too far,
/// abandons a distance once a row of it passes the limit, lowers the limit
/// to beat the best so far (later names lose ties), and stops at one edit,
/// the closest a different name can be (80 unknown refs against 12,000
/// names took two seconds when every pair was computed in full).
pub struct Suggestions<'a> {
    names: Vec<&'a str>,
    /// Shared by the threads resolving references: one answer per name.
    answered: std::sync::Mutex<std::collections::HashMap<String, Option<&'a str>>>,
}

impl<'a> Suggestions<'a> {
    /// The names to suggest from.
    pub fn new(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut names: Vec<&str> = names.into_iter().collect();
        names.sort_unstable();
        names.dedup();
        Suggestions {
            names,
            answered: Default::default(),
        }
    }

    /// The name to suggest for `wanted`, if any (see [`did_you_mean`]).
    pub fn best(&self, wanted: &str) -> Option<&'a str> {
        // A poisoned lock only means another thread panicked mid-insert:
        // the answers in it are still answers.
        let lock = || {
            self.answered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(known) = lock().get(wanted).copied() {
            return known;
        }
        let answer = self.search(wanted);
        lock().insert(wanted.to_string(), answer);
        answer
    }

    fn search(&self, wanted: &str) -> Option<&'a str> {
        if let Ok(i) = self.names.binary_search(&wanted) {
            return Some(self.names[i]);
        }
        let wanted: Vec<char> = wanted.chars().collect();
        let mut limit = wanted.len().div_ceil(3).max(1);
        let mut best = None;
        let bits = Myers::new(&wanted);
        for &name in &self.names {
            let d = match &bits {
                Some(m) => m.distance_within(name, limit),
                None => distance_within(&wanted, name, limit),
            };
            if let Some(d) = d {
                best = Some(name);
                if d <= 1 {
                    break;
                }
                // Later names come after this one: only closer ones win.
                limit = d - 1;
            }
        }
        best
    }
}

/// Levenshtein distance from one pattern of at most 64 characters, a
/// column of the table per 64-bit word (Myers 1999, as Hyyrö gives it):
/// linear in the other string, nothing allocated per comparison.
struct Myers {
    len: usize,
    /// The pattern positions of each ASCII character, as bits.
    ascii: [u64; 128],
    /// The same for other characters.
    other: Vec<(char, u64)>,
}

impl Myers {
    fn new(pattern: &[char]) -> Option<Myers> {
        if pattern.is_empty() || pattern.len() > 64 {
            return None;
        }
        let mut m = Myers {
            len: pattern.len(),
            ascii: [0; 128],
            other: Vec::new(),
        };
        for (i, &c) in pattern.iter().enumerate() {
            match m.ascii.get_mut(c as usize) {
                Some(bits) => *bits |= 1 << i,
                None => match m.other.iter_mut().find(|(o, _)| *o == c) {
                    Some((_, bits)) => *bits |= 1 << i,
                    None => m.other.push((c, 1 << i)),
                },
            }
        }
        Some(m)
    }

    fn bits(&self, c: char) -> u64 {
        match self.ascii.get(c as usize) {
            Some(&b) => b,
            None => self
                .other
                .iter()
                .find(|(o, _)| *o == c)
                .map_or(0, |(_, b)| *b),
        }
    }

    fn distance_within(&self, text: &str, limit: usize) -> Option<usize> {
        let n = text.chars().count();
        if self.len.abs_diff(n) > limit {
            return None;
        }
        let top = 1u64 << (self.len - 1);
        let (mut pv, mut mv, mut score) = (u64::MAX, 0u64, self.len);
        for c in text.chars() {
            let eq = self.bits(c);
            let xv = eq | mv;
            let xh = ((eq & pv).wrapping_add(pv) ^ pv) | eq;
            let mut ph = mv | !(xh | pv);
            let mut mh = pv & xh;
            if ph & top != 0 {
                score += 1;
            } else if mh & top != 0 {
                score -= 1;
            }
            ph = (ph << 1) | 1;
            mh <<= 1;
            pv = mh | !(xv | ph);
            mv = ph & xv;
        }
        (score <= limit).then_some(score)
    }
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

/// FNV-1a, 64 bits, from `basis` (its standard offset basis is
/// [`FNV_BASIS`]): a stable hash, the same in every build and version, for
/// names and ids that must not change between runs.
pub fn fnv64(text: &str, basis: u64) -> u64 {
    text.bytes().fold(basis, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// FNV-1a's standard 64-bit offset basis.
pub const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// What the system said about a file, without the ` (os error N)` Rust
/// adds: the number means nothing to a person and the words say it all.
pub fn io_reason(e: &std::io::Error) -> String {
    without_os_code(&e.to_string())
}

/// `s` with every ` (os error N)` taken out (see [`io_reason`]); for a
/// message whose chain holds a system error somewhere inside.
pub fn without_os_code(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(" (os error ") {
        let tail = &rest[at + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
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
            wanted in "[a-dé_]{0,8}",
            names in proptest::collection::vec("[a-dé_]{0,10}", 0..30),
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
    fn a_thousand_questions_over_twenty_thousand_similar_names() {
        // Every name is one edit from the next: the worst case for a search
        // that cannot rule names out by length (it took minutes).
        let names: Vec<String> = (0..20_000).map(|i| format!("model_{i:05}")).collect();
        let s = Suggestions::new(names.iter().map(String::as_str));
        for i in (0..20_000).step_by(20) {
            let typo = format!("modl_{i:05}");
            assert_eq!(s.best(&typo), Some(names[i].as_str()), "{typo}");
        }
        // Asked again, answered from memory; nothing close, nothing said.
        assert_eq!(s.best("modl_00000"), Some("model_00000"));
        assert_eq!(s.best("completely_different_name"), None);
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1u8), "");
        assert_eq!(plural(2usize), "s");
        assert_eq!(plural(0u64), "s");
    }
}

/// Whether `c` would act on a terminal or a reader rather than show: a
/// control character (C0 but newline and tab, DEL, C1), a line or
/// paragraph separator (`U+2028`, `U+2029`: a line break to many readers),
/// a direction mark or override (`U+202E` turns `txt.exe` into `exe.txt`
/// on screen), or a character that shows as nothing (zero-width spaces and
/// joiners, the byte-order mark, invisible fillers, tag characters,
/// variation selectors: Unicode's whole Default_Ignorable_Code_Point set):
/// two names that differ only by one of those look the same to a reviewer.
pub fn acts(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// `s` for a person to read: every character that would act on the
/// terminal or the text around it (an escape sequence, a bidi override)
/// shown as `\u{1b}` instead; newlines and tabs kept. Text and Markdown
/// outputs, and every message on standard error, go through it.
pub fn inert(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(acts) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if acts(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod inert_tests {
    use super::{inert, io_reason, shell_word, without_os_code};

    #[test]
    fn a_shell_word_with_what_acts_on_a_terminal_is_escaped_bytes() {
        assert_eq!(
            shell_word("a\u{1b}[2J'b\\\n\u{202e}"),
            "$'a\\x1b[2J\\'b\\\\\\n\\xe2\\x80\\xae'"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn escapes_and_direction_overrides_show_as_escapes() {
        assert_eq!(inert("orders"), "orders");
        assert_eq!(inert("a\u{1b}[2Jb\n\tc"), "a\\u{1b}[2Jb\n\tc");
        assert_eq!(inert("invoice\u{202e}fdp.exe"), "invoice\\u{202e}fdp.exe");
        assert_eq!(inert("x\u{9b}31m\u{7f}"), "x\\u{9b}31m\\u{7f}");
    }

    #[test]
    fn characters_that_show_as_nothing_show_as_escapes() {
        assert_eq!(inert("orders\u{200b}"), "orders\\u{200b}");
        assert_eq!(
            inert("\u{feff}a\u{2060}b\u{e0041}"),
            "\\u{feff}a\\u{2060}b\\u{e0041}"
        );
        // Every default-ignorable code point, not only the common ones.
        for c in [
            '\u{fe0f}',
            '\u{e0100}',
            '\u{17b4}',
            '\u{1d173}',
            '\u{180b}',
            '\u{1bca0}',
        ] {
            let name = format!("orders{c}");
            assert_eq!(inert(&name), format!("orders\\u{{{:x}}}", c as u32));
        }
        // Letters of every script stay as they are.
        assert_eq!(inert("заказы_注文"), "заказы_注文");
    }
    #[test]
    fn system_error_numbers_are_left_out() {
        assert_eq!(
            without_os_code("cannot read a: No such file or directory (os error 2)"),
            "cannot read a: No such file or directory"
        );
        // Only the system's own marker goes; a name that looks like it half stays.
        assert_eq!(without_os_code("t (os error x) u"), "t (os error x) u");
        let e = std::io::Error::from_raw_os_error(13);
        assert!(!io_reason(&e).contains("os error"), "{}", io_reason(&e));
    }
}

/// `s` as one POSIX shell word: as it is when it holds only characters no
/// shell reads specially, else single-quoted. The one way ripple puts a
/// name into a command line, printed or run.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@".contains(c))
    {
        s.to_string()
    } else if s.chars().any(|c| acts(c) || c == '\r') {
        // bash's `$'...'`, every such character escaped: the same word to
        // the shell, and nothing that acts on a terminal printing it (the
        // scripts ripple writes are bash).
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                // Its UTF-8 bytes: `\u` would depend on the locale.
                c if acts(c) || c == '\r' => {
                    let mut bytes = [0; 4];
                    for b in c.encode_utf8(&mut bytes).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `; did you mean `x`?` for a suggested name, the name on one line (a
/// name holding a newline must not start a line of its own in a message).
pub fn mean_hint(suggested: &str) -> String {
    format!("; did you mean `{}`?", one_line(suggested))
}

/// Bytes of a value an error message quotes (see [`clipped`]).
pub const MESSAGE_QUOTE: usize = 1_000;

/// `s` cut to at most `max` bytes on a character boundary, saying how much
/// was left out: an error quoting a 60 MB value (a bad date, a token) once
/// printed all of it, a line per model, until memory ran out.
pub fn clipped(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}… ({} more bytes left out)",
        &s[..cut],
        s.len() - cut
    ))
}

/// `s` on one line for a person to read: [`inert`], and line breaks and
/// tabs shown as `\n`, `\r`, `\t` too, so a name cannot start a line of
/// its own in text output.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if !s
        .chars()
        .any(|c| acts(c) || matches!(c, '\n' | '\r' | '\t'))
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if acts(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}
