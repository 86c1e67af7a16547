//! Reading Jinja text without rendering it: tags, the macros a file
//! defines, the names its tags call.

/// The name a macro is defined under once its file is loaded. Definitions
/// are renamed so that every call, even from a sibling macro of the same
/// file, reaches the global dispatcher (which makes `return()`, call limits
/// and package lookup work the same everywhere).
pub(crate) fn definition_name(name: &str) -> String {
    format!("__ripple_def_{name}")
}

/// `text` with every `{% macro name(` renamed to its definition name.
pub(crate) fn rename_definitions(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut last = 0;
    for (tag, at) in statement_tags(text) {
        let lead = tag.len()
            - tag
                .trim_start_matches(['{', '%', '-', '+'])
                .trim_start()
                .len();
        let body = &tag[lead..];
        if let Some(rest) = body
            .strip_prefix("macro")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            let name_at = at + lead + 5 + (rest.len() - rest.trim_start().len());
            out.push_str(&text[last..name_at]);
            out.push_str("__ripple_def_");
            last = name_at;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// Names of the macros a file defines (`{% macro name(...) %}`).
pub(crate) fn macro_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (tag, _) in statement_tags(text) {
        let body = tag.trim_start_matches(['{', '%', '-', '+']).trim_start();
        let Some(rest) = body
            .strip_prefix("macro")
            .filter(|r| r.starts_with(char::is_whitespace))
        else {
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
    }
    names
}

/// Names called inside Jinja tags: `name(` (false), and the roots of
/// dotted calls `name.method(` (true); never `x.name(`.
pub(crate) fn called_names(text: &str) -> impl Iterator<Item = (&str, bool)> {
    tags(text).flat_map(|(tag, _)| {
        let bytes = tag.as_bytes();
        let mut found = Vec::new();
        let mut i = 0;
        let mut in_string: Option<u8> = None;
        while i < bytes.len() {
            let c = bytes[i];
            if let Some(q) = in_string {
                if c == q {
                    in_string = None;
                }
                i += 1;
                continue;
            }
            if c == b'\'' || c == b'"' {
                in_string = Some(c);
                i += 1;
                continue;
            }
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let preceded = start > 0 && bytes[start - 1] == b'.';
                let mut j = i;
                while j < bytes.len() && bytes[j] == b' ' {
                    j += 1;
                }
                if !preceded && bytes.get(j) == Some(&b'(') {
                    found.push((&tag[start..i], false));
                }
                // `pkg.macro(`: the root of a dotted call.
                if !preceded && bytes.get(i) == Some(&b'.') {
                    let mut k = i + 1;
                    while k < bytes.len() && (bytes[k].is_ascii_alphanumeric() || bytes[k] == b'_')
                    {
                        k += 1;
                    }
                    if bytes.get(k) == Some(&b'(') {
                        found.push((&tag[start..i], true));
                    }
                }
                continue;
            }
            i += 1;
        }
        found
    })
}

pub(crate) fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "if" | "elif"
            | "else"
            | "for"
            | "in"
            | "not"
            | "and"
            | "or"
            | "is"
            | "set"
            | "macro"
            | "call"
            | "filter"
            | "with"
            | "block"
            | "import"
            | "from"
            | "include"
            | "do"
            | "return"
            | "caller"
            | "super"
            | "loop"
            | "true"
            | "false"
            | "none"
            | "True"
            | "False"
            | "None"
    )
}

/// Statement tags (`{% ... %}`) only: `{{ macro }}` prints a variable that
/// Jinja2 allows to be named `macro`, and defines nothing.
fn statement_tags(text: &str) -> impl Iterator<Item = (&str, usize)> {
    tags(text).filter(|(tag, _)| tag.starts_with("{%"))
}

/// Jinja tags (`{{ ... }}`, `{% ... %}`) in `text`, with their byte offsets.
pub(crate) fn tags(text: &str) -> impl Iterator<Item = (&str, usize)> {
    let mut rest = 0;
    std::iter::from_fn(move || {
        loop {
            let open = text[rest..].find('{')? + rest;
            let kind = text.as_bytes().get(open + 1).copied();
            let close = match kind {
                Some(b'{') => "}}",
                Some(b'%') => "%}",
                Some(b'#') => "#}",
                _ => {
                    rest = open + 1;
                    continue;
                }
            };
            let end = text[open + 2..]
                .find(close)
                .map_or(text.len(), |e| open + 2 + e + 2);
            rest = end;
            if kind == Some(b'#') {
                continue;
            }
            return Some((&text[open..end], open));
        }
    })
}

/// Removes blocks dbt parses separately and that are not macros:
/// `{% test %}`, `{% materialization %}`, `{% snapshot %}`, `{% docs %}`.
pub(crate) fn strip_non_macro_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping: Option<&str> = None;
    let mut last = 0;
    for (tag, at) in tags(text) {
        let body = tag
            .trim_start_matches(['{', '%', '-', '+'])
            .trim_start()
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap_or_default();
        match skipping {
            None => {
                if let Some(kind) = ["test", "materialization", "snapshot", "docs"]
                    .into_iter()
                    .find(|k| *k == body)
                {
                    out.push_str(&text[last..at]);
                    skipping = Some(kind);
                }
            }
            Some(kind) => {
                if body.strip_prefix("end") == Some(kind) {
                    skipping = None;
                    last = at + tag.len();
                }
            }
        }
    }
    if skipping.is_none() {
        out.push_str(&text[last..]);
    }
    out
}
