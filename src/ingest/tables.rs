//! What production's tables are, for plans: the files `tables:` in
//! ripple.yml (and `ripple plan --tables`) name. A `.jsonl` file holds the
//! lines `ripple tables`' query printed on the warehouse (its catalog, the
//! authority); a `.sql` file or a folder of them holds DDL (`create table`,
//! `alter table`, `create unique index`, `create materialized view`,
//! `create trigger`). docs/plan.md, "What ripple knows of a table".

use std::path::{Path, PathBuf};

use super::files;
use crate::config::CONFIG_FILE;
use crate::sql::SqlDialect;
use crate::sql::tables::{Tables, facts_from_catalog, facts_from_ddl};

/// Why the table facts could not be read: a file named and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TablesError(pub String);

/// The facts in `config_paths` (from ripple.yml: confined to the project
/// unless `allow_outside`) and `cli_paths` (the user's own choice), read
/// relative to `root`.
pub fn load_tables(
    root: &Path,
    config_paths: &[PathBuf],
    cli_paths: &[PathBuf],
    allow_outside: bool,
    dialect: SqlDialect,
) -> Result<Tables, TablesError> {
    let mut refused = Vec::new();
    let mut paths = files::confine(
        root,
        root,
        config_paths.iter().map(PathBuf::as_path),
        allow_outside,
        (CONFIG_FILE, "tables"),
        &mut refused,
    );
    if let Some(d) = refused.first() {
        return Err(TablesError(d.to_string()));
    }
    paths.extend(cli_paths.iter().cloned());
    let mut tables = Tables::default();
    for path in paths {
        let files: Vec<PathBuf> = if path.is_dir() {
            let found = files::walk(root, &path, &[".sql", ".jsonl"]);
            if let Some(p) = found.problems.first() {
                return Err(TablesError(p.to_string()));
            }
            found.files
        } else {
            vec![path]
        };
        for file in files {
            let shown = files::relative(root, &file);
            let text = crate::input::read_text(&file).map_err(|e| {
                TablesError(format!(
                    "{shown}: {e}; `tables:` names files of table facts (`ripple tables` writes one)"
                ))
            })?;
            if file.extension().is_some_and(|e| e == "sql") {
                tables.add_ddl(facts_from_ddl(&text, dialect, &shown));
            } else {
                let facts = facts_from_catalog(&text, dialect, &shown)
                    .map_err(|e| TablesError(format!("{shown}:{e}")))?;
                tables.add_catalog(facts);
            }
        }
    }
    Ok(tables)
}
