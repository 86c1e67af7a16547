//! (CLI only.) A progress bar on standard error, shown only on a terminal and only once
//! loading has taken more than a second.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ripple::ingest::Progress;

/// indicatif behind ripple's [`Progress`] hook.
pub struct Bar {
    bar: ProgressBar,
    started: Instant,
    terminal: bool,
}

impl Bar {
    pub fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} rendering {pos}/{len} files {wide_bar} {eta}")
        {
            bar.set_style(style);
        }
        Bar {
            bar,
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
        }
    }
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.bar.set_length(total);
    }

    fn inc(&self, n: u64) {
        if self.terminal && self.bar.is_hidden() && self.started.elapsed() > Duration::from_secs(1)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.inc(n);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
