//! Wall time per phase for `--timings` (or `RIPPLE_LOG=timings`): what
//! `dbt parse` reports as its perf info. Nothing is recorded unless it is
//! turned on, and nothing of it reaches standard output.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ON: AtomicBool = AtomicBool::new(false);
static PHASES: Mutex<Vec<(&str, Duration)>> = Mutex::new(Vec::new());

/// Starts recording.
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// Runs `work` as the phase `name`, recording its wall time when on.
pub fn phase<R>(name: &'static str, work: impl FnOnce() -> R) -> R {
    if !ON.load(Ordering::Relaxed) {
        return work();
    }
    let started = Instant::now();
    let out = work();
    let took = started.elapsed();
    if let Ok(mut phases) = PHASES.lock() {
        phases.push((name, took));
    }
    out
}

/// Records a phase timed by the caller, for a phase whose name is known
/// only once it is done (how the dbt project was loaded).
pub fn record(name: &'static str, took: Duration) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut phases) = PHASES.lock() {
        phases.push((name, took));
    }
}

/// The phases recorded, one line each (`  dbt models  412.3 ms`), and the
/// total; empty when nothing was recorded.
pub fn report() -> String {
    let Ok(phases) = PHASES.lock() else {
        return String::new();
    };
    if phases.is_empty() {
        return String::new();
    }
    let width = phases
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut out = String::from("timings (wall):\n");
    for (name, took) in phases.iter() {
        out.push_str(&format!("  {name:<width$}  {:>9.1} ms\n", ms(*took)));
    }
    let total: Duration = phases.iter().map(|(_, d)| *d).sum();
    out.push_str(&format!("  {:<width$}  {:>9.1} ms\n", "total", ms(total)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_recorded_only_when_on() {
        assert_eq!(phase("off", || 1), 1);
        assert!(!report().contains("off"));
        enable();
        assert_eq!(phase("on", || 2), 2);
        let r = report();
        assert!(r.contains("  on "), "{r}");
        assert!(r.contains("total"), "{r}");
    }
}
