//! Bounds on what a template may build and how deep it may go, beyond the
//! engine's fuel (docs/limits.md).
//!
//! minijinja charges fuel for the bytes it makes, but only after some of
//! its operations have made them: printing a list, joining it, comparing
//! a string with it (`in`), concatenating it (`~`), or converting it to a
//! string for a filter, function or method builds the whole text first. A
//! list that repeats one long string (`[s] * 40`, a loop appending it) is
//! cheap to make and costs its repetitions in bytes when printed: 90 bytes
//! of template built gigabytes. So every place that turns a value into
//! text (filters, tests, functions, methods, the formatter, and the `~` and
//! `in` operators, which [`rewrite_operators`] rewrites into calls)
//! first measures what it would print against the bytes the template has
//! left of its fuel ([`check`]), and refuses values nested deeper than
//! [`MAX_DEPTH`].
//!
//! Rendering also needs stack: parsing a chain (`x.a.a.a...`,
//! `1|lower|lower...`) recurses once per link, and dropping, comparing or
//! hashing a value recurses once per level of nesting, which a loop can
//! build as deep as the fuel allows. [`on_stack`] runs a render on a stack
//! sized for both, and [`on_render_threads`] gives the threads that render
//! projects such a stack once, so that no render has to map one.

use std::sync::OnceLock;

use minijinja::value::{ObjectRepr, Rest, Value, ValueKind, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State};

/// Deepest nesting of lists and dicts a template may print or hand to a
/// filter, function, method or macro: Python's recursion limit, near which
/// Jinja2 itself fails.
pub(crate) const MAX_DEPTH: usize = 1_000;

/// Items one list or dict a template makes may hold: a loop that doubles a
/// list, or a split of a 60 MB string, stops here instead of exhausting
/// memory.
pub(crate) const MAX_ITEMS: usize = 1_000_000;

/// The error for a list or dict that would pass [`MAX_ITEMS`].
pub(crate) fn too_many(what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "{what} would make a list or dict of more than {MAX_ITEMS} items; is a loop runaway?"
        ),
    )
}

/// Bytes one unit of fuel pays for (minijinja's `UNITS_PER_FUEL`).
pub(crate) const BYTES_PER_FUEL: u64 = 64;

/// Bytes allowed where a state tracks no fuel.
const NO_FUEL_BYTES: u64 = 128 << 20;

/// Why a value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Over {
    /// It prints as more bytes than allowed (at least this many).
    Bytes(u64),
    /// The text a filter or method would make from it is longer than
    /// allowed (at least this many bytes): a width, a precision, an indent
    /// or a separator repeated.
    Text(u64),
    /// It is nested deeper than allowed.
    Depth,
    /// A format string names a key the engine cannot read: not ASCII, in
    /// `{0[...]}` or `%(...)s`, where minijinja steps a byte at a time and
    /// panics inside a character.
    Key,
}

/// What printing one value of each kind costs, containers aside.
fn cost(v: &Value) -> u64 {
    match v.kind() {
        // Quotes and a separator around each string in a list.
        ValueKind::String => v.as_str().map_or(0, str::len) as u64 + 4,
        ValueKind::Bytes => v.len().unwrap_or(0) as u64 + 4,
        ValueKind::Number => 24,
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => 4,
        // dbt's objects print a name.
        ValueKind::Plain => 64,
        _ => 8,
    }
}

/// A container being walked: a sequence's items, or a map's pairs (given
/// as the key, then the value).
enum Items {
    Seq(Box<dyn Iterator<Item = Value> + Send + Sync>),
    Pairs(
        Box<dyn Iterator<Item = (Value, Value)> + Send + Sync>,
        Option<Value>,
    ),
}

impl Iterator for Items {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        match self {
            Items::Seq(items) => items.next(),
            Items::Pairs(pairs, pending) => pending.take().or_else(|| {
                let (k, v) = pairs.next()?;
                *pending = Some(v);
                Some(k)
            }),
        }
    }
}

impl Items {
    /// Whether the item given last was a map's value (printed on its key's
    /// line).
    fn gave_value(&self) -> bool {
        matches!(self, Items::Pairs(_, None))
    }
}

/// Where a value stands in what is walked: how many containers hold it, and
/// whether it is a map's value (printed after its key, on the same line).
#[derive(Clone, Copy)]
struct Pos {
    depth: u64,
    map_value: bool,
}

/// The items of `v` to walk, if it is a container that has any (dbt's
/// objects, which are maps with no listing, have none).
fn items(v: &Value) -> Option<Items> {
    let obj = v.as_object()?;
    match obj.repr() {
        ObjectRepr::Seq | ObjectRepr::Iterable => obj.try_iter().map(Items::Seq),
        ObjectRepr::Map => obj.try_iter_pairs().map(|p| Items::Pairs(p, None)),
        _ => None,
    }
}

/// Walks `value` and what it holds, depth first and without recursion,
/// calling `visit` on each with where it stands; stops with `too_deep()`
/// past `max_depth` levels, or with what `visit` returns as an error.
fn walk<E>(
    value: &Value,
    max_depth: usize,
    too_deep: impl Fn() -> E,
    mut visit: impl FnMut(&Value, Pos) -> Result<(), E>,
) -> Result<(), E> {
    visit(
        value,
        Pos {
            depth: 0,
            map_value: false,
        },
    )?;
    // Most values handed on are strings, or dbt's objects that list
    // nothing: no walk to set up.
    let Some(first) = items(value) else {
        return Ok(());
    };
    let mut frames: Vec<Items> = vec![first];
    while let Some(top) = frames.last_mut() {
        let Some(v) = top.next() else {
            frames.pop();
            continue;
        };
        let map_value = top.gave_value();
        let pos = Pos {
            depth: frames.len() as u64,
            map_value,
        };
        visit(&v, pos)?;
        if let Some(inner) = items(&v) {
            frames.push(inner);
            if frames.len() > max_depth {
                return Err(too_deep());
            }
        }
    }
    Ok(())
}

/// The bytes `value` prints as (about), stopping as soon as they pass
/// `limit` or its nesting passes `max_depth`. Containers are walked with an
/// explicit stack: a value nested a million levels deep is measured, not a
/// stack overflow; one that holds itself runs into `limit`.
pub(crate) fn measure(value: &Value, limit: u64, max_depth: usize) -> Result<u64, Over> {
    let mut total = 0u64;
    walk(
        value,
        max_depth,
        || Over::Depth,
        |v, _| {
            total = total.saturating_add(cost(v));
            if total > limit {
                return Err(Over::Bytes(total));
            }
            Ok(())
        },
    )?;
    Ok(total)
}

/// The bytes the template running in `state` may still make.
pub(crate) fn bytes_left(state: &State) -> u64 {
    state.fuel_levels().map_or(NO_FUEL_BYTES, |(_, left)| {
        left.saturating_mul(BYTES_PER_FUEL)
    })
}

/// The error for a value `what` refused.
pub(crate) fn refusal(what: impl std::fmt::Display, over: Over, limit: u64) -> Error {
    let message = match over {
        Over::Bytes(_) => format!(
            "{what} would print a list or dict of more than {limit} bytes, more than this template has left of its fuel (a byte costs 1/{BYTES_PER_FUEL} of a step); is a loop or a repetition (`[s] * n`) runaway?"
        ),
        Over::Text(size) => format!(
            "{what} would print more than {limit} bytes (at least {size}), more than this template has left of its fuel (a byte costs 1/{BYTES_PER_FUEL} of a step); is a width, precision, indent or repetition runaway?"
        ),
        Over::Depth => format!(
            "{what} got a list or dict nested more than {MAX_DEPTH} {REFUSED_DEPTH}; is a loop nesting a value in itself?"
        ),
        Over::Key => format!(
            "{what} got a format string whose key in `{{0[...]}}` or `%(...)s` is not ASCII, which the engine cannot read; use an ASCII key"
        ),
    };
    Error::new(ErrorKind::InvalidOperation, message)
}

/// Whether `e` is one of the bounds' refusals ([`refusal`], or the engine's
/// fuel running out), not a mistake in the template.
pub(crate) fn is_refusal(e: &Error) -> bool {
    e.kind() == ErrorKind::OutOfFuel
        || e.detail().is_some_and(|d| {
            d.contains("this template has left of its fuel") || d.contains(REFUSED_DEPTH)
        })
}

/// What every refusal of a value nested too deeply says.
const REFUSED_DEPTH: &str = "levels deep (Jinja2 stops there too)";

/// How [`printed_len`] prints a value whole.
#[derive(Clone, Copy)]
enum Print {
    /// `tojson`: JSON escaped for HTML, on one line or with `indent`
    /// spaces a level.
    Json(Option<u64>),
    /// `pprint`: Rust's pretty form, four spaces a level.
    Pretty,
}

/// The bytes `s` takes as a quoted string with its escapes: in JSON
/// (escaped for HTML) a control character, quote, backslash, `<`, `>`,
/// `&` or `'` takes up to six (`\u003c`); in Rust's form a control
/// character up to six and a byte of another script up to five.
fn escaped_len(s: &str, json: bool) -> u64 {
    let escaped: u64 = s
        .bytes()
        .map(|b| match b {
            0..0x20 | 0x7f | b'"' | b'\\' | b'<' | b'>' | b'&' | b'\'' => 5,
            0x80.. if !json => 4,
            _ => 0,
        })
        .sum();
    s.len() as u64 + escaped + 2
}

/// The bytes `value` prints as in `style`, at most: every string with its
/// escapes, every item on a line of its own indented to its depth, every
/// container's closing bracket on another. Stops as soon as they pass
/// `limit`, or the nesting [`MAX_DEPTH`].
fn printed_len(value: &Value, style: Print, limit: u64) -> Result<u64, Over> {
    let (indent, json) = match style {
        Print::Json(indent) => (indent, true),
        Print::Pretty => (Some(4), false),
    };
    // A line: its indent, and the comma and newline before it.
    let line = |depth: u64| indent.map_or(0, |n| n.saturating_mul(depth).saturating_add(2));
    let mut total = 0u64;
    walk(
        value,
        MAX_DEPTH,
        || Over::Depth,
        |v, pos| {
            let container = matches!(
                v.kind(),
                ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
            );
            let own = match v.kind() {
                ValueKind::String => escaped_len(v.as_str().unwrap_or_default(), json),
                // A list of numbers in JSON, one a line.
                ValueKind::Bytes => (v.len().unwrap_or(0) as u64)
                    .saturating_mul(line(pos.depth + 1).saturating_add(4)),
                _ => cost(v),
            };
            // A map's value shares its key's line.
            let lines = u64::from(!pos.map_value) + u64::from(container);
            total = total
                .saturating_add(own)
                .saturating_add(lines.saturating_mul(line(pos.depth)));
            if total > limit {
                return Err(Over::Text(total));
            }
            Ok(())
        },
    )?;
    Ok(total)
}

/// Refuses `value` if printing it whole in `style` would take more bytes
/// than the template has left.
fn check_printed(
    state: &State,
    what: &str,
    value: Option<&Value>,
    style: Print,
) -> Result<(), Error> {
    let Some(value) = value else { return Ok(()) };
    let limit = bytes_left(state);
    printed_len(value, style, limit)
        .map(drop)
        .map_err(|over| refusal(what, over, limit))
}

/// The bytes `sep.join(items)` (Python's method) or `items|join(sep)`
/// makes, a separator of `sep` bytes between every two items, at most;
/// stops as soon as they pass `limit`. A string's items are its
/// characters: a 10-byte separator between the characters of a 100 MB
/// string once asked for 1.1 GB.
fn joined_len(sep: u64, items: &Value, limit: u64) -> Result<u64, Over> {
    if let Some(s) = items.as_str() {
        let gaps = if sep == 0 {
            0
        } else {
            (s.chars().count() as u64).saturating_sub(1)
        };
        let size = (s.len() as u64).saturating_add(gaps.saturating_mul(sep));
        return if size > limit {
            Err(Over::Text(size))
        } else {
            Ok(size)
        };
    }
    // What cannot be iterated fails the call.
    let Ok(iter) = items.try_iter() else {
        return Ok(0);
    };
    let mut total = 0u64;
    for (i, item) in iter.enumerate() {
        if i > 0 {
            total = total.saturating_add(sep);
        }
        let left = limit.saturating_sub(total);
        let n = match item.as_str() {
            Some(s) => s.len() as u64,
            None => match measure(&item, left, MAX_DEPTH) {
                Ok(n) => n,
                Err(Over::Depth) => return Err(Over::Depth),
                Err(_) => left.saturating_add(1),
            },
        };
        total = total.saturating_add(n);
        if total > limit {
            return Err(Over::Text(total));
        }
    }
    Ok(total)
}

/// Which argument a field of a format string prints.
enum FieldArg<'s> {
    /// `{}`: the next positional one.
    Next,
    /// `{0}`.
    Index(usize),
    /// `{name}`: a keyword argument.
    Name(&'s str),
}

/// One replacement field of a `str.format` string, as minijinja reads it
/// (`minijinja::formatting`): `{` [name or index] (`.attr` | `[key]`)*
/// [`:` [[fill] align] [sign] [`#`] [`0`] [width] [`,` | `_`] [`.` precision]
/// [type]] `}`.
struct Field<'s> {
    arg: FieldArg<'s>,
    path: Vec<&'s str>,
    /// Bytes of the fill character (up to four).
    fill: u64,
    width: u64,
    precision: u64,
}

/// The field starting at `fmt[at]` (a `{`) and the offset after it;
/// `Err(None)` where minijinja refuses the field (the call fails there),
/// `Err(Some(Over::Key))` where it would panic.
fn format_field(fmt: &str, at: usize) -> Result<(Field<'_>, usize), Option<Over>> {
    read_field(fmt, at).ok_or(None).and_then(|r| r)
}

fn read_field(fmt: &str, at: usize) -> Option<Result<(Field<'_>, usize), Option<Over>>> {
    let b = fmt.as_bytes();
    let mut i = at + 1;
    let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let ident = |i: usize| {
        b[i..]
            .iter()
            .enumerate()
            .take_while(|&(n, c)| {
                *c == b'_'
                    || if n == 0 {
                        c.is_ascii_alphabetic()
                    } else {
                        c.is_ascii_alphanumeric()
                    }
            })
            .count()
    };
    let number = |i: usize, n: usize| fmt[i..i + n].parse::<usize>().ok();
    let arg = match (digits(i), ident(i)) {
        (n, _) if n > 0 => {
            let index = number(i, n)?;
            i += n;
            FieldArg::Index(index)
        }
        (_, n) if n > 0 => {
            i += n;
            FieldArg::Name(&fmt[at + 1..i])
        }
        _ => FieldArg::Next,
    };
    let mut path = Vec::new();
    loop {
        match b.get(i) {
            Some(b'.') => {
                let n = ident(i + 1);
                if n == 0 {
                    return None;
                }
                path.push(&fmt[i + 1..i + 1 + n]);
                i += 1 + n;
            }
            Some(b'[') => {
                // minijinja steps through a key a byte at a time, to its
                // `]` or the end.
                let n = b[i + 1..].iter().position(|&c| c == b']');
                let key = &b[i + 1..n.map_or(b.len(), |n| i + 1 + n)];
                if !key.is_ascii() {
                    return Some(Err(Some(Over::Key)));
                }
                let n = n?;
                path.push(&fmt[i + 1..i + 1 + n]);
                i += n + 2;
            }
            _ => break,
        }
    }
    let (mut fill, mut width, mut precision) = (1, 0, 0);
    if b.get(i) == Some(&b':') {
        i += 1;
        let mut chars = fmt[i..].chars();
        match (chars.next(), chars.next()) {
            (Some(f), Some('<' | '>' | '^')) => {
                fill = f.len_utf8() as u64;
                i += f.len_utf8() + 1;
            }
            (Some('<' | '>' | '^'), _) => i += 1,
            _ => {}
        }
        if matches!(b.get(i), Some(b'+' | b' ' | b'-')) {
            i += 1;
        }
        if b.get(i) == Some(&b'#') {
            i += 1;
        }
        if b.get(i) == Some(&b'0') {
            i += 1;
        }
        let n = digits(i);
        if n > 0 {
            width = number(i, n)? as u64;
            i += n;
        }
        if matches!(b.get(i), Some(b',' | b'_')) {
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            let n = digits(i);
            if n > 0 {
                precision = number(i, n)? as u64;
                i += n;
            }
        }
        if matches!(b.get(i), Some(c) if b"bdeEfFgGoxXcs".contains(c)) {
            i += 1;
        }
    }
    if b.get(i) != Some(&b'}') {
        return None;
    }
    let field = Field {
        arg,
        path,
        fill,
        width,
        precision,
    };
    Some(Ok((field, i + 1)))
}

/// The value a field prints, if there is one (else the call fails there).
fn field_value(
    field: &Field,
    positional: &[Value],
    kwargs: Option<&Value>,
    next: &mut usize,
) -> Option<Value> {
    let mut v = match field.arg {
        FieldArg::Next => {
            *next += 1;
            positional.get(*next - 1)?.clone()
        }
        FieldArg::Index(i) => positional.get(i)?.clone(),
        FieldArg::Name(name) => kwargs?.get_item(&Value::from(name)).ok()?,
    };
    for key in &field.path {
        v = match key.parse::<usize>() {
            Ok(i) => v.get_item_by_index(i).ok()?,
            Err(_) => v.get_attr(key).ok()?,
        };
    }
    (!v.is_undefined()).then_some(v)
}

/// The bytes `fmt.format(*args)` (Python's `str.format`, as
/// minijinja-contrib runs it) makes, at most: the text around the fields,
/// and for each field its value printed and padded to its width in fill
/// characters, a number with room for its digits, precision and grouping.
/// Counted up to where minijinja would refuse the string, which it builds
/// up to there; stops as soon as the count passes `limit`. A width of a
/// billion in a 33-byte model once made 2 GB.
fn formatted_len(fmt: &str, args: &[Value], limit: u64) -> Result<u64, Over> {
    let (kwargs, positional) = match args.split_last() {
        Some((last, rest)) if last.is_kwargs() => (Some(last), rest),
        _ => (None, args),
    };
    let b = fmt.as_bytes();
    let (mut total, mut i, mut next) = (0u64, 0usize, 0usize);
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'{', Some(b'{')) | (b'}', Some(b'}')) => {
                total += 1;
                i += 2;
            }
            // A lone `}` is refused.
            (b'}', _) => break,
            (b'{', _) => {
                let (field, end) = match format_field(fmt, i) {
                    Ok(field) => field,
                    Err(None) => break,
                    Err(Some(over)) => return Err(over),
                };
                let Some(value) = field_value(&field, positional, kwargs, &mut next) else {
                    break;
                };
                let pad = field.width.saturating_mul(field.fill);
                let size = match value.kind() {
                    // Digits (a float's integer part runs to 309), sign,
                    // prefix, zeros to the precision, every digit grouped.
                    ValueKind::Number | ValueKind::Bool => pad
                        .saturating_add(field.precision)
                        .saturating_mul(2)
                        .saturating_add(1024),
                    // Cut to the precision, padded to the width.
                    _ => {
                        let text = match value.as_str() {
                            Some(s) => s.len() as u64,
                            None => measure(&value, limit, MAX_DEPTH).unwrap_or(u64::MAX),
                        };
                        text.saturating_add(pad)
                    }
                };
                total = total.saturating_add(size);
                i = end;
            }
            _ => {
                total += 1;
                i += 1;
            }
        }
        if total > limit {
            return Err(Over::Text(total));
        }
    }
    Ok(total)
}

/// Refuses a call of one of Python's methods (minijinja-contrib's
/// `pycompat`) whose text would pass what the template has left: the value
/// and the arguments as [`check`] measures them, and what `str.format`
/// (widths, precisions) and `str.join` (a separator between every two
/// items) make, which the size of what they are handed does not bound.
pub(crate) fn check_method(
    state: &State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<(), Error> {
    check(state, format_args!("`.{method}()`"), args)?;
    // What a method is called on is read too, often whole (`a.get(k)` of a
    // dict measured 50,000 keys a call, uncharged, in a loop of 100,000).
    check(
        state,
        format_args!("`.{method}()`"),
        std::slice::from_ref(value),
    )?;
    let Some(s) = value.as_str() else {
        return Ok(());
    };
    if matches!(method, "split" | "rsplit" | "splitlines") {
        let pieces = pieces(s, method, args);
        if pieces > MAX_ITEMS as u64 {
            return Err(too_many(format_args!("`.{method}()`")));
        }
        state.consume_fuel(pieces / ITEMS_PER_FUEL)?;
    }
    let limit = bytes_left(state);
    let size = match (method, args) {
        ("format", _) => formatted_len(s, args, limit),
        ("join", [items]) => joined_len(s.len() as u64, items, limit),
        _ => return Ok(()),
    };
    size.map(drop)
        .map_err(|over| refusal(format_args!("`.{method}()`"), over, limit))
}

/// How many strings `s.split(...)`, `.rsplit(...)` or `.splitlines()` makes
/// at most: a 60 MB string of separators made 60 million (1.7 GB).
fn pieces(s: &str, method: &str, args: &[Value]) -> u64 {
    let sep = args
        .first()
        .and_then(Value::as_str)
        .filter(|sep| !sep.is_empty());
    let found = match (method, sep) {
        ("splitlines", _) => s
            .bytes()
            .filter(|b| matches!(b, b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1e))
            .count()
            // Breaks outside ASCII (U+0085, U+2028, U+2029): a piece each at most.
            .saturating_add(
                s.chars()
                    .filter(|c| matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}'))
                    .count(),
            ),
        (_, Some(sep)) => memchr::memmem::find_iter(s.as_bytes(), sep.as_bytes()).count(),
        _ => s.split_whitespace().count(),
    };
    found as u64 + 1
}

/// Python's string, list and dict methods (minijinja-contrib's
/// `pycompat`), behind [`check_method`].
pub(crate) fn python_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    check_method(state, value, method, args)?;
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// Refuses `values` (what `what` is handed) if printing them would take
/// more bytes than the template has left, or if one is nested deeper than
/// [`MAX_DEPTH`], and pays for reading them: what is handed a string may
/// read all of it (a search, a comparison), and a 60 MB string made once
/// and searched in a loop cost minutes at one step a call.
pub(crate) fn check(
    state: &State,
    what: impl std::fmt::Display,
    values: &[Value],
) -> Result<(), Error> {
    pay_reads(state, values)?;
    let used = measured(state, &what, values)?;
    // Measuring walked what it measured: a value at least 4 bytes an item.
    state.consume_fuel(used / (4 * BYTES_PER_FUEL))
}

/// [`check`], then [`pay_walk`]: for what compares, sorts or hashes
/// `values`, which walks them as far again.
fn check_paid(state: &State, what: &str, values: &[Value]) -> Result<(), Error> {
    check(state, what, values)?;
    pay_walk(state, what, values)
}

/// [`check`] for a value about to be printed (or the string a method is
/// called on), whose reading the engine charges itself.
pub(crate) fn check_shown(
    state: &State,
    what: impl std::fmt::Display,
    values: &[Value],
) -> Result<(), Error> {
    measured(state, &what, values).map(drop)
}

/// What printing the containers of `values` would take, refused past what
/// the template has left.
fn measured(state: &State, what: impl std::fmt::Display, values: &[Value]) -> Result<u64, Error> {
    if values.iter().all(inert) {
        return Ok(0);
    }
    let limit = bytes_left(state);
    let mut used = 0u64;
    for v in values.iter().filter(|v| !inert(v)) {
        match measure(v, limit - used.min(limit), MAX_DEPTH) {
            Ok(n) => used += n,
            Err(over) => return Err(refusal(what, over, limit)),
        }
    }
    Ok(used)
}

/// Pays for reading the strings among `values` whole, a step per
/// [`BYTES_PER_FUEL`] bytes, as the engine pays for the string a filter
/// is applied to.
pub(crate) fn pay_reads(state: &State, values: &[Value]) -> Result<(), Error> {
    let bytes: u64 = values
        .iter()
        .filter(|v| matches!(v.kind(), ValueKind::String | ValueKind::Bytes))
        .map(|v| v.as_str().map_or_else(|| v.len().unwrap_or(0), str::len) as u64)
        .sum();
    if bytes < BYTES_PER_FUEL {
        return Ok(());
    }
    state.consume_fuel(bytes / BYTES_PER_FUEL)
}

/// Whether `v` cannot print as more than it is: not a container (strings
/// and numbers exist already), or a relation (its name).
fn inert(v: &Value) -> bool {
    v.as_object().is_none() || v.downcast_object_ref::<super::Relation>().is_some()
}

/// Refuses a value nested deeper than [`MAX_DEPTH`] (what crosses from one
/// macro call to another: see `call_macro`).
pub(crate) fn check_depth(what: impl std::fmt::Display, values: &[Value]) -> Result<(), Error> {
    for v in values.iter().filter(|v| !inert(v)) {
        if let Err(Over::Depth) = measure(v, u64::MAX, MAX_DEPTH) {
            return Err(refusal(what, Over::Depth, u64::MAX));
        }
    }
    Ok(())
}

/// Items one walk of [`holds`] visits at one step per 64; past them, one
/// step each.
const FREE_VISITS: u64 = 16_384;

/// Whether `value` holds (or is) a value `is_target` picks, walked
/// without recursion, its nesting checked against [`MAX_DEPTH`]; the items
/// visited are paid for with `state`'s fuel (one step per 64).
pub(crate) fn holds(
    state: &State,
    what: impl std::fmt::Display,
    value: &Value,
    is_target: impl Fn(&Value) -> bool,
) -> Result<bool, Error> {
    enum Stop {
        Found,
        Failed(Error),
    }
    if value.as_object().is_none() {
        return Ok(false);
    }
    let mut visits = 0u64;
    let walked = walk(
        value,
        MAX_DEPTH,
        || Stop::Failed(refusal(&what, Over::Depth, 0)),
        |v, _| {
            visits += 1;
            if visits.is_multiple_of(4096) {
                // Past what a list built item by item holds, each visit
                // costs a step: values that share their parts (`ns.l +
                // ns.l` in a loop) are walked once per path, doubling
                // each round, and only fuel stops that.
                let steps = match visits > FREE_VISITS {
                    true => 4096,
                    false => 4096 / BYTES_PER_FUEL,
                };
                state.consume_fuel(steps).map_err(Stop::Failed)?;
            }
            if is_target(v) {
                return Err(Stop::Found);
            }
            Ok(())
        },
    );
    state.consume_fuel((visits % 4096) / BYTES_PER_FUEL)?;
    match walked {
        Ok(()) => Ok(false),
        Err(Stop::Found) => Ok(true),
        Err(Stop::Failed(e)) => Err(e),
    }
}

/// Whether `v` may be a namespace: a map that is neither a plain dict nor
/// one `is_dict` knows (minijinja's namespace type is its own, and not
/// public).
fn namespace_like(v: &Value, is_dict: fn(&Value) -> bool) -> bool {
    v.as_object()
        .is_some_and(|o| matches!(o.repr(), ObjectRepr::Map))
        && v.downcast_object_ref::<indexmap::IndexMap<Value, Value>>()
            .is_none()
        && !is_dict(v)
}

/// `{% set ns.a = value %}` hands `value` through here: refused if it holds
/// one of the namespaces assigned to (a namespace holding itself makes
/// hashing, comparing and printing it recurse without end: the process
/// aborted) or is nested deeper than [`MAX_DEPTH`] (a loop nesting
/// `ns.l = [ns.l]` builds as deep as the fuel allows).
fn assign(
    state: &State,
    namespaces: Value,
    value: Value,
    is_dict: fn(&Value) -> bool,
) -> Result<Value, Error> {
    let targets: Vec<Value> = namespaces
        .try_iter()?
        .filter(|t| namespace_like(t, is_dict))
        .collect();
    let what = "an assignment to a namespace";
    // A namespace equals another only when it is the same object or holds
    // the same: comparing is how its identity can be asked.
    if holds(state, what, &value, |v| {
        namespace_like(v, is_dict) && targets.iter().any(|t| t == v)
    })? {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "a namespace cannot be assigned a value that holds the namespace itself (Jinja2 could not print or compare it)",
        ));
    }
    Ok(value)
}

/// The arguments as the engine passed them, keyword arguments last as one
/// value (what calling a function with them expects).
fn values(args: Rest<ValueOrKwargs>) -> Vec<Value> {
    args.0.into_iter().map(ValueOrKwargs::into_value).collect()
}

/// A function behind [`check`]: called with its arguments as the template
/// passed them (an object's `call` converts none, where a wrapping
/// function would convert them twice on every `ref()`).
#[derive(Debug)]
struct Guarded {
    /// What the function is called in messages: "`ref()`".
    what: String,
    inner: Value,
}

impl minijinja::value::Object for Guarded {
    fn repr(self: &std::sync::Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn call(
        self: &std::sync::Arc<Self>,
        state: &mut State<'_, '_>,
        args: &[Value],
    ) -> Result<Value, Error> {
        check(state, &self.what, args)?;
        self.inner.call(state, args)
    }
}

/// `inner` (a filter or test) behind [`check`]; `paid`: for what
/// compares, sorts or hashes its values, which are walked first at the
/// template's cost too ([`pay_walk`]).
fn guarded(
    what: String,
    inner: Value,
    paid: bool,
) -> impl Fn(&mut State, Rest<ValueOrKwargs>) -> Result<Value, Error> + Send + Sync + 'static {
    move |state: &mut State, args: Rest<ValueOrKwargs>| {
        let args = values(args);
        if paid {
            check_paid(state, &what, &args)?;
        } else {
            check(state, &what, &args)?;
        }
        inner.call(state, &args)
    }
}

/// Puts every filter, test and function of `env` that turns a value into
/// text behind [`check`], and adds the calls [`rewrite_operators`] writes
/// for `~`, `in` and namespace assignments (`is_dict` tells the
/// environment's own mutable dicts from namespaces). Functions `unguarded`
/// names are left as they are: the project's macros, which hand their
/// arguments to a template (whose own printing is guarded) and are the
/// calls a model makes most. Call it once the environment's functions are
/// all added (functions added later are not guarded).
pub(crate) fn install(
    env: &mut Environment<'static>,
    is_dict: fn(&Value) -> bool,
    unguarded: &dyn Fn(&str) -> bool,
) {
    use minijinja::{filters as f, tests as t};
    let filters: [(&str, Value); 11] = [
        ("lower", Value::from_function(f::lower)),
        ("upper", Value::from_function(f::upper)),
        ("title", Value::from_function(f::title)),
        ("capitalize", Value::from_function(f::capitalize)),
        ("trim", Value::from_function(f::trim)),
        ("split", Value::from_function(f::split)),
        ("lines", Value::from_function(f::lines)),
        ("escape", Value::from_function(f::escape)),
        ("e", Value::from_function(f::escape)),
        ("safe", Value::from_function(f::safe)),
        ("string", Value::from_function(python_string)),
    ];
    for (name, inner) in filters {
        env.add_filter(name, guarded(format!("the filter `{name}`"), inner, false));
    }
    env.add_filter("indent", indent);
    env.add_filter("replace", replace);
    env.add_filter("format", format);
    env.add_filter("join", join);
    env.add_filter("tojson", tojson);
    env.add_filter("pprint", pprint);
    env.add_filter("sum", sum);
    // What compares, sorts or hashes two values walks them whole, uncharged:
    // values sharing their parts (`[a, a]` nested sixty times) took hours.
    let comparing: [(&str, Value); 6] = [
        ("sort", Value::from_function(f::sort)),
        ("unique", Value::from_function(f::unique)),
        ("min", Value::from_function(f::min)),
        ("max", Value::from_function(f::max)),
        ("dictsort", Value::from_function(f::dictsort)),
        ("groupby", Value::from_function(f::groupby)),
    ];
    for (name, inner) in comparing {
        env.add_filter(name, guarded(format!("the filter `{name}`"), inner, true));
    }
    let (eq, ne, lt, le, gt, ge) = (
        Value::from_function(t::is_eq),
        Value::from_function(t::is_ne),
        Value::from_function(t::is_lt),
        Value::from_function(t::is_le),
        Value::from_function(t::is_gt),
        Value::from_function(t::is_ge),
    );
    let tests: [(&str, Value); 18] = [
        ("startingwith", Value::from_function(t::is_startingwith)),
        ("endingwith", Value::from_function(t::is_endingwith)),
        ("in", Value::from_function(t::is_in)),
        ("eq", eq.clone()),
        ("equalto", eq.clone()),
        ("==", eq),
        ("ne", ne.clone()),
        ("!=", ne),
        ("lt", lt.clone()),
        ("lessthan", lt.clone()),
        ("<", lt),
        ("le", le.clone()),
        ("<=", le),
        ("gt", gt.clone()),
        ("greaterthan", gt.clone()),
        (">", gt),
        ("ge", ge.clone()),
        (">=", ge),
    ];
    for (name, inner) in tests {
        env.add_test(name, guarded(format!("the test `{name}`"), inner, true));
    }
    // They read a string whole, and the engine charges a test nothing.
    let reading: [(&str, Value); 3] = [
        ("lower", Value::from_function(t::is_lower)),
        ("upper", Value::from_function(t::is_upper)),
        // Two strings are the same if equal: compared whole.
        ("sameas", Value::from_function(t::is_sameas)),
    ];
    for (name, inner) in reading {
        env.add_test(name, guarded(format!("the test `{name}`"), inner, false));
    }
    // Every function (dbt's, the project's macros, minijinja's `range`,
    // `dict`, `debug`...): the only globals that are neither values nor
    // dbt's objects, which are maps and check their own methods' arguments.
    let functions: Vec<(String, Value)> = env
        .globals()
        .filter(|(name, v)| v.kind() == ValueKind::Plain && !unguarded(name))
        .map(|(name, v)| (name.to_string(), v.clone()))
        .collect();
    for (name, inner) in functions {
        let what = format!("`{name}()`");
        env.add_global(name, Value::from_object(Guarded { what, inner }));
    }
    // minijinja's `debug()` prints every value in scope: dbt has none.
    env.add_function("debug", || "");
    env.add_function(CONCAT_FN, concat);
    env.add_function(IN_FN, contains);
    env.add_function(COMPARE_FN, compare);
    env.add_function(SIZED_FN, sized);
    env.add_function(ITEM_FN, item);
    env.add_function(SLICE_FN, slice);
    env.add_function(
        ASSIGN_FN,
        move |state: &State, namespaces: Value, value: Value| {
            assign(state, namespaces, value, is_dict)
        },
    );
}

/// The function `a ~ b ~ c` becomes.
pub(crate) const CONCAT_FN: &str = "__ripple_cat";

/// The most parts one [`CONCAT_FN`] call is written with (the engine's
/// parser refuses calls of more than 2,000 arguments).
const CONCAT_GROUP: usize = 1000;
/// The function `a in b` becomes (`a not in b`: `not` of it).
pub(crate) const IN_FN: &str = "__ripple_in";
/// The function a chain of comparisons holding `in` becomes:
/// `a < b in c` is `__ripple_cmp(a, '<', b, 'in', c)`.
pub(crate) const COMPARE_FN: &str = "__ripple_cmp";

/// The `string` filter, as Python's `str()` for numbers, booleans, none.
fn python_string(state: &State, value: &Value) -> Result<Value, Error> {
    match python_scalar(value) {
        Some(s) => Ok(Value::from(s)),
        None => minijinja::filters::string(state, value),
    }
}

/// Python's `str()` of a float: the shortest digits that read back, fixed
/// from 1e-4 up to 1e16 (`0.0001`, `1e+16`, `1e-05`), always with a point
/// or an exponent; what `{{ x }}` and `~` print in dbt.
pub(crate) fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // `{:e}` is Rust's shortest round-trip digits: `-1.2345e-7`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let text = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        };
        format!("{sign}{text}")
    } else {
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.unsigned_abs())
    }
}

/// Python's `str()` of a number, boolean or none; other values as the
/// engine prints them.
pub(crate) fn python_scalar(value: &Value) -> Option<String> {
    match value.kind() {
        ValueKind::Bool => Some(if value.is_true() { "True" } else { "False" }.to_string()),
        ValueKind::None => Some("None".to_string()),
        // The engine prints a float, never an integer, with a point (or as
        // `inf`, `NaN`): how to tell `1e16` from `10000000000000000`.
        ValueKind::Number
            if value
                .to_string()
                .contains(|c: char| c == '.' || c.is_ascii_alphabetic()) =>
        {
            f64::try_from(value.clone()).ok().map(python_float)
        }
        _ => None,
    }
}

/// `~`: the operands printed one after the other (as Python's `str()`),
/// safe when all are.
fn concat(state: &State, parts: Rest<Value>) -> Result<Value, Error> {
    use std::fmt::Write;
    check(state, "`~`", &parts)?;
    let mut out = String::new();
    for p in parts.iter() {
        match (p.as_str(), python_scalar(p)) {
            (Some(s), _) => out.push_str(s),
            (None, Some(s)) => out.push_str(&s),
            (None, None) => {
                let _ = write!(out, "{p}");
            }
        }
    }
    Ok(if parts.iter().all(Value::is_safe) {
        Value::from_safe_string(out)
    } else {
        Value::from(out)
    })
}

/// `values|sum(attribute, start)`: the engine's, except that lists are
/// joined once, not a new list per item (`|sum(start=[])` of 100,000
/// lists was quadratic), paid for by the item and held to [`MAX_ITEMS`].
fn sum(
    state: &State,
    values: Value,
    attribute: Option<Value>,
    start: Option<Value>,
    kwargs: minijinja::value::Kwargs,
) -> Result<Value, Error> {
    let given = start
        .clone()
        .or_else(|| kwargs.peek::<Option<Value>>("start").ok().flatten());
    if given
        .as_ref()
        .is_some_and(|v| v.kind() == ValueKind::String)
    {
        // Python's words; joining a string per item made a new one each
        // time (100,000 strings of 1,000 bytes: minutes).
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "sum() can't sum strings [use ''.join(seq) instead]",
        ));
    }
    let list_start = given.filter(|v| matches!(v.kind(), ValueKind::Seq | ValueKind::Iterable));
    let Some(list_start) = list_start else {
        let attribute = attribute.map(|a| a.to_string());
        return minijinja::filters::sum(state, values, attribute.as_deref(), start, kwargs);
    };
    let attribute = match attribute {
        Some(a) => Some(a),
        None => kwargs.get::<Option<Value>>("attribute")?,
    };
    let _: Option<Value> = kwargs.get("start")?;
    kwargs.assert_all_used()?;
    let mut out: Vec<Value> = list_start.try_iter()?.collect();
    if values.is_undefined() {
        if state.undefined_behavior() == minijinja::UndefinedBehavior::Strict {
            return Err(Error::from(ErrorKind::UndefinedError));
        }
        return Ok(Value::from(out));
    }
    for item in values.try_iter()? {
        let item =
            match &attribute {
                Some(path) => path.to_string().split('.').try_fold(item, |v, part| {
                    match part.parse::<i64>() {
                        Ok(i) => v.get_item(&Value::from(i)),
                        Err(_) => v.get_attr(part),
                    }
                })?,
                None => item,
            };
        if item.is_undefined() {
            continue;
        }
        if !matches!(item.kind(), ValueKind::Seq | ValueKind::Iterable) {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "can only concatenate lists, not {} (`|sum` of lists)",
                    item.kind()
                ),
            ));
        }
        let len = item.len().unwrap_or(0);
        if out.len().saturating_add(len) > MAX_ITEMS {
            return Err(too_many("`|sum`"));
        }
        state.consume_fuel(1 + len as u64 / ITEMS_PER_FUEL)?;
        out.extend(item.try_iter()?);
    }
    Ok(Value::from(out))
}

/// `needle in container`, as the engine's operator answers it.
fn contains(state: &State, needle: Value, container: Value) -> Result<Value, Error> {
    check_paid(state, "`in`", &[needle.clone(), container.clone()])?;
    in_op(state, &needle, &container)
}

/// Walks `values` whole, paying for the walk with the template's fuel (see
/// [`holds`]): what compares, hashes or sorts them walks them as far, and
/// minijinja charges it nothing. Values sharing their parts, just small
/// enough to print, once were compared in a loop for minutes.
fn pay_walk(state: &State, what: &str, values: &[Value]) -> Result<(), Error> {
    for v in values.iter().filter(|v| !inert(v)) {
        holds(state, what, v, |_| false)?;
    }
    Ok(())
}

/// The function [`EditKind::Sized`] writes: `value`, measured and paid for.
fn sized(state: &State, value: Value) -> Result<Value, Error> {
    check_paid(
        state,
        "a dict key or `loop.changed`",
        std::slice::from_ref(&value),
    )?;
    Ok(value)
}

/// The function a value the engine hashes or compares uncharged becomes.
pub(crate) const SIZED_FN: &str = "__ripple_sized";

/// The function `x[k]` becomes when `k` is not a string or a non-negative
/// integer written out.
pub(crate) const ITEM_FN: &str = "__ripple_item";

/// The function `x[a:b:c]` becomes (a part left out is `none`).
pub(crate) const SLICE_FN: &str = "__ripple_slice";

/// Items a step of fuel pays for walking (the engine's own rate).
const ITEMS_PER_FUEL: u64 = 2;

/// `container[key]`, paid for: the engine walks a string up to an index
/// (all of it for a negative one) and a lazy sequence (`a + [x]`, `a[1:]`)
/// item by item, and charges either nothing or one item for `[-1]`; a
/// 60 MB string indexed in a loop took minutes.
fn item(state: &State, container: Value, key: Value) -> Result<Value, Error> {
    // As the engine: `x[k]` of an undefined `x` is undefined where
    // undefined values chain (ripple's environments), an error elsewhere.
    if container.is_undefined() {
        return match state.undefined_behavior() {
            minijinja::UndefinedBehavior::Chainable => Ok(Value::UNDEFINED),
            _ => Err(Error::from(ErrorKind::UndefinedError)),
        };
    }
    if let Some(i) = key.as_i64() {
        // How far the walk goes, in units of `per` an item: to the index
        // (all of it for a negative one), at most `len`.
        let reach = |len: u64, per: u64| match u64::try_from(i) {
            Ok(i) => i.saturating_add(1).saturating_mul(per).min(len),
            Err(_) => len,
        };
        if let Some(s) = container.as_str() {
            // A character is at most 4 bytes.
            state.consume_fuel(reach(s.len() as u64, 4) / BYTES_PER_FUEL)?;
        } else if let Some(obj) = container.as_object()
            && obj.repr() == ObjectRepr::Iterable
        {
            let len = obj.enumerator_len().unwrap_or(0) as u64;
            state.consume_fuel(reach(len, 1) / ITEMS_PER_FUEL)?;
        }
    }
    container.get_item(&key)
}

/// `value[start:stop:step]` as the engine slices it, made whole and paid
/// for: the engine's slice of a list is lazy and skips to `start` again
/// each time it is read, uncharged (`a[n:][0]` in a loop walked `n` items
/// a turn).
fn slice(
    state: &State,
    value: Value,
    start: Value,
    stop: Value,
    step: Value,
) -> Result<Value, Error> {
    if value.is_undefined() && state.undefined_behavior() == minijinja::UndefinedBehavior::Strict {
        return Err(Error::from(ErrorKind::UndefinedError));
    }
    pay_reads(state, std::slice::from_ref(&value))?;
    let lazy = value.as_object().is_some_and(|o| {
        matches!(o.repr(), ObjectRepr::Seq | ObjectRepr::Iterable) && !value.is_tuple()
    });
    // What the slice walks: up to its end, at most the whole value.
    let known = value.len().filter(|_| lazy);
    if let Some(len) = known {
        state.consume_fuel(len as u64 / ITEMS_PER_FUEL)?;
    }
    let sliced = engine_slice(value, start, stop, step)?;
    if !lazy || sliced.is_tuple() {
        return Ok(sliced);
    }
    let mut items = Vec::new();
    for (n, v) in sliced.try_iter()?.enumerate() {
        if known.is_none() && n % 4096 == 4095 {
            state.consume_fuel(4096 / ITEMS_PER_FUEL)?;
        }
        items.push(v);
    }
    Ok(Value::from(items))
}

/// The engine's own slicing, through a fixed expression: its rules for
/// strings, negative steps and bounds are the ones templates rely on.
fn engine_slice(value: Value, start: Value, stop: Value, step: Value) -> Result<Value, Error> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    static EXPR: OnceLock<Option<minijinja::Expression<'static, 'static>>> = OnceLock::new();
    let expr = EXPR.get_or_init(|| {
        let env = ENV.get_or_init(|| {
            let mut env = Environment::empty();
            env.set_undefined_behavior(minijinja::UndefinedBehavior::Chainable);
            env
        });
        env.compile_expression("v[a:b:c]").ok()
    });
    let Some(expr) = expr else {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "slicing is unavailable",
        ));
    };
    expr.eval(minijinja::context! { v => value, a => start, b => stop, c => step })
}

fn in_op(state: &State, needle: &Value, container: &Value) -> Result<Value, Error> {
    if matches!(
        container.kind(),
        ValueKind::Number | ValueKind::Bool | ValueKind::None
    ) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "cannot perform a containment check on this value",
        ));
    }
    minijinja::tests::is_in(state, needle, container).map(Value::from)
}

/// A chain of comparisons: each pair compared in turn, false at the first
/// pair that is.
fn compare(state: &State, chain: Rest<Value>) -> Result<Value, Error> {
    check_paid(state, "a comparison", &chain)?;
    let mut i = 0;
    while i + 2 < chain.len() {
        let (a, op, b) = (&chain[i], &chain[i + 1], &chain[i + 2]);
        let holds = match op.as_str().unwrap_or_default() {
            "==" => a == b,
            "!=" => a != b,
            "<" => a < b,
            "<=" => a <= b,
            ">" => a > b,
            ">=" => a >= b,
            "in" => in_op(state, a, b)?.is_true(),
            "not in" => !in_op(state, a, b)?.is_true(),
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("unknown comparison `{other}`"),
                ));
            }
        };
        if !holds {
            return Ok(Value::from(false));
        }
        i += 2;
    }
    Ok(Value::from(true))
}

/// The `indent` filter, with its output paid for before it is made: a
/// width of a billion on every line of a long string is checked, not built.
fn indent(state: &mut State, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = values(args);
    check(state, "the filter `indent`", &args)?;
    let text = args.first().map(|v| v.to_string()).unwrap_or_default();
    let width = args
        .get(1)
        .filter(|w| !w.is_kwargs())
        .map_or(4, |w| w.as_usize().unwrap_or_else(|| w.to_string().len()));
    let lines = text.matches('\n').count() as u64 + 1;
    let size = (text.len() as u64).saturating_add(lines.saturating_mul(width as u64));
    let limit = bytes_left(state);
    if size > limit {
        return Err(refusal("the filter `indent`", Over::Text(size), limit));
    }
    Value::from_function(minijinja::filters::indent).call(state, &args)
}

/// Whether a printf-style format string (the `format` filter) names a
/// key that is not ASCII (`%(é)s`): minijinja reads a key a byte at a time
/// and panics inside a character.
fn printf_key_unreadable(fmt: &str) -> bool {
    let b = fmt.as_bytes();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'%', &b[i..]) {
        i += at + 1;
        match b.get(i) {
            Some(b'%') => i += 1,
            Some(b'(') => {
                let key = &b[i + 1..];
                let end = key.iter().position(|&c| c == b')').unwrap_or(key.len());
                if !key[..end].is_ascii() {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The `format` filter (printf style), with keys it cannot read refused;
/// the engine measures its widths itself.
fn format(state: &mut State, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let what = "the filter `format`";
    let args = values(args);
    check(state, what, &args)?;
    if let Some(fmt) = args.first().and_then(Value::as_str)
        && printf_key_unreadable(fmt)
    {
        return Err(refusal(what, Over::Key, 0));
    }
    Value::from_function(minijinja::filters::format).call(state, &args)
}

/// The `join` filter, its output measured before it is made: the items,
/// and the separator between every two.
fn join(state: &mut State, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let what = "the filter `join`";
    let args = values(args);
    check(state, what, &args)?;
    let sep = args
        .get(1)
        .filter(|v| !v.is_kwargs() && !v.is_none() && !v.is_undefined())
        .map_or(0, |v| {
            v.as_str().map_or_else(|| v.to_string().len(), str::len)
        });
    if let Some(items) = args.first() {
        let limit = bytes_left(state);
        joined_len(sep as u64, items, limit).map_err(|over| refusal(what, over, limit))?;
    }
    Value::from_function(minijinja::filters::join).call(state, &args)
}

/// The `tojson` filter, its output measured before it is made: every
/// string with its escapes, and with an indent every line indented to its
/// depth (`{'a': [1, 2, 3]}|tojson(indent=1000000000)`, 51 bytes, once
/// asked for gigabytes).
fn tojson(state: &mut State, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let what = "the filter `tojson`";
    let args = values(args);
    check(state, what, &args)?;
    // As minijinja reads it: the second argument or `indent=`; `true` is
    // two spaces.
    let indent = match args.get(1) {
        Some(k) if k.is_kwargs() => k.get_item(&Value::from("indent")).ok(),
        other => other.cloned(),
    }
    .filter(|v| !v.is_undefined() && !v.is_none())
    .and_then(|v| match v.kind() {
        ValueKind::Bool => v.is_true().then_some(2),
        _ => usize::try_from(v).ok().map(|n| n as u64),
    });
    check_printed(state, what, args.first(), Print::Json(indent))?;
    Value::from_function(minijinja::filters::tojson).call(state, &args)
}

/// The `pprint` filter, its output measured before it is made (four
/// spaces a level of nesting, every string escaped).
fn pprint(state: &mut State, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let what = "the filter `pprint`";
    let args = values(args);
    check(state, what, &args)?;
    check_printed(state, what, args.first(), Print::Pretty)?;
    Value::from_function(minijinja::filters::pprint).call(state, &args)
}

/// The `replace` filter (`count` given or as a keyword), its output paid
/// for before it is made.
fn replace(state: &mut State, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = values(args);
    check(state, "the filter `replace`", &args)?;
    let (kwargs, positional): (Vec<&Value>, Vec<&Value>) = args.iter().partition(|v| v.is_kwargs());
    let [value, old, new, rest @ ..] = positional.as_slice() else {
        return Err(Error::new(
            ErrorKind::MissingArgument,
            "replace takes the old and the new text",
        ));
    };
    let count: Option<Value> = match (rest.first(), kwargs.first()) {
        (Some(c), _) => Some((*c).clone()),
        (None, Some(k)) => k
            .get_item(&Value::from("count"))
            .ok()
            .filter(|c| !c.is_undefined()),
        (None, None) => None,
    };
    let count = match count {
        Some(c) => match c.as_i64() {
            Some(n) if n >= 0 => Some(n as usize),
            Some(_) => None,
            None => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "replace's count must be an integer",
                ));
            }
        },
        None => None,
    };
    let text = value.to_string();
    let (old, new) = (old.to_string(), new.to_string());
    if new.len() > old.len() {
        let most = if old.is_empty() {
            text.chars().count() + 1
        } else {
            text.len() / old.len()
        };
        let most = count.map_or(most, |c| c.min(most)) as u64;
        let size =
            (text.len() as u64).saturating_add(most.saturating_mul((new.len() - old.len()) as u64));
        let limit = bytes_left(state);
        if size > limit {
            return Err(refusal("the filter `replace`", Over::Text(size), limit));
        }
    }
    let out = match count {
        Some(n) => text.replacen(&old, &new, n),
        None => text.replace(&old, &new),
    };
    Ok(if value.is_safe() {
        Value::from_safe_string(out)
    } else {
        Value::from(out)
    })
}

/// Stack a render gets beyond what its text needs: room to drop, compare
/// and hash the deepest value one template's fuel can build (a list in a
/// list a million times over, 2,000,000 steps at one level a step) and for
/// the engine's frames of 64 nested macro calls. Measured: about 320 bytes
/// a level in a release build (hashing), 640 in a debug build. It is
/// address space, mapped as it is used; see [`value_stack`].
const VALUE_STACK: usize = if cfg!(debug_assertions) {
    1 << 30
} else {
    512 << 20
};

/// [`VALUE_STACK`]; none under an address-space limit (`ulimit -v`),
/// where stacks this size may not be mapped beside the allocator's
/// reservations (a 1.2 GB limit left no room for 36 MiB): renders then
/// run on render threads of [`LIMITED_THREAD_STACK`], and a value nested
/// more deeply than that holds (about 100,000 levels in a release build)
/// is the price.
pub(crate) fn value_stack() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| match address_space_limit() {
        Some(_) => 0,
        None => VALUE_STACK,
    })
}

/// The stack of a render thread under an address-space limit.
const LIMITED_THREAD_STACK: usize = 8 << 20;

use crate::stack::address_space_limit;
pub use crate::stack::{NoStack, grow};

/// Stack a parse gets before its text: the parser's frames.
const PARSE_STACK: usize = 256 << 10;

/// Stack per byte of the longest tag: a chain (`x.a.a`, `1|f|f`, `1+1+1`,
/// `not not`, `- -1`) nests its syntax one level per link, which the parser,
/// the code generator and the syntax tree's drop each recurse through.
/// Measured at about 1.6 KiB a link in a debug build, 400 bytes in a
/// release one; a link takes at least one byte.
const STACK_PER_TAG_BYTE: usize = if cfg!(debug_assertions) { 2048 } else { 512 };

/// The tags (`{{ }}`, `{% %}`) of `text`, as byte ranges; one left open
/// runs to the end. Comments are skipped. Searched with prebuilt finders:
/// this runs on every template.
fn tag_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    static CLOSE: OnceLock<[memchr::memmem::Finder<'static>; 3]> = OnceLock::new();
    let [vars, blocks, comments] = CLOSE.get_or_init(|| {
        [
            memchr::memmem::Finder::new("}}"),
            memchr::memmem::Finder::new("%}"),
            memchr::memmem::Finder::new("#}"),
        ]
    });
    let b = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        loop {
            let open = at + memchr::memchr(b'{', b.get(at..)?)?;
            let close = match b.get(open + 1) {
                Some(b'{') => vars,
                Some(b'%') => blocks,
                Some(b'#') => comments,
                _ => {
                    at = open + 1;
                    continue;
                }
            };
            let end = close
                .find(&b[open + 2..])
                .map_or(b.len(), |j| open + 2 + j + 2);
            at = end;
            if b[open + 1] != b'#' {
                return Some((open, end));
            }
        }
    })
}

/// Binary operators (`~`, `+`, `and`, ...) one expression may chain: the
/// engine folds constants by walking each operator's operands again, so
/// compiling a chain takes time growing with its square (30,000 `~`: 9 s;
/// 40,000 `and`: 45 s).
pub(crate) const MAX_CHAIN: usize = 4_000;

/// The line of `text` and a message for the first tag holding an
/// expression that chains more than [`MAX_CHAIN`] operators, if any. Cheap:
/// only tags long enough to hold such a chain are read.
pub(crate) fn chain_too_long(text: &str) -> Option<(u32, String)> {
    let shortest = 2 * MAX_CHAIN;
    if text.len() < shortest {
        return None;
    }
    let b = text.as_bytes();
    tag_spans(text)
        .filter(|(start, end)| end - start >= shortest)
        .find(|&(start, end)| longest_chain(&b[start..end]) > MAX_CHAIN)
        .map(|(start, _)| {
            let line = memchr::memchr_iter(b'\n', &b[..start]).count() as u32 + 1;
            (
                line,
                format!(
                    "an expression in the tag at line {line} chains more than {MAX_CHAIN} operators (`~`, `+`, `and`, ...), which the template engine takes time growing with their square to compile; build the value in a loop or in parts (`{{% set part = ... %}}`)"
                ),
            )
        })
}

/// The most binary operators between two separators (a bracket, a comma, a
/// colon) in one tag, its strings skipped.
fn longest_chain(tag: &[u8]) -> usize {
    let mut counts: Vec<usize> = vec![0];
    let mut longest = 0;
    let mut i = 2;
    while i < tag.len() {
        let c = tag[i];
        let mut bump = false;
        match c {
            b'\'' | b'"' => {
                i += 1;
                while i < tag.len() && tag[i] != c {
                    i += if tag[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => counts.push(0),
            b')' | b']' | b'}' if counts.len() > 1 => {
                counts.pop();
            }
            b',' | b':' => *counts.last_mut().unwrap_or(&mut 0) = 0,
            b'~' | b'+' | b'-' | b'*' | b'/' | b'%' | b'<' | b'>' | b'=' | b'!' => {
                // `==`, `<=`, `**`, `//`: one operator.
                if tag
                    .get(i + 1)
                    .is_some_and(|&n| n == b'=' || (n == c && matches!(c, b'*' | b'/')))
                {
                    i += 1;
                }
                bump = true;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i + 1 < tag.len()
                    && (tag[i + 1].is_ascii_alphanumeric() || tag[i + 1] == b'_')
                {
                    i += 1;
                }
                bump = matches!(&tag[start..=i], b"and" | b"or" | b"in" | b"is" | b"not");
            }
            _ => {}
        }
        if bump && let Some(n) = counts.last_mut() {
            *n += 1;
            longest = longest.max(*n);
        }
        i += 1;
    }
    longest
}

/// The length in bytes of the longest tag (`{{ }}`, `{% %}`) in `text`:
/// the most an expression in it can nest.
pub(crate) fn longest_tag(text: &str) -> usize {
    tag_spans(text).map(|(a, b)| b - a).max().unwrap_or(0)
}

/// Runs `f`, which parses `text` (and, with `values`, runs code that can
/// build values in loops: a template with statements, or one that calls
/// macros), on a stack sized for it: grown only when the thread has less
/// left. A template of expressions alone nests its values no deeper than
/// its syntax, which the allowance for its longest tag covers.
pub(crate) fn on_stack<R>(text: &str, values: bool, f: impl FnOnce() -> R) -> Result<R, NoStack> {
    let need = longest_tag(text)
        .saturating_mul(STACK_PER_TAG_BYTE)
        .saturating_add(if values { value_stack() } else { PARSE_STACK });
    grow(need, f)
}

/// The stack each render thread gets: [`value_stack`] and room for the
/// reader's own frames.
fn render_thread_stack() -> usize {
    match value_stack() {
        0 => LIMITED_THREAD_STACK,
        v => v + v / 2,
    }
}

/// Whether rayon's global pool is made of render threads ([`render_threads`]).
static GLOBAL_RENDERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes rayon's global pool one of render threads (stacks of
/// [`render_thread_stack`]), if nothing has built it yet: then readers
/// render on it directly, and no second pool's threads spin beside it.
/// Called before a project is read.
pub fn render_threads() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // A global pool that fails to start leaves rayon unusable (its
        // first use then panics): under an address-space limit, where
        // stacks may not fit, renders get a pool of their own instead,
        // whose failure is survived.
        if address_space_limit().is_some() {
            return;
        }
        let built = rayon::ThreadPoolBuilder::new()
            .stack_size(render_thread_stack())
            .build_global();
        GLOBAL_RENDERS.store(built.is_ok(), std::sync::atomic::Ordering::Relaxed);
    });
}

/// Runs `f` (which renders on all cores with rayon) on threads whose stacks
/// hold [`value_stack`] and more, so that [`on_stack`] grows none for a
/// template of ordinary length (growing one costs 30-50 µs: twice the
/// time of loading a model). The global pool when [`render_threads`] made
/// it, else a pool of its own; the stacks are address space, mapped as
/// they are used.
pub(crate) fn on_render_threads<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if GLOBAL_RENDERS.load(std::sync::atomic::Ordering::Relaxed) {
        return f();
    }
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .stack_size(render_thread_stack())
            .thread_name(|i| format!("ripple-render-{i}"))
            .build()
            .ok()
    });
    match pool {
        Some(pool) => pool.install(f),
        // No threads to be had: the caller's, each render growing its own
        // stack.
        None => f(),
    }
}

/// The function `a + b` and `a - b` become where a dbt template uses dates
/// (`pymodules.rs` defines it).
pub(crate) const ARITH_FN: &str = "__ripple_arith";

/// Words whose presence makes `+` and `-` worth rewriting (see
/// [`ARITH_FN`]): cheap to look for, generous.
pub(crate) fn uses_dates(text: &str) -> bool {
    text.contains("datetime") || text.contains("timedelta") || text.contains("run_started_at")
}

/// The function `{% set ns.a = x %}` hands `x` through first:
/// `__ripple_assign(ns, x)`.
pub(crate) const ASSIGN_FN: &str = "__ripple_assign";

/// Whether `text` may hold what [`rewrite_operators`] rewrites: a `~`, an
/// `in` that is an operator (not a loop's), or an assignment to an
/// attribute. Cheap and generous: a false yes costs one more parse.
fn may_need_rewrite(text: &str) -> bool {
    let b = text.as_bytes();
    tag_spans(text).any(|(start, end)| tag_needs_rewrite(&b[start..end]))
}

/// [`may_need_rewrite`] for one tag, its delimiters included: one pass
/// over its bytes, strings skipped (this runs on every tag of every model).
fn tag_needs_rewrite(tag: &[u8]) -> bool {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // An unclosed tag runs to the end of the text.
    let body = tag.get(2..).unwrap_or_default();
    let body = match body {
        [rest @ .., b'}', b'}'] | [rest @ .., b'%', b'}'] => rest,
        _ => body,
    };
    let mut first: Option<&[u8]> = None;
    // Where the first word ends, and whether a `.` follows it before `=`.
    let (mut first_end, mut dotted, mut assigned) = (0, false, false);
    let mut ins = 0;
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        match c {
            b'~' => return true,
            // A comparison may walk two containers (see `Walk`).
            b'<' | b'>' => return true,
            // A dict literal (its keys are hashed) or `loop.changed(...)`.
            b'{' => return true,
            b'(' if body[..i].ends_with(b"changed") => return true,
            b'=' | b'!' if body.get(i + 1) == Some(&b'=') => return true,
            // A subscript (not a list): unless its key is written out.
            b'[' if body[..i]
                .iter()
                .rev()
                .find(|c| !c.is_ascii_whitespace())
                .is_some_and(|&c| ident(c) || c == b')' || c == b']')
                && !after_keyword(&body[..i])
                && !written_key(&body[i + 1..]) =>
            {
                return true;
            }
            b'\'' | b'"' => {
                i = memchr::memchr(c, &body[i + 1..]).map_or(body.len(), |j| i + 1 + j + 1);
                continue;
            }
            b'=' => assigned = true,
            b'.' if first.is_some() && !assigned && i >= first_end => dotted = true,
            c if ident(c) => {
                let start = i;
                while i < body.len() && ident(body[i]) {
                    i += 1;
                }
                let word = &body[start..i];
                match first {
                    None => {
                        first = Some(word);
                        first_end = i;
                        if word == b"in" {
                            return true;
                        }
                    }
                    Some(_) if word == b"in" => ins += 1,
                    Some(_) => {}
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    match first {
        Some(b"for") => ins > 1,
        // `set ns.x = ...`: an attribute assigned.
        Some(b"set") => ins > 0 || dotted,
        _ => ins > 0,
    }
}

/// Whether `before` ends with a keyword after which `[` opens a list
/// (`in [1, 2]`), not a subscript.
fn after_keyword(before: &[u8]) -> bool {
    let before = before.trim_ascii_end();
    let start = before
        .iter()
        .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .map_or(0, |i| i + 1);
    matches!(
        &before[start..],
        b"in" | b"and" | b"or" | b"not" | b"if" | b"else" | b"is" | b"set" | b"do" | b"return"
    )
}

/// Whether `rest` (what follows a subscript's `[`) starts with a key
/// written out and the closing `]`: `'a']`, `0]`.
fn written_key(rest: &[u8]) -> bool {
    let rest = rest.trim_ascii_start();
    let after = match rest.first() {
        Some(&q @ (b'\'' | b'"')) => match memchr::memchr(q, &rest[1..]) {
            Some(j) if !rest[1..1 + j].contains(&b'\\') => &rest[j + 2..],
            _ => return false,
        },
        Some(c) if c.is_ascii_digit() => {
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            let small = std::str::from_utf8(&rest[..n])
                .ok()
                .and_then(|d| d.parse::<i64>().ok())
                .is_some_and(|i| i < SMALL_INDEX);
            if !small {
                return false;
            }
            &rest[n..]
        }
        _ => return false,
    };
    after.trim_ascii_start().first() == Some(&b']')
}

/// Whether a compiled template runs an operator that prints values (`~`,
/// `in`, a comparison chain) or assigns to a namespace: what
/// [`rewrite_operators`] rewrites. Read off its instructions (a few per
/// tag), where scanning the text for them cost as much again.
pub(crate) fn prints_values(tmpl: &minijinja::Template<'_, '_>) -> bool {
    use minijinja::machinery::Instruction as I;
    let compiled = minijinja::machinery::get_compiled_template(tmpl);
    std::iter::once(&compiled.instructions)
        .chain(compiled.blocks.values())
        .any(|code| {
            let mut prev: Option<&I> = None;
            (0..).map_while(|i| code.get(i)).any(|op| {
                // A comparison whose right side is a scalar constant ends at
                // once; any other may walk two containers (see `Walk`).
                let literal = matches!(prev, Some(I::LoadConst(v)) if !matches!(v.kind(), ValueKind::Seq | ValueKind::Map));
                // A key written out: a string or an integer from 0.
                let key = matches!(prev, Some(I::LoadConst(v)) if fixed_key_value(v));
                prev = Some(op);
                matches!(
                    op,
                    I::StringConcat | I::In | I::SetAttr(_) | I::CompareAndPreserve(_)
                ) || (matches!(op, I::Eq | I::Ne | I::Lt | I::Lte | I::Gt | I::Gte) && !literal)
                    // A dict literal hashes its keys; `loop.changed` compares.
                    || matches!(op, I::BuildMap(n) if *n > 0)
                    || matches!(op, I::CallMethod("changed", _))
                    // Indexing that walks, slicing (see `item`, `slice`).
                    || (matches!(op, I::GetItem) && !key)
                    || matches!(op, I::Slice)
            })
        })
}

/// Runs `f` as [`on_stack`] does, checking the text's length first: when
/// the thread has stack for a tag as long as the whole text, no tag is
/// measured (this runs on every model).
pub(crate) fn on_stack_for_text<R>(
    text: &str,
    values: bool,
    f: impl FnOnce() -> R,
) -> Result<R, NoStack> {
    let rough = text
        .len()
        .saturating_mul(STACK_PER_TAG_BYTE)
        .saturating_add(if values { value_stack() } else { PARSE_STACK });
    if stacker::remaining_stack().is_some_and(|left| left >= rough) {
        return Ok(f());
    }
    on_stack(text, values, f)
}

/// One rewrite: the bytes it replaces and what with.
#[derive(Clone)]
struct Edit {
    start: usize,
    end: usize,
    /// Assignments first where two edits cover the same text.
    rank: u8,
    kind: EditKind,
}

#[derive(Clone)]
enum EditKind {
    /// `a ~ b ~ c`: the operands.
    Concat(Vec<(usize, usize)>),
    /// `a in b` (`not in` when negated): needle, container.
    In((usize, usize), (usize, usize), bool),
    /// A chain of comparisons holding `in`: operands and operators.
    Compare(Vec<(usize, usize)>, Vec<&'static str>),
    /// `{% set ns.a = x %}`: the namespaces assigned to, and `x`.
    Assign(Vec<(usize, usize)>, (usize, usize)),
    /// `a + b` or `a - b` in a template that uses dates.
    Arith((usize, usize), (usize, usize), &'static str),
    /// A value the engine compares or hashes without charging for it (a
    /// dict literal's key, `loop.changed`'s argument): measured and paid for.
    Sized((usize, usize)),
    /// `x[k]` with a computed or negative `k`: the container, the key.
    Item((usize, usize), (usize, usize)),
    /// `x[a:b:c]`: the value, and each part written.
    Slice((usize, usize), [Option<(usize, usize)>; 3]),
}

/// `text` with its `~` and `in` operators written as calls of
/// [`CONCAT_FN`], [`IN_FN`] and [`COMPARE_FN`], and the values assigned to
/// namespace attributes handed through [`ASSIGN_FN`], using minijinja's own
/// parser so that precedence and brackets are exactly the engine's.
/// Borrowed when there is nothing to rewrite or the template does not parse
/// (the engine then reports the same syntax error).
pub(crate) fn rewrite_operators(text: &str) -> std::borrow::Cow<'_, str> {
    if !may_need_rewrite(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    rewrite_found(text, false)
}

/// [`rewrite_operators`] for a dbt template, whose `+` and `-` are written
/// as calls of [`ARITH_FN`] too when it uses dates
/// (minijinja has no operators for Python's dates and timedeltas).
pub(crate) fn rewrite_dbt_operators(text: &str) -> std::borrow::Cow<'_, str> {
    let dates = uses_dates(text);
    if !dates && !may_need_rewrite(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    rewrite_found(text, dates)
}

/// [`rewrite_operators`] once a scan found the text may need it; `dates`:
/// [`rewrite_dbt_operators`]'s `+` and `-` too.
pub(crate) fn rewrite_found(text: &str, dates: bool) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let Ok(ast) = minijinja::machinery::parse(text, "<template>", Default::default()) else {
        return Cow::Borrowed(text);
    };
    let mut edits = Vec::new();
    Walk {
        text,
        edits: &mut edits,
        dates,
        extents: Default::default(),
    }
    .stmt(&ast);
    drop(ast);
    if edits.is_empty() {
        return Cow::Borrowed(text);
    }
    edits.sort_by_key(|e| (e.start, std::cmp::Reverse(e.end), e.rank));
    if !well_nested(text, &edits) {
        // Not one rewrite is left out silently: the template is refused.
        return Cow::Owned(format!("{{{{ {UNGUARDED_FN}() }}}}{text}"));
    }
    Cow::Owned(emit(text, (0, text.len()), &edits))
}

/// A constant that is no container (`'prod'`, `1`, `none`): comparing any
/// value with it ends at once.
fn scalar_const(e: &minijinja::machinery::ast::Expr<'_>) -> bool {
    matches!(e, minijinja::machinery::ast::Expr::Const(k) if !matches!(k.value.kind(), ValueKind::Seq | ValueKind::Map))
}

/// A key written out that indexing reaches at once or in a few steps: a
/// string, or a small integer from 0 (the engine walks a string to the
/// index a character at a time, uncharged: `s[29999999]` in a loop ran for
/// minutes).
fn fixed_key(e: &minijinja::machinery::ast::Expr<'_>) -> bool {
    matches!(e, minijinja::machinery::ast::Expr::Const(k) if fixed_key_value(&k.value))
}

/// [`fixed_key`] for the constant's value (what a compiled template loads).
fn fixed_key_value(v: &Value) -> bool {
    match v.kind() {
        ValueKind::String => true,
        ValueKind::Number => v.as_i64().is_some_and(|i| (0..SMALL_INDEX).contains(&i)),
        _ => false,
    }
}

/// Integer keys below this are read as written (see [`fixed_key`]).
const SMALL_INDEX: i64 = 256;

/// A function no environment defines: calling it fails the render. What
/// [`rewrite_operators`] writes before a template whose edits it could not
/// place (never seen; it would be a bug in finding the operands).
const UNGUARDED_FN: &str = "__ripple_operators_not_guarded";

/// Whether every edit (sorted) lies on character boundaries inside `text`,
/// its operands inside it, and any two are apart or one inside an operand
/// of the other.
fn well_nested(text: &str, edits: &[Edit]) -> bool {
    let ok = |r: (usize, usize)| {
        r.0 <= r.1 && r.1 <= text.len() && text.is_char_boundary(r.0) && text.is_char_boundary(r.1)
    };
    let operands = |e: &Edit| -> Vec<(usize, usize)> {
        match &e.kind {
            EditKind::Concat(parts) => parts.clone(),
            EditKind::In(a, b, _) => vec![*a, *b],
            EditKind::Compare(parts, _) => parts.clone(),
            // The namespaces are copied from before the edit, as written.
            EditKind::Assign(_, value) => vec![*value],
            EditKind::Arith(a, b, _) => vec![*a, *b],
            EditKind::Sized(a) => vec![*a],
            EditKind::Item(a, b) => vec![*a, *b],
            EditKind::Slice(a, parts) => std::iter::once(*a)
                .chain(parts.iter().flatten().copied())
                .collect(),
        }
    };
    let mut open: Vec<&Edit> = Vec::new();
    for e in edits {
        let targets_ok = match &e.kind {
            EditKind::Assign(targets, _) => targets.iter().all(|&r| ok(r) && r.1 <= e.start),
            _ => true,
        };
        if !targets_ok
            || !ok((e.start, e.end))
            || operands(e)
                .iter()
                .any(|&r| !ok(r) || r.0 < e.start || r.1 > e.end)
        {
            return false;
        }
        while open.last().is_some_and(|o| o.end <= e.start) {
            open.pop();
        }
        if let Some(o) = open.last() {
            let inside = operands(o).iter().any(|&r| r.0 <= e.start && e.end <= r.1);
            if !inside {
                return false;
            }
        }
        open.push(e);
    }
    true
}

/// `text[range]` with the edits inside it (sorted, all within `range`)
/// applied, outermost first.
fn emit(text: &str, range: (usize, usize), edits: &[Edit]) -> String {
    let mut out = String::with_capacity(range.1 - range.0 + 32 * edits.len());
    let mut at = range.0;
    let mut i = 0;
    while i < edits.len() {
        let e = &edits[i];
        let mut j = i + 1;
        while j < edits.len() && edits[j].start < e.end {
            j += 1;
        }
        out.push_str(&text[at..e.start]);
        render_edit(text, e, &edits[i + 1..j], &mut out);
        at = e.end;
        i = j;
    }
    out.push_str(&text[at..range.1]);
    out
}

fn render_edit(text: &str, e: &Edit, inner: &[Edit], out: &mut String) {
    // Well nested and sorted: the edits inside an operand are those starting
    // in it, one run of `inner` (filtering a copy for each operand was
    // quadratic in time and memory on 5,000 bracketed operands).
    let part = |r: (usize, usize)| -> String {
        let from = inner.partition_point(|x| x.start < r.0);
        let to = from + inner[from..].partition_point(|x| x.start < r.1);
        emit(text, r, &inner[from..to])
    };
    match &e.kind {
        EditKind::Concat(parts) => {
            let mut parts: Vec<String> = parts.iter().map(|&r| part(r)).collect();
            // The engine's parser takes at most 2,000 arguments in a call;
            // joining is associative, so a longer chain is joined in groups.
            while parts.len() > CONCAT_GROUP {
                parts = parts
                    .chunks(CONCAT_GROUP)
                    .map(|g| format!("{CONCAT_FN}({})", g.join(", ")))
                    .collect();
            }
            out.push_str(&format!("{CONCAT_FN}({})", parts.join(", ")));
        }
        EditKind::In(needle, container, negated) => {
            if *negated {
                out.push_str("not ");
            }
            out.push_str(&format!("{IN_FN}({}, {})", part(*needle), part(*container)));
        }
        EditKind::Compare(operands, ops) => {
            let mut args = vec![part(operands[0])];
            for (op, &r) in ops.iter().zip(&operands[1..]) {
                args.push(format!("'{op}'"));
                args.push(part(r));
            }
            out.push_str(&format!("{COMPARE_FN}({})", args.join(", ")));
        }
        EditKind::Arith(a, b, op) => {
            out.push_str(&format!("{}({}, '{op}', {})", ARITH_FN, part(*a), part(*b)));
        }
        EditKind::Sized(value) => {
            out.push_str(&format!("{SIZED_FN}({})", part(*value)));
        }
        EditKind::Item(container, key) => {
            out.push_str(&format!("{ITEM_FN}({}, {})", part(*container), part(*key)));
        }
        EditKind::Slice(value, parts) => {
            let parts: Vec<String> = parts
                .iter()
                .map(|p| p.map_or_else(|| "none".to_string(), part))
                .collect();
            out.push_str(&format!(
                "{SLICE_FN}({}, {})",
                part(*value),
                parts.join(", ")
            ));
        }
        EditKind::Assign(targets, value) => {
            let targets: Vec<String> = targets.iter().map(|&r| part(r)).collect();
            out.push_str(&format!(
                "{ASSIGN_FN}(({},), {})",
                targets.join(", "),
                part(*value)
            ));
        }
    }
}

/// The walk of a template's syntax tree that finds the edits.
struct Walk<'t, 'e> {
    text: &'t str,
    edits: &'e mut Vec<Edit>,
    /// Whether `+` and `-` are rewritten ([`rewrite_dbt_operators`]).
    dates: bool,
    /// Each expression's extent by its address: a chain of `~` asks for its
    /// left part's at every link, quadratic without it.
    extents: std::cell::RefCell<std::collections::HashMap<usize, Range>>,
}

type Range = (usize, usize);

impl Walk<'_, '_> {
    fn stmts(&mut self, stmts: &[minijinja::machinery::ast::Stmt<'_>]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &minijinja::machinery::ast::Stmt<'_>) {
        use minijinja::machinery::ast::{Expr, Stmt};
        match s {
            Stmt::Template(t) => self.stmts(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::EmitRaw(_) => {}
            Stmt::ForLoop(f) => {
                self.expr(&f.target);
                self.expr(&f.iter);
                if let Some(e) = &f.filter_expr {
                    self.expr(e);
                }
                self.stmts(&f.body);
                self.stmts(&f.else_body);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr);
                self.stmts(&i.true_body);
                self.stmts(&i.false_body);
            }
            Stmt::WithBlock(w) => {
                for (t, e) in &w.assignments {
                    self.expr(t);
                    self.expr(e);
                }
                self.stmts(&w.body);
            }
            Stmt::Set(set) => {
                let namespaces: Vec<Range> = match &set.target {
                    Expr::GetAttr(g) => vec![self.extent(&g.expr)],
                    Expr::Tuple(t) => t
                        .items
                        .iter()
                        .filter_map(|i| match i {
                            Expr::GetAttr(g) => Some(self.extent(&g.expr)),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                if !namespaces.is_empty() {
                    let value = self.extent(&set.expr);
                    self.edits.push(Edit {
                        start: value.0,
                        end: value.1,
                        rank: 0,
                        kind: EditKind::Assign(namespaces, value),
                    });
                }
                self.expr(&set.target);
                self.expr(&set.expr);
            }
            Stmt::SetBlock(s) => {
                self.expr(&s.target);
                if let Some(f) = &s.filter {
                    self.expr(f);
                }
                self.stmts(&s.body);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled);
                self.stmts(&a.body);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter);
                self.stmts(&f.body);
            }
            Stmt::Block(b) => self.stmts(&b.body),
            Stmt::Import(i) => {
                self.expr(&i.expr);
                self.expr(&i.name);
            }
            Stmt::FromImport(i) => {
                self.expr(&i.expr);
                for (a, b) in &i.names {
                    self.expr(a);
                    if let Some(b) = b {
                        self.expr(b);
                    }
                }
            }
            Stmt::Extends(e) => self.expr(&e.name),
            Stmt::Include(i) => self.expr(&i.name),
            Stmt::Macro(m) => {
                for e in m.args.iter().chain(&m.defaults) {
                    self.expr(e);
                }
                self.stmts(&m.body);
            }
            Stmt::CallBlock(c) => {
                self.expr(&c.call.expr);
                self.args(&c.call.args);
                for e in c.macro_decl.args.iter().chain(&c.macro_decl.defaults) {
                    self.expr(e);
                }
                self.stmts(&c.macro_decl.body);
            }
            Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::Do(d) => {
                self.expr(&d.call.expr);
                self.args(&d.call.args);
            }
        }
    }

    fn args(&mut self, args: &[minijinja::machinery::ast::CallArg<'_>]) {
        use minijinja::machinery::ast::CallArg;
        for a in args {
            match a {
                CallArg::Pos(e)
                | CallArg::Kwarg(_, e)
                | CallArg::PosSplat(e)
                | CallArg::KwargSplat(e) => self.expr(e),
            }
        }
    }

    fn expr(&mut self, e: &minijinja::machinery::ast::Expr<'_>) {
        use minijinja::machinery::ast::{BinOpKind, CompareOpKind, Expr};
        match e {
            Expr::Var(_) | Expr::Const(_) => {}
            Expr::Slice(s) => {
                // Sliced whole and paid for (see `slice`).
                let value = self.operand(&s.expr);
                let parts =
                    [&s.start, &s.stop, &s.step].map(|p| p.as_ref().map(|e| self.extent(e)));
                let end = self.extent(e).1;
                self.edits.push(Edit {
                    start: value.0,
                    end,
                    rank: 1,
                    kind: EditKind::Slice(value, parts),
                });
                self.expr(&s.expr);
                for p in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(p);
                }
            }
            Expr::UnaryOp(u) => {
                if self.is_not_in(u)
                    && let Expr::BinOp(b) = &u.expr
                {
                    let (needle, container) = (self.operand(&b.left), self.operand(&b.right));
                    self.push(needle, container, EditKind::In(needle, container, true));
                    self.expr(&b.left);
                    self.expr(&b.right);
                    return;
                }
                self.expr(&u.expr);
            }
            Expr::BinOp(b) => match b.op {
                BinOpKind::Concat => {
                    // `a ~ b ~ c` is `(a ~ b) ~ c`: one call of all three.
                    let mut operands = vec![&b.right];
                    let mut left = &b.left;
                    while let Expr::BinOp(inner) = left
                        && matches!(inner.op, BinOpKind::Concat)
                        && self.operand(left) == self.extent(left)
                    {
                        operands.push(&inner.right);
                        left = &inner.left;
                    }
                    operands.push(left);
                    operands.reverse();
                    let ranges: Vec<Range> = operands.iter().map(|o| self.operand(o)).collect();
                    self.push(
                        ranges[0],
                        ranges[ranges.len() - 1],
                        EditKind::Concat(ranges.clone()),
                    );
                    for o in operands {
                        self.expr(o);
                    }
                }
                BinOpKind::Add | BinOpKind::Sub if self.dates => {
                    let (left, right) = (self.operand(&b.left), self.operand(&b.right));
                    let op = if matches!(b.op, BinOpKind::Add) {
                        "+"
                    } else {
                        "-"
                    };
                    self.push(left, right, EditKind::Arith(left, right, op));
                    self.expr(&b.left);
                    self.expr(&b.right);
                }
                BinOpKind::In => {
                    let (needle, container) = (self.operand(&b.left), self.operand(&b.right));
                    self.push(needle, container, EditKind::In(needle, container, false));
                    self.expr(&b.left);
                    self.expr(&b.right);
                }
                // One comparison (a chain is `Expr::Compare`): measured first
                // unless a side is a scalar constant (see `Compare` below).
                BinOpKind::Eq
                | BinOpKind::Ne
                | BinOpKind::Lt
                | BinOpKind::Lte
                | BinOpKind::Gt
                | BinOpKind::Gte
                    if !scalar_const(&b.left) && !scalar_const(&b.right) =>
                {
                    let op = match b.op {
                        BinOpKind::Eq => "==",
                        BinOpKind::Ne => "!=",
                        BinOpKind::Lt => "<",
                        BinOpKind::Lte => "<=",
                        BinOpKind::Gt => ">",
                        _ => ">=",
                    };
                    let (left, right) = (self.operand(&b.left), self.operand(&b.right));
                    self.push(left, right, EditKind::Compare(vec![left, right], vec![op]));
                    self.expr(&b.left);
                    self.expr(&b.right);
                }
                _ => {
                    self.expr(&b.left);
                    self.expr(&b.right);
                }
            },
            Expr::Compare(c) => {
                let holds_in = c
                    .ops
                    .iter()
                    .any(|o| matches!(o.op, CompareOpKind::In | CompareOpKind::NotIn));
                // Comparing two values that may be containers walks them
                // whole, uncharged, and values sharing their parts (`[a, a]`
                // nested sixty times) are exponential to walk: measured
                // first. A scalar literal on either side ends a comparison
                // at once (`target.name == 'prod'`), so those stay as they are.
                let scalar = scalar_const;
                let mut sides = std::iter::once(&c.expr).chain(c.ops.iter().map(|o| &o.expr));
                let mut prev = sides.next();
                let mut containers = false;
                for next in sides {
                    containers |= prev.is_some_and(|p| !scalar(p)) && !scalar(next);
                    prev = Some(next);
                }
                if holds_in || containers {
                    let mut operands = vec![self.operand(&c.expr)];
                    let mut ops = Vec::new();
                    for o in &c.ops {
                        operands.push(self.operand(&o.expr));
                        ops.push(match o.op {
                            CompareOpKind::Eq => "==",
                            CompareOpKind::Ne => "!=",
                            CompareOpKind::Lt => "<",
                            CompareOpKind::Lte => "<=",
                            CompareOpKind::Gt => ">",
                            CompareOpKind::Gte => ">=",
                            CompareOpKind::In => "in",
                            CompareOpKind::NotIn => "not in",
                        });
                    }
                    self.push(
                        operands[0],
                        operands[operands.len() - 1],
                        EditKind::Compare(operands, ops),
                    );
                }
                self.expr(&c.expr);
                for o in &c.ops {
                    self.expr(&o.expr);
                }
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr);
                self.expr(&i.true_expr);
                if let Some(f) = &i.false_expr {
                    self.expr(f);
                }
            }
            Expr::Filter(f) => {
                if let Some(e) = &f.expr {
                    self.expr(e);
                }
                self.args(&f.args);
            }
            Expr::Test(t) => {
                self.expr(&t.expr);
                self.args(&t.args);
            }
            Expr::GetAttr(g) => self.expr(&g.expr),
            Expr::GetItem(g) => {
                // A key written out (`x['a']`, `x[0]`) walks at most to it,
                // and the engine charges that; any other is paid for (see
                // `item`).
                if !fixed_key(&g.subscript_expr) {
                    let (container, key) = (self.operand(&g.expr), self.extent(&g.subscript_expr));
                    let end = self.extent(e).1;
                    self.edits.push(Edit {
                        start: container.0,
                        end,
                        rank: 1,
                        kind: EditKind::Item(container, key),
                    });
                }
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            Expr::Call(c) => {
                // `loop.changed(x)` compares `x` with the last one, uncharged.
                if let Expr::GetAttr(g) = &c.expr
                    && g.name == "changed"
                    && matches!(&g.expr, Expr::Var(v) if v.id == "loop")
                {
                    use minijinja::machinery::ast::CallArg;
                    for a in &c.args {
                        if let CallArg::Pos(e) = a
                            && !scalar_const(e)
                        {
                            // Its extent: the call's own brackets are not its.
                            let r = self.extent(e);
                            self.push(r, r, EditKind::Sized(r));
                        }
                    }
                }
                self.expr(&c.expr);
                self.args(&c.args);
            }
            Expr::List(l) => l.items.iter().for_each(|i| self.expr(i)),
            Expr::Tuple(t) => t.items.iter().for_each(|i| self.expr(i)),
            Expr::Map(m) => {
                // A key is hashed whole, uncharged.
                for k in m.keys.iter().filter(|k| !scalar_const(k)) {
                    let r = self.extent(k);
                    self.push(r, r, EditKind::Sized(r));
                }
                for e in m.keys.iter().chain(&m.values) {
                    self.expr(e);
                }
            }
        }
    }

    /// Whether `u` is the `not` of `a not in b`, which parses as
    /// `not (a in b)` with its `not` between the operands.
    fn is_not_in(&self, u: &minijinja::machinery::ast::UnaryOp<'_>) -> bool {
        use minijinja::machinery::ast::{BinOpKind, Expr, UnaryOpKind};
        match (&u.op, &u.expr) {
            (UnaryOpKind::Not, Expr::BinOp(b)) if matches!(b.op, BinOpKind::In) => {
                let (left, right) = (self.extent(&b.left), self.extent(&b.right));
                left.1 <= right.0
                    && self.text[left.1..right.0]
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == "not")
            }
            _ => false,
        }
    }

    fn push(&mut self, first: Range, last: Range, kind: EditKind) {
        self.edits.push(Edit {
            start: first.0,
            end: last.1,
            rank: 1,
            kind,
        });
    }

    /// An operand's text: its extent, with the brackets that group it.
    fn operand(&self, e: &minijinja::machinery::ast::Expr<'_>) -> Range {
        let (mut start, mut end) = self.extent(e);
        let b = self.text.as_bytes();
        loop {
            let before = b[..start].iter().rposition(|c| !c.is_ascii_whitespace());
            let after = b[end..]
                .iter()
                .position(|c| !c.is_ascii_whitespace())
                .map(|i| end + i);
            match (before, after) {
                (Some(i), Some(j)) if b[i] == b'(' && b[j] == b')' => {
                    start = i;
                    end = j + 1;
                }
                _ => return (start, end),
            }
        }
    }

    /// The bytes an expression spans: its own span where the parser makes
    /// it start at the expression (not for comparisons and conditionals,
    /// whose spans start at the token before), joined with its parts'.
    fn extent(&self, e: &minijinja::machinery::ast::Expr<'_>) -> Range {
        let key = std::ptr::from_ref(e) as usize;
        if let Some(&r) = self.extents.borrow().get(&key) {
            return r;
        }
        let r = self.measure(e);
        self.extents.borrow_mut().insert(key, r);
        r
    }

    /// [`Walk::extent`] worked out. A part's brackets are the part's
    /// (`'a' ~ ('b'|lower)` ends at its last bracket), so an extent is
    /// balanced and [`Walk::operand`] never takes a call's brackets for a
    /// group's.
    fn measure(&self, e: &minijinja::machinery::ast::Expr<'_>) -> Range {
        use minijinja::machinery::ast::Expr;
        let own = |s: minijinja::machinery::Span| (s.start_offset as usize, s.end_offset as usize);
        let join = |a: Range, b: Range| (a.0.min(b.0), a.1.max(b.1));
        match e {
            Expr::Var(v) => own(v.span()),
            Expr::Const(c) => own(c.span()),
            Expr::Slice(s) => {
                let mut r = join(own(s.span()), self.operand(&s.expr));
                for p in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    r = join(r, self.operand(p));
                }
                r
            }
            Expr::UnaryOp(u) => {
                if self.is_not_in(u) {
                    // Its span starts at the token before the comparison.
                    self.extent(&u.expr)
                } else {
                    join(own(u.span()), self.operand(&u.expr))
                }
            }
            Expr::BinOp(b) => join(self.operand(&b.left), self.operand(&b.right)),
            Expr::Compare(c) => {
                let mut r = self.operand(&c.expr);
                for o in &c.ops {
                    r = join(r, self.operand(&o.expr));
                }
                r
            }
            Expr::IfExpr(i) => {
                let mut r = join(self.operand(&i.test_expr), self.operand(&i.true_expr));
                if let Some(f) = &i.false_expr {
                    r = join(r, self.operand(f));
                }
                r
            }
            // `(1)|string`, `(a ~ b).upper()`: the brackets around what the
            // filter, test, attribute or call applies to are part of it.
            Expr::Filter(f) => match &f.expr {
                Some(inner) => join(own(f.span()), self.operand(inner)),
                None => own(f.span()),
            },
            Expr::Test(t) => join(own(t.span()), self.operand(&t.expr)),
            Expr::GetAttr(g) => join(own(g.span()), self.operand(&g.expr)),
            Expr::GetItem(g) => join(own(g.span()), self.operand(&g.expr)),
            Expr::Call(c) => join(own(c.span()), self.operand(&c.expr)),
            Expr::List(l) => own(l.span()),
            Expr::Tuple(t) => {
                let mut r = own(t.span());
                for i in &t.items {
                    r = join(r, self.operand(i));
                }
                r
            }
            Expr::Map(m) => own(m.span()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::render;
    use super::*;

    #[test]
    fn ordinary_sizes_still_print() {
        let (sql, _) = render(
            &[],
            "{% set s = 'x' * 1000 %}{{ ([s] * 1000)|join|length }} {{ (([s] * 3) ~ '')|length }}",
        );
        assert_eq!(sql.unwrap(), "1000000 3012");
    }

    #[test]
    fn widths_separators_and_indents_are_measured_before_they_are_made() {
        // Each built gigabytes (or panicked) before anything charged for it.
        for (model, says) in [
            ("{{ '{:>1000000000}'.format(1) }}", "would print more than"),
            (
                "{{ '{:^3000000000}'.format('x') }}",
                "would print more than",
            ),
            (
                "{{ '{:.1000000000f}'.format(1.0) }}",
                "would print more than",
            ),
            (
                "{{ '{:\u{1F600}<100000000}'.format('x') }}",
                "would print more than",
            ),
            (
                "{{ '{0[x]:>1000000000}'.format({'x': 1}) }}",
                "would print more than",
            ),
            (
                "{{ ('x' * 20).join('y' * 10000000) }}",
                "would print more than",
            ),
            (
                "{{ ('x' * 1000).join([1] * 200000) }}",
                "would print more than",
            ),
            (
                "{{ ([1] * 200000)|join('x' * 1000) }}",
                "would print more than",
            ),
            (
                "{{ {'a': [1, 2, 3]}|tojson(indent=1000000000) }}",
                "would print more than",
            ),
            (
                "{{ {'a': [1, 2, 3]}|tojson(1000000000) }}",
                "would print more than",
            ),
            ("{{ ('<' * 30000000)|tojson }}", "would print more than"),
            ("{{ '{0[\u{e9}]}'.format([1]) }}", "not ASCII"),
            ("{{ '%(\u{e9})s'|format({}) }}", "not ASCII"),
        ] {
            let (sql, _) = render(&[], model);
            let err = sql.unwrap_err().message;
            assert!(err.contains(says), "{model}: {err}");
        }
        // Ordinary uses print as Python does.
        let (sql, _) = render(
            &[],
            "{{ '{:>5}|{:<3}|{:^5}|{:.2f}|{:,}|{:08.3f}|{n}|{{}}'.format('a', 'b', 'c', 3.14159, 1234567, 2.5, n='x') }} {{ ', '.join(['a', 'b']) }} {{ ['c', 'd']|join('-') }} {{ {'a': [1]}|tojson(indent=2) }} {{ '%5s|%(k)s'|format('z') if false else 'p' }}",
        );
        assert_eq!(
            sql.unwrap(),
            "    a|b  |  c  |3.14|1,234,567|0002.500|x|{} a, b c-d {\n  \"a\": [\n    1\n  ]\n} p"
        );
    }

    #[test]
    fn the_bounds_are_at_least_what_is_made() {
        use minijinja::formatting::{FormatStyle, format};
        let kwargs = Value::from(minijinja::value::Kwargs::from_iter([(
            "k",
            Value::from(vec![Value::from("a\n'"), Value::from(2.5)]),
        )]));
        for fmt in [
            "{}",
            "{:>10}",
            "{:*^11}",
            "{:\u{e9}<7}|{}",
            "{:+#012_x}",
            "{:,.3f}",
            "{:e}",
            "{:.40g}",
            "{0}{0}{0}{1}",
            "{k}",
            "{k[0]:>9}",
            "{:c}",
            "{{}}{}}}",
            "{:08,}",
        ] {
            let args = [Value::from(123456789), Value::from("str"), kwargs.clone()];
            let Ok(made) = format(FormatStyle::StrFormat, fmt, &args) else {
                continue;
            };
            let bound = formatted_len(fmt, &args, u64::MAX).unwrap();
            assert!(
                bound >= made.len() as u64,
                "{fmt}: {bound} < {}",
                made.len()
            );
        }
        let value = Value::from(minijinja::value::Serde(serde_json::json!({
            "a": [1, "x<y\n\u{e9}", {"b": [true, null, 1.5]}],
            "c": {"d": {"e": []}},
        })));
        for indent in [None, Some(0), Some(1), Some(7)] {
            let style = match indent {
                Some(n) => minijinja::value::Kwargs::from_iter([("indent", Value::from(n))]),
                None => minijinja::value::Kwargs::from_iter(Vec::<(&str, Value)>::new()),
            };
            let made = minijinja::filters::tojson(&value, None, style).unwrap();
            let bound = printed_len(&value, Print::Json(indent), u64::MAX).unwrap();
            let made = made.as_str().unwrap().len() as u64;
            assert!(bound >= made, "{indent:?}: {bound} < {made}");
        }
        let made = minijinja::filters::pprint(&value).len() as u64;
        assert!(printed_len(&value, Print::Pretty, u64::MAX).unwrap() >= made);
        let items = Value::from(vec![
            Value::from("ab"),
            Value::from(12),
            Value::from(vec![1]),
        ]);
        assert!(joined_len(3, &items, u64::MAX).unwrap() >= "ab---12---[1]".len() as u64);
        assert_eq!(joined_len(2, &Value::from("abc"), u64::MAX), Ok(7));
    }

    #[test]
    fn namespaces_and_lists_cannot_hold_themselves_or_nest_past_the_limit() {
        for (model, says) in [
            (
                "{% set ns = namespace() %}{% set ns.a = ns %}{{ {ns: 1} }}",
                "holds the namespace itself",
            ),
            (
                "{% set a = namespace() %}{% set b = namespace() %}{% set a.x = b %}{% set b.x = [a] %}",
                "holds the namespace itself",
            ),
            ("{% set xs = [] %}{% do xs.append(xs) %}", "inside itself"),
            (
                "{% set xs = [] %}{% set ys = [xs] %}{% do xs.append({'k': ys}) %}",
                "inside itself",
            ),
            (
                "{% set ns = namespace(l=[]) %}{% for i in range(5000) %}{% set ns.l = [ns.l] %}{% endfor %}",
                "nested more than 1000",
            ),
            (
                "{% set xs = [] %}{% for i in range(5000) %}{% do xs.append([xs.pop() if xs else 1]) %}{% endfor %}",
                "nested more than 1000",
            ),
        ] {
            let (sql, _) = render(&[], model);
            let err = sql.unwrap_err().message;
            assert!(err.contains(says), "{model}: {err}");
        }
        // `xs.extend(xs)` copies; a namespace may hold other namespaces.
        let (sql, _) = render(
            &[],
            "{% set xs = [1] %}{% do xs.extend(xs) %}{% set a = namespace() %}{% set b = namespace(x=1) %}{% set a.b = b %}{{ xs|length }}{{ a.b.x }}",
        );
        assert_eq!(sql.unwrap(), "21");
    }

    #[test]
    fn chains_past_the_limit_are_found_and_only_they() {
        let chain = |n: usize, op: &str| vec!["x"; n + 1].join(op);
        let found = |t: String| chain_too_long(&t).map(|(line, _)| line);
        assert_eq!(
            found(format!("a\n{{{{ {} }}}}", chain(MAX_CHAIN + 1, " ~ "))),
            Some(2)
        );
        assert_eq!(
            found(format!("{{% if {} %}}", chain(MAX_CHAIN + 1, " and "))),
            Some(1)
        );
        assert_eq!(
            found(format!("{{{{ {} }}}}", chain(MAX_CHAIN + 1, "=="))),
            Some(1)
        );
        assert_eq!(found(format!("{{{{ {} }}}}", chain(MAX_CHAIN, "~"))), None);
        // Separated by commas or brackets, in strings, or words holding
        // `and`: no chain.
        assert_eq!(
            found(format!("{{{{ [{}] }}}}", chain(3 * MAX_CHAIN, ", -"))),
            None
        );
        assert_eq!(
            found(format!(
                "{{{{ f({}) }}}}",
                vec!["(a ~ b)"; 3 * MAX_CHAIN].join(", ")
            )),
            None
        );
        assert_eq!(
            found(format!("{{{{ '{}' }}}}", chain(3 * MAX_CHAIN, "~"))),
            None
        );
        assert_eq!(
            found(format!("{{{{ {} }}}}", chain(3 * MAX_CHAIN, " band "))),
            None
        );
    }

    #[test]
    fn operators_become_calls_with_the_engines_precedence() {
        for (text, rewritten) in [
            ("{{ a ~ b ~ c }}", "{{ __ripple_cat(a, b, c) }}"),
            (
                "{{ (a ~ b) ~ c }}",
                "{{ __ripple_cat((__ripple_cat(a, b)), c) }}",
            ),
            ("{{ x + a ~ b * 2 }}", "{{ x + __ripple_cat(a, b * 2) }}"),
            (
                "{{ a ~ b if c else d }}",
                "{{ __ripple_cat(a, b) if c else d }}",
            ),
            (
                "{{ f(a ~ b)|upper ~ x.y[0] }}",
                "{{ __ripple_cat(f(__ripple_cat(a, b))|upper, x.y[0]) }}",
            ),
            (
                "{% if a in b %}{% endif %}",
                "{% if __ripple_in(a, b) %}{% endif %}",
            ),
            (
                "{% if a not in (b) %}{% endif %}",
                "{% if not __ripple_in(a, (b)) %}{% endif %}",
            ),
            (
                "{% if not a in b and c %}{% endif %}",
                "{% if not __ripple_in(a, b) and c %}{% endif %}",
            ),
            (
                "{% if x < y in z %}{% endif %}",
                "{% if __ripple_cmp(x, '<', y, 'in', z) %}{% endif %}",
            ),
            (
                "{% for x in a ~ b %}{% endfor %}",
                "{% for x in __ripple_cat(a, b) %}{% endfor %}",
            ),
            (
                "{% set ns.a = x ~ y %}",
                "{% set ns.a = __ripple_assign((ns,), __ripple_cat(x, y)) %}",
            ),
            ("{{ 'a~b in c' }}", "{{ 'a~b in c' }}"),
            ("{{ x[i] }}", "{{ __ripple_item(x, i) }}"),
            ("{{ (a + [2])[-1] }}", "{{ __ripple_item((a + [2]), -1) }}"),
            (
                "{{ x[i][j] }}",
                "{{ __ripple_item(__ripple_item(x, i), j) }}",
            ),
            (
                "{{ x['a'][0] ~ y[1:] }}",
                "{{ __ripple_cat(x['a'][0], __ripple_slice(y, 1, none, none)) }}",
            ),
            ("{{ s[::-1] }}", "{{ __ripple_slice(s, none, none, -1) }}"),
            (
                "{{ ref('ba' ~ ('s'|lower) ~ 'e') }}",
                "{{ ref(__ripple_cat('ba', ('s'|lower), 'e')) }}",
            ),
            (
                "{{ f(('a') ~ (b|c)) }}{{ g(x ~ (y)) }}",
                "{{ f(__ripple_cat(('a'), (b|c))) }}{{ g(__ripple_cat(x, (y))) }}",
            ),
            (
                "{{ f(a[(i)]) ~ (x if (c) else (d)) }}",
                "{{ __ripple_cat(f(__ripple_item(a, i)), (x if (c) else (d))) }}",
            ),
            (
                "{{ a[1:][i - 1] }}",
                "{{ __ripple_item(__ripple_slice(a, 1, none, none), i - 1) }}",
            ),
        ] {
            assert_eq!(rewrite_operators(text), rewritten, "{text}");
        }
        // Past the engine's 2,000 arguments a call, a chain is joined in groups.
        let chain = vec!["'ab'"; 2500].join(" ~ ");
        let (sql, _) = render(&[], &format!("{{{{ ({chain})|length }}}}"));
        assert_eq!(sql.unwrap(), "5000");
        // No operator, no second parse.
        assert!(matches!(
            rewrite_operators("{% for x in y %}{{ x }}{% endfor %}"),
            std::borrow::Cow::Borrowed(_)
        ));
        for (text, may) in [
            ("{{ 'a~b in c' }}", false),
            ("{% for x in y %}", false),
            ("{% for x in y if x in z %}", true),
            ("{% set ns.a = 1 %}", true),
            ("{% set a = b.c %}", false),
            ("{% if x in y %}", true),
            ("{{ join(x) ~ y }}", true),
            ("{{ x.index }}", false),
            ("{{ x['a'] ~ '' }}", true),
            ("{{ x['a'] }}{{ y[0] }}{{ z [ \"b\" ] }}", false),
            ("{{ x[i] }}", true),
            ("{{ x[-1] }}", true),
            ("{{ x[255] }}", false),
            ("{{ x[256] }}", true),
            ("{{ x[29999999] }}", true),
            ("{{ x[1:] }}", true),
            ("{{ f(x)[i] }}", true),
            ("{% for c in ['a', 'b'] %}", false),
        ] {
            assert_eq!(may_need_rewrite(text), may, "{text}");
        }
    }

    #[test]
    fn rewritten_operators_answer_as_the_engines() {
        let env = minijinja::Environment::new();
        let mut guarded = minijinja::Environment::new();
        install(&mut guarded, |_| false, &|_| false);
        for text in [
            "{{ 'a' ~ 1 ~ none ~ true ~ [1, 'b'] ~ {'k': 2} }}",
            "{{ (1 ~ 2) ~ 3 }}|{{ (1 + 2) ~ 3 }}|{{ 'x' ~ 2 * 3 }}|{{ 'a' ~ 'b' + 'c' }}|{{ 'x' + 'y' ~ 'z' }}",
            "{{ 'b' in 'abc' }}{{ 'd' not in 'abc' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}",
            "{{ not 1 in [1] }}{{ 1 < 2 in [2] }}{{ 3 < 2 in [2] }}{{ 1 == 1 not in [2] }}",
            "{% set ns = namespace(a=1) %}{% set ns.a = ns.a ~ 'x' %}{{ ns.a }}",
            "{% for c in 'a' ~ 'b' %}{{ c }}{% endfor %}",
            "{% set xs = [1, 2, 3] %}{% set i = 1 %}{{ xs[i] }}{{ xs[-1] }}{{ xs[1:] }}{{ xs[::-1] }}{{ 'abc'[i:] }}{{ (xs + [4])[-1] }}{{ xs[1:][-1] }}{{ nothing[1:] }}{{ {'a': 1}['a'] }}",
        ] {
            let plain = env.render_str(text, ()).unwrap();
            let ours = guarded.render_str(&rewrite_operators(text), ()).unwrap();
            assert_eq!(ours, plain, "{text}");
        }
        // An undefined value indexed: an error where undefined values do
        // not chain, as the engine's own.
        let text = "{% set i = 0 %}{{ nothing[i] }}";
        assert!(env.render_str(text, ()).is_err());
        assert!(guarded.render_str(&rewrite_operators(text), ()).is_err());
    }

    #[test]
    fn a_value_nested_a_million_deep_is_measured_not_recursed() {
        let mut v = Value::from(1);
        for _ in 0..1_000_000 {
            v = Value::from(vec![v]);
        }
        assert_eq!(measure(&v, u64::MAX, 10), Err(Over::Depth));
        assert_eq!(measure(&v, 100, usize::MAX), Err(Over::Bytes(104)));
        // Dropped on a stack sized for it (a million levels, recursively).
        on_stack("", true, move || drop(v)).unwrap();
    }

    #[test]
    fn chains_parse_and_render_on_a_stack_sized_for_them() {
        // 10,000 links each overflowed a rayon worker's 2 MB stack.
        for model in [
            format!("select {{{{ x{} }}}}", ".a".repeat(10_000)),
            format!("select {{{{ 1{} }}}}", "|lower".repeat(10_000)),
            format!("select {{{{ 1{} }}}}", "+1".repeat(10_000)),
            format!("select {{{{ {}1 }}}}", "not ".repeat(10_000)),
        ] {
            let model = model.clone();
            // A thread with a rayon worker's stack.
            let done = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || render(&[], &model).0.map(|_| ()).map_err(|e| e.message))
                .unwrap()
                .join()
                .unwrap();
            // Rendered or refused by the engine's own limits, never a crash.
            let _ = done;
        }
        assert_eq!(longest_tag("a {{ x }} {% if y %} {# long comment #}"), 10);
    }
}
