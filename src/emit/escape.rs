//! Escaping names for each output language, so a name holding quotes,
//! braces or newlines cannot break (or inject into) the output.

/// A DOT double-quoted string, quotes included.
pub fn dot_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text inside a Mermaid `["..."]` label: quotes and markup characters as
/// entity codes, newlines as spaces.
pub fn mermaid_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            '\n' | '\r' => out.push(' '),
            '`' => out.push_str("#96;"),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a Markdown table cell: pipes escaped, HTML brackets as
/// entities, newlines as spaces, so a name cannot end the cell or the row.
pub fn markdown_cell(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', " ")
}

/// The plural suffix for `n` things in English prose.
pub fn plural<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_stay_inside_their_quotes() {
        assert_eq!(dot_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(dot_string("x\n}"), "\"x\\n}\"");
        assert_eq!(mermaid_label(r#"a"]-->b["#), "a#quot;]--#gt;b[");
        assert_eq!(markdown_cell("a|b\n<c>"), "a\\|b &lt;c&gt;");
    }
}
