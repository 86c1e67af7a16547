//! Escaping names for each output language, so a name holding quotes,
//! braces or newlines cannot break (or inject into) the output.

/// A DOT double-quoted string, quotes included.
pub fn dot_string(s: &str) -> String {
    dot_lines(&[s])
}

/// A DOT quoted string of `lines`, each escaped as [`dot_string`] escapes,
/// drawn one under the other: the only line breaks are the ones ripple
/// puts there (a name holding a newline is shown with `\n`, as in the text
/// formats, never drawn on two lines).
pub fn dot_lines(lines: &[&str]) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 2).sum::<usize>() + 2);
    out.push('"');
    for (i, s) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str("\\n");
        }
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                // Shown, not acted on: `\n` would break the line, `\r`
                // justify it, a raw tab look like spaces.
                '\n' => out.push_str("\\\\n"),
                '\r' => out.push_str("\\\\r"),
                '\t' => out.push_str("\\\\t"),
                c if crate::text::acts(c) => out.push_str(&format!("\\\\u{{{:x}}}", c as u32)),
                c => out.push(c),
            }
        }
    }
    out.push('"');
    out
}

/// Text inside a Mermaid `["..."]` label: quotes and markup characters as
/// entity codes, line breaks and tabs as `\n`, `\r`, `\t` (as spaces they
/// made look-alike names).
pub fn mermaid_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '`' => out.push_str("#96;"),
            // `%%{init: ...}%%` anywhere in the text is a directive to
            // Mermaid (it can lower the security level); `%%` a comment.
            '%' => out.push_str("#37;"),
            // As text: an entity would give the character back.
            c if crate::text::acts(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a Markdown table cell: pipes escaped, HTML brackets as
/// entities, line breaks and tabs as `\n`, `\r`, `\t`, so a name cannot
/// end the cell or the row, nor look like another.
pub fn markdown_cell(s: &str) -> String {
    breaks_shown(
        &s.replace('|', "\\|")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    )
}

/// `s` with its line breaks and tabs written `\n`, `\r`, `\t`.
fn breaks_shown(s: &str) -> String {
    s.replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', "\\t")
}

/// Markdown prose in which GitHub links nothing: `@org/team` would notify
/// a team, `a@b.io` become a `mailto:` link and `https://...` or `www.` a
/// link, from a table's name. Entities show the same characters and link
/// nothing, except after `@`: GitHub decodes them before it finds e-mail
/// addresses and mentions, so an empty HTML comment (shown as nothing)
/// parts the `@` from what follows. (Names in table cells are code spans,
/// which GitHub never links.)
fn unlinked(s: &str) -> String {
    s.replace('@', "&#64;<!-- -->")
        .replace("://", "&#58;//")
        .replace("www.", "www&#46;")
}

/// Prose text in Markdown: characters that would start markup are
/// backslash-escaped, HTML brackets become entities, newlines spaces, so a
/// name shows as written wherever it is put (table cells included).
pub fn markdown_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // `\\n`: the backslash escaped, as every backslash here is.
            '\n' => out.push_str("\\\\n"),
            '\r' => out.push_str("\\\\r"),
            '\t' => out.push_str("\\\\t"),
            c => out.push(c),
        }
    }
    unlinked(&out)
}

/// A Markdown code span around `s`, fenced with more backticks than any run
/// inside it (CommonMark's rule), line breaks and tabs as `\n`, `\r`, `\t`.
pub fn code_span(s: &str) -> String {
    let s = breaks_shown(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// [`code_span`] for a Markdown table cell: pipes escaped too, since
/// GitHub splits cells on them even inside code.
pub fn cell_code(s: &str) -> String {
    code_span(s).replace('|', "\\|")
}

/// Each of `items` as a code span, joined by `, `.
pub fn code_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| cell_code(s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A fenced code block of `body`, its fence longer than any run of
/// backticks inside (a name holding a line of three backticks would
/// otherwise end the block and turn the rest into Markdown).
pub fn code_block(lang: &str, body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = body.strip_suffix('\n').unwrap_or(body);
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

/// A GitHub workflow command's message (`::warning ...::message`).
pub fn github_message(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A GitHub workflow command's property value (`file=...`).
pub fn github_property(s: &str) -> String {
    github_message(s).replace(':', "%3A").replace(',', "%2C")
}

/// [`xml`] for a name or id: on one line, a line feed or tab in it shown as
/// `\n`, `\t` (kept raw, `s."a<TAB>c<LF>d"` showed as `s."a c d"`).
pub fn xml_line(s: &str) -> String {
    xml(&crate::text::one_line(s))
}

/// Text or an attribute value in HTML and SVG (XML): markup characters and
/// both quotes as entities; control characters XML forbids shown as `?`, so
/// a standalone SVG stays well-formed whatever a name holds.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            // A raw CR is folded away by XML parsers (to a space in an
            // attribute): shown as its escape, like any control character.
            '\r' => out.push_str("\\u{d}"),
            c if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            // A direction override would reorder what follows on screen.
            c if crate::text::acts(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
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
        assert_eq!(dot_string("x\n}"), "\"x\\\\n}\"");
        assert_eq!(dot_lines(&["a\nb", "c"]), "\"a\\\\nb\\nc\"");
        assert_eq!(mermaid_label(r#"a"]-->b["#), "a#quot;]--#gt;b[");
        assert_eq!(markdown_cell("a|b\n<c>"), "a\\|b\\n&lt;c&gt;");
        assert_eq!(
            markdown_text("a_b|*c*\n<d>"),
            "a\\_b\\|\\*c\\*\\\\n&lt;d&gt;"
        );
        // Names that differ by a line break, a carriage return or a space
        // never print alike.
        for f in [
            markdown_cell,
            markdown_text,
            code_span,
            mermaid_label,
            dot_string,
        ] {
            let shown: std::collections::BTreeSet<String> = ["a b", "a\nb", "a\rb", "a\tb"]
                .iter()
                .map(|n| f(n))
                .collect();
            assert_eq!(shown.len(), 4, "{shown:?}");
            assert!(
                shown.iter().all(|s| !s.contains('\r') && !s.contains('\t')),
                "{shown:?}"
            );
        }
        assert_eq!(code_span("x"), "`x`");
        assert_eq!(code_span("a``b"), "```a``b```");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(github_message("50%\nnext"), "50%25%0Anext");
        assert_eq!(github_property("a,b:c"), "a%2Cb%3Ac");
        // Direction overrides show as escapes; mentions and links are dead.
        assert_eq!(xml("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(dot_string("a\u{202e}b"), "\"a\\\\u{202e}b\"");
        assert_eq!(mermaid_label("a\u{2066}b"), "a\\u{2066}b");
        // Neither a Mermaid directive nor an XML-folded CR survives.
        assert_eq!(
            mermaid_label("%%{init: {'securityLevel':'loose'}}%%"),
            "#37;#37;{init: {'securityLevel':'loose'}}#37;#37;"
        );
        assert_eq!(xml("a\rb\u{200b}"), "a\\u{d}b\\u{200b}");
        assert_eq!(xml_line("s.\"a\tc\nd\""), "s.&quot;a\\tc\\nd&quot;");
        assert_eq!(
            markdown_text("@org/team https://x.io www.y.io mail@evil.example"),
            "&#64;<!-- -->org/team https&#58;//x.io www&#46;y.io mail&#64;<!-- -->evil.example"
        );

        assert_eq!(
            xml("</script><img src=x onerror='a()'>\u{1}\"&"),
            "&lt;/script&gt;&lt;img src=x onerror=&#39;a()&#39;&gt;?&quot;&amp;"
        );
    }
}
