//! Writes a fuzz input out as a small project and reads it the way every
//! command does: load, build the graph, check it.

use std::path::PathBuf;
use std::sync::OnceLock;

/// A folder of this process's own, reused for every input.
pub fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::var_os("RIPPLE_FUZZ_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("ripple-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir
    })
}

/// Replaces the project's files with `files` (relative path, contents),
/// then loads it and checks the graph. Errors are fine; panics, hangs and
/// overflows are what the fuzzer looks for.
pub fn load(files: &[(&str, &[u8])]) {
    let root = scratch();
    let _ = std::fs::remove_dir_all(root);
    for (path, bytes) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    if let Ok(project) = ripple::ingest::load_project(root, &ripple::ingest::LoadOptions::default()) {
        let g = ripple::graph::LineageGraph::build(project);
        let _ = g.check();
    }
}

/// `data` cut at `\x00` into at most `n` parts (missing ones empty).
pub fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = data.splitn(n, |&b| b == 0).collect();
    out.resize(n, &[]);
    out
}
