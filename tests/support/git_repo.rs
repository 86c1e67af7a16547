//! Throw-away git repositories for `ripple diff` tests: files written and
//! committed with a fixed identity, nothing read from the user's git config.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// A temp folder holding a git repository.
pub struct GitRepo {
    /// The folder (deleted on drop).
    pub dir: tempfile::TempDir,
}

impl GitRepo {
    /// A repository whose first commit holds `files`.
    pub fn new(files: &[(&str, &str)]) -> GitRepo {
        let repo = GitRepo {
            dir: tempfile::tempdir().unwrap(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        for (path, text) in files {
            repo.write(path, text);
        }
        repo.commit("base");
        repo
    }

    /// The repository's folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes (or overwrites) a file in the working tree.
    pub fn write(&self, path: &str, text: &str) {
        let p = self.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Deletes a file from the working tree.
    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.path().join(path)).unwrap();
    }

    /// Commits everything; the new commit's id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Runs git in the repository; its standard output.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "ripple tests")
            .env("GIT_AUTHOR_EMAIL", "tests@ripple.invalid")
            .env("GIT_COMMITTER_NAME", "ripple tests")
            .env("GIT_COMMITTER_EMAIL", "tests@ripple.invalid")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}
