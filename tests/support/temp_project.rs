//! Throw-away projects for tests: files written into a fresh temp folder.

#![allow(dead_code)]

/// A temp folder holding `files` (path relative to it, contents); folders
/// are made as needed. The project lives as long as the returned value.
pub fn temp_project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in files {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}
