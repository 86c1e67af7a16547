//! Python's `re` patterns read into the regex crate's syntax, and matches
//! found in the order Python finds them.
//!
//! The two engines agree only on part of their syntax: Rust reads
//! `[[:alpha:]]`, `&&`, `~~`, `\z`, `\pL`, `(?<n>...)`, `a**`, `\x{41}` where
//! Python reads literal characters or refuses the pattern, and Python's `$`
//! also matches before a final newline. So a pattern is read by Python's
//! rules and written out with every literal escaped; what the two would
//! answer differently (look-around, a `$` over text ending in a newline,
//! Unicode classes over text that is not ASCII) is an error, never a value
//! (a wrong alias would put a plan on another table).

use std::fmt::Write as _;

/// Python's `re.IGNORECASE`, `re.MULTILINE`, `re.DOTALL`, `re.VERBOSE` and
/// `re.UNICODE` (the default for text): the flags ripple reads.
pub(super) const IGNORECASE: i64 = 2;
pub(super) const MULTILINE: i64 = 8;
pub(super) const DOTALL: i64 = 16;
pub(super) const UNICODE: i64 = 32;
pub(super) const VERBOSE: i64 = 64;

/// A Python pattern in the regex crate's syntax, with what its answers
/// depend on.
#[derive(Debug, Clone)]
pub(super) struct Translated {
    /// The pattern for the regex crate (flags written inline).
    pub rust: String,
    /// It has a `$` outside multi-line mode: Python's matches before a final
    /// newline too, which the crate's `\z` does not.
    dollar: bool,
    /// It has `\w`, `\b`, `\s` (or their negations) or ignores case: the
    /// engines' Unicode tables differ, so only ASCII text is answered.
    ascii_only: bool,
    /// It has an alternation or a lazy repeat: after an empty match Python
    /// may backtrack to a longer match at the same place, which the crate's
    /// leftmost-first search does not say.
    pub backtracks: bool,
}

impl Translated {
    /// Whether the two engines answer alike on `text`; why not, if not.
    pub fn answers(&self, text: &str) -> Result<(), String> {
        if self.dollar && text.ends_with('\n') {
            return Err("ripple's `re` reads `$` only on text that does not end in a newline (Python's `$` also matches before it)".into());
        }
        if self.ascii_only && !text.is_ascii() {
            return Err("ripple's `re` reads `\\w`, `\\b`, `\\s` and IGNORECASE only on ASCII text (Python's Unicode tables differ from its engine's)".into());
        }
        Ok(())
    }
}

/// Reads `pattern` (with `flags`) as Python does.
pub(super) fn translate(pattern: &str, flags: i64) -> Result<Translated, String> {
    if flags & !(IGNORECASE | MULTILINE | DOTALL | UNICODE | VERBOSE) != 0 {
        return Err(format!(
            "flags {flags}: ripple's `re` reads IGNORECASE, MULTILINE, DOTALL, VERBOSE and UNICODE"
        ));
    }
    let mut r = Reader {
        chars: pattern.chars().collect(),
        at: 0,
        out: String::with_capacity(pattern.len() * 2),
        multiline: flags & MULTILINE != 0,
        verbose: flags & VERBOSE != 0,
        dollar: false,
        ascii_only: flags & IGNORECASE != 0,
        ignore_case: flags & IGNORECASE != 0,
        dotall: flags & DOTALL != 0,
        backtracks: false,
        depth: 0,
        groups: Vec::new(),
    };
    // Python reads global inline flags (`(?im)`) only at the start.
    r.leading_flags()?;
    r.out.push_str("(?u");
    if r.ignore_case {
        r.out.push('i');
    }
    if r.dotall {
        r.out.push('s');
    }
    r.out.push(')');
    r.sequence()?;
    if r.at < r.chars.len() {
        return Err(format!("unbalanced parenthesis at position {}", r.at));
    }
    if r.ignore_case && !pattern.is_ascii() {
        return Err("ripple's `re` ignores case only in ASCII patterns".into());
    }
    Ok(Translated {
        rust: r.out,
        dollar: r.dollar,
        ascii_only: r.ascii_only,
        backtracks: r.backtracks,
    })
}

struct Reader {
    chars: Vec<char>,
    at: usize,
    out: String,
    multiline: bool,
    verbose: bool,
    dollar: bool,
    ascii_only: bool,
    ignore_case: bool,
    dotall: bool,
    backtracks: bool,
    depth: usize,
    /// Names of the groups read so far.
    groups: Vec<String>,
}

/// What the last item read was, for the repeat after it.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Last {
    /// Nothing (the start, `(` or `|`): a repeat has nothing to repeat.
    Nothing,
    /// An anchor (`^`, `\b`): Python refuses to repeat one.
    Anchor,
    /// Something a repeat applies to.
    Atom,
    /// A repeat: another right after it is Python's "multiple repeat".
    Repeat,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.at + n).copied()
    }

    fn error<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at position {}", self.at))
    }

    fn leading_flags(&mut self) -> Result<(), String> {
        while self.peek() == Some('(') && self.peek_at(1) == Some('?') {
            let mut n = 2;
            let mut letters = String::new();
            while let Some(c) = self.peek_at(n).filter(char::is_ascii_alphabetic) {
                letters.push(c);
                n += 1;
            }
            if letters.is_empty() || self.peek_at(n) != Some(')') {
                return Ok(());
            }
            for c in letters.chars() {
                match c {
                    'i' => {
                        self.ignore_case = true;
                        self.ascii_only = true;
                    }
                    'm' => self.multiline = true,
                    's' => self.dotall = true,
                    'x' => self.verbose = true,
                    'u' => {}
                    other => {
                        return self.error(&format!(
                            "the inline flag `{other}` is not one ripple's `re` reads"
                        ));
                    }
                }
            }
            self.at += n + 1;
        }
        Ok(())
    }

    /// Alternatives until `)` or the end.
    fn sequence(&mut self) -> Result<(), String> {
        let mut last = Last::Nothing;
        while let Some(c) = self.peek() {
            if self.verbose && " \t\n\r\u{b}\u{c}".contains(c) {
                self.at += 1;
                continue;
            }
            if self.verbose && c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.at += 1;
                }
                continue;
            }
            match c {
                ')' => {
                    if self.depth == 0 {
                        return self.error("unbalanced parenthesis");
                    }
                    return Ok(());
                }
                '|' => {
                    self.backtracks = true;
                    self.out.push('|');
                    self.at += 1;
                    last = Last::Nothing;
                }
                '*' | '+' | '?' => {
                    self.repeat_after(last)?;
                    self.at += 1;
                    self.out.push(c);
                    self.repeat_suffix()?;
                    last = Last::Repeat;
                }
                '{' => match self.braces() {
                    Some((text, len)) => {
                        self.repeat_after(last)?;
                        self.at += len;
                        self.out.push_str(&text);
                        self.repeat_suffix()?;
                        last = Last::Repeat;
                    }
                    None => {
                        self.literal('{');
                        self.at += 1;
                        last = Last::Atom;
                    }
                },
                '(' => {
                    self.group()?;
                    last = Last::Atom;
                }
                '[' => {
                    self.class()?;
                    last = Last::Atom;
                }
                '.' => {
                    self.out.push('.');
                    self.at += 1;
                    last = Last::Atom;
                }
                '^' => {
                    self.out
                        .push_str(if self.multiline { "(?m:^)" } else { "\\A" });
                    self.at += 1;
                    last = Last::Anchor;
                }
                '$' => {
                    if self.multiline {
                        self.out.push_str("(?m:$)");
                    } else {
                        self.dollar = true;
                        self.out.push_str("\\z");
                    }
                    self.at += 1;
                    last = Last::Anchor;
                }
                '\\' => {
                    last = self.escape()?;
                }
                c => {
                    self.literal(c);
                    self.at += 1;
                    last = Last::Atom;
                }
            }
        }
        Ok(())
    }

    fn repeat_after(&self, last: Last) -> Result<(), String> {
        match last {
            Last::Atom => Ok(()),
            Last::Repeat => self.error("multiple repeat"),
            Last::Nothing | Last::Anchor => self.error("nothing to repeat"),
        }
    }

    /// A `?` after a repeat makes it lazy; Python 3.11's `+` (possessive)
    /// is refused: older Pythons, which dbt runs on, refuse it.
    fn repeat_suffix(&mut self) -> Result<(), String> {
        match self.peek() {
            Some('?') => {
                self.backtracks = true;
                self.out.push('?');
                self.at += 1;
                Ok(())
            }
            Some('+') => self.error("a possessive repeat is not one ripple's `re` reads"),
            _ => Ok(()),
        }
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}` at the cursor, as the crate writes it,
    /// with its length; `None` where Python reads a literal `{`.
    fn braces(&self) -> Option<(String, usize)> {
        let mut n = 1;
        let digits = |n: &mut usize| {
            let mut s = String::new();
            while let Some(d) = self.peek_at(*n).filter(char::is_ascii_digit) {
                s.push(d);
                *n += 1;
            }
            s
        };
        let lo = digits(&mut n);
        let hi = if self.peek_at(n) == Some(',') {
            n += 1;
            Some(digits(&mut n))
        } else {
            None
        };
        if self.peek_at(n) != Some('}') {
            return None;
        }
        let text = match (lo.as_str(), hi.as_deref()) {
            ("", None) | ("", Some("")) => return None,
            (lo, None) => format!("{{{lo}}}"),
            ("", Some(hi)) => format!("{{0,{hi}}}"),
            (lo, Some("")) => format!("{{{lo},}}"),
            (lo, Some(hi)) => format!("{{{lo},{hi}}}"),
        };
        Some((text, n + 1))
    }

    fn literal(&mut self, c: char) {
        if c.is_ascii_alphanumeric() || c == '_' {
            self.out.push(c);
        } else {
            let _ = write!(self.out, "\\x{{{:x}}}", c as u32);
        }
    }

    fn group(&mut self) -> Result<(), String> {
        self.at += 1;
        if self.peek() == Some('?') {
            self.at += 1;
            match self.peek() {
                Some(':') => {
                    self.at += 1;
                    self.out.push_str("(?:");
                }
                Some('P') if self.peek_at(1) == Some('<') => {
                    self.at += 2;
                    let mut name = String::new();
                    while let Some(c) = self.peek().filter(|c| *c != '>') {
                        name.push(c);
                        self.at += 1;
                    }
                    if self.peek() != Some('>')
                        || name.is_empty()
                        || name.starts_with(|c: char| c.is_ascii_digit())
                        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        return self.error(&format!("bad group name {name:?}"));
                    }
                    if self.groups.contains(&name) {
                        return self.error(&format!("redefinition of group name {name:?}"));
                    }
                    self.groups.push(name.clone());
                    self.at += 1;
                    let _ = write!(self.out, "(?P<{name}>");
                }
                Some('#') => {
                    while self.peek().is_some_and(|c| c != ')') {
                        self.at += 1;
                    }
                    if self.peek() != Some(')') {
                        return self.error("missing ), unterminated comment");
                    }
                    self.at += 1;
                    return Ok(());
                }
                Some(c) if c.is_ascii_alphabetic() || c == '-' => {
                    // A scoped flag group: `(?i:...)`, `(?-i:...)`.
                    let mut letters = String::new();
                    while let Some(c) = self.peek().filter(|c| c.is_ascii_alphabetic() || *c == '-')
                    {
                        letters.push(c);
                        self.at += 1;
                    }
                    if self.peek() != Some(':') {
                        return self.error("global flags not at the start of the expression");
                    }
                    if !letters.chars().all(|c| matches!(c, 'i' | 's' | '-')) {
                        return self.error(&format!(
                            "the scoped flags `{letters}` are not ones ripple's `re` reads (i, s)"
                        ));
                    }
                    if letters.contains('i') {
                        self.ascii_only = true;
                    }
                    self.at += 1;
                    let _ = write!(self.out, "(?{letters}:");
                }
                _ => {
                    return self.error(
                        "look-around, back-references, atomic and conditional groups are not read by ripple's `re`",
                    );
                }
            }
        } else {
            self.groups.push(String::new());
            self.out.push('(');
        }
        self.depth += 1;
        self.sequence()?;
        self.depth -= 1;
        if self.peek() != Some(')') {
            return self.error("missing ), unterminated subpattern");
        }
        self.at += 1;
        self.out.push(')');
        Ok(())
    }

    /// An escape outside a class; what it was, for a repeat after it.
    fn escape(&mut self) -> Result<Last, String> {
        self.at += 1;
        let Some(c) = self.peek() else {
            return self.error("bad escape (end of pattern)");
        };
        self.at += 1;
        match c {
            'A' => self.out.push_str("\\A"),
            'Z' => self.out.push_str("\\z"),
            'b' | 'B' => {
                self.ascii_only = true;
                let _ = write!(self.out, "\\{c}");
            }
            _ => {
                self.class_escape(c, false)?;
                return Ok(Last::Atom);
            }
        }
        Ok(Last::Anchor)
    }

    /// An escape that stands for characters (`\d`, `\n`, `\x41`, `\.`), in
    /// a class (`in_class`) or out of one; the escape's letter is read.
    fn class_escape(&mut self, c: char, in_class: bool) -> Result<(), String> {
        match c {
            'd' | 'D' => {
                let _ = write!(self.out, "\\{c}");
            }
            'w' | 'W' => {
                self.ascii_only = true;
                let _ = write!(self.out, "\\{c}");
            }
            // Python's `\s` on text is `str.isspace()`: ASCII's field
            // separators too.
            's' => {
                self.ascii_only = true;
                self.out.push_str(if in_class {
                    "\\s\\x{1c}-\\x{1f}"
                } else {
                    "[\\s\\x{1c}-\\x{1f}]"
                });
            }
            'S' => {
                self.ascii_only = true;
                self.out.push_str("[^\\s\\x{1c}-\\x{1f}]");
            }
            'n' => self.out.push_str("\\x{a}"),
            't' => self.out.push_str("\\x{9}"),
            'r' => self.out.push_str("\\x{d}"),
            'f' => self.out.push_str("\\x{c}"),
            'v' => self.out.push_str("\\x{b}"),
            'a' => self.out.push_str("\\x{7}"),
            'b' if in_class => self.out.push_str("\\x{8}"),
            'x' => {
                let v = self.hex(2)?;
                self.code(v)?;
            }
            'u' => {
                let v = self.hex(4)?;
                self.code(v)?;
            }
            'U' => {
                let v = self.hex(8)?;
                self.code(v)?;
            }
            '0'..='7' if c == '0' || (in_class && c <= '7') || self.octal3(c) => {
                // `\0`, `\012`, `\177`: an octal code.
                let mut v = c.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3
                    && let Some(d) = self.peek().and_then(|d| d.to_digit(8))
                {
                    v = v * 8 + d;
                    self.at += 1;
                    n += 1;
                }
                if v > 0o377 {
                    return self.error("octal escape value outside of range 0-0o377");
                }
                self.code(v)?;
            }
            '1'..='9' => {
                return self.error("back-references are not read by ripple's `re`");
            }
            c if c.is_ascii_alphanumeric() => {
                return self.error(&format!("bad escape \\{c}"));
            }
            c => self.literal(c),
        }
        Ok(())
    }

    /// Whether `\c` followed by the next two characters is a three-digit
    /// octal escape (else, out of a class, it is a group's number).
    fn octal3(&self, c: char) -> bool {
        c <= '7'
            && self.peek().is_some_and(|d| d.is_digit(8))
            && self.peek_at(1).is_some_and(|d| d.is_digit(8))
    }

    fn hex(&mut self, n: usize) -> Result<u32, String> {
        let digits: String = (0..n).filter_map(|i| self.peek_at(i)).collect();
        if digits.chars().count() != n || !digits.chars().all(|d| d.is_ascii_hexdigit()) {
            return self.error(&format!("incomplete escape, {n} hex digits wanted"));
        }
        self.at += n;
        u32::from_str_radix(&digits, 16).map_err(|e| e.to_string())
    }

    fn code(&mut self, v: u32) -> Result<(), String> {
        let Some(c) = char::from_u32(v) else {
            return self.error(&format!("bad character code {v:#x}"));
        };
        let _ = write!(self.out, "\\x{{{:x}}}", c as u32);
        Ok(())
    }

    /// `[...]`, as Python reads it: `]` first is a literal, `[`, `&&`, `~~`
    /// and `--` are literal characters.
    fn class(&mut self) -> Result<(), String> {
        self.at += 1;
        self.out.push('[');
        if self.peek() == Some('^') {
            self.out.push('^');
            self.at += 1;
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return self.error("unterminated character set");
            };
            if c == ']' && !first {
                self.at += 1;
                self.out.push(']');
                return Ok(());
            }
            first = false;
            // One item: a character (perhaps a range's start) or a class escape.
            let start = self.class_char()?;
            let is_range = self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']');
            match (start, is_range) {
                (Some(lo), true) => {
                    self.at += 1;
                    let Some(hi) = self.class_char()? else {
                        return self.error("bad character range");
                    };
                    if hi < lo {
                        return self.error("bad character range");
                    }
                    let _ = write!(self.out, "\\x{{{:x}}}-\\x{{{:x}}}", lo as u32, hi as u32);
                }
                (None, true) => return self.error("bad character range"),
                (Some(c), false) => {
                    let _ = write!(self.out, "\\x{{{:x}}}", c as u32);
                }
                (None, false) => {}
            }
        }
    }

    /// One character of a class (`None`: a class escape, written out).
    fn class_char(&mut self) -> Result<Option<char>, String> {
        let Some(c) = self.peek() else {
            return self.error("unterminated character set");
        };
        self.at += 1;
        if c != '\\' {
            return Ok(Some(c));
        }
        let Some(e) = self.peek() else {
            return self.error("bad escape (end of pattern)");
        };
        self.at += 1;
        // Escapes of one character are read back from what they write.
        let before = self.out.len();
        self.class_escape(e, true)?;
        let written = self.out[before..].to_string();
        if let Some(code) = written
            .strip_prefix("\\x{")
            .and_then(|r| r.strip_suffix('}'))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32)
        {
            self.out.truncate(before);
            return Ok(Some(code));
        }
        if e.is_alphanumeric() {
            return Ok(None);
        }
        // An escaped punctuation character: itself.
        self.out.truncate(before);
        Ok(Some(e))
    }
}

/// Python's `re.escape` (3.7 and later): only the characters special in a
/// pattern get a backslash.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\u{b}\u{c}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether `pattern` (the crate's syntax) matches something not empty
/// starting at `at`: the longest match there, by the lazy DFA.
fn longer_match_at(pattern: &str, text: &str, at: usize) -> Result<bool, String> {
    use regex_automata::hybrid::dfa::DFA;
    use regex_automata::{Anchored, Input, MatchKind};
    let unsure = |e: &dyn std::fmt::Display| {
        format!("ripple's `re` cannot tell what Python matches after an empty match ({e})")
    };
    let dfa = DFA::builder()
        .configure(DFA::config().match_kind(MatchKind::All))
        .syntax(
            regex_automata::util::syntax::Config::new()
                .unicode(true)
                .utf8(true),
        )
        .build(pattern)
        .map_err(|e| unsure(&e))?;
    let mut cache = dfa.create_cache();
    let input = Input::new(text).range(at..).anchored(Anchored::Yes);
    let found = dfa
        .try_search_fwd(&mut cache, &input)
        .map_err(|e| unsure(&e))?;
    Ok(found.is_some_and(|m| m.offset() > at))
}

/// Each match of `re` in `text` in Python's order (3.7 and later): an
/// empty match right after a match counts, but never two at one place.
/// `each` is called with every match until it answers `false`.
pub(super) fn each_match<'t>(
    re: &regex::Regex,
    text: &'t str,
    backtracks: bool,
    mut each: impl FnMut(&regex::Captures<'t>) -> Result<bool, String>,
) -> Result<(), String> {
    let mut at = 0;
    let mut after_empty = false;
    while at <= text.len() {
        let Some(mut c) = re.captures_at(text, at) else {
            break;
        };
        let m = c.get(0).map_or((at, at), |m| (m.start(), m.end()));
        if after_empty && m.0 == at && m.1 == at {
            // Python backtracks here into the alternatives the crate's
            // leftmost-first choice skipped, for a match that is not
            // empty; where there is none, it moves on, as here.
            if backtracks && longer_match_at(re.as_str(), text, at)? {
                return Err("a pattern with alternatives or lazy repeats matched nothing where it can also match something: which match Python takes there, ripple's `re` cannot tell".into());
            }
            let Some(next) = text[at..].chars().next().map(|ch| at + ch.len_utf8()) else {
                break;
            };
            match re.captures_at(text, next) {
                Some(n) => c = n,
                None => break,
            }
        }
        let (start, end) = c.get(0).map_or((at, at), |m| (m.start(), m.end()));
        if !each(&c)? {
            break;
        }
        after_empty = start == end;
        at = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(p: &str) -> String {
        translate(p, 0)
            .map(|t| t.rust)
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    fn sub(p: &str, with: &str, text: &str) -> String {
        let t = translate(p, 0).unwrap();
        let re = regex::Regex::new(&t.rust).unwrap();
        let mut out = String::new();
        let mut last = 0;
        each_match(&re, text, t.backtracks, |c| {
            let m = c.get(0).unwrap();
            out.push_str(&text[last..m.start()]);
            out.push_str(with);
            last = m.end();
            Ok(true)
        })
        .unwrap();
        out.push_str(&text[last..]);
        out
    }

    #[test]
    fn matches_come_in_python_s_order() {
        // Python 3.7+: `-a-b--d-`, `_d_a_i_l_y__o_r_d_e_r_s_`.
        assert_eq!(sub("x*", "-", "abxd"), "-a-b--d-");
        assert_eq!(
            sub("[^a-z]*", "_", "daily-orders"),
            "_d_a_i_l_y__o_r_d_e_r_s_"
        );
        assert_eq!(sub("[[:alpha:]]", "X", "ab[:a]]"), "ab[:X]");
        assert_eq!(sub("[a-c~~b]", "X", "ab~d"), "XXXd");
    }

    #[test]
    fn after_an_empty_match_a_longer_one_python_might_take_is_refused() {
        // No longer match at 1: Python moves on, as ripple does.
        assert_eq!(sub("a|", "-", "ab"), "--b-");
        for p in ["(|a)", "x*?|a"] {
            let t = translate(p, 0).unwrap();
            let re = regex::Regex::new(&t.rust).unwrap();
            let r = each_match(&re, "a", t.backtracks, |_| Ok(true));
            assert!(r.is_err(), "{p}");
        }
    }

    #[test]
    fn what_rust_reads_as_syntax_is_literal_or_refused() {
        assert!(rust("a**").starts_with("ERR multiple repeat"));
        assert!(rust("a{2}{2}").starts_with("ERR multiple repeat"));
        assert!(rust("\\z").starts_with("ERR bad escape"));
        assert!(rust("\\pL").starts_with("ERR bad escape"));
        assert!(rust("(?<n>a)").starts_with("ERR look-around"));
        assert!(rust("\\x{41}").starts_with("ERR incomplete escape"));
        assert!(rust("(?U)a").starts_with("ERR the inline flag"));
        assert!(rust("a*+").starts_with("ERR a possessive"));
        assert_eq!(rust("a{,2}b{"), "(?u)a{0,2}b\\x{7b}");
    }
}
