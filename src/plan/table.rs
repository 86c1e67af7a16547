//! What a plan does with a production table it knows the facts of
//! (docs/plan.md, "What ripple knows of a table"): copies that keep its
//! keys and skip its generated columns, replaces that name every column
//! and keep the values its identity columns drew, keyed swaps for a table
//! foreign keys reference, the check that production is still the table
//! the plan was written for, and the fingerprint that tells whether a
//! production run wrote it between the setup and the swap.
//!
//! PostgreSQL and DuckDB only: other engines keep [`super::sql`]'s SQL.

use crate::sql::SqlDialect;
use crate::sql::tables::{
    Drawn, RelationKind, Signature, TableFacts, Tables, assumed_signature, fold, literal, signature,
};

use super::sql::{dollar_tag, partition_key, quote_ident, quote_relation};
use crate::time::Grain;

/// Where the facts of a table came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The engine's catalog (`tables:` lines `ripple tables` printed).
    Catalog,
    /// `create table` and other DDL in the project.
    Ddl,
    /// Nothing: a plain table is assumed, and checked at run time.
    Assumed,
}

/// A restated table as the plan relies on it.
#[derive(Debug, Clone)]
pub struct Known {
    /// Production, as ripple prints relations.
    pub relation: String,
    /// Its facts, when known.
    pub facts: Option<TableFacts>,
    /// Where they came from.
    pub source: Source,
    /// What the run-time check asserts.
    pub signature: Signature,
    /// Columns drawing from a sequence that the job does not give: their
    /// values are production's, never the job's.
    pub drawn: Vec<(String, Drawn)>,
    /// The key rows are matched by when the table is replaced by key (it
    /// draws values the job does not give, or foreign keys reference it).
    pub key: Option<Vec<String>>,
    /// Foreign keys referencing it: (referencing relation, its columns,
    /// the referenced columns, whether a delete would change its rows).
    pub referenced_by: Vec<(String, Vec<String>, Vec<String>)>,
    /// Materialized views reading it, as the facts name them.
    pub matviews: Vec<String>,
    /// The columns the job's insert gives (empty: not known): their
    /// defaults never run.
    pub given: Vec<String>,
}

/// Whether ripple writes its own table-aware SQL for `dialect`.
pub fn supported(dialect: SqlDialect) -> bool {
    matches!(dialect, SqlDialect::Postgres | SqlDialect::DuckDb)
}

/// Why a table's plan cannot be made safe: the fact missing and what to do.
pub type Refusal = String;

impl Known {
    /// What the plan knows of `relation`, written by a job giving `given`
    /// columns (`None`: unknown), with `unique_key` from ripple.yml.
    pub fn of(
        tables: &Tables,
        relation: &str,
        dialect: SqlDialect,
        given: Option<&[String]>,
        unique_key: &[String],
    ) -> Result<Known, Refusal> {
        let facts = tables
            .get(relation, dialect)
            .filter(|f| f.kind == RelationKind::Table)
            .cloned();
        let Some(f) = facts else {
            return Ok(Known {
                relation: relation.to_string(),
                facts: None,
                source: Source::Assumed,
                signature: assumed_signature(dialect),
                drawn: Vec::new(),
                key: None,
                referenced_by: Vec::new(),
                matviews: Vec::new(),
                given: given.map(<[String]>::to_vec).unwrap_or_default(),
            });
        };
        let source = if tables.from_catalog(&f.relation) {
            Source::Catalog
        } else {
            Source::Ddl
        };
        let all = tables.all();
        let sig = signature(&f, &all, dialect);
        let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
        let gives = |c: &str| given.is_some_and(|g| g.iter().any(|x| same(x, c)));
        let drawn: Vec<(String, Drawn)> = f
            .columns
            .iter()
            .filter_map(|c| Some((c.name.clone(), c.drawn.clone()?)))
            .filter(|(c, _)| !gives(c))
            .collect();
        // A default the job leaves to the table runs in each task's work
        // table, before the swap: one that writes (or draws production's
        // sequence) would touch production early.
        for c in &f.columns {
            let runs = match (&c.generated, &c.default) {
                (Some(g), _) => Some(g),
                (None, Some(d)) if c.drawn.is_none() && !gives(&c.name) => Some(d),
                _ => None,
            };
            if let Some(call) = runs.and_then(|e| crate::sql::tables::writing_call(e, dialect)) {
                return Err(format!(
                    "`{relation}`.`{}` is computed by `{}`, which calls `{call}`: a function that may write or draw from production's sequences, and each task would run it in its work table before the swap; give the column in the job's insert, or make its default a plain value (facts from {})",
                    c.name,
                    runs.map(String::as_str).unwrap_or_default(),
                    f.origin
                ));
            }
        }
        let mut referenced_by = Vec::new();
        for other in &all {
            for fk in &other.foreign_keys {
                if fk.references == f.relation {
                    referenced_by.push((
                        other.relation.clone(),
                        fk.columns.clone(),
                        fk.referenced_columns.clone(),
                    ));
                }
            }
        }
        let matviews = all
            .iter()
            .filter(|o| o.kind == RelationKind::MaterializedView && o.reads.contains(&f.relation))
            .map(|o| o.relation.clone())
            .collect();
        let keyed = !drawn.is_empty() || !referenced_by.is_empty();
        let key = if keyed {
            let is_drawn = |c: &str| drawn.iter().any(|(d, _)| same(d, c));
            let usable = |cols: &[String]| {
                !cols.is_empty()
                    && cols
                        .iter()
                        .all(|c| !is_drawn(c) && (given.is_none() || gives(c)))
            };
            let mut keys: Vec<&crate::sql::tables::KeyFacts> = f.keys.iter().collect();
            keys.sort_by_key(|k| !k.primary);
            let found = keys
                .iter()
                .map(|k| k.columns.clone())
                .find(|k| usable(k))
                .or_else(|| {
                    let k: Vec<String> = unique_key
                        .iter()
                        .map(|c| {
                            f.columns
                                .iter()
                                .find(|x| same(&x.name, c))
                                .map_or(c.clone(), |x| x.name.clone())
                        })
                        .collect();
                    usable(&k).then_some(k)
                });
            let Some(k) = found else {
                let why = if drawn.is_empty() {
                    "foreign keys reference it".to_string()
                } else {
                    format!(
                        "its column{} {} draw{} values the job does not give",
                        if drawn.len() == 1 { "" } else { "s" },
                        drawn
                            .iter()
                            .map(|(c, _)| format!("`{c}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if drawn.len() == 1 { "s" } else { "" }
                    )
                };
                return Err(format!(
                    "`{relation}` must be replaced row by row, matched by a key ({why}), and it has no primary or unique key of columns the job gives; declare one on the table, or set `unique_key` for it in ripple.yml (facts from {})",
                    f.origin
                ));
            };
            // A referenced column the update would change fires the key's
            // update action (or fails): refused before anything runs.
            for (by, _, cols) in &referenced_by {
                if let Some(c) = cols
                    .iter()
                    .find(|c| !k.iter().any(|x| same(x, c)) && !is_drawn(c))
                {
                    return Err(format!(
                        "`{by}` references `{relation}`({c}), a column the swap would update in place (the rows are matched by ({})); reference the key instead, or leave `{relation}` out",
                        k.join(", ")
                    ));
                }
            }
            Some(k)
        } else {
            None
        };
        Ok(Known {
            relation: relation.to_string(),
            facts: Some(f),
            source,
            signature: sig,
            drawn,
            key,
            referenced_by,
            matviews,
            given: given.map(<[String]>::to_vec).unwrap_or_default(),
        })
    }

    /// The columns an insert names: every one but generated ones (`None`:
    /// not known).
    pub fn insertable(&self) -> Option<Vec<String>> {
        self.facts.as_ref().map(TableFacts::insertable)
    }

    /// Whether an insert giving identity columns must say `overriding
    /// system value`.
    fn overriding(&self) -> bool {
        self.facts.as_ref().is_some_and(|f| {
            f.columns
                .iter()
                .any(|c| matches!(c.drawn, Some(Drawn::Always)))
        })
    }

    /// A trigger that changes rows as they are written (`before insert`
    /// or `before update`, for each row): its name and definition.
    pub fn changing_trigger(&self) -> Option<String> {
        self.facts.as_ref()?.triggers.iter().find_map(|t| {
            let d = t.definition.to_ascii_lowercase();
            let before = d.contains(" before ") && (d.contains(" insert") || d.contains(" update"));
            (before && d.contains("for each row"))
                .then(|| format!("`{}` ({})", t.name, t.definition))
        })
    }

    /// Triggers on production, with their definitions.
    pub fn triggers(&self) -> Vec<String> {
        self.facts
            .as_ref()
            .map(|f| {
                f.triggers
                    .iter()
                    .map(|t| format!("{}: {}", t.name, t.definition))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn cols(dialect: SqlDialect, columns: &[String]) -> String {
    columns
        .iter()
        .map(|c| quote_ident(dialect, c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A statement that fails with `message` (an SQL text expression) when the
/// query `rows` (one text column `m`) returns a row.
fn fail_if_any(dialect: SqlDialect, rows: &str) -> String {
    match dialect {
        SqlDialect::Postgres => {
            let body = format!(
                "declare m text; begin select x.m into m from ({rows}) x limit 1; if found then raise exception '%', m; end if; end"
            );
            let tag = dollar_tag(&body);
            format!("do {tag} {body} {tag}")
        }
        _ => format!("select error(x.m) from ({rows}) x limit 1"),
    }
}

/// The statement that stops the run unless the session cuts instants into
/// the days of `zone` over `[from, to)` (its offset, sampled daily: names
/// differ, `UTC` and `Etc/UTC`); `what` says whose days, for the message.
/// `None` where ripple has no such query (engines other than PostgreSQL
/// and DuckDB).
pub fn session_zone_check(
    dialect: SqlDialect,
    zone: &str,
    (from, to): (crate::time::Hour, crate::time::Hour),
    what: &str,
) -> Option<String> {
    if !matches!(dialect, SqlDialect::Postgres | SqlDialect::DuckDb) {
        return None;
    }
    let at = |h: crate::time::Hour| {
        crate::time::zoned_literal(h, "UTC").map(|l| format!("timestamptz {l}"))
    };
    // Daily: two zones that cut different days differ on most of them.
    let (first, last) = (at(from)?, at(to.max(from))?);
    let message = format!(
        "'ripple: the session''s TimeZone is ' || current_setting('TimeZone') || ', but {}; nothing was changed. Declare `time_zone` for it in ripple.yml (the zone the session runs in) and plan again, or set the database''s TimeZone to {}'",
        what.replace('\'', "''"),
        zone.replace('\'', "''")
    );
    Some(fail_if_any(
        dialect,
        &format!(
            "select {message} as m from generate_series({first}, {last}, interval '1 day') as t(i) where cast(i as timestamp) <> (i at time zone {})",
            literal(zone)
        ),
    ))
}

/// The statement that stops the run unless every table of `tables` is, in
/// production, the table the plan was written for (its signature); `when`:
/// "before the setup" or "before the swap". One statement for them all: the
/// tables' expectations are rows of a `values` list the catalog query is
/// joined to, so the query's text is written once.
pub fn check(dialect: SqlDialect, tables: &[&Known], when: &str) -> Option<String> {
    if tables.is_empty() {
        return None;
    }
    let null = "cast(null as varchar)";
    let rows: Vec<String> = tables
        .iter()
        .map(|k| {
            let (sch, tbl) = crate::sql::tables::schema_and_table(&k.relation);
            let expected: Vec<String> = k
                .signature
                .values()
                .into_iter()
                .map(|v| v.as_deref().map_or(null.to_string(), literal))
                .collect();
            let what = match k.source {
                Source::Catalog => "the catalog lines in `tables:`",
                Source::Ddl => "the project's DDL",
                Source::Assumed => "nothing (a plain table was assumed)",
            };
            // The name's parts as the engine keeps them: PostgreSQL's
            // regclass text is quoted in SQL (`quote_ident`), so no name is
            // ever spelt quoted inside a string.
            let raw = crate::sql::rewrite::relation_parts(&k.relation);
            let (psch, ptbl) = match raw.as_slice() {
                [.., s, t] => (literal(s), literal(t)),
                [t] => (null.to_string(), literal(t)),
                [] => (null.to_string(), literal("")),
            };
            format!(
                "({}, {psch}, {ptbl}, {sch}, {tbl}, {}, {}, {})",
                literal(&k.relation),
                literal(what),
                expected.join(", "),
                crate::sql::tables::given_list(dialect, &k.given)
            )
        })
        .collect();
    let rel = "case when e.psch is null then quote_ident(e.ptbl) else quote_ident(e.psch) || '.' || quote_ident(e.ptbl) end";
    let query = crate::sql::tables::signature_query_of(dialect, rel, "e.sch", "e.tbl", "e.given")?;
    let names = crate::sql::tables::SIGNATURE_PARTS;
    let found: Vec<String> = names
        .iter()
        .map(|name| match *name {
            // Not a difference from the facts but a hazard they cannot show.
            "calls" => format!(
                "case when e.{name} is not null and s.{name} is distinct from e.{name} then 'the default or check of ' || s.{name} || ' calls a function that may write (declared volatile, or a macro), which the tasks would run in their work tables before the swap; give those columns in the job''s insert, or make the default a plain value' end"
            ),
            _ => format!(
                "case when e.{name} is not null and s.{name} is distinct from e.{name} then '{name}: found ' || coalesce(nullif(s.{name}, ''), '(none)') || ', the plan expects ' || coalesce(nullif(e.{name}, ''), '(none)') end"
            ),
        })
        .collect();
    let differs = names
        .iter()
        .map(|name| format!("(e.{name} is not null and s.{name} is distinct from e.{name})"))
        .chain(std::iter::once("s.columns is null".to_string()))
        .collect::<Vec<_>>()
        .join(" or ");
    let message = format!(
        "case when s.columns is null then 'ripple: production table ' || e.rel || ' does not exist ({when}); nothing was changed' else 'ripple: ' || e.rel || ' is not the table the plan was written for ({when}; the plan knew it from ' || e.src || '): ' || concat_ws('; ', {}) || '. Nothing was changed; describe the table to the plan (ripple tables prints the catalog query; see docs/plan.md) and plan again' end",
        found.join(", ")
    );
    Some(fail_if_any(
        dialect,
        &format!(
            "select {message} as m from (values {}) as e(rel, psch, ptbl, sch, tbl, src, {}, given) cross join lateral ({query}) as s where {differs}",
            rows.join(", "),
            names.join(", ")
        ),
    ))
}

/// Statements that make `copy` a copy of `k`'s production: `empty`, or
/// with every row; `work`: a task's work table (columns the table draws
/// and the job does not give are left empty, and keys on them dropped).
/// `Err`: the copy could not be written safely.
pub fn copy(
    dialect: SqlDialect,
    k: &Known,
    copy: &str,
    empty: bool,
    work: bool,
) -> Result<Vec<String>, Refusal> {
    let c = quote_relation(dialect, copy);
    let p = quote_relation(dialect, &k.relation);
    // Facts with no columns (a `partition of` DDL, whose columns are its
    // parent's): copied as the engine has it.
    let Some(f) = k.facts.as_ref().filter(|f| !f.columns.is_empty()) else {
        return Ok(super::sql::create_copy(dialect, copy, &k.relation, empty));
    };
    let not_given = |name: &str| work && k.drawn.iter().any(|(d, _)| d == name);
    let keys: Vec<String> = f
        .keys
        .iter()
        .filter(|key| !key.columns.iter().any(|c| not_given(c)))
        .map(|key| {
            format!(
                "{} ({})",
                if key.primary { "primary key" } else { "unique" },
                cols(dialect, &key.columns)
            )
        })
        .collect();
    let mut out = vec![format!("drop table if exists {c}")];
    match dialect {
        SqlDialect::Postgres => {
            // Constraints, defaults, identity and generated columns as
            // production has them; indexes (and so keys) are added from the
            // facts, under the copy's own names.
            out.push(format!(
                "create table {c} (like {p} including all excluding indexes)"
            ));
            for col in &f.columns {
                if let Some(Drawn::Nextval(_)) = col.drawn {
                    // Drawing from production's sequence would move it.
                    out.push(format!(
                        "alter table {c} alter column {} drop default",
                        quote_ident(dialect, &col.name)
                    ));
                }
                if not_given(&col.name) {
                    if matches!(col.drawn, Some(Drawn::Always | Drawn::ByDefault)) {
                        out.push(format!(
                            "alter table {c} alter column {} drop identity if exists",
                            quote_ident(dialect, &col.name)
                        ));
                    }
                    out.push(format!(
                        "alter table {c} alter column {} drop not null",
                        quote_ident(dialect, &col.name)
                    ));
                }
            }
            for key in &keys {
                out.push(format!("alter table {c} add {key}"));
            }
            // A job's `on conflict (...) where ...` needs the partial unique
            // index production has.
            for key in &f.partial_keys {
                if key.columns.iter().any(|c| not_given(c)) {
                    continue;
                }
                let index = format!(
                    "create unique index on {c} ({}) where {}",
                    cols(dialect, &key.columns),
                    key.predicate
                );
                only_one(&index, dialect, &f.origin, |s| {
                    matches!(s, sqlparser::ast::Statement::CreateIndex(_))
                })?;
                out.push(index);
            }
        }
        _ => {
            let mut defs = Vec::new();
            for col in &f.columns {
                let Some(ty) = &col.data_type else {
                    return Err(format!(
                        "the type of `{}`.`{}` is not known (facts from {}); give the table's catalog lines (ripple tables) so its copy can be made",
                        k.relation, col.name, f.origin
                    ));
                };
                let mut d = format!("{} {ty}", quote_ident(dialect, col.as_spelled()));
                if let Some(g) = &col.generated {
                    d.push_str(&format!(" generated always as ({g})"));
                } else {
                    if let Some(v) = col.default.as_ref().filter(|_| col.drawn.is_none()) {
                        d.push_str(&format!(" default {v}"));
                    }
                    if col.not_null && !not_given(&col.name) {
                        d.push_str(" not null");
                    }
                }
                defs.push(d);
            }
            defs.extend(keys);
            let create = format!("create table {c} ({})", defs.join(", "));
            only_one(&create, dialect, &f.origin, |s| {
                matches!(s, sqlparser::ast::Statement::CreateTable(_))
            })?;
            out.push(create);
        }
    }
    if !empty {
        out.push(insert(dialect, k, copy, &k.relation, None, &f.insertable()));
    }
    Ok(out)
}

/// Refuses `sql` unless it is exactly one statement of the kind `is`
/// accepts: the copy's statements are built from facts (types, defaults,
/// expressions, index predicates) read from files, which must not smuggle
/// in another statement.
fn only_one(
    sql: &str,
    dialect: SqlDialect,
    origin: &str,
    is: impl Fn(&sqlparser::ast::Statement) -> bool,
) -> Result<(), Refusal> {
    let one = crate::sql::with_statements(sql, dialect, |statements| {
        statements.len() == 1 && is(&statements[0])
    });
    if one == Ok(true) {
        Ok(())
    } else {
        Err(format!(
            "the table facts from {origin} do not make one valid statement of the copy ({sql}); correct them or give the catalog lines again"
        ))
    }
}

/// `insert into target (columns) [overriding system value] select columns
/// from source [where filter]`.
fn insert(
    dialect: SqlDialect,
    k: &Known,
    target: &str,
    source: &str,
    filter: Option<&str>,
    columns: &[String],
) -> String {
    let list = cols(dialect, columns);
    format!(
        "insert into {} ({list}){} select {list} from {}{}",
        quote_relation(dialect, target),
        if k.overriding() && dialect == SqlDialect::Postgres {
            " overriding system value"
        } else {
            ""
        },
        quote_relation(dialect, source),
        filter.map(|f| format!(" where {f}")).unwrap_or_default()
    )
}

/// Which way rows are replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Into {
    /// A task's work table into the dataset's shadow: new rows draw their
    /// values after the shadow's largest.
    Shadow,
    /// The shadow into production: drawn values come with the rows.
    Production,
}

/// The statements that replace `filter`'s rows (all: `None`) of `target`
/// by `source`'s; the second list deletes rows that are gone, run last
/// (after every later swap) where foreign keys reference the table.
pub fn replace(
    dialect: SqlDialect,
    k: &Known,
    target: &str,
    source: &str,
    filter: Option<&str>,
    into: Into,
) -> Option<(Vec<String>, Vec<String>)> {
    let columns = k.insertable()?;
    let t = quote_relation(dialect, target);
    let s = quote_relation(dialect, source);
    let f = filter.map(|f| format!(" where {f}")).unwrap_or_default();
    let Some(key) = &k.key else {
        // A row whose partition column moved into the restated partitions
        // (a session's first day, say) is in them now, and outside them
        // in the table: the table's primary key finds it.
        let primary = k
            .facts
            .as_ref()
            .and_then(|f| f.keys.iter().find(|x| x.primary))
            .map(|x| x.columns.clone());
        let delete = match (primary, filter) {
            (Some(pk), Some(f)) => format!(
                "delete from {t} as t where ({f}) or exists (select 1 from {s} as s where ({f}) and {})",
                pk.iter()
                    .map(|c| format!("s.{q} = t.{q}", q = quote_ident(dialect, c)))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            _ => format!("delete from {t}{f}"),
        };
        return Some((
            vec![delete, insert(dialect, k, target, source, filter, &columns)],
            Vec::new(),
        ));
    };
    let facts = k.facts.as_ref()?;
    let nullable = |c: &str| facts.column(c).is_none_or(|x| !x.not_null);
    let matches = |a: &str, b: &str| {
        key.iter()
            .map(|c| {
                let q = quote_ident(dialect, c);
                if nullable(c) {
                    format!("{a}.{q} is not distinct from {b}.{q}")
                } else {
                    format!("{a}.{q} = {b}.{q}")
                }
            })
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let is_drawn = |c: &str| k.drawn.iter().any(|(d, _)| d == c);
    let updated: Vec<&String> = columns
        .iter()
        .filter(|c| !key.contains(c) && !is_drawn(c))
        .collect();
    let within = filter.map(|f| format!(" and ({f})")).unwrap_or_default();
    let mut now = Vec::new();
    if !updated.is_empty() {
        now.push(format!(
            "update {t} as t set {} from (select * from {s}{f}) as s where {}",
            updated
                .iter()
                .map(|c| format!("{q} = s.{q}", q = quote_ident(dialect, c)))
                .collect::<Vec<_>>()
                .join(", "),
            matches("t", "s")
        ));
    }
    let order = key
        .iter()
        .map(|c| format!("s.{}", quote_ident(dialect, c)))
        .collect::<Vec<_>>()
        .join(", ");
    let values: Vec<String> = columns
        .iter()
        .map(|c| {
            let q = quote_ident(dialect, c);
            match (is_drawn(c), into) {
                (true, Into::Shadow) => format!(
                    "(select coalesce(max({q}), 0) from {t}) + row_number() over (order by {order})"
                ),
                _ => format!("s.{q}"),
            }
        })
        .collect();
    now.push(format!(
        "insert into {t} ({}){} select {} from {s} as s where not exists (select 1 from {t} as t where {}){within}",
        cols(dialect, &columns),
        if k.overriding() && dialect == SqlDialect::Postgres {
            " overriding system value"
        } else {
            ""
        },
        values.join(", "),
        matches("t", "s")
    ));
    let mut gone = Vec::new();
    let vanished = format!(
        "{}not exists (select 1 from {s} as s where {}{within})",
        filter.map(|f| format!("({f}) and ")).unwrap_or_default(),
        matches("t", "s")
    );
    if into == Into::Production {
        // A row still referenced is never deleted: no cascade, no set null.
        for (by, fk_cols, ref_cols) in &k.referenced_by {
            let join = fk_cols
                .iter()
                .zip(ref_cols)
                .map(|(a, b)| {
                    format!(
                        "r.{} = t.{}",
                        quote_ident(dialect, a),
                        quote_ident(dialect, b)
                    )
                })
                .collect::<Vec<_>>()
                .join(" and ");
            gone.push(fail_if_any(
                dialect,
                &format!(
                    "select {} || cast(t.{} as varchar) || {} as m from {t} as t where {vanished} and exists (select 1 from {} as r where {join})",
                    literal(&format!("ripple: a row of `{}` whose {} is ", k.relation, key[0])),
                    quote_ident(dialect, &key[0]),
                    literal(&if dialect == SqlDialect::DuckDb {
                        // DuckDB deletes these rows in a transaction of their
                        // own, after the swap's has committed.
                        format!(" is gone from the backfilled rows but `{by}` still references it; the swap of every table has committed, and this row (with any other gone and still referenced) stays: delete or re-point the rows of `{by}` that reference it, then run the plan again to finish")
                    } else {
                        format!(" is gone from the backfilled rows but `{by}` still references it; nothing was changed: restate `{by}` too, or delete or re-point its rows that reference it, then run the plan again")
                    }),
                    quote_relation(dialect, by)
                ),
            ));
        }
    }
    let delete = format!("delete from {t} as t where {vanished}");
    if k.referenced_by.is_empty() {
        now.push(delete);
    } else {
        gone.push(delete);
    }
    if into == Into::Production {
        gone.extend(bump_sequences(dialect, k));
    }
    Some((now, gone))
}

/// Statements that move production's sequences past every value the swap
/// put in, so the next production insert does not draw one again.
pub fn bump_sequences(dialect: SqlDialect, k: &Known) -> Vec<String> {
    let p = quote_relation(dialect, &k.relation);
    k.drawn
        .iter()
        .filter_map(|(c, d)| {
            let q = quote_ident(dialect, c);
            let max = format!("(select coalesce(max({q}), 0) from {p})");
            match (dialect, d) {
                (SqlDialect::Postgres, Drawn::Nextval(seq)) => Some(format!(
                    "select setval(x.s, x.m) from (select {}::regclass as s, {max} as m) x where x.m > coalesce(pg_sequence_last_value(x.s), 0)",
                    literal(seq)
                )),
                (SqlDialect::Postgres, _) => Some(format!(
                    "select setval(x.s, x.m) from (select pg_get_serial_sequence({}, {})::regclass as s, {max} as m) x where x.m > coalesce(pg_sequence_last_value(x.s), 0)",
                    literal(&p),
                    literal(c)
                )),
                (_, Drawn::Nextval(seq)) => {
                    let name = crate::sql::rewrite::relation_parts(seq)
                        .last()
                        .cloned()
                        .unwrap_or_default();
                    Some(format!(
                        "select count(nextval({})) from (select unnest(range(greatest(0, {max} - coalesce(q.last_value, q.start_value - 1)))) from duckdb_sequences() q where q.database_name = current_database() and q.sequence_name = {}) x",
                        literal(seq),
                        literal(&name)
                    ))
                }
                _ => None,
            }
        })
        .collect()
}

/// The fingerprint table of `shadow`: one row per restated partition of
/// production (its key as text, rows, a hash of them) at the setup.
pub fn fingerprint_table(dialect: SqlDialect, shadow: &str) -> String {
    super::sql::derived_name(dialect, shadow, "__fingerprint")
}

/// The fingerprint query of `relation`'s `filter` rows, by partition.
fn fingerprint_query(
    dialect: SqlDialect,
    relation: &str,
    partition: Option<(&str, Grain, crate::time::KeyFormat, Option<&str>)>,
    filter: Option<&str>,
) -> String {
    let k = match partition {
        Some((column, grain, format, zone)) => {
            format!(
                "cast({} as varchar)",
                partition_key(dialect, column, grain, format, zone)
            )
        }
        None => "''".to_string(),
    };
    // The whole row as text, under an alias no column is likely to have.
    let row = "md5(cast(ripple_row as varchar))";
    format!(
        "select {k} as k, count(*) as n, md5(string_agg({row}, '' order by {row})) as h from {} as ripple_row{} group by 1",
        quote_relation(dialect, relation),
        filter.map(|f| format!(" where {f}")).unwrap_or_default()
    )
}

/// The setup statement recording production's fingerprint.
pub fn record_fingerprint(
    dialect: SqlDialect,
    relation: &str,
    shadow: &str,
    partition: Option<(&str, Grain, crate::time::KeyFormat, Option<&str>)>,
    filter: Option<&str>,
) -> Vec<String> {
    let f = quote_relation(dialect, &fingerprint_table(dialect, shadow));
    vec![
        format!("drop table if exists {f}"),
        format!(
            "create table {f} as {}",
            fingerprint_query(dialect, relation, partition, filter)
        ),
    ]
}

/// The swap statement that stops it unless production's restated rows are
/// those the setup copied.
pub fn check_fingerprint(
    dialect: SqlDialect,
    relation: &str,
    shadow: &str,
    partition: Option<(&str, Grain, crate::time::KeyFormat, Option<&str>)>,
    filter: Option<&str>,
) -> String {
    let f = quote_relation(dialect, &fingerprint_table(dialect, shadow));
    // A table restated whole has one fingerprint, of no partition.
    let place = if partition.is_some() {
        format!(
            "{} || coalesce(a.k, b.k) || ' ",
            literal(&format!(
                "ripple: production `{relation}` changed in partition "
            ))
        )
    } else {
        format!(
            "{} || ' ",
            literal(&format!("ripple: production `{relation}` changed"))
        )
    };
    let now = fingerprint_query(dialect, relation, partition, filter);
    fail_if_any(
        dialect,
        &format!(
            "select {place}after the plan''s setup copied it (a production run wrote it); nothing was changed: run the plan again from its setup' as m from ({now}) a full join {f} b on a.k = b.k where a.n is distinct from b.n or a.h is distinct from b.h"
        ),
    )
}

/// The query a plan's summary runs after the swap: one row of the restated
/// partitions' rows at the setup (its fingerprint), their rows now, and the
/// partitions whose rows changed.
pub fn summary_query(
    dialect: SqlDialect,
    relation: &str,
    shadow: &str,
    partition: Option<(&str, Grain, crate::time::KeyFormat, Option<&str>)>,
    filter: Option<&str>,
) -> String {
    let f = quote_relation(dialect, &fingerprint_table(dialect, shadow));
    let now = fingerprint_query(dialect, relation, partition, filter);
    format!(
        "select coalesce(sum(b.n), 0) as rows_before, coalesce(sum(a.n), 0) as rows_after, coalesce(sum(case when a.n is distinct from b.n or a.h is distinct from b.h then 1 else 0 end), 0) as partitions_changed from ({now}) a full join {f} b on a.k = b.k"
    )
}

/// The lock a swap takes on production before its checks: readers go on,
/// writers wait until the swap commits (PostgreSQL; DuckDB has one writer).
pub fn lock(dialect: SqlDialect, relations: &[&str]) -> Option<String> {
    (dialect == SqlDialect::Postgres && !relations.is_empty()).then(|| {
        format!(
            "lock table {} in share row exclusive mode",
            relations
                .iter()
                .map(|r| quote_relation(dialect, r))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// `begin` for a setup: a snapshot, so the copy and its fingerprint see
/// the same rows.
pub fn begin_snapshot(dialect: SqlDialect) -> &'static str {
    match dialect {
        SqlDialect::Postgres => "begin isolation level repeatable read",
        _ => "begin",
    }
}

/// The swap of a rowless job that makes a materialized view: refreshed
/// in place, after its upstreams' swaps.
pub fn refresh(dialect: SqlDialect, matview: &str) -> String {
    format!(
        "refresh materialized view {}",
        quote_relation(dialect, matview)
    )
}

/// Whether `name` names `relation`'s key constraint: the facts' name, or
/// PostgreSQL's default name for an unnamed one.
pub fn constraint_columns(f: &TableFacts, dialect: SqlDialect) -> Vec<(String, Vec<String>)> {
    let table = crate::sql::rewrite::relation_parts(&f.relation)
        .last()
        .cloned()
        .unwrap_or_default();
    f.keys
        .iter()
        .map(|k| {
            let name = k.name.clone().unwrap_or_else(|| {
                if k.primary {
                    format!("{table}_pkey")
                } else {
                    format!("{table}_{}_key", k.columns.join("_"))
                }
            });
            (fold(dialect, &name), k.columns.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::tables::facts_from_ddl;

    fn known(ddl: &str, relation: &str, given: &[&str]) -> Result<Known, Refusal> {
        let mut t = Tables::default();
        t.add_ddl(facts_from_ddl(ddl, SqlDialect::Postgres, "t.sql"));
        let given: Vec<String> = given.iter().map(|s| s.to_string()).collect();
        Known::of(&t, relation, SqlDialect::Postgres, Some(&given), &[])
    }

    #[test]
    fn a_whole_table_changed_mid_plan_is_said_without_an_empty_partition() {
        // "changed in partition  after the plan's setup": a table restated
        // whole has no partition to name.
        let whole = check_fingerprint(
            SqlDialect::Postgres,
            "mart.dim",
            "mart.dim__backfill",
            None,
            None,
        );
        assert!(
            whole.contains("`mart.dim` changed' || ' after the plan''s setup"),
            "{whole}"
        );
        assert!(!whole.contains("in partition"), "{whole}");
    }

    #[test]
    fn a_dimension_with_an_identity_key_is_matched_by_its_natural_key() {
        let k = known(
            "create table m.dim (sk bigint generated always as identity primary key, id int not null unique, name text);\ncreate table m.fact (sk bigint references m.dim (sk), n int);",
            "m.dim",
            &["id", "name"],
        )
        .unwrap();
        assert_eq!(k.key, Some(vec!["id".to_string()]));
        assert_eq!(k.drawn.len(), 1);
        let (now, gone) = replace(
            SqlDialect::Postgres,
            &k,
            "m.dim",
            "m.dim__backfill",
            None,
            Into::Production,
        )
        .unwrap();
        assert!(now[0].starts_with("update \"m\".\"dim\" as t set \"name\" = s.\"name\""));
        assert!(now[1].contains("overriding system value select s.\"sk\""));
        assert!(gone[0].starts_with("do $ripple$"));
        assert!(gone[1].starts_with("delete from \"m\".\"dim\" as t where not exists"));
        assert!(gone[2].contains("setval"));
    }

    #[test]
    fn no_key_of_given_columns_is_refused_with_the_way_out() {
        let why = known(
            "create table m.dim (sk serial primary key, name text);",
            "m.dim",
            &["name"],
        )
        .unwrap_err();
        assert!(why.contains("`sk`") && why.contains("unique_key"), "{why}");
    }

    #[test]
    fn facts_that_would_smuggle_a_statement_are_refused() {
        let mut t = Tables::default();
        t.add_ddl(facts_from_ddl(
            "create table m.x (a int default 1, b int)",
            SqlDialect::DuckDb,
            "t.sql",
        ));
        let mut k = Known::of(&t, "m.x", SqlDialect::DuckDb, None, &[]).unwrap();
        k.facts.as_mut().unwrap().columns[0].default = Some("1); drop table m.y; --".to_string());
        assert!(copy(SqlDialect::DuckDb, &k, "m.x__backfill", true, false).is_err());
        k.facts.as_mut().unwrap().columns[0].default = Some("1".to_string());
        let sql = copy(SqlDialect::DuckDb, &k, "m.x__backfill", true, false).unwrap();
        assert_eq!(
            sql[1],
            "create table \"m\".\"x__backfill\" (\"a\" INT default 1, \"b\" INT)"
        );
    }
}
