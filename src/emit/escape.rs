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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_stay_inside_their_quotes() {
        assert_eq!(dot_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(dot_string("x\n}"), "\"x\\n}\"");
        assert_eq!(mermaid_label(r#"a"]-->b["#), "a#quot;]--#gt;b[");
    }
}
