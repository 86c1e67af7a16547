//! Which column a dataset's partitions are selected by — what a partial
//! swap deletes and inserts by, and what validations count by.
//!
//! In order: `partition_column` in `ripple.yml`; dbt's `event_time`, then
//! `partition_by.field`; then the SQL of the job writing the dataset: the
//! output column computed from nothing but an upstream's partition column
//! (through casts, `date_trunc` and renames: `cast(ordered_at as date) as
//! order_date`, `date_trunc('week', order_date) as week_start`). Each answer
//! carries its evidence for `--explain`.

use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use crate::graph::LineageGraph;
use crate::sql::{ColumnLineage, KnownColumns, ScriptReading, read_cached};
use crate::time::KeyFormat;

use super::key_expr::kept;

/// A dataset's partition column and why ripple believes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionColumn {
    /// The column, as the dataset names it.
    pub column: String,
    /// Where it comes from (`ripple.yml`, `dbt event_time`, the SQL line).
    pub evidence: String,
    /// How it keeps its key, when the SQL making it says (`None`: as
    /// `partition_format` says, else a date).
    pub format: Option<KeyFormat>,
    /// The upstream column it is a time computed from, when it carries no
    /// upstream's partition column (`cast(created_at as date)` over a table
    /// partitioned by its load time).
    pub derived_from: Option<crate::sql::ColumnRef>,
}

/// The output of the job writing a dataset, read from its SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutput {
    /// The file of the job.
    pub file: String,
    /// 1-based line of the statement producing the rows.
    pub line: u64,
    /// Column lineage of that statement.
    pub lineage: ColumnLineage,
}

/// The column lineage of the statement that produces `n`'s rows: the one
/// writing its relation, else (a dbt model) the last bare query.
pub fn job_output(g: &LineageGraph, n: NodeIndex) -> Option<JobOutput> {
    job_output_known(g, n, &KnownColumns::default())
}

/// [`job_output`], with the columns of tables the script does not create
/// itself (the dataset's own, from its table facts): an insert without a
/// column list then names its values after the table's columns.
pub fn job_output_known(g: &LineageGraph, n: NodeIndex, known: &KnownColumns) -> Option<JobOutput> {
    let d = &g.graph[n];
    let job = g.writer(&d.id)?;
    let sql = job.sql.as_deref()?;
    let script = read_cached(
        &g.cache,
        sql,
        g.config.dialect,
        known,
        ScriptReading::WithColumns,
    );
    let relation = d.relation.to_lowercase();
    let mut statements = script.statements;
    let writing = statements.iter().rposition(|s| {
        s.columns.is_some()
            && s.kind.makes_whole_rows()
            && s.targets.iter().any(|t| t.to_lowercase() == relation)
    });
    let bare = || {
        statements
            .iter()
            .rposition(|s| s.columns.is_some() && s.targets.is_empty())
    };
    let s = statements.swap_remove(writing.or_else(bare)?);
    Some(JobOutput {
        file: job.file.clone(),
        line: s.line,
        lineage: s.columns?,
    })
}

/// The partition column `ripple.yml` or dbt's config names for `n`, if
/// any: when there is one, the job's SQL is not read for it.
pub fn configured(g: &LineageGraph, n: NodeIndex) -> Option<PartitionColumn> {
    let d = &g.graph[n];
    if let Some(c) = d
        .settings(&g.config)
        .and_then(|c| c.partition_column.clone())
    {
        return Some(PartitionColumn {
            column: c,
            evidence: "ripple.yml".to_string(),
            format: None,
            derived_from: None,
        });
    }
    let dbt = |key: &str, v: Option<&serde_json::Value>| {
        v.and_then(|v| v.as_str()).map(|c| PartitionColumn {
            column: c.to_string(),
            evidence: format!("dbt `{key}`"),
            format: None,
            derived_from: None,
        })
    };
    dbt("event_time", d.config.get("event_time")).or_else(|| {
        dbt(
            "partition_by.field",
            d.config.get("partition_by").and_then(|p| p.get("field")),
        )
    })
}

/// Partition columns, computed once per dataset.
#[derive(Debug, Default)]
pub struct PartitionColumns<'a> {
    known: HashMap<NodeIndex, Option<PartitionColumn>>,
    /// Job outputs the caller read already (a dataset missing here is read
    /// when asked for).
    outputs: Option<&'a HashMap<NodeIndex, Option<JobOutput>>>,
}

impl<'a> PartitionColumns<'a> {
    /// Partition columns that take each job's output from `outputs` when it
    /// is there: a caller that needs the outputs too reads each SQL once.
    pub fn with_outputs(outputs: &'a HashMap<NodeIndex, Option<JobOutput>>) -> Self {
        PartitionColumns {
            known: HashMap::new(),
            outputs: Some(outputs),
        }
    }

    /// The partition column of `n`, if ripple can tell.
    pub fn of(&mut self, g: &LineageGraph, n: NodeIndex) -> Option<PartitionColumn> {
        if let Some(known) = self.known.get(&n) {
            return known.clone();
        }
        // A cycle reaching `n` again finds nothing rather than recursing.
        self.known.insert(n, None);
        let found = self.find(g, n);
        self.known.insert(n, found.clone());
        found
    }

    fn find(&mut self, g: &LineageGraph, n: NodeIndex) -> Option<PartitionColumn> {
        if let Some(p) = configured(g, n) {
            return Some(p);
        }
        let outputs = self.outputs;
        let read;
        let out = match outputs.and_then(|o| o.get(&n)) {
            Some(known) => known.as_ref()?,
            None => {
                read = job_output(g, n)?;
                &read
            }
        };
        // Values inserted by position into a table of unknown columns: an
        // expression's text is never a column's name. Plain names (columns,
        // aliases) are taken as the table's, which the plan then checks on
        // the engine before it runs (docs/plan.md).
        if out.lineage.positional && !out.lineage.columns.iter().all(|c| plain_name(&c.name)) {
            return None;
        }
        let ups: Vec<NodeIndex> = g
            .graph
            .neighbors_directed(n, Direction::Incoming)
            .filter(|&u| u != n)
            .collect();
        // Those with a partition column, to tell which a name a search path
        // left open (`daily_rev`: `sales.` or `public.`) stands for.
        let keyed: Vec<(NodeIndex, PartitionColumn)> = ups
            .iter()
            .filter_map(|&u| self.of(g, u).map(|pc| (u, pc)))
            .collect();
        let upstreams: Vec<String> = keyed
            .iter()
            .map(|&(u, _)| g.graph[u].relation.to_lowercase())
            .collect();
        for (up, pc) in keyed {
            let relation = g.graph[up].relation.to_lowercase();
            let input = pc
                .format
                .or_else(|| {
                    g.graph[up]
                        .settings(&g.config)
                        .and_then(|c| c.partition_format)
                })
                .unwrap_or_default();
            let candidates: Vec<_> = out
                .lineage
                .columns
                .iter()
                .filter_map(|c| {
                    let s = single_source(c)?;
                    if !names(&s.relation, &relation, &upstreams)
                        || !same_column(&s.column, &pc.column)
                    {
                        return None;
                    }
                    let source = format!("{}.{}", s.relation, s.column);
                    kept(&c.fingerprint, &source, input, g.config.dialect).map(|k| (c, k))
                })
                .collect();
            // The column keeping the upstream's name first: `select order_date, ...`.
            let carried = candidates
                .iter()
                .find(|(c, _)| same_column(&c.name, &pc.column))
                .or(candidates.first());
            if let Some((c, k)) = carried {
                let how = match k.format {
                    f if f == input => String::new(),
                    f => format!(" as {}", f.name()),
                };
                return Some(PartitionColumn {
                    column: c.name.clone(),
                    evidence: format!(
                        "SQL: `{}` carries `{}.{}`{how} ({}:{})",
                        c.name, g.graph[up].name, pc.column, out.file, out.line
                    ),
                    format: (k.format != KeyFormat::Date).then_some(k.format),
                    derived_from: None,
                });
            }
        }
        // An upstream without a known partition column (a source): the
        // output column that turns one of its columns into a date or a
        // truncated time is the partition column.
        let relations: Vec<String> = g
            .graph
            .neighbors_directed(n, Direction::Incoming)
            .map(|u| g.graph[u].relation.to_lowercase())
            .collect();
        let (derived, k) = out.lineage.columns.iter().find_map(|c| {
            let s = single_source(c)?;
            if !relations.iter().any(|r| names(&s.relation, r, &relations)) {
                return None;
            }
            let source = format!("{}.{}", s.relation, s.column);
            kept(&c.fingerprint, &source, KeyFormat::Date, g.config.dialect)
                .filter(|k| k.timeish)
                .map(|k| (c, k))
        })?;
        let source = derived.sources.iter().next()?;
        let how = match k.format {
            KeyFormat::Date => String::new(),
            f => format!(", kept as {}", f.name()),
        };
        Some(PartitionColumn {
            column: derived.name.clone(),
            evidence: format!(
                "SQL: `{}` is a time computed from `{}.{}`{how} ({}:{})",
                derived.name, source.relation, source.column, out.file, out.line
            ),
            format: (k.format != KeyFormat::Date).then_some(k.format),
            derived_from: Some(source.clone()),
        })
    }
}

/// Whether the relation a column's lineage names (`daily_rev`, as the SQL
/// wrote it under a `search_path`) is the upstream `relation` (lower case,
/// as the graph resolved it): the same name, or its last part when no
/// other of `upstreams` shares that last part.
fn names(written: &str, relation: &str, upstreams: &[String]) -> bool {
    let written = written.to_lowercase();
    if written == relation {
        return true;
    }
    let tail = format!(".{written}");
    relation.ends_with(&tail)
        && upstreams
            .iter()
            .filter(|u| **u == written || u.ends_with(&tail))
            .count()
            == 1
}

/// Whether two spellings name one column: `"Order Day"` as SQL prints it
/// and `Order Day` as ripple.yml may write it.
fn same_column(a: &str, b: &str) -> bool {
    use crate::sql::rewrite::unquote_ident;
    unquote_ident(a).eq_ignore_ascii_case(&unquote_ident(b))
}

/// The one upstream column an output column reads, if it reads one.
fn single_source(c: &crate::sql::OutputColumn) -> Option<&crate::sql::ColumnRef> {
    let mut s = c.sources.iter();
    match (s.next(), s.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Whether `name` is an identifier (a column or an alias), not the text of
/// an expression.
pub fn plain_name(name: &str) -> bool {
    (name.len() > 1 && name.starts_with('"') && name.ends_with('"'))
        || (!name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit()))
}
