//! Jinja2 as dbt projects write it, where minijinja reads it differently.
//!
//! Two gaps are closed by rewriting a template's text before minijinja sees
//! it ([`prepare`]), one by values of our own:
//!
//! - Unicode whitespace (a no-break space pasted after `)`) inside a tag is
//!   whitespace to Jinja2 and a syntax error to minijinja: it becomes a space.
//! - Python's lists and dicts are mutable and dbt macros build SQL with
//!   `{% do parts.append(x) %}`; minijinja's are not. In a template that calls
//!   a mutating method, every list and dict literal inside a tag is wrapped in
//!   a call that makes a [`List`] or [`Dict`], whose `append`, `extend`,
//!   `insert`, `pop`, `remove`, `update`, `setdefault`... really change it, so
//!   the rendered SQL is what Jinja2 renders.
//!
//! Text outside tags, and string literals inside them, are never changed.
//!
//! Printing follows Python too ([`python_formatter`]): `{{ true }}` is
//! `True`, `{{ none }}` is `None`, a list prints as `['a', 1]`.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, ValueKind};
use minijinja::{Environment, Error, ErrorKind, Output, State, Value};

use super::guard::MAX_ITEMS;
use super::lock;
use super::scanner::tags;

/// The global function that turns a list literal into a mutable [`List`].
const LIST_FN: &str = "__ripple_list";
/// The global function that turns a dict literal into a mutable [`Dict`].
const DICT_FN: &str = "__ripple_dict";

/// Methods that mutate a list or dict in Python.
const MUTATING: &[&str] = &[
    ".append(",
    ".extend(",
    ".insert(",
    ".pop(",
    ".remove(",
    ".update(",
    ".setdefault(",
    ".clear(",
    ".reverse(",
    ".sort(",
    ".popitem(",
];

/// `text` as minijinja should read it (see the module comment), with the
/// operators that print values (`~`, `in`) and namespace assignments
/// written as the guarded calls of `guard.rs`; borrowed when nothing needs
/// changing, which is the common case.
pub(crate) fn prepare(text: &str) -> Cow<'_, str> {
    match python_literals(text) {
        Cow::Borrowed(text) => super::guard::rewrite_dbt_operators(text),
        Cow::Owned(text) => Cow::Owned(super::guard::rewrite_dbt_operators(&text).into_owned()),
    }
}

/// `text` with Unicode spaces in tags made spaces and, where something
/// mutates, list and dict literals made mutable ([`prepare`] without the
/// rewrite of operators).
pub(crate) fn python_literals(text: &str) -> Cow<'_, str> {
    let odd_space = text.chars().any(|c| !c.is_ascii() && c.is_whitespace());
    let mutates = MUTATING.iter().any(|m| text.contains(m));
    let unary = has_unary_plus(text);
    let macros = text.contains("macro");
    let do_if = text.contains("do ");
    let big = has_long_number(text);
    if !odd_space && !mutates && !unary && !macros && !do_if && !big {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut last = 0;
    for (tag, at) in tags(text) {
        // `{{`/`{%` and the closing pair stay as they are.
        if tag.len() < 4 {
            continue;
        }
        let body = &tag[2..tag.len() - 2];
        let new = rewrite_tag(body, mutates, unary, big);
        let statement = tag.starts_with("{%");
        let defaults = (macros && statement).then(|| late_defaults(&new)).flatten();
        if let Some((header, prelude)) = defaults {
            out.push_str(&text[last..at + 2]);
            out.push_str(&header);
            out.push_str(&prelude);
            last = at + 2 + body.len();
        } else if let Some(new) = (do_if && statement)
            .then(|| do_without_else(&new))
            .flatten()
        {
            out.push_str(&text[last..at + 2]);
            out.push_str(&new);
            last = at + 2 + body.len();
        } else if let Cow::Owned(new) = new {
            out.push_str(&text[last..at + 2]);
            out.push_str(&new);
            last = at + 2 + body.len();
        }
    }
    if last == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// One tag's body, rewritten; borrowed when unchanged, and when its
/// brackets do not balance (then minijinja reports the tag as written).
fn rewrite_tag(body: &str, wrap: bool, unary: bool, big: bool) -> Cow<'_, str> {
    let mut out = String::with_capacity(body.len() + 32);
    let mut changed = false;
    // Open brackets: the closing text each needs.
    let mut open: Vec<&str> = Vec::new();
    let mut in_string: Option<char> = None;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if let Some(q) = in_string {
            out.push(c);
            if c == '\\' {
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
            } else if c == q {
                in_string = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                in_string = Some(c);
                out.push(c);
            }
            c if !c.is_ascii() && c.is_whitespace() => {
                out.push(' ');
                changed = true;
            }
            '[' if wrap && starts_literal(&body[..i]) => {
                out.push_str(LIST_FN);
                out.push_str("([");
                open.push("])");
                changed = true;
            }
            '{' if wrap => {
                out.push_str(DICT_FN);
                out.push_str("({");
                open.push("})");
                changed = true;
            }
            '[' | '(' | '{' => {
                out.push(c);
                open.push(match c {
                    '[' => "]",
                    '(' => ")",
                    _ => "}",
                });
            }
            ']' | ')' | '}' => match open.pop() {
                Some(close) if close.starts_with(c) => out.push_str(close),
                _ => return Cow::Borrowed(body),
            },
            // Jinja2's unary plus (`interval = +1`), which minijinja lacks:
            // the value unchanged.
            '+' if unary && starts_literal(&body[..i]) => changed = true,
            // A Python integer past 128 bits (a `uint256` bound, a 78-digit
            // default), which minijinja's lexer refuses, and with it the
            // whole template: a value that prints its digits.
            c if big
                && c.is_ascii_digit()
                && !body[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '.') =>
            {
                let len = body[i..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(body.len() - i);
                let literal = &body[i..i + len];
                match long_integer(literal) {
                    Some(digits) => {
                        out.push_str(&format!("{BIGINT_FN}('{digits}')"));
                        changed = true;
                    }
                    None => out.push_str(literal),
                }
                // The literal's other characters are consumed here.
                for _ in 1..literal.chars().count() {
                    chars.next();
                }
            }
            c => out.push(c),
        }
    }
    if !changed || !open.is_empty() || in_string.is_some() {
        return Cow::Borrowed(body);
    }
    Cow::Owned(out)
}

/// The global function a Python integer past 128 bits becomes.
const BIGINT_FN: &str = "__ripple_bigint";

/// Whether `text` may hold an integer literal past 128 bits: a run of 39
/// digits, or a hexadecimal, octal or binary one of more than 32 hex
/// digits' worth. Cheap; [`long_integer`] decides.
fn has_long_number(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        if b.is_ascii_hexdigit() || b == b'_' {
            run += 1;
            if run >= 33 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// The decimal digits of Python integer literal `literal` when it does
/// not fit minijinja's 128 bits; `None` when it fits or is no integer.
fn long_integer(literal: &str) -> Option<String> {
    let clean: String = literal.chars().filter(|&c| c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let (radix, digits) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower.as_str()),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if u128::from_str_radix(digits, radix).is_ok_and(|v| v <= i128::MAX as u128) {
        return None;
    }
    // Base 10^9 limbs, least significant first: radix conversion by hand
    // (no big-integer crate for one rare literal).
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = u64::from(c.to_digit(radix)?);
        for limb in &mut limbs {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = limbs.last().map(u64::to_string).unwrap_or_default();
    for limb in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{limb:09}"));
    }
    Some(out)
}

/// A Python integer past minijinja's 128 bits: it prints its digits
/// (where dbt projects use such numbers: a default written into SQL) and
/// compares as Python compares it; arithmetic is refused by the engine.
#[derive(Debug)]
struct BigInt(String);

impl Object for BigInt {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }

    // Two of them by value (digits without leading zeros: longer is
    // larger); against any number minijinja has, the engine already puts an
    // object above it, which a literal past 128 bits is.
    fn custom_cmp(
        self: &Arc<Self>,
        other: &minijinja::value::DynObject,
    ) -> Option<std::cmp::Ordering> {
        let other = other.downcast_ref::<BigInt>()?;
        Some(
            self.0
                .len()
                .cmp(&other.0.len())
                .then_with(|| self.0.cmp(&other.0)),
        )
    }
}

/// Whether a `+` may be a unary plus somewhere in `text`: after an
/// operator, an opening bracket, a comma or a colon. Cheap, so that most
/// templates are not rewritten at all.
fn has_unary_plus(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &c)| {
        c == b'+'
            && bytes[..i]
                .iter()
                .rev()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|b| b"=([{,:+-*/%<>!~".contains(b))
    })
}

/// The parts of `list` (a parameter or argument list) split at its
/// top-level commas; `None` when its brackets or quotes do not balance.
fn top_level_split(list: &str) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut in_string: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    for (i, c) in list.char_indices() {
        if let Some(q) = in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                in_string = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => in_string = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    (depth == 0 && in_string.is_none()).then(|| {
        parts.push(&list[start..]);
        parts
    })
}

/// The names an expression reads, outside string literals and not after a
/// `.` (attributes) or before a `=` inside a call (keyword arguments).
fn names_read(expr: &str) -> Vec<&str> {
    let bytes = expr.as_bytes();
    let mut names = Vec::new();
    let mut in_string: Option<u8> = None;
    let mut i = 0;
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
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let after_dot = expr[..start].trim_end().ends_with('.');
            let rest = expr[i..].trim_start();
            let keyword = rest.starts_with('=') && !rest.starts_with("==");
            if !after_dot && !keyword {
                names.push(&expr[start..i]);
            }
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    names
}

/// A statement tag's body split for rewriting: `{%- macro f(a) -%}` has
/// the body `- macro f(a) -`.
struct Tag<'a> {
    /// The body without its closing trim marker.
    inner: &'a str,
    /// Bytes of `inner` before the keyword (an opening trim marker, spaces).
    lead: usize,
    /// What follows the keyword.
    rest: &'a str,
    /// The closing trim marker (`-`, `+` or nothing).
    trim: &'a str,
}

impl<'a> Tag<'a> {
    /// `body` split, when its statement is `keyword`.
    fn of(body: &'a str, keyword: &str) -> Option<Tag<'a>> {
        let trimmed_end = body.trim_end();
        let (inner, trim) = match trimmed_end.strip_suffix(['-', '+']) {
            Some(inner) => (inner, &trimmed_end[inner.len()..]),
            None => (trimmed_end, ""),
        };
        let lead = inner.len() - inner.trim_start_matches(['-', '+']).trim_start().len();
        let rest = inner[lead..]
            .strip_prefix(keyword)
            .filter(|r| r.starts_with(char::is_whitespace))?;
        Some(Tag {
            inner,
            lead,
            rest,
            trim,
        })
    }
}

/// The value a macro parameter is given when its default reads an earlier
/// parameter (see [`late_defaults`]): no caller passes it.
const LATE_DEFAULT: &str = "'__ripple_late_default__'";

/// A `{% macro %}` tag whose parameter defaults read earlier parameters
/// (`events = source('allbridge_' ~ chain, 'ev')`): Jinja2 evaluates a
/// default when the macro is called, where the earlier parameters are
/// set; minijinja evaluates it where the macro is defined. Such a default
/// becomes a marker, and a prelude after the tag sets the parameter when
/// it is the marker. Returns the tag body (without its closing trim
/// marker) and the prelude, which ends with that marker so that the
/// whitespace the tag trimmed stays trimmed.
fn late_defaults(body: &str) -> Option<(String, String)> {
    let Tag {
        inner,
        lead,
        rest,
        trim,
    } = Tag::of(body, "macro")?;
    let open = rest.find('(')?;
    let close = rest.rfind(')')?;
    let params = top_level_split(rest.get(open + 1..close)?)?;
    let mut earlier: Vec<&str> = Vec::new();
    let mut header = String::new();
    let mut prelude = String::new();
    let mut last = 0;
    let params_at = lead + "macro".len() + open + 1;
    let mut offset = params_at;
    for param in params {
        let (name, default) = match param.split_once('=') {
            Some((n, d)) => (n.trim(), Some(d)),
            None => (param.trim(), None),
        };
        if let Some(default) = default
            && names_read(default).iter().any(|n| earlier.contains(n))
        {
            let default_at = offset + param.len() - default.len();
            header.push_str(&inner[last..default_at]);
            header.push(' ');
            header.push_str(LATE_DEFAULT);
            last = offset + param.len();
            prelude.push_str(&format!(
                "{{% if {name} == {LATE_DEFAULT} %}}{{% set {name} = {} %}}{{% endif %}}",
                default.trim()
            ));
        }
        earlier.push(name);
        offset += param.len() + 1;
    }
    if prelude.is_empty() {
        return None;
    }
    header.push_str(&inner[last..]);
    header.push_str(" %}");
    // The prelude's last tag takes the macro tag's own closing: the
    // original `%}` follows the rewritten body.
    prelude.truncate(prelude.len() - "%}".len());
    prelude.push_str(trim);
    Some((header, prelude))
}

/// `{% do x.append(y) if cond %}`: Jinja2 reads a conditional expression
/// without `else` as undefined when false; minijinja's `do` takes only a
/// call. Returns the body as `if cond %}{% do call %}{% endif` (keeping
/// the tag's trim markers), or `None` when not needed.
fn do_without_else(body: &str) -> Option<String> {
    let Tag {
        inner,
        lead,
        rest: expr,
        trim,
    } = Tag::of(body, "do")?;
    let at = top_level_word(expr, "if")?;
    if top_level_word(&expr[at..], "else").is_some() {
        return None;
    }
    let (call, cond) = (&expr[..at], &expr[at + 2..]);
    Some(format!(
        "{}if {} %}}{{% do {} %}}{{% endif {trim}",
        &inner[..lead],
        cond.trim(),
        call.trim()
    ))
}

/// Where `word` first stands alone in `expr` outside brackets and string
/// literals.
fn top_level_word(expr: &str, word: &str) -> Option<usize> {
    let bytes = expr.as_bytes();
    let mut depth = 0usize;
    let mut in_string: Option<u8> = None;
    let mut i = 0;
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
        match c {
            b'\'' | b'"' => in_string = Some(c),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ if depth == 0
                && expr[i..].starts_with(word)
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
                && bytes
                    .get(i + word.len())
                    .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_')) =>
            {
                return Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether a `[` after `before` opens a list (not a subscript `x[0]`).
fn starts_literal(before: &str) -> bool {
    let before = before.trim_end();
    let Some(last) = before.chars().next_back() else {
        return true;
    };
    if matches!(last, ')' | ']' | '}' | '\'' | '"') {
        return false;
    }
    if last.is_alphanumeric() || last == '_' {
        let word = &before[before
            .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_')
            .len()..];
        // After a keyword a `[` starts a value; after a name it indexes it.
        return matches!(
            word,
            "in" | "and" | "or" | "not" | "if" | "else" | "is" | "return" | "do"
        );
    }
    true
}

/// Prints values as Jinja2 does, which is Python's `str()`: booleans and
/// none capitalised, lists and dicts in Python's notation. Everything else
/// (strings, numbers, dbt's objects) prints as minijinja prints it.
pub(crate) fn python_formatter(
    out: &mut Output,
    state: &mut State,
    value: &Value,
) -> Result<(), Error> {
    // Printed whole before the engine charges for it: measured first.
    super::guard::check_shown(state, "printing a value", std::slice::from_ref(value))?;
    if is_python_value(value) {
        let mut text = String::new();
        python_repr(value, &mut text, false);
        return out.write_str(&text).map_err(Error::from);
    }
    minijinja::escape_formatter(out, state, value)
}

/// Whether `value` is a boolean, none, or one of the plain containers
/// (never one of dbt's objects, which print themselves).
fn is_python_value(value: &Value) -> bool {
    match value.kind() {
        ValueKind::Bool | ValueKind::None => true,
        ValueKind::Number => super::guard::python_scalar(value).is_some(),
        ValueKind::Seq => {
            value.downcast_object_ref::<Vec<Value>>().is_some()
                || value.downcast_object_ref::<List>().is_some()
                || value.downcast_object_ref::<Tuple>().is_some()
        }
        ValueKind::Map => {
            value
                .downcast_object_ref::<indexmap::IndexMap<Value, Value>>()
                .is_some()
                || value.downcast_object_ref::<Dict>().is_some()
        }
        _ => false,
    }
}

/// Python's `repr()` of `value` (its `str()` at the top level, where a
/// string prints bare).
fn python_repr(value: &Value, out: &mut String, nested: bool) {
    use std::fmt::Write;
    match value.kind() {
        ValueKind::Bool | ValueKind::None | ValueKind::Number
            if let Some(s) = super::guard::python_scalar(value) =>
        {
            out.push_str(&s)
        }
        ValueKind::String if nested => {
            let s = value.as_str().unwrap_or_default();
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            out.push(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
        }
        ValueKind::Seq if is_python_value(value) => {
            let tuple = value.downcast_object_ref::<Tuple>().is_some();
            out.push(if tuple { '(' } else { '[' });
            let mut n = 0;
            for (i, item) in value.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_repr(&item, out, true);
                n += 1;
            }
            if tuple && n == 1 {
                out.push(',');
            }
            out.push(if tuple { ')' } else { ']' });
        }
        ValueKind::Map if is_python_value(value) => {
            out.push('{');
            for (i, key) in value.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_repr(&key, out, true);
                out.push_str(": ");
                python_repr(&value.get_item(&key).unwrap_or_default(), out, true);
            }
            out.push('}');
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

/// A Python tuple (`re`'s groups, a span): a sequence printed `(a, b)`.
#[derive(Debug)]
pub(crate) struct Tuple(Vec<Value>);

impl Object for Tuple {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let i = i64::try_from(key.clone()).ok()?;
        let i = if i < 0 { self.0.len() as i64 + i } else { i };
        self.0.get(usize::try_from(i).ok()?).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.clone())
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&repr(&Value::from_dyn_object(self.clone())))
    }
}

/// `items` as a Python tuple.
pub(crate) fn tuple(items: Vec<Value>) -> Value {
    Value::from_object(Tuple(items))
}

/// Python's `repr()` of `value`.
pub(crate) fn repr(value: &Value) -> String {
    let mut out = String::new();
    python_repr(value, &mut out, true);
    out
}

/// `value` as a list or dict the template may change in place, as Python's
/// are: a list or dict the engine holds (from `var()`, `|list`,
/// `.split()`) is copied, once, into a [`List`] or [`Dict`]; anything
/// else is returned as it is. dbt's `{% do cols.append(c) %}` on such a
/// list was dropped.
pub(crate) fn mutable(value: Value) -> Result<Value, Error> {
    if value.downcast_object_ref::<List>().is_some()
        || value.downcast_object_ref::<Dict>().is_some()
        || value.is_tuple()
    {
        return Ok(value);
    }
    Ok(match value.kind() {
        ValueKind::Seq => Value::from_object(List(Mutex::new(value.try_iter()?.collect()))),
        ValueKind::Map
            if value
                .as_object()
                .is_some_and(|o| o.repr() == ObjectRepr::Map) =>
        {
            let mut pairs = Pairs::default();
            for key in value.try_iter()? {
                let v = value.get_item(&key)?;
                pairs.insert(key, v);
            }
            Value::from_object(Dict(Mutex::new(pairs)))
        }
        _ => value,
    })
}

/// The error for a method that changes a list or dict in place called on
/// one ripple cannot change (made by `*`, `+` or a filter): dbt would
/// change it, and dropping the change would print other SQL than dbt.
pub(crate) fn immutable(value: &Value, method: &str) -> Option<Error> {
    let changes = MUTATING
        .iter()
        .any(|m| m.strip_prefix('.').and_then(|m| m.strip_suffix('(')) == Some(method));
    let container = matches!(
        value.kind(),
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map
    ) && value.downcast_object_ref::<List>().is_none()
        && value.downcast_object_ref::<Dict>().is_none();
    (changes && container).then(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "`.{method}()` changes a list or dict in place, and ripple cannot change this one (made by `*`, `+`, `zip()` or a filter other than `list`): build it with a literal (`{{% set xs = [] %}}`) and `.extend()` or `.update()` it"
            ),
        )
    })
}

/// Registers the functions [`prepare`]'s rewrites call.
pub(crate) fn add_mutable_containers(env: &mut Environment<'static>) {
    // `xs|list` is a new list the template may change (dbt's is Python's).
    env.add_filter(
        "list",
        |state: &State, value: Value| -> Result<Value, Error> {
            // Counted before it is made: a 60 MB string is 60 million items.
            let items = match value.as_str() {
                Some(s) => s.chars().count(),
                None => value.len().unwrap_or(0),
            };
            if items > super::guard::MAX_ITEMS {
                return Err(super::guard::too_many("`|list`"));
            }
            mutable(minijinja::filters::list(state, value)?)
        },
    );
    env.add_function(BIGINT_FN, |digits: String| {
        Value::from_object(BigInt(digits))
    });
    env.add_function(LIST_FN, |items: Value| -> Result<Value, Error> {
        let items: Vec<Value> = items.try_iter()?.collect();
        Ok(Value::from_object(List(Mutex::new(items))))
    });
    env.add_function(DICT_FN, |map: Value| -> Result<Value, Error> {
        let mut pairs = Pairs::default();
        for key in map.try_iter()? {
            let value = map.get_item(&key)?;
            pairs.insert(key, value);
        }
        Ok(Value::from_object(Dict(Mutex::new(pairs))))
    });
}

/// Refuses to put into a list or dict a value that holds it (`xs.append(xs)`:
/// printing, comparing or hashing it would recurse without end) or that is
/// nested deeper than `guard::MAX_DEPTH`.
fn guard_insert(
    state: &State,
    method: &str,
    args: &[Value],
    is_self: impl Fn(&Value) -> bool,
) -> Result<(), Error> {
    for a in args {
        // `xs.extend(xs)` and `d.update(d)` add what is there already.
        if matches!(method, "extend" | "update") && is_self(a) {
            continue;
        }
        if super::guard::holds(state, format_args!("`{method}()`"), a, &is_self)? {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("`{method}()` would put a list or dict inside itself"),
            ));
        }
    }
    Ok(())
}

/// Whether `v` is one of [`prepare`]'s mutable dicts.
pub(crate) fn is_mutable_dict(v: &Value) -> bool {
    v.downcast_object_ref::<Dict>().is_some()
}

fn too_many() -> Error {
    super::guard::too_many("growing it")
}

fn bad_args(method: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("wrong arguments to `{method}()`"),
    )
}

/// A Python list: mutable in place, shared by every name bound to it.
#[derive(Debug)]
pub(crate) struct List(Mutex<Vec<Value>>);

impl List {
    fn index(&self, at: &Value, len: usize) -> Option<usize> {
        let i = i64::try_from(at.clone()).ok()?;
        let i = if i < 0 { len as i64 + i } else { i };
        (0..len as i64).contains(&i).then_some(i as usize)
    }
}

impl Object for List {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let items = lock(&self.0);
        let i = self.index(key, items.len())?;
        items.get(i).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(lock(&self.0).clone())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(lock(&self.0).len())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        if matches!(method, "append" | "extend" | "insert") {
            guard_insert(state, method, args, |v| {
                v.downcast_object_ref::<List>()
                    .is_some_and(|l| std::ptr::eq(l, &**self))
            })?;
        }
        let mut items = lock(&self.0);
        // What walks, moves or copies the list is paid for by the item.
        if matches!(
            method,
            "insert" | "pop" | "remove" | "index" | "count" | "sort" | "reverse" | "copy"
        ) {
            let steps = match method {
                "remove" | "index" | "count" | "sort" => items.len() as u64 / 2,
                _ => items.len() as u64 / MOVES_PER_FUEL,
            };
            state.consume_fuel(steps)?;
        }
        let none = Value::from(());
        match (method, args) {
            ("append", [v]) => {
                if items.len() >= MAX_ITEMS {
                    return Err(too_many());
                }
                items.push(v.clone());
                Ok(none)
            }
            ("extend", [other]) => {
                // `xs.extend(xs)` reads the list before it grows.
                let more: Vec<Value> = match other.downcast_object_ref::<List>() {
                    Some(same) if std::ptr::eq(same, &**self) => items.clone(),
                    _ => {
                        drop(items);
                        let more = other.try_iter()?.collect();
                        items = lock(&self.0);
                        more
                    }
                };
                if items.len() + more.len() > MAX_ITEMS {
                    return Err(too_many());
                }
                state.consume_fuel(more.len() as u64 / MOVES_PER_FUEL)?;
                items.extend(more);
                Ok(none)
            }
            ("insert", [at, v]) => {
                if items.len() >= MAX_ITEMS {
                    return Err(too_many());
                }
                let len = items.len() as i64;
                let i = i64::try_from(at.clone()).map_err(|_| bad_args(method))?;
                let i = if i < 0 { (len + i).max(0) } else { i.min(len) };
                items.insert(i as usize, v.clone());
                Ok(none)
            }
            ("pop", []) => items.pop().ok_or_else(|| bad_args("pop from empty list")),
            ("pop", [at]) => {
                let i = self
                    .index(at, items.len())
                    .ok_or_else(|| bad_args(method))?;
                Ok(items.remove(i))
            }
            ("remove", [v]) => {
                let i = items
                    .iter()
                    .position(|x| x == v)
                    .ok_or_else(|| bad_args(method))?;
                items.remove(i);
                Ok(none)
            }
            ("clear", []) => {
                items.clear();
                Ok(none)
            }
            ("reverse", []) => {
                items.reverse();
                Ok(none)
            }
            ("sort", []) => {
                items.sort();
                Ok(none)
            }
            ("index", [v]) => items
                .iter()
                .position(|x| x == v)
                .map(Value::from)
                .ok_or_else(|| bad_args(method)),
            ("count", [v]) => Ok(Value::from(items.iter().filter(|x| *x == v).count())),
            ("copy", []) => Ok(Value::from_object(List(Mutex::new(items.clone())))),
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

/// A dict's pairs in insertion order, found by hash: a dict grown key by
/// key in a loop was quadratic when each key was looked for in a list.
type Pairs = indexmap::IndexMap<Value, Value>;

/// A Python dict: mutable in place, in insertion order.
#[derive(Debug)]
pub(crate) struct Dict(Mutex<Pairs>);

impl Dict {
    fn set(pairs: &mut Pairs, key: Value, value: Value) -> Result<(), Error> {
        if let Some(slot) = pairs.get_mut(&key) {
            *slot = value;
        } else if pairs.len() >= MAX_ITEMS {
            return Err(too_many());
        } else {
            pairs.insert(key, value);
        }
        Ok(())
    }
}

impl Object for Dict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        lock(&self.0).get(key).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(lock(&self.0).keys().cloned().collect())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(lock(&self.0).len())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        if matches!(method, "update" | "setdefault") {
            guard_insert(state, method, args, |v| {
                v.downcast_object_ref::<Dict>()
                    .is_some_and(|d| std::ptr::eq(d, &**self))
            })?;
        }
        let none = Value::from(());
        // Keyword arguments arrive as a trailing kwargs value.
        let (args, kwargs) = match args.split_last() {
            Some((last, rest)) if last.is_kwargs() => (rest, Some(last.clone())),
            _ => (args, None),
        };
        match (method, args) {
            ("update", [] | [_]) => {
                let mut new = Vec::new();
                if let Some(other) = args.first() {
                    if other.kind() == ValueKind::Map {
                        for key in other.try_iter()? {
                            let value = other.get_item(&key)?;
                            new.push((key, value));
                        }
                    } else {
                        // Python's `d.update([(k, v), ...])`: pairs.
                        for pair in other.try_iter()? {
                            match (
                                pair.len(),
                                pair.get_item(&Value::from(0)),
                                pair.get_item(&Value::from(1)),
                            ) {
                                (Some(2), Ok(k), Ok(v)) => new.push((k, v)),
                                _ => return Err(bad_args(method)),
                            }
                        }
                    }
                }
                if let Some(kw) = kwargs {
                    let kw = Kwargs::try_from(kw)?;
                    for key in kw.args() {
                        new.push((Value::from(key), kw.peek::<Value>(key)?));
                    }
                }
                state.consume_fuel(new.len() as u64 / 2)?;
                let mut pairs = lock(&self.0);
                for (k, v) in new {
                    Dict::set(&mut pairs, k, v)?;
                }
                Ok(none)
            }
            ("setdefault", [key, rest @ ..]) if rest.len() <= 1 => {
                let mut pairs = lock(&self.0);
                if let Some(v) = pairs.get(key) {
                    return Ok(v.clone());
                }
                let value = rest.first().cloned().unwrap_or(none);
                Dict::set(&mut pairs, key.clone(), value.clone())?;
                Ok(value)
            }
            ("pop", [key, rest @ ..]) if rest.len() <= 1 => {
                let mut pairs = lock(&self.0);
                // Keeping the order moves every later pair: paid for.
                let Some(i) = pairs.get_index_of(key) else {
                    return rest.first().cloned().ok_or_else(|| bad_args(method));
                };
                state.consume_fuel((pairs.len() - i) as u64 / MOVES_PER_FUEL)?;
                Ok(pairs.shift_remove_index(i).map_or(none, |(_, v)| v))
            }
            ("popitem", []) => {
                let (k, v) = lock(&self.0).pop().ok_or_else(|| bad_args(method))?;
                Ok(Value::from(vec![k, v]))
            }
            ("clear", []) => {
                lock(&self.0).clear();
                Ok(none)
            }
            ("copy", []) => {
                let pairs = lock(&self.0).clone();
                state.consume_fuel(pairs.len() as u64 / MOVES_PER_FUEL)?;
                Ok(Value::from_object(Dict(Mutex::new(pairs))))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

/// Items a list or dict method moves or copies for one step of fuel.
const MOVES_PER_FUEL: u64 = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_engine_holds_are_changed_in_place_or_refused() {
        use super::super::tests::render;
        // Made by `|list` or `.split()`: Python lists, appended to in place.
        let (sql, _) = render(
            &[],
            "{% set a = (1, 2)|list %}{% do a.append(3) %}{% set b = 'x,y'.split(',') %}{% do b.insert(0, 'w') %}{{ a|join }} {{ b|join }}",
        );
        assert_eq!(sql.unwrap(), "123 wxy");
        // Made by `*`: the engine's own, which ripple cannot change; refused
        // rather than printed without the change.
        let (sql, _) = render(
            &[],
            "{% set a = ['x'] * 2 %}{% do a.append('y') %}{{ a|join }}",
        );
        let err = sql.unwrap_err().message;
        assert!(
            err.contains("`.append()` changes a list or dict in place"),
            "{err}"
        );
    }

    #[test]
    fn unicode_spaces_in_tags_become_spaces_and_strings_keep_theirs() {
        let text = "a\u{a0}b {{ x\u{a0}}} {% if y\u{2003}%}'\u{a0}'{% endif %} {{ '\u{a0}' }}";
        assert_eq!(
            prepare(text),
            "a\u{a0}b {{ x }} {% if y %}'\u{a0}'{% endif %} {{ '\u{a0}' }}"
        );
    }

    #[test]
    fn literals_are_wrapped_only_where_something_mutates() {
        assert!(matches!(
            prepare("{% set xs = [1] %}{{ xs[0] }}"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            prepare("{% set xs = [a[0], {'k': [1]}] %}{% do xs.append(b['k']) %}"),
            "{% set xs = __ripple_list([a[0], __ripple_dict({'k': __ripple_list([1])})]) %}{% do xs.append(b['k']) %}"
        );
        assert_eq!(
            python_literals("{% if x in [1, 2] %}{% do d.update({}) %}{% endif %}"),
            "{% if x in __ripple_list([1, 2]) %}{% do d.update(__ripple_dict({})) %}{% endif %}"
        );
        // Then the operators that print values become guarded calls.
        assert_eq!(
            prepare("{% if x in [1, 2] %}{% do d.update({}) %}{% endif %}"),
            "{% if __ripple_in(x, __ripple_list([1, 2])) %}{% do d.update(__ripple_dict({})) %}{% endif %}"
        );
        // Brackets in strings, and unbalanced tags, are left alone.
        assert_eq!(
            prepare("{% set s = '[{' %}{% do s.pop( %}"),
            "{% set s = '[{' %}{% do s.pop( %}"
        );
    }
}
