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

/// A call written in a tag: the dotted name (`a`, `pkg.macro`,
/// `adapter.get_relation`) before a `(`, outside string literals.
struct Call<'a> {
    /// The dotted name.
    name: &'a str,
    /// Its byte offset in the tag.
    start: usize,
    /// Whether it follows a `.` (`x().name(`): a method of a value.
    after_dot: bool,
}

/// The calls in one tag, in order.
fn calls(tag: &str) -> Vec<Call<'_>> {
    let bytes = tag.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    let mut in_string: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = in_string {
            if c == b'\\' {
                i += 1;
            } else if c == q {
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
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
            {
                i += 1;
            }
            let mut j = i;
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
            if bytes.get(j) == Some(&b'(') {
                found.push(Call {
                    name: tag[start..i].trim_end_matches('.'),
                    start,
                    after_dot: start > 0 && bytes[start - 1] == b'.',
                });
            }
            continue;
        }
        i += 1;
    }
    found
}

/// Names called inside Jinja tags: `name(` (false), and the roots of
/// dotted calls `name.method(` (true); never `x.name(` or `a.b.c(`.
pub(crate) fn called_names(text: &str) -> impl Iterator<Item = (&str, bool)> {
    tags(text).flat_map(|(tag, _)| {
        calls(tag)
            .into_iter()
            .filter(|c| !c.after_dot)
            .filter_map(|c| match c.name.split_once('.') {
                None => Some((c.name, false)),
                Some((root, rest)) if !rest.contains('.') => Some((root, true)),
                Some(_) => None,
            })
            .collect::<Vec<_>>()
    })
}

/// The calls through which a template asks the warehouse: what it reads
/// (or which columns) then depends on data, which no static reader sees.
/// The last part of a dotted call is matched (`dbt_utils.get_column_values`,
/// `adapter.get_columns_in_relation`). The first seven are dbt's
/// primitives; the rest are package macros built on them.
pub(crate) const WAREHOUSE_CALLS: &[&str] = &[
    "run_query",
    "statement",
    "load_result",
    "get_columns_in_relation",
    "get_relation",
    "load_relation",
    "list_relations_without_caching",
    "get_filtered_columns_in_relation",
    "get_relations_by_pattern",
    "get_relations_by_prefix",
    "get_column_values",
    "get_query_results_as_dict",
    "get_single_value",
    "star",
    // The adapter's own writes, [`ADAPTER_WRITES`]: a plan refuses a
    // restated model whose body calls them.
    ADAPTER_WRITES[0],
    ADAPTER_WRITES[1],
    ADAPTER_WRITES[2],
    ADAPTER_WRITES[3],
    ADAPTER_WRITES[4],
    ADAPTER_WRITES[5],
];

/// The adapter's methods that change the warehouse (`adapter.execute`,
/// `adapter.drop_relation`, ...), as the last part of the call.
pub(crate) const ADAPTER_WRITES: [&str; 6] = [
    "execute",
    "drop_relation",
    "truncate_relation",
    "rename_relation",
    "drop_schema",
    "create_schema",
];

/// How many of [`WAREHOUSE_CALLS`] are dbt's primitives.
const PRIMITIVES: usize = 7;

/// The warehouse call a macro's body stands for, if any: a package macro
/// built on the warehouse, or a primitive in a macro that checks `execute`
/// (the sign that it queries when dbt runs). A primitive in a branch that
/// parsing does not take (a `ref` override for one target) is caught only
/// if rendering reaches it.
pub(crate) fn macro_warehouse_call(body: &str) -> Option<String> {
    let calls = warehouse_calls(body);
    let is_primitive = |c: &str| {
        let last = c.rsplit('.').next().unwrap_or(c);
        WAREHOUSE_CALLS[..PRIMITIVES].contains(&last)
    };
    let checks_execute = body.contains("execute");
    calls
        .into_iter()
        .find(|c| !is_primitive(c) || checks_execute)
}

/// The warehouse calls (see [`WAREHOUSE_CALLS`]) written in `text`, dotted
/// as written, in order of first appearance.
pub(crate) fn warehouse_calls(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    // Most models name none of them: a substring test skips the scan.
    if !WAREHOUSE_CALLS.iter().any(|w| text.contains(w)) {
        return found;
    }
    for (tag, _) in tags(text) {
        for call in calls(tag) {
            let last = call.name.rsplit('.').next().unwrap_or(call.name);
            let defines = tag[..call.start].trim_end().ends_with("macro");
            if !defines && WAREHOUSE_CALLS.contains(&last) && !found.iter().any(|f| f == call.name)
            {
                found.push(call.name.to_string());
            }
        }
    }
    found
}

/// One `{% macro %}...{% endmacro %}` block of a file, by byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MacroBlock {
    /// The macro's name.
    pub name: String,
    /// Where the `{% macro %}` tag starts.
    pub start: usize,
    /// Where its body (after the opening tag) starts.
    pub body_start: usize,
    /// Where the `{% endmacro %}` tag starts.
    pub body_end: usize,
    /// Where the `{% endmacro %}` tag ends.
    pub end: usize,
}

/// The top-level macro blocks of a file, as dbt extracts them: each is
/// compiled alone, and text between blocks is never compiled.
pub(crate) fn macro_blocks(text: &str) -> Vec<MacroBlock> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, usize)> = None;
    for (tag, at) in statement_tags(text) {
        let body = tag.trim_start_matches(['{', '%', '-', '+']).trim_start();
        if let Some(rest) = body
            .strip_prefix("macro")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if open.is_none() && !name.is_empty() {
                open = Some((name, at, at + tag.len()));
            }
        } else if body.starts_with("endmacro")
            && let Some((name, start, body_start)) = open.take()
        {
            out.push(MacroBlock {
                name,
                start,
                body_start,
                body_end: at,
                end: at + tag.len(),
            });
        }
    }
    out
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

/// The text inside `{% if %}` ... `{% endif %}` blocks (outermost, their
/// tags included), white space collapsed: what a render taking one branch
/// may not show.
pub(crate) fn branch_text(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (tag, at) in statement_tags(text) {
        let body = tag.trim_start_matches(['{', '%', '-', '+']).trim_start();
        let word: String = body
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        match word.as_str() {
            "if" => {
                if depth == 0 {
                    start = at;
                }
                depth += 1;
            }
            "endif" if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let block = &text[start..at + tag.len()];
                    out.extend(block.split_whitespace().flat_map(|w| [w, " "]));
                    out.push('\n');
                }
            }
            _ => {}
        }
    }
    out
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
