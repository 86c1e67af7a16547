//! Running code on a stack big enough for it without ever aborting: a
//! stack is grown (with `stacker`) only when the thread's is too small, and
//! under an address-space limit (`ulimit -v`) only when it fits, so a
//! deeply nested template or statement is reported, not a crash. Shared by
//! the SQL reader and the Jinja renderer, below both.

use std::sync::OnceLock;

/// The bytes of address space the process uses (`VmSize`).
pub(crate) fn address_space_used() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The soft limit on the process's address space, if there is one (read
/// once from `/proc/self/limits`: std has no `getrlimit`).
pub(crate) fn address_space_limit() -> Option<u64> {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    *LIMIT.get_or_init(read_address_space_limit)
}

fn read_address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// A stack a template or file needed could not be mapped: the process's
/// address space is limited (`ulimit -v`) below it, or it is more than the
/// machine's memory.
#[derive(Debug, Clone, Copy, thiserror::Error)]
pub enum NoStack {
    /// The address space left under the limit is too small.
    #[error(
        "a stack of {} MiB to read it could not be mapped (is the address space limited, `ulimit -v`?); raise the limit to read it",
        .0 >> 20
    )]
    Limited(usize),
    /// More than the machine's memory: no limit to raise.
    #[error(
        "it would need a stack of {} MiB, more than this machine's memory; split it into shorter statements",
        .0 >> 20
    )]
    TooDeep(usize),
}

/// The machine's memory (`MemTotal`), read once.
fn memory_total() -> Option<u64> {
    static TOTAL: OnceLock<Option<u64>> = OnceLock::new();
    *TOTAL.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    })
}

/// `f` on a stack of at least `need` bytes: the thread's when it has that
/// much left, else one mapped for it. Mapping fails only under an
/// address-space limit; stacker then panics before `f` runs, which is
/// caught here and told as [`NoStack`] (a panic inside `f` goes on as it
/// was).
pub fn grow<R>(need: usize, f: impl FnOnce() -> R) -> Result<R, NoStack> {
    grow_reserving(need, 0, f)
}

/// [`grow`], where `f` will also allocate up to `reserve` bytes: under an
/// address-space limit, `f` runs only if the stack it needs (when the
/// thread's is too small) and `reserve` both fit in what the limit leaves
/// (an allocation that fails aborts the process). A `reserve` of 0 is not
/// checked.
pub fn grow_reserving<R>(need: usize, reserve: u64, f: impl FnOnce() -> R) -> Result<R, NoStack> {
    let fits = stacker::remaining_stack().is_some_and(|left| left >= need);
    // Under an address-space limit, a mapping that cannot fit is not tried
    // (stacker would say so by panicking, loudly).
    let mapped = if fits { 0 } else { need as u64 };
    // A mapping past the machine's memory fails whatever the limit (and
    // stacker says so by panicking, printed before it is caught).
    if memory_total().is_some_and(|total| mapped > total) {
        return Err(NoStack::TooDeep(need));
    }
    if mapped + reserve > 0
        && let Some(limit) = address_space_limit()
        && address_space_used().is_none_or(|used| used + mapped + reserve + (64 << 20) > limit)
    {
        return Err(NoStack::Limited(need));
    }
    if fits {
        return Ok(f());
    }
    let started = std::cell::Cell::new(false);
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stacker::maybe_grow(need, need, || {
            started.set(true);
            f()
        })
    }));
    match ran {
        Ok(r) => Ok(r),
        Err(_) if !started.get() => Err(NoStack::Limited(need)),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
