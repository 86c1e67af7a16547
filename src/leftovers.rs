//! Files and folders this process makes for a moment (`ripple diff`'s
//! revision copies, `--output`'s temporary file) and must not leave behind
//! when a signal ends it (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXCPU or
//! SIGXFSZ from a limit ...): each is listed while it exists, and on such a
//! signal every listed path is deleted before the process dies of the
//! signal as it would have. The signals are waited for on a thread of
//! their own, so the deletion is ordinary code, not a signal handler's.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The paths to delete if a signal ends the process. Writers hold the lock
/// while they make or fill a listed path: a deletion then never races a
/// write that would make it again.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The list, locked: hold it while making or filling a listed path.
pub fn lock() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A listed path; dropping it takes the path off the list (it is then the
/// owner's to delete or keep).
#[derive(Debug)]
pub struct Listed(PathBuf);

impl Drop for Listed {
    fn drop(&mut self) {
        let mut live = lock();
        if let Some(i) = live.iter().position(|p| *p == self.0) {
            live.swap_remove(i);
        }
    }
}

/// Lists `path` (with `live`, the locked list) for deletion on a signal,
/// and makes sure the signals are watched.
pub fn list(live: &mut MutexGuard<'static, Vec<PathBuf>>, path: &Path) -> Listed {
    watch_signals();
    live.push(path.to_path_buf());
    Listed(path.to_path_buf())
}

/// Starts the thread deleting the listed paths on an ending signal (once).
pub fn watch_signals() {
    #[cfg(target_os = "linux")]
    {
        use signal_hook::consts::*;
        // Every signal whose default is to end the process that a handler
        // may take (SIGKILL cannot be; a revision copy's next run sweeps
        // what it leaves). SIGPIPE is left to Rust's default (ignored: a
        // closed pipe is a write error).
        const ENDING: [i32; 12] = [
            SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
            SIGXCPU, SIGXFSZ, SIGIO,
        ];
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let Ok(mut signals) = signal_hook::iterator::Signals::new(ENDING) else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("ripple-signals".to_string())
                .spawn(move || {
                    if let Some(signal) = signals.forever().next() {
                        // Held until the process ends: no writer starts
                        // another file. A deletion that fails part way (seen
                        // under load: a copy was left) is tried again until
                        // the path is gone.
                        let live = lock();
                        for path in live.iter() {
                            for _ in 0..200 {
                                if path.is_dir() {
                                    let _ = std::fs::remove_dir_all(path);
                                } else {
                                    let _ = std::fs::remove_file(path);
                                }
                                if std::fs::symlink_metadata(path).is_err() {
                                    break;
                                }
                                std::thread::sleep(std::time::Duration::from_millis(5));
                            }
                        }
                        let _ = signal_hook::low_level::emulate_default_handler(signal);
                        std::process::exit(128 + signal);
                    }
                });
        });
    }
}
