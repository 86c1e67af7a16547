//! Jinja2's built-in filters minijinja lacks, as Jinja2 defines them: a
//! model (or an Airflow template) using one failed with `unknown filter`,
//! and its SQL and edges were lost. Each is checked against Python's
//! jinja2 (`jinja2_cases.rs`). What one makes is paid for with the
//! template's fuel before it is made (a step per 64 bytes).

use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};

/// Adds the filters to `env`.
pub(crate) fn add(env: &mut Environment<'static>) {
    env.add_filter("center", center);
    env.add_filter("wordcount", wordcount);
    env.add_filter("truncate", truncate);
    env.add_filter("forceescape", forceescape);
    env.add_filter("urlencode", urlencode);
    env.add_filter("filesizeformat", filesizeformat);
}

/// Bytes one step of fuel pays for (as the engine charges what it makes).
use super::guard::BYTES_PER_FUEL as BYTES_PER_STEP;

/// The argument at `position`, or the keyword `name`, if given.
fn arg(
    args: &[Value],
    kwargs: &Kwargs,
    position: usize,
    name: &str,
) -> Result<Option<Value>, Error> {
    match args.get(position) {
        Some(v) => Ok(Some(v.clone())),
        None => kwargs.get::<Option<Value>>(name),
    }
}

fn bad(what: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, what.to_string())
}

/// `s|center(width=80)`: Python's `str.center`.
fn center(
    state: &State,
    s: String,
    args: minijinja::value::Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let width = match arg(&args, &kwargs, 0, "width")? {
        Some(w) => i64::try_from(w).map_err(|_| bad("center(): width must be an integer"))?,
        None => 80,
    };
    kwargs.assert_all_used()?;
    let len = s.chars().count() as i64;
    if width <= len {
        return Ok(s);
    }
    state.consume_fuel(width as u64 / BYTES_PER_STEP)?;
    // CPython: the odd space goes left when the width is odd.
    let marg = width - len;
    let left = marg / 2 + (marg & width & 1);
    Ok(format!(
        "{}{s}{}",
        " ".repeat(left as usize),
        " ".repeat((marg - left) as usize)
    ))
}

/// `s|wordcount`: the runs of word characters (`\w+`).
fn wordcount(state: &State, s: String) -> Result<usize, Error> {
    state.consume_fuel(s.len() as u64 / BYTES_PER_STEP)?;
    let word = |c: char| c.is_alphanumeric() || c == '_';
    Ok(s.split(|c: char| !word(c))
        .filter(|w| !w.is_empty())
        .count())
}

/// `s|truncate(length=255, killwords=False, end='...', leeway=5)`.
fn truncate(
    state: &State,
    s: String,
    args: minijinja::value::Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    state.consume_fuel(s.len() as u64 / BYTES_PER_STEP)?;
    let int = |v: Option<Value>, default: i64, what: &str| -> Result<i64, Error> {
        v.map_or(Ok(default), |v| i64::try_from(v).map_err(|_| bad(what)))
    };
    let length = int(
        arg(&args, &kwargs, 0, "length")?,
        255,
        "truncate(): length must be an integer",
    )?;
    let killwords = arg(&args, &kwargs, 1, "killwords")?.is_some_and(|v| v.is_true());
    let end = arg(&args, &kwargs, 2, "end")?.map_or_else(|| "...".to_string(), |v| v.to_string());
    let leeway = int(
        arg(&args, &kwargs, 3, "leeway")?,
        5,
        "truncate(): leeway must be an integer",
    )?;
    kwargs.assert_all_used()?;
    let end_len = end.chars().count() as i64;
    // Jinja2 asserts both.
    if length < end_len {
        return Err(bad("truncate(): expected length >= the length of end"));
    }
    if leeway < 0 {
        return Err(bad("truncate(): expected leeway >= 0"));
    }
    let chars: Vec<char> = s.chars().collect();
    if chars.len() as i64 <= length.saturating_add(leeway) {
        return Ok(s);
    }
    let head: String = chars[..(length - end_len) as usize].iter().collect();
    if killwords {
        return Ok(head + &end);
    }
    let kept = head.rsplit_once(' ').map_or(head.as_str(), |(k, _)| k);
    Ok(format!("{kept}{end}"))
}

/// `s|forceescape`: HTML escaped even when it is marked safe.
fn forceescape(state: &State, value: Value) -> Result<Value, Error> {
    let s = py_str(&value);
    state.consume_fuel(5 * s.len() as u64 / BYTES_PER_STEP)?;
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    Ok(Value::from_safe_string(out))
}

/// Python's `str(v)`: a string as it is, a scalar as Python prints it.
fn py_str(v: &Value) -> String {
    match v.as_str() {
        Some(s) => s.to_string(),
        None => super::guard::python_scalar(v).unwrap_or_else(|| v.to_string()),
    }
}

/// Python's `urllib.parse.quote(s, safe)` of UTF-8 bytes.
fn quote(s: &str, safe: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let c = b as char;
        if b.is_ascii_alphanumeric() || "_.-~".contains(c) || (b.is_ascii() && safe.contains(c)) {
            out.push(c);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `value|urlencode`: a string quoted for a URL's path (`/` kept), or a
/// dict or list of pairs as a query string (`a=1&b=x+y`).
fn urlencode(state: &State, value: Value) -> Result<String, Error> {
    let for_query = |v: &Value| quote(&py_str(v), "").replace("%20", "+");
    let out = match value.kind() {
        ValueKind::String => quote(value.as_str().unwrap_or_default(), "/"),
        ValueKind::Map => {
            let mut parts = Vec::new();
            for k in value.try_iter()? {
                let v = value.get_item(&k)?;
                parts.push(format!("{}={}", for_query(&k), for_query(&v)));
            }
            parts.join("&")
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let mut parts = Vec::new();
            for pair in value.try_iter()? {
                let k = pair.get_item(&Value::from(0))?;
                let v = pair.get_item(&Value::from(1))?;
                parts.push(format!("{}={}", for_query(&k), for_query(&v)));
            }
            parts.join("&")
        }
        _ => quote(&py_str(&value), "/"),
    };
    state.consume_fuel(out.len() as u64 / BYTES_PER_STEP)?;
    Ok(out)
}

/// `n|filesizeformat(binary=False)`: `1 Byte`, `10 Bytes`, `1.5 kB`.
fn filesizeformat(
    value: Value,
    args: minijinja::value::Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let binary = arg(&args, &kwargs, 0, "binary")?.is_some_and(|v| v.is_true());
    kwargs.assert_all_used()?;
    let bytes = f64::try_from(value).map_err(|_| bad("filesizeformat(): not a number"))?;
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    let prefixes: [&str; 8] = if binary {
        ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"]
    } else {
        ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
    };
    if bytes == 1.0 {
        return Ok("1 Byte".to_string());
    }
    if bytes < base {
        return Ok(format!("{} Bytes", bytes.trunc() as i64));
    }
    let mut unit = base;
    for (i, prefix) in prefixes.iter().enumerate() {
        unit = base.powi(i as i32 + 2);
        if bytes < unit {
            return Ok(format!("{:.1} {prefix}", base * bytes / unit));
        }
    }
    Ok(format!("{:.1} {}", base * bytes / unit, prefixes[7]))
}
