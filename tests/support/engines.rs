//! Real database engines for tests, found through the `RIPPLE_TEST_*`
//! variables that `bash scripts/engines.sh env` prints (run
//! `eval "$(bash scripts/engines.sh all)"` to install and start them).
//!
//! A test asks for an engine with `require(postgres(), "PostgreSQL")`: when
//! the engine is missing the test skips (one line on stderr), except under
//! `CI=true`, where a missing engine is a failure.
//!
//! Atomicity, checked by `tests/engines_smoke.rs`: a script run whole by one
//! `run` or `run_file` call and wrapped in `begin; ... commit;` is all or
//! nothing on both engines (each stops at the first error and the open
//! transaction is rolled back). Without `begin`, psql's `-c` still runs the
//! string as one implicit transaction, but psql's `-f` and DuckDB (`-c` or
//! `-f`) commit each statement before the failing one.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `engine` as is when present. When missing: a panic under `CI=true`,
/// else one `skipped:` line on stderr and `None` (the test returns early).
pub fn require<T>(engine: Option<T>, name: &str) -> Option<T> {
    if engine.is_some() {
        return engine;
    }
    if std::env::var("CI").is_ok_and(|ci| ci == "true") {
        panic!(
            "{name} not found, and CI=true needs it: run `bash scripts/engines.sh all` \
             and eval its output (the RIPPLE_TEST_* variables) before cargo test"
        );
    }
    // Straight to stderr: the test harness captures `eprintln!`, and shows
    // what it captured only for failing tests.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {name} not found; run: eval \"$(bash scripts/engines.sh all)\""
    );
    None
}

/// A set, non-empty environment variable.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// A name no other test of this run, nor a leftover of an earlier run, has.
fn unique_name() -> String {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    format!(
        "ripple_test_{}_{}_{nanos}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

/// `text` quoted for a POSIX shell (as is when it needs no quoting).
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,+@%".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Stdout (less its trailing newlines) on success, else stderr (or the exit
/// status when stderr is empty).
fn outcome(output: std::io::Result<Output>, program: &Path) -> Result<String, String> {
    let output = output.map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout)
            .trim_end_matches('\n')
            .to_string())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        Err(if stderr.is_empty() {
            format!("{} exited with {}", program.display(), output.status)
        } else {
            stderr
        })
    }
}

/// A fresh PostgreSQL database of its own (dropped on drop), on the cluster
/// named by `RIPPLE_TEST_PSQL`, `RIPPLE_TEST_PGHOST`, `RIPPLE_TEST_PGPORT`
/// and `RIPPLE_TEST_PGUSER`.
pub struct Pg {
    psql: PathBuf,
    host: String,
    port: String,
    user: String,
    database: String,
}

/// A new database on the test cluster, or `None` when the variables are not
/// set. Panics when they are set but the database cannot be made: the
/// cluster was said to be there.
pub fn postgres() -> Option<Pg> {
    let pg = Pg {
        psql: PathBuf::from(var("RIPPLE_TEST_PSQL")?),
        host: var("RIPPLE_TEST_PGHOST")?,
        port: var("RIPPLE_TEST_PGPORT")?,
        user: var("RIPPLE_TEST_PGUSER")?,
        database: unique_name(),
    };
    if let Err(error) = pg.admin(&format!("create database {}", pg.database)) {
        panic!(
            "cannot create a test database on {} port {} (is the cluster running? \
             bash scripts/engines.sh start): {error}",
            pg.host, pg.port
        );
    }
    Some(pg)
}

impl Pg {
    /// The arguments before the SQL, for database `database`.
    fn args(&self, database: &str) -> Vec<String> {
        [
            "-X",
            "-q",
            "-tA",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            &self.host,
            "-p",
            &self.port,
            "-U",
            &self.user,
            "-d",
            database,
        ]
        .map(str::to_string)
        .to_vec()
    }

    fn command(&self, database: &str) -> Command {
        let mut command = Command::new(&self.psql);
        command
            .args(self.args(database))
            // Notices (`drop ... if exists` on nothing, say) stay off stderr.
            .env("PGOPTIONS", "-c client_min_messages=warning");
        command
    }

    /// A client reading SQL from its standard input, on this database: for
    /// tests that cut a session off in the middle of a transaction.
    pub fn stdin_session(&self) -> Command {
        self.command(&self.database)
    }

    /// Runs `sql` on the `postgres` database (to create and drop ours).
    fn admin(&self, sql: &str) -> Result<String, String> {
        outcome(
            self.command("postgres").arg("-c").arg(sql).output(),
            &self.psql,
        )
    }

    /// An Airflow connection (`AIRFLOW_CONN_<ID>`, JSON) to this database.
    pub fn airflow_conn(&self) -> String {
        serde_json::json!({
            "conn_type": "postgres",
            "host": self.host,
            "port": self.port.parse::<u16>().unwrap_or(5432),
            "login": self.user,
            "schema": self.database,
        })
        .to_string()
    }

    /// The lines of a dbt profile target (`type: postgres`) for this
    /// database, indented for `outputs.<name>`, with models in `schema`.
    pub fn dbt_target(&self, schema: &str) -> String {
        format!(
            "type: postgres\n      host: {}\n      port: {}\n      user: {}\n      password: \"\"\n      dbname: {}\n      schema: {schema}",
            self.host, self.port, self.user, self.database
        )
    }

    /// This test's database.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Runs `sql` with `psql -c`: the whole string is sent at once, so its
    /// statements are one transaction (even without `begin`) and the first
    /// error stops the rest. Rows come back unaligned, `|` between columns.
    pub fn run(&self, sql: &str) -> Result<String, String> {
        outcome(
            self.command(&self.database).arg("-c").arg(sql).output(),
            &self.psql,
        )
    }

    /// Runs `sql` as a script file (`psql -f`): statement by statement,
    /// stopping at the first error (`ON_ERROR_STOP=1`). Each statement
    /// commits on its own unless the script has `begin; ... commit;`.
    pub fn run_file(&self, sql: &str) -> Result<String, String> {
        let file = tempfile::Builder::new().suffix(".sql").tempfile().unwrap();
        std::fs::write(file.path(), sql).unwrap();
        outcome(
            self.command(&self.database)
                .arg("-f")
                .arg(file.path())
                .output(),
            &self.psql,
        )
    }

    /// A shell command that runs the SQL appended to it on this database,
    /// ending in `-c`: `RIPPLE_SQL="$(pg.psql_command())"`, then
    /// `$RIPPLE_SQL "select 1"`. Words are quoted only where needed, so with
    /// plain paths the prefix also survives word splitting without `eval`.
    pub fn psql_command(&self) -> String {
        let mut words = vec![shell_quote(&self.psql.to_string_lossy())];
        words.extend(self.args(&self.database).iter().map(|a| shell_quote(a)));
        words.push("-c".to_string());
        words.join(" ")
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        // `with (force)` ends sessions a failed test left connected.
        let _ = self.admin(&format!(
            "drop database if exists {} with (force)",
            self.database
        ));
    }
}

/// A DuckDB database file in a temp folder of its own, run through the
/// DuckDB CLI named by `RIPPLE_TEST_DUCKDB`.
pub struct Duck {
    duckdb: PathBuf,
    // Removed on drop, with the database unless `duckdb_file` named another.
    dir: tempfile::TempDir,
    file: PathBuf,
}

/// A new, empty DuckDB database, or `None` when `RIPPLE_TEST_DUCKDB` is not
/// set.
pub fn duckdb() -> Option<Duck> {
    let duckdb = PathBuf::from(var("RIPPLE_TEST_DUCKDB")?);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("test.duckdb");
    Some(Duck { duckdb, dir, file })
}

/// The DuckDB database at `path` (made on first use, kept on drop), or
/// `None` when `RIPPLE_TEST_DUCKDB` is not set.
pub fn duckdb_file(path: &Path) -> Option<Duck> {
    let mut duck = duckdb()?;
    duck.file = path.to_path_buf();
    Some(duck)
}

impl Duck {
    /// The flags before the SQL: no `~/.duckdbrc` (`-no-init`), stop at the
    /// first error (`-bail`, the non-interactive default already, but an
    /// init file's `.bail off` would undo that), rows as `a|b` without a
    /// header, as psql's `-tA` gives.
    fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = ["-no-init", "-batch", "-bail", "-noheader", "-list"]
            .map(str::to_string)
            .to_vec();
        args.push(self.file.to_string_lossy().into_owned());
        args
    }

    /// A client reading SQL from its standard input, on this database: for
    /// tests that cut a session off in the middle of a transaction.
    pub fn stdin_session(&self) -> Command {
        let mut command = Command::new(&self.duckdb);
        command.args(self.args());
        command
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// Runs `sql` with `duckdb FILE -c`. Statements run one by one and the
    /// first error stops the rest, but each commits on its own: only
    /// `begin; ... commit;` makes the string all or nothing.
    pub fn run(&self, sql: &str) -> Result<String, String> {
        outcome(
            Command::new(&self.duckdb)
                .args(self.args())
                .arg("-c")
                .arg(sql)
                .output(),
            &self.duckdb,
        )
    }

    /// Runs `sql` as a script file (`duckdb FILE -f`), as `run` does.
    pub fn run_file(&self, sql: &str) -> Result<String, String> {
        let script = self.dir.path().join(format!("{}.sql", unique_name()));
        std::fs::write(&script, sql).unwrap();
        let result = outcome(
            Command::new(&self.duckdb)
                .args(self.args())
                .arg("-f")
                .arg(&script)
                .output(),
            &self.duckdb,
        );
        let _ = std::fs::remove_file(script);
        result
    }

    /// A shell command that runs the SQL appended to it on this database,
    /// ending in `-c`, like `Pg::psql_command`.
    pub fn sql_command(&self) -> String {
        let mut words = vec![shell_quote(&self.duckdb.to_string_lossy())];
        words.extend(self.args().iter().map(|a| shell_quote(a)));
        words.push("-c".to_string());
        words.join(" ")
    }
}

/// The `dbt` executable (dbt-core with dbt-duckdb) named by
/// `RIPPLE_TEST_DBT`. Run it with `DBT_SEND_ANONYMOUS_USAGE_STATS=false`
/// and an explicit `--profiles-dir`.
pub fn dbt() -> Option<PathBuf> {
    var("RIPPLE_TEST_DBT").map(PathBuf::from)
}

/// The Python of the venv that has Airflow, named by
/// `RIPPLE_TEST_AIRFLOW_PYTHON`. Give it an `AIRFLOW_HOME` of the test's:
/// importing airflow writes an `airflow.cfg` there (default `~/airflow`).
pub fn airflow_python() -> Option<PathBuf> {
    var("RIPPLE_TEST_AIRFLOW_PYTHON").map(PathBuf::from)
}

/// The Python of the venv that has Airflow 2, named by
/// `RIPPLE_TEST_AIRFLOW2_PYTHON` (same care with `AIRFLOW_HOME`).
pub fn airflow2_python() -> Option<PathBuf> {
    var("RIPPLE_TEST_AIRFLOW2_PYTHON").map(PathBuf::from)
}

/// Headless Chromium driven by playwright-core, named by
/// `RIPPLE_TEST_CHROMIUM`, `RIPPLE_TEST_NODE` and `RIPPLE_TEST_PLAYWRIGHT`.
pub struct Browser {
    /// The chromium binary.
    pub chromium: PathBuf,
    /// node, which runs `tests/browser/check.mjs`.
    pub node: PathBuf,
    /// The playwright-core package folder.
    pub playwright: PathBuf,
}

/// The browser for the HTML report tests, or `None` when not set up.
pub fn browser() -> Option<Browser> {
    Some(Browser {
        chromium: PathBuf::from(var("RIPPLE_TEST_CHROMIUM")?),
        node: PathBuf::from(var("RIPPLE_TEST_NODE")?),
        playwright: PathBuf::from(var("RIPPLE_TEST_PLAYWRIGHT")?),
    })
}

impl Browser {
    /// Loads `report` and returns what `tests/browser/check.mjs` saw, as
    /// JSON, its full-page screenshot written to `screenshot`.
    pub fn check(&self, report: &Path, screenshot: &Path) -> serde_json::Value {
        self.check_with(report, screenshot, true)
    }

    /// [`Browser::check`], the screenshot of the whole page or of its first
    /// screen only.
    pub fn check_with(
        &self,
        report: &Path,
        screenshot: &Path,
        full_page: bool,
    ) -> serde_json::Value {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check.mjs");
        let output = Command::new(&self.node)
            .arg(&script)
            .arg(report)
            .arg(screenshot)
            .arg(if full_page { "page" } else { "viewport" })
            .env("RIPPLE_TEST_CHROMIUM", &self.chromium)
            .env("RIPPLE_TEST_PLAYWRIGHT", &self.playwright)
            .output();
        let text = outcome(output, &self.node).unwrap_or_else(|e| panic!("browser check: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("browser check printed {text}: {e}"))
    }
}
