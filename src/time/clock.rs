//! The clock settings of `ripple.yml` and DAG files, read once for every
//! layer: allowed windows (`20:00-06:00`), durations (`90m`), cron
//! expressions (`0 2 * * *`, `@daily`). `ripple.yml` is checked with these
//! when it loads, so `check`, `impact` and `plan` refuse the same values.

/// `"20:00-06:00"` → minutes of the day (from, to).
pub fn parse_window(s: &str) -> Option<(i64, i64)> {
    let (a, b) = s.split_once('-')?;
    let minutes = |x: &str| -> Option<i64> {
        let (h, m) = x.trim().split_once(':')?;
        let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
        ((0..=24).contains(&h) && (0..60).contains(&m) && h * 60 + m <= 1440).then_some(h * 60 + m)
    };
    let (from, to) = (minutes(a)?, minutes(b)?);
    (from != to).then_some((from % 1440, to % 1440))
}

/// `90m`, `2h`, `1h30m`, `45` (minutes) → minutes.
pub fn parse_duration(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(m) = s.parse::<i64>() {
        return (m > 0).then_some(m);
    }
    let mut total = 0i64;
    let mut number = String::new();
    for c in s.chars() {
        match c {
            '0'..='9' => number.push(c),
            'h' | 'm' | 'd' => {
                let n: i64 = number.parse().ok()?;
                number.clear();
                total += match c {
                    'd' => n * 1440,
                    'h' => n * 60,
                    _ => n,
                };
            }
            ' ' => {}
            _ => return None,
        }
    }
    (number.is_empty() && total > 0).then_some(total)
}

/// A cron expression or one of Airflow's presets (`@daily`, `@hourly`, ...),
/// parsed; the error says what is wrong with it.
pub fn parse_cron(text: &str) -> Result<croner::Cron, String> {
    let s = text.trim().trim_matches(['"', '\'']);
    let cron = match s {
        "@hourly" => "0 * * * *",
        "@daily" | "@midnight" => "0 0 * * *",
        "@weekly" => "0 0 * * 0",
        "@monthly" => "0 0 1 * *",
        "@quarterly" => "0 0 1 */3 *",
        "@yearly" | "@annually" => "0 0 1 1 *",
        other => other,
    };
    // croner also reads six and seven fields (seconds first, a year last);
    // Airflow's cron has five and croniter reads a sixth as seconds *last*:
    // one schedule would mean two things.
    let fields = cron.split_whitespace().count();
    if fields != 5 {
        return Err(format!(
            "`{s}` has {fields} field{}; Airflow's cron has five (minute hour day month weekday)",
            crate::text::plural(fields)
        ));
    }
    cron.parse().map_err(|_| cron_field_error(s, cron))
}

/// Which of a five-field cron's fields is wrong and what it takes: the
/// parser's own words ("Component error: ...") name its internals.
fn cron_field_error(shown: &str, cron: &str) -> String {
    const FIELDS: [(&str, &str); 5] = [
        ("minute", "0-59"),
        ("hour", "0-23"),
        ("day of month", "1-31"),
        ("month", "1-12 or JAN-DEC"),
        ("weekday", "0-7 or SUN-SAT"),
    ];
    let parts: Vec<&str> = cron.split_whitespace().collect();
    for (i, (name, range)) in FIELDS.iter().enumerate() {
        let alone: Vec<&str> = (0..5)
            .map(|j| if i == j { parts[i] } else { "*" })
            .collect();
        if alone.join(" ").parse::<croner::Cron>().is_err() {
            return format!(
                "`{shown}` is not a cron expression: its {name} field `{}` is not a value, list, range or step of {range}",
                parts[i]
            );
        }
    }
    format!("`{shown}` is not a cron expression ripple can read (no time matches it)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crons_and_presets_parse_and_nonsense_says_so() {
        assert!(parse_cron("0 2 * * *").is_ok());
        assert!(parse_cron("@daily").is_ok());
        let err = parse_cron("every night").unwrap_err();
        assert!(err.contains("`every night`"), "{err}");
        // Seconds or a year would be read differently by Airflow.
        let err = parse_cron("0 2 * * * *").unwrap_err();
        assert!(err.contains("has 6 fields"), "{err}");
        assert!(parse_cron("0 0 2 * * * 2027").is_err());
        // The wrong field is named with what it takes, not the parser's words.
        let err = parse_cron("0 25 * * *").unwrap_err();
        assert!(err.contains("hour field `25`"), "{err}");
        assert!(!err.contains("Component"), "{err}");
        let err = parse_cron("0 0 * FOO *").unwrap_err();
        assert!(err.contains("month field `FOO`"), "{err}");
    }
}
