//! The Python modules dbt hands templates as `modules`: `datetime` (dates,
//! times and their arithmetic, as Python computes them), `re` (on Rust's
//! linear-time regex engine, so no pattern can run away) and `pytz` (UTC;
//! other zones stay unknown, since zone data would differ between machines).
//!
//! "Now" is dbt's `run_started_at`: one fixed instant, so the same project
//! renders the same SQL on every run and machine. `+` and `-` in a template
//! that uses dates are written as calls of [`ARITH_FN`] (`guard.rs`), since
//! minijinja has no operators for values of our own.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::sync::Arc;

use jiff::civil::{Date, DateTime, Time};
use minijinja::value::{DynObject, Kwargs, Object, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State, Value};

use super::guard::ARITH_FN;

/// dbt's `run_started_at`, which every "now" is.
const RUN_STARTED_AT: PyTime =
    PyTime::DateTime(DateTime::constant(2000, 1, 1, 0, 0, 0, 0), Some(0));

/// Adds `modules`, `run_started_at` and the arithmetic function to `env`.
pub(super) fn add(env: &mut Environment<'static>) {
    env.add_global("modules", Value::from_object(Modules));
    env.add_global("run_started_at", Value::from_object(RUN_STARTED_AT));
    env.add_function(ARITH_FN, arith);
}

const MICROS_PER_DAY: i128 = 86_400_000_000;

/// A value of Python's `datetime` module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PyTime {
    Date(Date),
    /// Naive (`None`) or aware, with its UTC offset in seconds.
    DateTime(DateTime, Option<i32>),
    /// A `timedelta`, in microseconds.
    Delta(i128),
}

fn type_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

fn micros_of(t: Time) -> i128 {
    (i128::from(t.hour()) * 3600 + i128::from(t.minute()) * 60 + i128::from(t.second())) * 1_000_000
        + i128::from(t.subsec_nanosecond()) / 1000
}

/// Microseconds since 0001-01-01 00:00 of a civil date and time.
fn epoch_micros(dt: DateTime) -> i128 {
    let days = i128::from(
        dt.date()
            .since(Date::constant(1, 1, 1))
            .map_or(0, |s| s.get_days() as i64),
    );
    days * MICROS_PER_DAY + micros_of(dt.time())
}

fn from_epoch_micros(micros: i128) -> Result<DateTime, Error> {
    let overflow = || type_error("OverflowError: date value out of range");
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rest = micros.rem_euclid(MICROS_PER_DAY);
    let days = i32::try_from(days).map_err(|_| overflow())?;
    let date = Date::constant(1, 1, 1)
        .checked_add(jiff::Span::new().try_days(days).map_err(|_| overflow())?)
        .map_err(|_| overflow())?;
    if !(1..=9999).contains(&date.year()) {
        return Err(overflow());
    }
    let secs = (rest / 1_000_000) as i32;
    let time = Time::new(
        (secs / 3600) as i8,
        ((secs / 60) % 60) as i8,
        (secs % 60) as i8,
        ((rest % 1_000_000) * 1000) as i32,
    )
    .map_err(|_| overflow())?;
    Ok(date.to_datetime(time))
}

fn offset_text(offset: i32, colon: bool) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let o = offset.unsigned_abs();
    if colon {
        format!("{sign}{:02}:{:02}", o / 3600, (o / 60) % 60)
    } else {
        format!("{sign}{:02}{:02}", o / 3600, (o / 60) % 60)
    }
}

/// A UTC `datetime` as Python's, for templates outside dbt (Airflow's
/// `logical_date` and the like).
pub(crate) fn utc_datetime(dt: DateTime) -> Value {
    Value::from_object(PyTime::DateTime(dt, Some(0)))
}

impl PyTime {
    fn micro(dt: &DateTime) -> i32 {
        dt.subsec_nanosecond() / 1000
    }

    fn iso(&self, sep: &str) -> String {
        match self {
            PyTime::Date(d) => d.strftime("%Y-%m-%d").to_string(),
            PyTime::DateTime(dt, offset) => {
                let mut s = format!(
                    "{}{sep}{}",
                    dt.strftime("%Y-%m-%d"),
                    dt.strftime("%H:%M:%S")
                );
                if Self::micro(dt) != 0 {
                    let _ = write!(s, ".{:06}", Self::micro(dt));
                }
                if let Some(o) = offset {
                    s.push_str(&offset_text(*o, true));
                }
                s
            }
            PyTime::Delta(micros) => {
                let days = micros.div_euclid(MICROS_PER_DAY);
                let rest = micros.rem_euclid(MICROS_PER_DAY);
                let secs = rest / 1_000_000;
                let mut s = String::new();
                if days != 0 {
                    let _ = write!(s, "{days} day{}, ", if days.abs() == 1 { "" } else { "s" });
                }
                let _ = write!(
                    s,
                    "{}:{:02}:{:02}",
                    secs / 3600,
                    (secs / 60) % 60,
                    secs % 60
                );
                if rest % 1_000_000 != 0 {
                    let _ = write!(s, ".{:06}", rest % 1_000_000);
                }
                s
            }
        }
    }

    fn civil(&self) -> Option<DateTime> {
        match self {
            PyTime::Date(d) => Some(d.to_datetime(Time::midnight())),
            PyTime::DateTime(dt, _) => Some(*dt),
            PyTime::Delta(_) => None,
        }
    }

    /// Python's `strftime`, C locale.
    fn strftime(&self, format: &str) -> Result<String, Error> {
        let Some(dt) = self.civil() else {
            return Err(type_error("'timedelta' object has no attribute 'strftime'"));
        };
        let offset = match self {
            PyTime::DateTime(_, o) => *o,
            _ => None,
        };
        const DAYS: [&str; 7] = [
            "Monday",
            "Tuesday",
            "Wednesday",
            "Thursday",
            "Friday",
            "Saturday",
            "Sunday",
        ];
        const MONTHS: [&str; 12] = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        let weekday = dt.weekday().to_monday_zero_offset() as usize;
        let month = MONTHS[(dt.month() - 1) as usize];
        let hour12 = match dt.hour() % 12 {
            0 => 12,
            h => h,
        };
        let yday = dt.day_of_year();
        let mut out = String::new();
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let Some(mut d) = chars.next() else {
                out.push('%');
                break;
            };
            // glibc's `%-d`: the number without its padding.
            if d == '-' {
                d = chars.next().unwrap_or('%');
                let n: Option<i64> = match d {
                    'd' => Some(dt.day().into()),
                    'm' => Some(dt.month().into()),
                    'H' => Some(dt.hour().into()),
                    'I' => Some(hour12.into()),
                    'M' => Some(dt.minute().into()),
                    'S' => Some(dt.second().into()),
                    'j' => Some(yday.into()),
                    'y' => Some((dt.year() % 100).into()),
                    _ => None,
                };
                let Some(n) = n else {
                    return Err(type_error(format!(
                        "ValueError: ripple's strftime does not write %-{d} (in {format:?})"
                    )));
                };
                let _ = write!(out, "{n}");
                continue;
            }
            let _ = match d {
                // glibc's, as dbt on Linux prints it: `999`, not `0999`.
                'Y' => write!(out, "{}", dt.year()),
                'y' => write!(out, "{:02}", dt.year() % 100),
                'm' => write!(out, "{:02}", dt.month()),
                'd' => write!(out, "{:02}", dt.day()),
                'H' => write!(out, "{:02}", dt.hour()),
                'I' => write!(out, "{hour12:02}"),
                'M' => write!(out, "{:02}", dt.minute()),
                'S' => write!(out, "{:02}", dt.second()),
                'f' => write!(out, "{:06}", Self::micro(&dt)),
                'p' => write!(out, "{}", if dt.hour() < 12 { "AM" } else { "PM" }),
                'j' => write!(out, "{yday:03}"),
                // Weeks of the year: the first Sunday (`%U`) or Monday
                // (`%W`) starts week 1.
                'U' => write!(out, "{:02}", (yday as usize + 6 - (weekday + 1) % 7) / 7),
                'W' => write!(out, "{:02}", (yday as usize + 6 - weekday) / 7),
                'a' => write!(out, "{}", &DAYS[weekday][..3]),
                'A' => write!(out, "{}", DAYS[weekday]),
                'w' => write!(out, "{}", (weekday + 1) % 7),
                'u' => write!(out, "{}", weekday + 1),
                'b' => write!(out, "{}", &month[..3]),
                'B' => write!(out, "{month}"),
                'z' => write!(
                    out,
                    "{}",
                    offset.map(|o| offset_text(o, false)).unwrap_or_default()
                ),
                'Z' => write!(out, "{}", if offset.is_some() { "UTC" } else { "" }),
                'F' => write!(out, "{:04}-{:02}-{:02}", dt.year(), dt.month(), dt.day()),
                'T' => write!(
                    out,
                    "{:02}:{:02}:{:02}",
                    dt.hour(),
                    dt.minute(),
                    dt.second()
                ),
                'e' => write!(out, "{:>2}", dt.day()),
                'D' | 'x' => write!(
                    out,
                    "{:02}/{:02}/{:02}",
                    dt.month(),
                    dt.day(),
                    dt.year() % 100
                ),
                'X' => write!(
                    out,
                    "{:02}:{:02}:{:02}",
                    dt.hour(),
                    dt.minute(),
                    dt.second()
                ),
                'c' => write!(
                    out,
                    "{} {} {:>2} {:02}:{:02}:{:02} {}",
                    &DAYS[weekday][..3],
                    &month[..3],
                    dt.day(),
                    dt.hour(),
                    dt.minute(),
                    dt.second(),
                    dt.year()
                ),
                '%' => write!(out, "%"),
                // A directive written as itself would be a wrong value
                // (an alias, a filter) with no word said: refused.
                other => {
                    return Err(type_error(format!(
                        "ValueError: ripple's strftime does not write %{other} (in {format:?})"
                    )));
                }
            };
        }
        Ok(out)
    }

    fn add(self, other: PyTime, sign: i128) -> Result<PyTime, Error> {
        match (self, other) {
            (PyTime::Delta(a), PyTime::Delta(b)) => {
                let total = a + sign * b;
                // Python's limit: 999,999,999 days either way.
                if total.abs() >= 1_000_000_000 * MICROS_PER_DAY {
                    return Err(type_error("OverflowError: days out of range"));
                }
                Ok(PyTime::Delta(total))
            }
            (PyTime::Date(d), PyTime::Delta(b)) => {
                // Python moves a date by the timedelta's days alone
                // (`date - td` is `date + timedelta(-td.days)`).
                let days = sign * b.div_euclid(MICROS_PER_DAY) * MICROS_PER_DAY;
                let dt = from_epoch_micros(epoch_micros(d.to_datetime(Time::midnight())) + days)?;
                Ok(PyTime::Date(dt.date()))
            }
            (PyTime::DateTime(dt, o), PyTime::Delta(b)) => Ok(PyTime::DateTime(
                from_epoch_micros(epoch_micros(dt) + sign * b)?,
                o,
            )),
            (PyTime::Delta(_), PyTime::Date(_) | PyTime::DateTime(..)) if sign > 0 => {
                other.add(self, 1)
            }
            (PyTime::Date(a), PyTime::Date(b)) if sign < 0 => Ok(PyTime::Delta(
                epoch_micros(a.to_datetime(Time::midnight()))
                    - epoch_micros(b.to_datetime(Time::midnight())),
            )),
            (PyTime::DateTime(a, oa), PyTime::DateTime(b, ob)) if sign < 0 => {
                if oa.is_some() != ob.is_some() {
                    return Err(type_error(
                        "TypeError: can't subtract offset-naive and offset-aware datetimes",
                    ));
                }
                let utc = |dt: DateTime, o: Option<i32>| {
                    epoch_micros(dt) - i128::from(o.unwrap_or(0)) * 1_000_000
                };
                Ok(PyTime::Delta(utc(a, oa) - utc(b, ob)))
            }
            (a, b) => Err(type_error(format!(
                "TypeError: unsupported operand type(s) for {}: '{}' and '{}'",
                if sign > 0 { "+" } else { "-" },
                a.type_name(),
                b.type_name()
            ))),
        }
    }

    /// Kinds, in the order values of two kinds compare.
    fn rank(&self) -> u8 {
        match self {
            PyTime::Date(_) => 0,
            PyTime::DateTime(_, None) => 1,
            PyTime::DateTime(_, Some(_)) => 2,
            PyTime::Delta(_) => 3,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            PyTime::Date(_) => "datetime.date",
            PyTime::DateTime(..) => "datetime.datetime",
            PyTime::Delta(_) => "datetime.timedelta",
        }
    }
}

fn as_time(v: &Value) -> Option<PyTime> {
    v.downcast_object_ref::<PyTime>().copied()
}

/// `a + b` (`op` `+`) or `a - b` (`-`): Python's date arithmetic when
/// either side is a date, time or timedelta, the engine's own otherwise.
fn arith(state: &State, a: Value, op: &str, b: Value) -> Result<Value, Error> {
    let sign = match op {
        "+" => 1,
        "-" => -1,
        _ => return Err(type_error(format!("unknown operator {op}"))),
    };
    match (as_time(&a), as_time(&b)) {
        (Some(x), Some(y)) => return x.add(y, sign).map(Value::from_object),
        (Some(x), None) | (None, Some(x)) => {
            return Err(type_error(format!(
                "TypeError: unsupported operand type(s) for {op}: '{}' and '{}'",
                if as_time(&a).is_some() {
                    x.type_name()
                } else {
                    py_type(&a)
                },
                if as_time(&b).is_some() {
                    x.type_name()
                } else {
                    py_type(&b)
                },
            )));
        }
        (None, None) => {}
    }
    // Strings and lists are measured as `~` measures them: a rewritten
    // `+` must not make what the engine's own would have refused.
    super::guard::check(state, format_args!("`{op}`"), &[a.clone(), b.clone()])?;
    let expr = state
        .env()
        .compile_expression(if sign > 0 { "a + b" } else { "a - b" })?;
    expr.eval(minijinja::context! { a => a, b => b })
}

fn py_type(v: &Value) -> &'static str {
    match v.kind() {
        ValueKind::Number if v.is_integer() => "int",
        ValueKind::Number => "float",
        ValueKind::String => "str",
        ValueKind::Seq => "list",
        ValueKind::Map => "dict",
        ValueKind::None | ValueKind::Undefined => "NoneType",
        ValueKind::Bool => "bool",
        _ => "object",
    }
}

fn int_arg(v: Option<&Value>, name: &str) -> Result<i64, Error> {
    match v {
        None => Ok(0),
        Some(v) if v.is_integer() => i64::try_from(v.clone())
            .map_err(|_| type_error(format!("OverflowError: {name} out of range"))),
        Some(v) => Err(type_error(format!(
            "TypeError: '{}' object cannot be interpreted as an integer ({name})",
            py_type(v)
        ))),
    }
}

/// Positional `args` then keyword arguments, by the parameter names.
fn params(args: &[Value], names: &[&str]) -> Result<Vec<Option<Value>>, Error> {
    let (positional, kwargs) = match args.last().map(|a| Kwargs::try_from(a.clone())) {
        Some(Ok(k)) => (&args[..args.len() - 1], Some(k)),
        _ => (args, None),
    };
    if positional.len() > names.len() {
        return Err(type_error(format!(
            "TypeError: takes at most {} arguments ({} given)",
            names.len(),
            positional.len()
        )));
    }
    let mut out: Vec<Option<Value>> = names
        .iter()
        .enumerate()
        .map(|(i, _)| positional.get(i).cloned())
        .collect();
    if let Some(k) = kwargs {
        for key in k.args() {
            let Some(i) = names.iter().position(|n| *n == key) else {
                return Err(type_error(format!(
                    "TypeError: '{key}' is an invalid keyword argument"
                )));
            };
            out[i] = Some(k.peek::<Value>(key)?);
        }
        // Every keyword was looked at above.
        let _ = k.assert_all_used();
    }
    Ok(out)
}

fn date_of(y: i64, m: i64, d: i64) -> Result<Date, Error> {
    let bad = || type_error("ValueError: day is out of range for month");
    let year = i16::try_from(y).ok().filter(|y| (1..=9999).contains(y));
    let y = year.ok_or_else(|| type_error(format!("ValueError: year {y} is out of range")))?;
    let m = i8::try_from(m).map_err(|_| bad())?;
    let d = i8::try_from(d).map_err(|_| bad())?;
    Date::new(y, m, d).map_err(|_| bad())
}

fn tz_offset(v: Option<&Value>) -> Result<Option<i32>, Error> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) if v.downcast_object_ref::<Utc>().is_some() => Ok(Some(0)),
        Some(_) => Err(type_error(
            "only UTC is known to ripple's Jinja as a time zone (zone data would differ between machines)",
        )),
    }
}

fn datetime_new(args: &[Value]) -> Result<PyTime, Error> {
    let p = params(
        args,
        &[
            "year",
            "month",
            "day",
            "hour",
            "minute",
            "second",
            "microsecond",
            "tzinfo",
        ],
    )?;
    let n = |i: usize, name: &str| int_arg(p[i].as_ref(), name);
    if p[..3].iter().any(Option::is_none) {
        return Err(type_error(
            "TypeError: datetime() needs year, month and day",
        ));
    }
    let date = date_of(n(0, "year")?, n(1, "month")?, n(2, "day")?)?;
    let bad = || type_error("ValueError: a time field is out of range");
    let time = Time::new(
        i8::try_from(n(3, "hour")?).map_err(|_| bad())?,
        i8::try_from(n(4, "minute")?).map_err(|_| bad())?,
        i8::try_from(n(5, "second")?).map_err(|_| bad())?,
        i32::try_from(n(6, "microsecond")?)
            .ok()
            .filter(|m| (0..1_000_000).contains(m))
            .ok_or_else(bad)?
            * 1000,
    )
    .map_err(|_| bad())?;
    Ok(PyTime::DateTime(
        date.to_datetime(time),
        tz_offset(p[7].as_ref())?,
    ))
}

fn number(v: &Option<Value>) -> Result<f64, Error> {
    match v {
        None => Ok(0.0),
        Some(v) => f64::try_from(v.clone()).map_err(|_| {
            type_error(format!(
                "TypeError: unsupported type for timedelta component: {}",
                py_type(v)
            ))
        }),
    }
}

fn timedelta_new(args: &[Value]) -> Result<PyTime, Error> {
    let p = params(
        args,
        &[
            "days",
            "seconds",
            "microseconds",
            "milliseconds",
            "minutes",
            "hours",
            "weeks",
        ],
    )?;
    // Integers exactly (any size Python would take); floats as Python
    // rounds them, to the microsecond.
    let scale = [
        MICROS_PER_DAY,
        1_000_000,
        1,
        1000,
        60_000_000,
        3_600_000_000,
        7 * MICROS_PER_DAY,
    ];
    let mut total: i128 = 0;
    for (v, unit) in p.iter().zip(scale) {
        let part = match v {
            Some(v) if v.is_integer() => i128::try_from(v.clone())
                .ok()
                .and_then(|n| n.checked_mul(unit)),
            other => {
                let f = number(other)? * unit as f64;
                // Python rounds half to even (2.5 µs is 2).
                f.is_finite().then(|| f.round_ties_even() as i128)
            }
        };
        total = part
            .and_then(|p| total.checked_add(p))
            .ok_or_else(|| type_error("OverflowError: timedelta out of range"))?;
    }
    // Python's limit: 999,999,999 days either way.
    if total.abs() >= 1_000_000_000 * MICROS_PER_DAY {
        return Err(type_error("OverflowError: days out of range"));
    }
    Ok(PyTime::Delta(total))
}

/// Python's `strptime` for the directives models use; numbers may be
/// short, as Python allows.
fn strptime(text: &str, format: &str) -> Result<PyTime, Error> {
    let fail = || {
        type_error(format!(
            "ValueError: time data {text:?} does not match format {format:?}"
        ))
    };
    let (mut y, mut mo, mut d, mut h, mut mi, mut s, mut us) = (1900i64, 1, 1, 0, 0, 0, 0i64);
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut rest = text;
    let mut f = format.chars();
    let take_num = |rest: &mut &str, max: usize| -> Option<i64> {
        let n = rest
            .bytes()
            .take(max)
            .take_while(u8::is_ascii_digit)
            .count();
        if n == 0 {
            return None;
        }
        let v = rest[..n].parse().ok()?;
        *rest = &rest[n..];
        Some(v)
    };
    while let Some(c) = f.next() {
        if c != '%' {
            if c.is_whitespace() {
                rest = rest.trim_start();
                continue;
            }
            rest = rest.strip_prefix(c).ok_or_else(fail)?;
            continue;
        }
        let Some(dir) = f.next() else {
            return Err(fail());
        };
        match dir {
            'Y' => y = take_num(&mut rest, 4).ok_or_else(fail)?,
            'y' => {
                let v = take_num(&mut rest, 2).ok_or_else(fail)?;
                y = if v < 69 { 2000 + v } else { 1900 + v };
            }
            'm' => mo = take_num(&mut rest, 2).ok_or_else(fail)?,
            'd' => d = take_num(&mut rest, 2).ok_or_else(fail)?,
            'H' | 'I' => h = take_num(&mut rest, 2).ok_or_else(fail)?,
            'M' => mi = take_num(&mut rest, 2).ok_or_else(fail)?,
            'S' => s = take_num(&mut rest, 2).ok_or_else(fail)?,
            'f' => {
                let before = rest.len();
                let v = take_num(&mut rest, 6).ok_or_else(fail)?;
                let digits = (before - rest.len()) as u32;
                us = v * 10i64.pow(6 - digits);
            }
            'p' => {
                let word = rest.get(..2).ok_or_else(fail)?.to_ascii_uppercase();
                pm = Some(match word.as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return Err(fail()),
                });
                rest = &rest[2..];
            }
            'z' => {
                if let Some(r) = rest.strip_prefix('Z') {
                    offset = Some(0);
                    rest = r;
                } else {
                    let sign = match rest.chars().next() {
                        Some('+') => 1,
                        Some('-') => -1,
                        _ => return Err(fail()),
                    };
                    rest = &rest[1..];
                    let hh = take_num(&mut rest, 2).ok_or_else(fail)?;
                    rest = rest.strip_prefix(':').unwrap_or(rest);
                    let mm = take_num(&mut rest, 2)
                        .filter(|mm| *mm < 60)
                        .ok_or_else(fail)?;
                    // Python's `timezone` refuses a day or more.
                    if hh >= 24 {
                        return Err(type_error(
                            "ValueError: offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)",
                        ));
                    }
                    offset = Some(sign * (hh * 3600 + mm * 60) as i32);
                }
            }
            '%' => rest = rest.strip_prefix('%').ok_or_else(fail)?,
            _ => {
                return Err(type_error(format!(
                    "ValueError: ripple's strptime does not read %{dir} (in {format:?})"
                )));
            }
        }
    }
    if !rest.is_empty() {
        return Err(type_error(format!(
            "ValueError: unconverted data remains: {rest}"
        )));
    }
    if let Some(pm) = pm {
        h = h % 12 + if pm { 12 } else { 0 };
    }
    let mut args = vec![
        Value::from(y),
        Value::from(mo),
        Value::from(d),
        Value::from(h),
        Value::from(mi),
        Value::from(s),
        Value::from(us),
    ];
    if offset.is_some() {
        args.push(Value::from(()));
    }
    match datetime_new(&args)? {
        PyTime::DateTime(dt, _) => Ok(PyTime::DateTime(dt, offset)),
        other => Ok(other),
    }
}

/// `fromisoformat`: `YYYY-MM-DD`, then optionally `T` or a space, a time
/// and an offset.
fn fromisoformat(text: &str, date_only: bool) -> Result<PyTime, Error> {
    let fail = || type_error(format!("ValueError: Invalid isoformat string: {text:?}"));
    let (date, time) = match text.get(10..11) {
        Some("T" | " ") if !date_only => (&text[..10], Some(&text[11..])),
        None if text.len() == 10 => (text, None),
        _ => return Err(fail()),
    };
    let PyTime::DateTime(d, _) = strptime(date, "%Y-%m-%d").map_err(|_| fail())? else {
        return Err(fail());
    };
    if date_only {
        return Ok(PyTime::Date(d.date()));
    }
    let Some(time) = time else {
        return Ok(PyTime::DateTime(d, None));
    };
    let (clock, zone) = match time.find(['+', '-', 'Z']) {
        Some(i) => (&time[..i], &time[i..]),
        None => (time, ""),
    };
    let format = match (clock.len(), clock.contains('.')) {
        (5, _) => "%H:%M",
        (8, false) => "%H:%M:%S",
        (_, true) => "%H:%M:%S.%f",
        _ => return Err(fail()),
    };
    let full = format!("{} {clock}{zone}", &date);
    let format = format!(
        "%Y-%m-%d {format}{}",
        if zone.is_empty() { "" } else { "%z" }
    );
    strptime(&full, &format).map_err(|_| fail())
}

impl Object for PyTime {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        let v: i64 = match (**self, key) {
            (PyTime::Date(d), "year") => d.year().into(),
            (PyTime::Date(d), "month") => d.month().into(),
            (PyTime::Date(d), "day") => d.day().into(),
            (PyTime::DateTime(dt, _), "year") => dt.year().into(),
            (PyTime::DateTime(dt, _), "month") => dt.month().into(),
            (PyTime::DateTime(dt, _), "day") => dt.day().into(),
            (PyTime::DateTime(dt, _), "hour") => dt.hour().into(),
            (PyTime::DateTime(dt, _), "minute") => dt.minute().into(),
            (PyTime::DateTime(dt, _), "second") => dt.second().into(),
            (PyTime::DateTime(dt, _), "microsecond") => Self::micro(&dt).into(),
            (PyTime::DateTime(_, o), "tzinfo") => {
                return Some(match o {
                    Some(_) => Value::from_object(Utc),
                    None => Value::from(()),
                });
            }
            (PyTime::Delta(m), "days") => m.div_euclid(MICROS_PER_DAY) as i64,
            (PyTime::Delta(m), "seconds") => (m.rem_euclid(MICROS_PER_DAY) / 1_000_000) as i64,
            (PyTime::Delta(m), "microseconds") => (m.rem_euclid(1_000_000)) as i64,
            // Python has more (`date.max`, `.resolution`): unknown here, said.
            (t, other) => return unknown(&format!("{}.{other}", t.type_name())),
        };
        Some(Value::from(v))
    }

    fn is_true(self: &Arc<Self>) -> bool {
        !matches!(**self, PyTime::Delta(0))
    }

    fn custom_cmp(self: &Arc<Self>, other: &DynObject) -> Option<Ordering> {
        let other = other.downcast_ref::<PyTime>()?;
        match (**self, *other) {
            (PyTime::Date(a), PyTime::Date(b)) => Some(a.cmp(&b)),
            (PyTime::Delta(a), PyTime::Delta(b)) => Some(a.cmp(&b)),
            (PyTime::DateTime(a, oa), PyTime::DateTime(b, ob)) if oa.is_some() == ob.is_some() => {
                let utc = |dt: DateTime, o: Option<i32>| {
                    epoch_micros(dt) - i128::from(o.unwrap_or(0)) * 1_000_000
                };
                Some(utc(a, oa).cmp(&utc(b, ob)))
            }
            // Never equal, as in Python (which refuses to order them):
            // ordered by kind so that `==` is false and output stable.
            (a, b) => Some(a.rank().cmp(&b.rank())),
        }
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        super::guard::check(state, format_args!("`.{method}()`"), args)?;
        let this = **self;
        let text = |s: String| Ok(Value::from(s));
        match (this, method) {
            // Whole seconds exactly, then the fraction (Python divides the
            // integers; `m as f64` lost the last digit past 2^53).
            (PyTime::Delta(m), "total_seconds") => Ok(Value::from(
                (m.div_euclid(1_000_000)) as f64 + (m.rem_euclid(1_000_000)) as f64 / 1e6,
            )),
            (PyTime::Delta(_), _) => Err(Error::from(ErrorKind::UnknownMethod)),
            (_, "strftime") => {
                let format = args.first().and_then(Value::as_str).unwrap_or_default();
                text(this.strftime(format)?)
            }
            (_, "isoformat") => {
                let p = params(args, &["sep", "timespec"])?;
                if p[1].as_ref().is_some_and(|t| t.as_str() != Some("auto")) {
                    return Err(type_error(
                        "ValueError: ripple's isoformat writes timespec='auto' only",
                    ));
                }
                let sep = match (&this, &p[0]) {
                    (PyTime::Date(_), Some(_)) => {
                        return Err(type_error("TypeError: date.isoformat() takes no separator"));
                    }
                    (_, Some(v)) => v
                        .as_str()
                        .filter(|s| s.chars().count() == 1)
                        .ok_or_else(|| {
                            type_error("TypeError: isoformat's sep must be one character")
                        })?
                        .to_string(),
                    (_, None) => "T".to_string(),
                };
                text(this.iso(&sep))
            }
            (_, "__str__") => text(this.iso(" ")),
            (PyTime::DateTime(dt, _), "date") => Ok(Value::from_object(PyTime::Date(dt.date()))),
            (_, "weekday") => Ok(Value::from(
                this.civil()
                    .map_or(0, |d| d.weekday().to_monday_zero_offset()),
            )),
            (_, "isoweekday") => Ok(Value::from(
                this.civil()
                    .map_or(0, |d| d.weekday().to_monday_one_offset()),
            )),
            (_, "toordinal") => Ok(Value::from(this.civil().map_or(0, |d| {
                (epoch_micros(d.date().to_datetime(Time::midnight())) / MICROS_PER_DAY + 1) as i64
            }))),
            (PyTime::DateTime(dt, o), "timestamp") => Ok(Value::from(
                (epoch_micros(dt)
                    - epoch_micros(DateTime::constant(1970, 1, 1, 0, 0, 0, 0))
                    - i128::from(o.unwrap_or(0)) * 1_000_000) as f64
                    / 1e6,
            )),
            (PyTime::DateTime(dt, o), "astimezone") => {
                // UTC is the only zone ripple knows: the instant, in UTC.
                let target = tz_offset(args.first())?.unwrap_or(0);
                let utc = epoch_micros(dt) - i128::from(o.unwrap_or(0)) * 1_000_000;
                Ok(Value::from_object(PyTime::DateTime(
                    from_epoch_micros(utc + i128::from(target) * 1_000_000)?,
                    Some(target),
                )))
            }
            (_, "replace") => {
                let names: &[&str] = match this {
                    PyTime::Date(_) => &["year", "month", "day"],
                    _ => &[
                        "year",
                        "month",
                        "day",
                        "hour",
                        "minute",
                        "second",
                        "microsecond",
                        "tzinfo",
                    ],
                };
                let p = params(args, names)?;
                let dt = this.civil().unwrap_or_default();
                let current: [i64; 7] = [
                    dt.year().into(),
                    dt.month().into(),
                    dt.day().into(),
                    dt.hour().into(),
                    dt.minute().into(),
                    dt.second().into(),
                    Self::micro(&dt).into(),
                ];
                let mut new: Vec<Value> = Vec::new();
                for (i, c) in current.iter().enumerate().take(names.len().min(7)) {
                    new.push(match &p[i] {
                        Some(v) => v.clone(),
                        None => Value::from(*c),
                    });
                }
                match this {
                    PyTime::Date(_) => {
                        let n = |i: usize| int_arg(Some(&new[i]), names[i]);
                        Ok(Value::from_object(PyTime::Date(date_of(
                            n(0)?,
                            n(1)?,
                            n(2)?,
                        )?)))
                    }
                    PyTime::DateTime(_, o) => {
                        let offset = match p.get(7) {
                            Some(Some(tz)) => tz_offset(Some(tz))?,
                            _ => o,
                        };
                        match datetime_new(&new)? {
                            PyTime::DateTime(dt, _) => {
                                Ok(Value::from_object(PyTime::DateTime(dt, offset)))
                            }
                            other => Ok(Value::from_object(other)),
                        }
                    }
                    PyTime::Delta(_) => unreachable!("handled above"),
                }
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.iso(" "))
    }
}

/// `datetime.timezone.utc`, `pytz.utc`: the only zone ripple knows.
#[derive(Debug)]
struct Utc;

impl Object for Utc {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "zone" => Some(Value::from("UTC")),
            "utc" => Some(Value::from_object(Utc)),
            other => unknown(&format!("modules.pytz.utc.{other}")),
        }
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            // pytz's way of making a naive datetime aware.
            "localize" => match args.first().and_then(as_time) {
                Some(PyTime::DateTime(dt, None)) => {
                    Ok(Value::from_object(PyTime::DateTime(dt, Some(0))))
                }
                _ => Err(type_error("ValueError: localize needs a naive datetime")),
            },
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UTC")
    }
}

/// What Python has and ripple does not compute (`datetime.MAXYEAR`,
/// `date.max`): a placeholder, named in a warning, never an empty value.
fn unknown(name: &str) -> Option<Value> {
    super::placeholder_namespace(name)
}

/// `modules`: the modules ripple computes; any other is unknown (a
/// placeholder, and a warning), as before.
#[derive(Debug)]
struct Modules;

impl Object for Modules {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        Some(match key.as_str()? {
            "datetime" => Value::from_object(Module::Datetime),
            "pytz" => Value::from_object(Module::Pytz),
            "re" => Value::from_object(Module::Re),
            // Unknown: a placeholder, named in a warning.
            other => return unknown(&format!("modules.{other}")),
        })
    }
}

/// A module or class of `modules`, by the path to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Module {
    Datetime,
    DatetimeClass,
    DateClass,
    TimedeltaClass,
    Timezone,
    Pytz,
    Re,
}

impl Module {
    fn name(self) -> &'static str {
        match self {
            Module::Datetime => "modules.datetime",
            Module::DatetimeClass => "modules.datetime.datetime",
            Module::DateClass => "modules.datetime.date",
            Module::TimedeltaClass => "modules.datetime.timedelta",
            Module::Timezone => "modules.datetime.timezone",
            Module::Pytz => "modules.pytz",
            Module::Re => "modules.re",
        }
    }
}

impl Object for Module {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        Some(match (**self, key) {
            (Module::Datetime, "datetime") => Value::from_object(Module::DatetimeClass),
            (Module::Datetime, "date") => Value::from_object(Module::DateClass),
            (Module::Datetime, "timedelta") => Value::from_object(Module::TimedeltaClass),
            (Module::Datetime, "timezone") => Value::from_object(Module::Timezone),
            (Module::Timezone | Module::Pytz, "utc" | "UTC") => Value::from_object(Utc),
            (Module::DatetimeClass | Module::DateClass, "min") => Value::from_object(
                PyTime::DateTime(DateTime::constant(1, 1, 1, 0, 0, 0, 0), None),
            ),
            (Module::Re, "IGNORECASE" | "I") => Value::from(super::pyre::IGNORECASE),
            (Module::Re, "MULTILINE" | "M") => Value::from(super::pyre::MULTILINE),
            (Module::Re, "DOTALL" | "S") => Value::from(super::pyre::DOTALL),
            (Module::Re, "VERBOSE" | "X") => Value::from(super::pyre::VERBOSE),
            (Module::Re, "UNICODE" | "U") => Value::from(super::pyre::UNICODE),
            (m, other) => return unknown(&format!("{}.{other}", m.name())),
        })
    }

    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        super::guard::check(state, format_args!("`{}()`", self.name()), args)?;
        match **self {
            Module::DatetimeClass => datetime_new(args).map(Value::from_object),
            Module::DateClass => {
                let p = params(args, &["year", "month", "day"])?;
                if p.iter().any(Option::is_none) {
                    return Err(type_error("TypeError: date() needs year, month and day"));
                }
                let n = |i: usize, name: &str| int_arg(p[i].as_ref(), name);
                Ok(Value::from_object(PyTime::Date(date_of(
                    n(0, "year")?,
                    n(1, "month")?,
                    n(2, "day")?,
                )?)))
            }
            Module::TimedeltaClass => timedelta_new(args).map(Value::from_object),
            _ => Err(type_error(format!(
                "TypeError: '{}' object is not callable",
                self.name()
            ))),
        }
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        super::guard::check(state, format_args!("`{}.{method}()`", self.name()), args)?;
        let str_arg = |i: usize| -> Result<&str, Error> {
            args.get(i)
                .and_then(Value::as_str)
                .ok_or_else(|| type_error(format!("TypeError: {method}() needs a string")))
        };
        let naive = |t: PyTime| match t {
            PyTime::DateTime(dt, _) => PyTime::DateTime(dt, None),
            other => other,
        };
        let time = |t: PyTime| Ok(Value::from_object(t));
        if matches!(method, "now" | "utcnow" | "today")
            && matches!(**self, Module::DatetimeClass | Module::DateClass)
            && let Some(cap) = super::capture(state)
        {
            // What the model computes from it is ripple's, not the run's.
            super::lock(&cap.clock).insert(format!("{}.{method}()", self.name()));
        }
        match (**self, method) {
            (Module::DatetimeClass, "now") => match tz_offset(args.first())? {
                Some(_) => time(RUN_STARTED_AT),
                None => time(naive(RUN_STARTED_AT)),
            },
            (Module::DatetimeClass, "utcnow" | "today") => time(naive(RUN_STARTED_AT)),
            (Module::DateClass, "today") => time(PyTime::Date(
                RUN_STARTED_AT.civil().unwrap_or_default().date(),
            )),
            (Module::DatetimeClass, "strptime") => time(strptime(str_arg(0)?, str_arg(1)?)?),
            (Module::DatetimeClass, "fromisoformat") => time(fromisoformat(str_arg(0)?, false)?),
            (Module::DateClass, "fromisoformat") => time(fromisoformat(str_arg(0)?, true)?),
            (Module::DatetimeClass, "combine") if args.len() != 1 => Err(type_error(
                "ripple's Jinja has no datetime.time: combine() takes a date alone (midnight)",
            )),
            (Module::DatetimeClass, "combine") => match (
                args.first().and_then(as_time),
                args.get(1).and_then(as_time),
            ) {
                (Some(PyTime::Date(d)), _) => {
                    time(PyTime::DateTime(d.to_datetime(Time::midnight()), None))
                }
                _ => Err(type_error("TypeError: combine() needs a date")),
            },
            (Module::Pytz, "timezone") => match str_arg(0)? {
                "UTC" | "utc" | "Etc/UTC" => Ok(Value::from_object(Utc)),
                _ => Err(Error::from(ErrorKind::UnknownMethod)),
            },
            (Module::Re, _) => re_call(method, args, None, super::guard::bytes_left(state)),
            // `modules.datetime.timedelta(...)` is a method call to the
            // engine: the class, called.
            _ => match self.get_value(&Value::from(method)) {
                Some(class) => class.call(state, args),
                None => Err(Error::from(ErrorKind::UnknownMethod)),
            },
        }
    }
}

/// The largest compiled pattern (bytes of the engine's program), and the
/// most groups one may capture: patterns come from pull requests, and the
/// engine's memory for a search grows with groups times states.
const RE_SIZE_LIMIT: usize = 1 << 16;
const RE_MAX_GROUPS: usize = 32;

/// `pattern` for a message: its first 60 characters.
fn shown_pattern(pattern: &str) -> String {
    let mut shown: String = pattern.chars().take(60).collect();
    if shown.len() < pattern.len() {
        shown.push('…');
    }
    crate::text::one_line(&format!("{shown:?}")).into_owned()
}

/// `pattern` read as Python reads it ([`super::pyre`]) and compiled, with
/// `wrap` around it (`\\A(?:{})` for `match`); with what it was read as.
fn compile_re(
    pattern: &str,
    flags: i64,
    wrap: fn(&str) -> String,
) -> Result<(regex::Regex, super::pyre::Translated), Error> {
    let refuse = |why: &str| {
        type_error(format!(
            "re: pattern {} is not one ripple's `re` reads as Python does: {why}",
            shown_pattern(pattern)
        ))
    };
    let translated = super::pyre::translate(pattern, flags).map_err(|e| refuse(&e))?;
    let re = regex::RegexBuilder::new(&wrap(&translated.rust))
        .size_limit(RE_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let why = match e {
                regex::Error::CompiledTooBig(_) => {
                    format!("it compiles past ripple's limit of {RE_SIZE_LIMIT} bytes")
                }
                // The engine's text quotes the whole pattern: its last
                // line says what is wrong.
                other => {
                    let text = other.to_string();
                    let last: String = text
                        .lines()
                        .last()
                        .unwrap_or_default()
                        .chars()
                        .take(200)
                        .collect();
                    crate::text::one_line(&last).into_owned()
                }
            };
            refuse(&why)
        })?;
    if re.captures_len() > RE_MAX_GROUPS + 1 {
        return Err(type_error(format!(
            "re: pattern {} captures {} groups, more than ripple's limit of {RE_MAX_GROUPS}",
            shown_pattern(pattern),
            re.captures_len() - 1
        )));
    }
    Ok((re, translated))
}

/// What `pattern` answers on `text` is Python's, or the reason it may not be.
fn answers(t: &super::pyre::Translated, pattern: &str, text: &str) -> Result<(), Error> {
    t.answers(text).map_err(|why| {
        type_error(format!(
            "re: pattern {} on {}: {why}",
            shown_pattern(pattern),
            shown_pattern(text)
        ))
    })
}

/// A `re.sub` replacement as the engine expands it: Python's `\\1`, `\\g<1>`,
/// `\\g<name>` (of a group `re` has), octal codes (`\\0`, `\\101`), `\\n`,
/// `\\\\`; an escape or a group Python refuses is refused.
fn replacement(repl: &str, re: &regex::Regex) -> Result<String, Error> {
    let group = |name: &str| -> Result<String, Error> {
        let known = match name.parse::<usize>() {
            Ok(n) => n < re.captures_len(),
            Err(_) => re.capture_names().flatten().any(|g| g == name),
        };
        if !known {
            return Err(type_error(format!(
                "re.error: invalid group reference {name}"
            )));
        }
        Ok(format!("${{{name}}}"))
    };
    let mut out = String::with_capacity(repl.len() + 8);
    let chars: Vec<char> = repl.chars().collect();
    let octal = |i: usize| chars.get(i).and_then(|c| c.to_digit(8));
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c == '$' {
            out.push_str("$$");
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&d) = chars.get(i) else {
            return Err(type_error("re.error: bad escape (end of pattern)"));
        };
        i += 1;
        match d {
            // `\0`, `\012`, and three octal digits: a character's code.
            '0' | '1'..='7' if d == '0' || (octal(i).is_some() && octal(i + 1).is_some()) => {
                let mut v = d.to_digit(8).unwrap_or(0);
                let mut n = 0;
                while n < 2
                    && let Some(o) = octal(i)
                {
                    v = v * 8 + o;
                    i += 1;
                    n += 1;
                }
                if v > 0o377 {
                    return Err(type_error(
                        "re.error: octal escape value outside of range 0-0o377",
                    ));
                }
                out.push(char::from_u32(v).unwrap_or('\0'));
            }
            '1'..='9' => {
                let mut n = d.to_string();
                if let Some(e) = chars.get(i).filter(|e| e.is_ascii_digit()) {
                    n.push(*e);
                    i += 1;
                }
                out.push_str(&group(&n)?);
            }
            'g' => {
                if chars.get(i) != Some(&'<') {
                    return Err(type_error("re.error: missing < in \\g<...>"));
                }
                let name: String = chars[i + 1..].iter().take_while(|c| **c != '>').collect();
                i += 1 + name.chars().count();
                if chars.get(i) != Some(&'>') {
                    return Err(type_error("re.error: missing >, unterminated name"));
                }
                i += 1;
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(type_error(format!("re.error: bad group name {name:?}")));
                }
                out.push_str(&group(&name)?);
            }
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            '\\' => out.push('\\'),
            e if e.is_ascii_alphanumeric() => {
                return Err(type_error(format!("re.error: bad escape \\{e}")));
            }
            e => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    Ok(out)
}

/// The parameters of `re.<method>`; of a compiled pattern's method
/// (`compiled`), without the pattern and the flags, which it has.
fn re_params(method: &str, compiled: bool) -> Option<Vec<&'static str>> {
    let all: &[&str] = match method {
        "match" | "search" | "fullmatch" | "findall" => &["pattern", "string", "flags"],
        "sub" => &["pattern", "repl", "string", "count", "flags"],
        "split" => &["pattern", "string", "maxsplit", "flags"],
        "escape" if !compiled => &["pattern"],
        "compile" if !compiled => &["pattern", "flags"],
        _ => return None,
    };
    Some(
        all.iter()
            .copied()
            .filter(|n| !compiled || !matches!(*n, "pattern" | "flags"))
            .collect(),
    )
}

/// `re.match`, `search`, `fullmatch`, `findall`, `sub`, `split`, `escape`,
/// `compile`, or a compiled pattern's method (`compiled`: its pattern and
/// flags). What `sub` builds is bounded by `limit` bytes.
fn re_call(
    method: &str,
    args: &[Value],
    compiled: Option<(&str, i64)>,
    limit: u64,
) -> Result<Value, Error> {
    let Some(names) = re_params(method, compiled.is_some()) else {
        return Err(Error::from(ErrorKind::UnknownMethod));
    };
    let given = params(args, &names)?;
    let get = |name: &str| -> Option<&Value> {
        names
            .iter()
            .position(|n| *n == name)
            .and_then(|i| given[i].as_ref())
    };
    let text = |name: &str| -> Result<String, Error> {
        get(name)
            .filter(|v| v.kind() == ValueKind::String)
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .ok_or_else(|| type_error(format!("TypeError: re.{method}() needs `{name}`, a string")))
    };
    let int = |name: &str| -> Result<i64, Error> {
        match get(name) {
            None => Ok(0),
            Some(v) => i64::try_from(v.clone()).map_err(|_| {
                type_error(format!("TypeError: re.{method}()'s `{name}` is a number"))
            }),
        }
    };
    let (pattern, flags) = match compiled {
        Some((p, f)) => (p.to_string(), f),
        None => (text("pattern")?, int("flags")?),
    };
    let wrong = |e: String| type_error(format!("re: {e}"));
    let plain: fn(&str) -> String = |p| p.to_string();
    match method {
        "escape" => Ok(Value::from(super::pyre::escape(&pattern))),
        "compile" => {
            // Read now, as Python compiles it: a pattern it refuses fails here.
            compile_re(&pattern, flags, plain)?;
            Ok(Value::from_object(Pattern(pattern, flags)))
        }
        "match" | "search" | "fullmatch" => {
            // Python anchors `match` at the start and `fullmatch` at both
            // ends (leftmost-first would stop `a|ab` short of `ab`).
            let wrap: fn(&str) -> String = match method {
                "match" => |p| format!("\\A(?:{p})"),
                "fullmatch" => |p| format!("\\A(?:{p})\\z"),
                _ => plain,
            };
            let (re, t) = compile_re(&pattern, flags, wrap)?;
            let string = text("string")?;
            answers(&t, &pattern, &string)?;
            Ok(match re.captures(&string) {
                None => Value::from(()),
                Some(c) => Value::from_object(Match::of(&c, &string)),
            })
        }
        "findall" => {
            let (re, t) = compile_re(&pattern, flags, plain)?;
            let string = text("string")?;
            answers(&t, &pattern, &string)?;
            let group = |g: Option<regex::Match<'_>>| Value::from(g.map_or("", |m| m.as_str()));
            let mut items = Vec::new();
            let mut size = 0u64;
            super::pyre::each_match(&re, &string, t.backtracks, |c| {
                let item = match c.len() {
                    1 => group(c.get(0)),
                    2 => group(c.get(1)),
                    _ => super::compat::tuple(c.iter().skip(1).map(group).collect()),
                };
                size += c.get(0).map_or(0, |m| m.len() as u64) + 8;
                if size > limit {
                    return Err(format!(
                        "`re.findall()` would make more than {limit} bytes, more than this template has left of its fuel"
                    ));
                }
                items.push(item);
                Ok(true)
            })
            .map_err(wrong)?;
            Ok(Value::from(items))
        }
        "sub" => {
            let (re, t) = compile_re(&pattern, flags, plain)?;
            let (rep, string) = (replacement(&text("repl")?, &re)?, text("string")?);
            answers(&t, &pattern, &string)?;
            let Some(count) = at_most(int("count")?) else {
                return Ok(Value::from(string));
            };
            // Built piece by piece against the bound: `sub('', 'b' * n,
            // 'a' * n)` makes n² bytes from 2n.
            let mut out = String::new();
            let mut last = 0;
            let mut n = 0;
            super::pyre::each_match(&re, &string, t.backtracks, |c| {
                let m = c.get(0).map_or((0, 0), |m| (m.start(), m.end()));
                out.push_str(&string[last..m.0]);
                c.expand(&rep, &mut out);
                last = m.1;
                if out.len() as u64 > limit {
                    return Err(format!(
                        "`re.sub()` would make more than {limit} bytes, more than this template has left of its fuel; is a pattern matching everywhere (an empty match) runaway?"
                    ));
                }
                n += 1;
                Ok(n < count)
            })
            .map_err(wrong)?;
            out.push_str(&string[last..]);
            Ok(Value::from(out))
        }
        "split" => {
            let (re, t) = compile_re(&pattern, flags, plain)?;
            let string = text("string")?;
            answers(&t, &pattern, &string)?;
            let Some(maxsplit) = at_most(int("maxsplit")?) else {
                return Ok(Value::from(vec![Value::from(string)]));
            };
            let mut out = Vec::new();
            let mut last = 0;
            let mut n = 0;
            super::pyre::each_match(&re, &string, t.backtracks, |c| {
                let m = c.get(0).map_or((0, 0), |m| (m.start(), m.end()));
                out.push(Value::from(&string[last..m.0]));
                // Python keeps the captured groups between the pieces.
                for g in c.iter().skip(1) {
                    out.push(g.map_or(Value::from(()), |g| Value::from(g.as_str())));
                }
                last = m.1;
                n += 1;
                if out.len() as u64 > limit {
                    return Err(format!(
                        "`re.split()` would make more than {limit} pieces, more than this template has left of its fuel"
                    ));
                }
                Ok(n < maxsplit)
            })
            .map_err(wrong)?;
            out.push(Value::from(&string[last..]));
            Ok(Value::from(out))
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

/// Python's `count=` and `maxsplit=`: 0 is no limit; below 0, nothing is
/// replaced or split (`None`).
fn at_most(n: i64) -> Option<usize> {
    match n {
        0 => Some(usize::MAX),
        n if n < 0 => None,
        n => Some(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// A compiled pattern (`re.compile(p)`): its methods are the module's with
/// the pattern and flags it has.
#[derive(Debug)]
struct Pattern(String, i64);

impl Object for Pattern {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "pattern" => Some(Value::from(self.0.clone())),
            other => unknown(&format!("modules.re.Pattern.{other}")),
        }
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        super::guard::check(state, format_args!("`.{method}()`"), args)?;
        re_call(
            method,
            args,
            Some((&self.0, self.1)),
            super::guard::bytes_left(state),
        )
    }
}

/// A match: `group(i)`, `groups()`, `start()`, `span()`... as Python's:
/// each group's text and span (in characters), if it took part.
#[derive(Debug)]
struct Match(Vec<Option<(String, usize, usize)>>);

impl Match {
    fn of(c: &regex::Captures<'_>, text: &str) -> Match {
        let chars = |byte: usize| text[..byte].chars().count();
        Match(
            c.iter()
                .map(|g| g.map(|m| (m.as_str().to_string(), chars(m.start()), chars(m.end()))))
                .collect(),
        )
    }
}

impl Object for Match {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        unknown(&format!("modules.re.Match.{}", key.as_str()?))
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        let index = |args: &[Value]| -> Result<usize, Error> {
            let i = match args.first() {
                None => 0,
                Some(v) => usize::try_from(v.clone())
                    .map_err(|_| type_error("IndexError: ripple's re reads groups by number"))?,
            };
            if i < self.0.len() {
                Ok(i)
            } else {
                Err(type_error("IndexError: no such group"))
            }
        };
        let text = |i: usize| {
            self.0[i]
                .as_ref()
                .map_or(Value::from(()), |(s, _, _)| Value::from(s.clone()))
        };
        // Python's -1 for a group that did not take part.
        let at = |i: usize, end: bool| -> i64 {
            self.0[i]
                .as_ref()
                .map_or(-1, |(_, a, b)| if end { *b } else { *a } as i64)
        };
        match method {
            "group" => Ok(text(index(args)?)),
            "groups" => Ok(super::compat::tuple((1..self.0.len()).map(text).collect())),
            "start" => Ok(Value::from(at(index(args)?, false))),
            "end" => Ok(Value::from(at(index(args)?, true))),
            "span" => {
                let i = index(args)?;
                Ok(super::compat::tuple(vec![
                    Value::from(at(i, false)),
                    Value::from(at(i, true)),
                ]))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (text, a, b) = self.0[0].clone().unwrap_or_default();
        write!(
            f,
            "<re.Match object; span=({a}, {b}), match={}>",
            super::compat::repr(&Value::from(text))
        )
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::render;

    fn error(template: &str) -> String {
        match render(&[], template).0 {
            Ok(sql) => panic!("rendered: {sql}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn a_pattern_too_big_or_beyond_the_engine_is_an_error_not_a_hang() {
        let big = error("{{ modules.re.match('((a{100}){100}){100}', 'a') }}");
        assert!(big.contains("not one ripple's `re` reads"), "{big}");
        let back = error("{{ modules.re.sub('(a)\\\\1', 'b', 'aa') }}");
        assert!(back.contains("back-references"), "{back}");
    }

    #[test]
    fn a_substitution_or_a_pattern_that_would_run_away_is_refused() {
        // 100 bytes of model once built gigabytes (n² from 2n), or aborted
        // on the engine's memory for thousands of groups.
        let e = error("{{ modules.re.sub('', 'b' * 100000, 'a' * 100000) }}");
        assert!(e.contains("would make more than"), "{e}");
        let e = error("{{ modules.re.match('(a|b)' * 5000, 'a' * 5000) }}");
        assert!(
            e.contains("not one ripple's `re` reads") || e.contains("groups"),
            "{e}"
        );
        assert!(e.len() < 1000, "{} bytes", e.len());
        let e = error("{{ modules.re.match('(a)' * 40, 'a') }}");
        assert!(e.contains("captures 40 groups"), "{e}");
        // What Python would compute otherwise is refused, never written as is.
        for bad in [
            "{{ modules.datetime.date(2024, 1, 1).strftime('%G') }}",
            "{{ modules.datetime.datetime(2024, 1, 1).isoformat(timespec='hours') }}",
            "{{ modules.re.sub('a', '\\\\q', 'a') }}",
            "{{ modules.re.compile('a').match('a', 1) }}",
        ] {
            error(bad);
        }
    }

    #[test]
    fn an_offset_of_a_day_or_more_is_python_s_value_error() {
        // Python: hours below 24, minutes below 60 (`+99:00` was read as
        // four days and three hours).
        for bad in ["+99:00", "+24:00", "-99:99", "+05:60"] {
            let e = error(&format!(
                "{{{{ modules.datetime.datetime.fromisoformat('2024-01-01T00:00:00{bad}') }}}}"
            ));
            assert!(e.contains("ValueError"), "{bad}: {e}");
        }
        let (sql, _) = render(
            &[],
            "{{ modules.datetime.datetime.fromisoformat('2024-01-01T00:00:00+23:59').hour }}",
        );
        assert_eq!(sql.unwrap(), "0");
    }

    #[test]
    fn mixing_dates_and_other_values_is_python_s_type_error() {
        let e = error("{{ modules.datetime.date(2024, 1, 1) + 1 }}");
        assert!(
            e.contains("unsupported operand type(s) for +: 'datetime.date' and 'int'"),
            "{e}"
        );
        let e = error("{{ modules.datetime.date(2024, 2, 30) }}");
        assert!(e.contains("day is out of range"), "{e}");
    }

    #[test]
    fn a_rewritten_plus_is_paid_for_as_the_engine_s_own() {
        // `+` in a template that uses dates is a call of ours: doubling a
        // string in a loop still runs out of fuel, it does not build
        // gigabytes.
        let e = error(
            "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(13) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }} {{ modules.datetime.date(2024, 1, 1) }}",
        );
        assert!(e.contains("fuel"), "{e}");
    }

    #[test]
    fn now_is_run_started_at_whatever_the_clock() {
        let (sql, _) = render(
            &[],
            "{{ modules.datetime.datetime.now() }}|{{ modules.datetime.datetime.utcnow().isoformat() }}|{{ modules.datetime.date.today() }}|{{ modules.datetime.datetime.now(modules.pytz.utc) == run_started_at }}",
        );
        assert_eq!(
            sql.unwrap(),
            "2000-01-01 00:00:00|2000-01-01T00:00:00|2000-01-01|True"
        );
    }
}
