//! `ripple diff` end to end on throw-away git repositories: one case per
//! kind of change, each with its exact downstream set and its exit code
//! under every `--fail-on`.

#[path = "support/git_repo.rs"]
mod git_repo;
#[path = "support/temp_project.rs"]
mod temp_project;

use assert_cmd::Command;
use git_repo::GitRepo;
use serde_json::Value;
use temp_project::{copy_tree, temp_project};

/// A small dbt project: `orders` feeds a join, a grouping, and a `select *`
/// whose consumers pick single columns out of it.
const BASE: &[(&str, &str)] = &[
    (
        "dbt_project.yml",
        "name: shop\nversion: '1.0'\nprofile: shop\nmodel-paths: [\"models\"]\n\
         models:\n  shop:\n    +materialized: view\n",
    ),
    (
        "models/sources.yml",
        "version: 2\nsources:\n  - name: raw\n    tables:\n      - name: orders\n      - name: customers\n",
    ),
    (
        "models/orders.sql",
        "select\n    id,\n    customer_id,\n    amount,\n    status,\n    created_at\n\
         from {{ source('raw', 'orders') }}\nwhere status <> 'test'\n",
    ),
    (
        "models/customers.sql",
        "select id, name from {{ source('raw', 'customers') }}\n",
    ),
    (
        "models/order_facts.sql",
        "select o.id, o.amount, c.name as customer\nfrom {{ ref('orders') }} o\n\
         join {{ ref('customers') }} c on o.customer_id = c.id\n",
    ),
    (
        "models/customer_revenue.sql",
        "select customer, sum(amount) as revenue\nfrom {{ ref('order_facts') }}\ngroup by customer\n",
    ),
    (
        "models/status_counts.sql",
        "select status, count(*) as n from {{ ref('orders') }} group by status\n",
    ),
    (
        "models/orders_all.sql",
        "select * from {{ ref('orders') }}\n",
    ),
    (
        "models/amounts.sql",
        "select id, amount from {{ ref('orders_all') }}\n",
    ),
    (
        "models/statuses.sql",
        "select id, status from {{ ref('orders_all') }}\n",
    ),
];

/// A change as the report lists it: model, kind, downstream.
type Entry<'a> = (&'a str, &'a str, &'a [&'a str]);

/// Every model downstream of `orders`.
const BELOW_ORDERS: &[&str] = &[
    "model.amounts",
    "model.customer_revenue",
    "model.order_facts",
    "model.orders_all",
    "model.status_counts",
    "model.statuses",
];

const ORDERS: &str = "models/orders.sql";

/// An edit of the working tree.
enum Edit {
    Write(&'static str, String),
    Remove(&'static str),
}

fn orders_with(from: &str, to: &str) -> Edit {
    let text = BASE.iter().find(|(p, _)| *p == ORDERS).unwrap().1;
    assert!(text.contains(from), "{from}");
    Edit::Write(ORDERS, text.replacen(from, to, 1))
}

fn run(dir: &std::path::Path, args: &[&str]) -> (Value, i32) {
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(dir)
        .args(["diff", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    // Every report the tests see matches the shipped schema.
    let errors: Vec<String> = schema().iter_errors(&json).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{json}");
    (json, code)
}

/// The validator of the generated schema.
fn schema() -> &'static jsonschema::Validator {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let schema: Value = serde_json::from_str(&ripple::emit::diff::schema()).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    })
}

#[test]
fn the_shipped_schema_is_current() {
    let generated = ripple::emit::diff::schema();
    if std::env::var_os("RIPPLE_WRITE_SCHEMA").is_some() {
        std::fs::write("docs/diff.schema.json", &generated).unwrap();
    }
    let shipped = std::fs::read_to_string("docs/diff.schema.json").unwrap_or_default();
    assert_eq!(
        shipped, generated,
        "docs/diff.schema.json is stale: run RIPPLE_WRITE_SCHEMA=1 cargo test --test diff"
    );
}

/// `ripple diff --base-dir base --head-dir head --format json`.
fn run_dirs(base: &std::path::Path, head: &std::path::Path) -> (Value, i32) {
    let (base, head) = (base.to_str().unwrap(), head.to_str().unwrap());
    run(
        std::path::Path::new("."),
        &["--base-dir", base, "--head-dir", head],
    )
}

/// Owned (model, kind, downstream) triples, to compare with [`changes`].
fn owned(expected: &[(&str, &str, &[&str])]) -> Vec<(String, String, Vec<String>)> {
    expected
        .iter()
        .map(|(m, k, d)| {
            (
                m.to_string(),
                k.to_string(),
                d.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect()
}

/// (model, kind, downstream) of every change.
fn changes(report: &Value) -> Vec<(String, String, Vec<String>)> {
    assert_eq!(report["schema_version"], 1);
    report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let list = |v: &Value| -> Vec<String> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect()
            };
            (
                c["model"].as_str().unwrap().to_string(),
                c["kind"].as_str().unwrap().to_string(),
                list(&c["downstream"]),
            )
        })
        .collect()
}

/// Applies `edits` to a fresh repository of [`BASE`] and checks that
/// `ripple diff --base HEAD` (head = working tree) finds exactly `expected`,
/// with exit codes `exits` under `--fail-on breaking`, `any`, `none`.
fn case(edits: Vec<Edit>, expected: &[(&str, &str, &[&str])], exits: [i32; 3]) -> Value {
    let repo = GitRepo::new(BASE);
    for e in edits {
        match e {
            Edit::Write(p, text) => repo.write(p, &text),
            Edit::Remove(p) => repo.remove(p),
        }
    }
    let expected = owned(expected);
    let before = repo.git(&["status", "--porcelain"]);
    let refs = repo.git(&["show-ref"]);
    let mut report = Value::Null;
    for (fail_on, exit) in ["breaking", "any", "none"].into_iter().zip(exits) {
        let (json, code) = run(repo.path(), &["--base", "HEAD", "--fail-on", fail_on]);
        assert_eq!(changes(&json), expected, "--fail-on {fail_on}");
        assert_eq!(code, exit, "exit code under --fail-on {fail_on}");
        report = json;
    }
    // The checkout, index and refs were only read.
    assert_eq!(repo.git(&["status", "--porcelain"]), before);
    assert_eq!(repo.git(&["show-ref"]), refs);
    report
}

fn columns_of(report: &Value) -> Vec<String> {
    report["changes"][0]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn formatting_only_is_a_no_op() {
    let text = "SELECT\n  o.ID,  o.Customer_Id,\n\to.amount, O.status,   o.created_at\n\
                FROM {{ source('raw', 'orders') }} AS o\nWHERE o.status != 'test'\n";
    // `!=` and `<>` are one operator to sqlparser.
    case(
        vec![Edit::Write(ORDERS, text.to_string())],
        &[("model.orders", "no-op", &[])],
        [0, 0, 0],
    );
}

#[test]
fn comment_only_is_a_no_op() {
    case(
        vec![orders_with(
            "select\n",
            "-- the orders we keep\nselect /* all of them */\n",
        )],
        &[("model.orders", "no-op", &[])],
        [0, 0, 0],
    );
    case(
        vec![orders_with("where", "{# test orders are dropped #}\nwhere")],
        &[("model.orders", "no-op", &[])],
        [0, 0, 0],
    );
}

#[test]
fn an_added_column_is_non_breaking_and_reaches_nothing() {
    let report = case(
        vec![orders_with(
            "    created_at\n",
            "    created_at,\n    currency\n",
        )],
        &[("model.orders", "non-breaking", &[])],
        [0, 1, 0],
    );
    assert_eq!(columns_of(&report), ["added: currency"]);
}

#[test]
fn a_removed_column_breaks_every_descendant() {
    let report = case(
        vec![orders_with("    status,\n", "")],
        &[("model.orders", "breaking", BELOW_ORDERS)],
        [1, 1, 0],
    );
    assert_eq!(columns_of(&report), ["removed: status"]);
}

#[test]
fn a_renamed_column_is_breaking_and_named_as_a_rename() {
    let report = case(
        vec![orders_with(
            "    status,\n",
            "    status as order_status,\n",
        )],
        &[("model.orders", "breaking", BELOW_ORDERS)],
        [1, 1, 0],
    );
    assert_eq!(columns_of(&report), ["status → order_status"]);
}

#[test]
fn a_changed_expression_reaches_only_the_readers_of_that_column() {
    // `amount` flows into order_facts (then customer_revenue's revenue) and,
    // through `orders_all`'s `*` (expanded from orders' own columns), into
    // amounts; status_counts and statuses do not read it.
    let report = case(
        vec![orders_with(
            "    amount,\n",
            "    amount * 100 as amount,\n",
        )],
        &[(
            "model.orders",
            "column",
            &[
                "model.amounts",
                "model.customer_revenue",
                "model.order_facts",
                "model.orders_all",
            ],
        )],
        [0, 1, 0],
    );
    assert_eq!(columns_of(&report), ["amount"]);
}

#[test]
fn a_star_upstream_carries_exactly_the_changed_column() {
    // `status` reaches statuses through `select *`, and status_counts
    // groups by it (which changes its rows); amounts never sees it.
    case(
        vec![orders_with(
            "    status,\n",
            "    lower(status) as status,\n",
        )],
        &[(
            "model.orders",
            "column",
            &["model.orders_all", "model.status_counts", "model.statuses"],
        )],
        [0, 1, 0],
    );
}

#[test]
fn a_changed_where_is_breaking() {
    case(
        vec![orders_with("<> 'test'", "not in ('test', 'void')")],
        &[("model.orders", "breaking", BELOW_ORDERS)],
        [1, 1, 0],
    );
}

#[test]
fn a_changed_join_is_breaking() {
    let text = BASE
        .iter()
        .find(|(p, _)| *p == "models/order_facts.sql")
        .unwrap()
        .1
        .replace("join", "left join");
    let report = case(
        vec![Edit::Write("models/order_facts.sql", text)],
        &[("model.order_facts", "breaking", &["model.customer_revenue"])],
        [1, 1, 0],
    );
    assert!(
        report["changes"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("JOIN")
    );
}

#[test]
fn a_new_model_is_added() {
    case(
        vec![Edit::Write(
            "models/big_orders.sql",
            "select id from {{ ref('orders') }} where amount > 1000\n".to_string(),
        )],
        &[("model.big_orders", "added", &[])],
        [0, 1, 0],
    );
}

#[test]
fn a_deleted_model_breaks_what_read_it() {
    case(
        vec![Edit::Remove("models/order_facts.sql")],
        &[("model.order_facts", "removed", &["model.customer_revenue"])],
        [1, 1, 0],
    );
}

#[test]
fn config_changes_are_reported_as_such() {
    let project = BASE[0].1.replace(
        "+materialized: view\n",
        "+materialized: view\n    orders:\n      +materialized: table\n",
    );
    let report = case(
        vec![Edit::Write("dbt_project.yml", project)],
        &[("model.orders", "config", &[])],
        [0, 1, 0],
    );
    assert_eq!(columns_of(&report), ["materialized: \"view\" → \"table\""]);
    // A unique key decides which rows an incremental model keeps.
    let keyed = BASE[0].1.replace(
        "+materialized: view\n",
        "+materialized: view\n    orders:\n      +unique_key: id\n",
    );
    case(
        vec![Edit::Write("dbt_project.yml", keyed)],
        &[("model.orders", "config", BELOW_ORDERS)],
        [0, 1, 0],
    );
}

#[test]
fn a_model_that_fails_to_parse_on_one_side_could_not_be_compared() {
    let report = case(
        vec![orders_with("    amount,\n", "    amount +,\n")],
        &[("model.orders", "could-not-compare", BELOW_ORDERS)],
        [1, 1, 0],
    );
    let reason = report["changes"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("head side"), "{reason}");
}

#[test]
fn two_committed_revisions_and_a_project_in_a_subfolder() {
    let files: Vec<(String, &str)> = BASE
        .iter()
        .map(|(p, t)| (format!("analytics/{p}"), *t))
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let repo = GitRepo::new(&files);
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write(
        "analytics/models/orders.sql",
        &BASE[2].1.replace("    status,\n", ""),
    );
    let head = repo.commit("drop status");
    // The working tree goes back to the base: only --head is compared.
    repo.git(&["checkout", "-q", &base]);
    let (json, code) = run(
        repo.path(),
        &["--base", &base, "--head", &head, "--project", "analytics"],
    );
    assert_eq!(code, 1);
    let c = &json["changes"][0];
    assert_eq!(c["model"], "model.orders");
    assert_eq!(c["kind"], "breaking");
    // Paths are relative to the repository, for annotations.
    assert_eq!(c["file"], "analytics/models/orders.sql");
    assert_eq!(c["line"], 5);
}

#[test]
fn settings_linked_inside_the_repository_are_read_at_the_revision_too() {
    // Review round 23: a committed `dbt_project.yml` (or `ripple.yml`) that
    // is a link to a monorepo's shared settings was left out of the base
    // revision: every model read as removed and added, and a real change of
    // a var was not reported.
    let mut files: Vec<(String, String)> = BASE
        .iter()
        .skip(1)
        .map(|(p, t)| (format!("analytics/{p}"), t.to_string()))
        .collect();
    files.push((
        "shared/dbt_project.yml".to_string(),
        format!("{}vars:\n  cutoff: 10\n", BASE[0].1),
    ));
    files.push((
        "shared/ripple.yml".to_string(),
        "dialect: postgres\n".to_string(),
    ));
    files.push((
        "analytics/models/big_orders.sql".to_string(),
        "select id from {{ ref('orders') }} where amount > {{ var('cutoff') }}\n".to_string(),
    ));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = GitRepo::new(&files);
    for name in ["dbt_project.yml", "ripple.yml"] {
        std::os::unix::fs::symlink(
            format!("../shared/{name}"),
            repo.path().join("analytics").join(name),
        )
        .unwrap();
    }
    // A link out of the repository is never read, at a revision either.
    std::os::unix::fs::symlink("/etc/passwd", repo.path().join("analytics/outside.yml")).unwrap();
    repo.commit("linked settings");
    let (json, code) = run(repo.path(), &["--base", "HEAD", "--project", "analytics"]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["changes"], serde_json::json!([]), "{json}");
    repo.write(
        "shared/dbt_project.yml",
        &format!("{}vars:\n  cutoff: 20\n", BASE[0].1),
    );
    let (json, code) = run(repo.path(), &["--base", "HEAD", "--project", "analytics"]);
    assert_eq!(code, 1, "{json}");
    let models: Vec<&str> = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["model.big_orders"], "{json}");
}

#[test]
fn a_monorepo_s_models_outside_the_project_folder_are_compared() {
    // `model-paths: ["../sources"]` (spellbook's layout): the revision's
    // copy held only the project's folder, and outside any repository, so
    // its models were refused and every one read as added, exit 0, even
    // with a breaking change.
    let repo = GitRepo::new(&[
        (
            "analytics/dbt_project.yml",
            "name: shop\nversion: '1.0'\nprofile: shop\nmodel-paths: ['../sources']\n",
        ),
        ("sources/a.sql", "select 1 as id, 2 as v\n"),
        ("sources/b.sql", "select id from {{ ref('a') }}\n"),
    ]);
    let (json, code) = run(repo.path(), &["--base", "HEAD", "--project", "analytics"]);
    assert_eq!(
        (code, &json["changes"]),
        (0, &serde_json::json!([])),
        "{json}"
    );
    repo.write(
        "sources/b.sql",
        "select id from {{ ref('a') }} where v > 1\n",
    );
    let (json, code) = run(repo.path(), &["--base", "HEAD", "--project", "analytics"]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["changes"][0]["model"], "model.b", "{json}");
    assert_eq!(json["changes"][0]["kind"], "breaking", "{json}");
}

/// (model, kind) of each change `ripple diff` finds between two versions
/// of a plain-SQL project, and its exit code.
fn sql_change(
    base: &[(&str, &str)],
    head: &[(&str, &str)],
) -> (Vec<(String, String, Vec<String>)>, i32) {
    let (b, h) = (temp_project(base), temp_project(head));
    let (json, code) = run_dirs(b.path(), h.path());
    (changes(&json), code)
}

#[test]
fn merge_clauses_and_on_conflict_decide_rows() {
    // Review round 24: changing what a MERGE clause does (update → delete),
    // its condition, or an upsert's ON CONFLICT action read as no-op or
    // column-level, exit 0.
    let yml = ("ripple.yml", "dialect: postgres\nsql: [jobs]\n");
    let merge =
        |when: &str| format!("merge into mart.t as t using raw.s as s on t.id = s.id {when}");
    let base_merge = merge(
        "when matched then update set v = s.v when not matched then insert (id, v) values (s.id, s.v)",
    );
    for head in [
        merge("when matched then delete when not matched then insert (id, v) values (s.id, s.v)"),
        merge(
            "when matched and s.v > 0 then update set v = s.v when not matched then insert (id, v) values (s.id, s.v)",
        ),
        merge(
            "when matched then update set v = s.v when not matched and s.v > 100 then insert (id, v) values (s.id, s.v)",
        ),
    ] {
        let (found, code) = sql_change(
            &[yml, ("jobs/m.sql", &base_merge)],
            &[yml, ("jobs/m.sql", &head)],
        );
        assert_eq!(found[0].1, "breaking", "{head}: {found:?}");
        assert_eq!(code, 1);
    }
    // What a table function is given decides its rows (`dblink`'s query).
    let dblink =
        |q: &str| format!("insert into mart.x select a from dblink('host=db', '{q}') as t(a int)");
    let (found, code) = sql_change(
        &[yml, ("jobs/d.sql", &dblink("select a from o"))],
        &[yml, ("jobs/d.sql", &dblink("select a from o where a > 0"))],
    );
    assert_eq!((found[0].1.as_str(), code), ("breaking", 1), "{found:?}");
    let upsert = |action: &str| {
        format!(
            "insert into mart.daily (day, total) select d, sum(x) from raw.e group by d on conflict (day) {action}"
        )
    };
    let base_upsert = upsert("do update set total = excluded.total");
    for head in [
        upsert("do nothing"),
        upsert("do update set total = mart.daily.total + excluded.total"),
        upsert("do update set total = excluded.total where mart.daily.total < excluded.total"),
    ] {
        let (found, code) = sql_change(
            &[yml, ("jobs/u.sql", &base_upsert)],
            &[yml, ("jobs/u.sql", &head)],
        );
        assert_eq!(found[0].1, "breaking", "{head}: {found:?}");
        assert_eq!(code, 1);
    }
}

#[test]
fn a_job_writing_elsewhere_reaches_the_readers_of_what_it_wrote() {
    // Review round 24: `raw.orders` → `raw_v2.orders` was breaking with no
    // downstream, though everything reading `raw.orders` stops being fed.
    let yml = ("ripple.yml", "dialect: postgres\nsql: [jobs]\n");
    let reader = (
        "jobs/b.sql",
        "insert into mart.daily select * from raw.orders",
    );
    let (found, code) = sql_change(
        &[
            yml,
            ("jobs/a.sql", "insert into raw.orders select * from src.o"),
            reader,
        ],
        &[
            yml,
            (
                "jobs/a.sql",
                "insert into raw_v2.orders select * from src.o",
            ),
            reader,
        ],
    );
    assert_eq!(code, 1);
    let a = found.iter().find(|c| c.0 == "sql:jobs/a.sql").unwrap();
    assert_eq!(a.1, "breaking", "{found:?}");
    assert!(a.2.iter().any(|d| d == "table.mart.daily"), "{found:?}");
}

#[test]
fn a_macro_that_does_not_render_never_hides_a_change() {
    // Review round 24: with `dbt_packages/` not installed (as in CI), a
    // changed argument of `dbt_utils.generate_surrogate_key(...)` rendered
    // to the same placeholder on both sides: "no changes", exit 0.
    let project = ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n");
    let model = |args: &str| {
        format!(
            "select {{{{ dbt_utils.generate_surrogate_key([{args}]) }}}} as k, id from {{{{ ref('a') }}}}\n"
        )
    };
    let a = ("models/a.sql", "select 1 as id, 2 as c\n");
    let (found, code) = sql_change(
        &[project, a, ("models/k.sql", &model("'id', 'c'"))],
        &[project, a, ("models/k.sql", &model("'id'"))],
    );
    assert_eq!(
        found
            .iter()
            .map(|c| (c.0.as_str(), c.1.as_str()))
            .collect::<Vec<_>>(),
        [("model.k", "could-not-compare")]
    );
    assert_eq!(code, 1);
    // Unchanged, it is no change.
    let (found, code) = sql_change(
        &[project, a, ("models/k.sql", &model("'id'"))],
        &[project, a, ("models/k.sql", &model("'id'"))],
    );
    assert_eq!((found.len(), code), (0, 0));
}

#[test]
fn a_folder_behind_a_link_stops_the_comparison() {
    // Review round 24: `models/staging` committed as a link inside the
    // repository is not read (ripple follows no link in model folders), so
    // a breaking change behind it was "no changes", exit 0.
    let repo = GitRepo::new(&[
        ("p/dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
        ("shared/staging/a.sql", "select 1 as id\n"),
        ("p/models/b.sql", "select id from {{ ref('a') }}\n"),
    ]);
    std::os::unix::fs::symlink("../../shared/staging", repo.path().join("p/models/staging"))
        .unwrap();
    repo.commit("linked folder");
    repo.write("shared/staging/a.sql", "select 1 as id where false\n");
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(repo.path())
        .args(["diff", "--base", "HEAD", "--project", "p"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("link"), "{stderr}");
}

#[test]
fn no_cache_is_accepted_as_by_every_command() {
    let (b, h) = (
        temp_project(&[("ripple.yml", "sql: [jobs]\n"), ("jobs/a.sql", "select 1")]),
        temp_project(&[("ripple.yml", "sql: [jobs]\n"), ("jobs/a.sql", "select 1")]),
    );
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .args(["diff", "--no-cache", "--base-dir"])
        .arg(b.path())
        .arg("--head-dir")
        .arg(h.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_order_that_picks_rows_and_whole_row_comparisons_decide_rows() {
    // Review round 25: `distinct on (k) ... order by k, ts` → `ts desc`
    // keeps other rows (was no-op); a changed column read only by an
    // ORDER BY ... LIMIT, a DISTINCT ON's order or a UNION's comparison
    // of rows reached no reader.
    let yml = ("ripple.yml", "dialect: postgres\nsql: [jobs]\n");
    let (found, code) = sql_change(
        &[
            yml,
            (
                "jobs/a.sql",
                "insert into mart.a select distinct on (k) k, v from raw.s order by k, ts",
            ),
        ],
        &[
            yml,
            (
                "jobs/a.sql",
                "insert into mart.a select distinct on (k) k, v from raw.s order by k, ts desc",
            ),
        ],
    );
    assert_eq!((found[0].1.as_str(), code), ("breaking", 1), "{found:?}");
    let stg =
        |amt: &str| format!("insert into mart.stg select order_id, cid, {amt} as amt from raw.o");
    for reader in [
        "insert into mart.down select distinct on (cid) order_id, cid from mart.stg order by cid, amt desc",
        "insert into mart.down select order_id from mart.stg order by amt desc limit 10",
        "insert into mart.down select order_id from (select order_id, amt from mart.stg union select order_id, amt from mart.stg) u",
    ] {
        let (found, _) = sql_change(
            &[
                yml,
                ("jobs/stg.sql", &stg("amount")),
                ("jobs/down.sql", reader),
            ],
            &[
                yml,
                ("jobs/stg.sql", &stg("amount * 100")),
                ("jobs/down.sql", reader),
            ],
        );
        let stg_change = found.iter().find(|c| c.0 == "sql:jobs/stg.sql").unwrap();
        assert!(
            stg_change.2.iter().any(|d| d == "table.mart.down"),
            "{reader}: {found:?}"
        );
    }
}

#[test]
fn a_password_in_a_read_url_is_in_no_report() {
    // Review round 25: `read_csv('https://u:pw@host/x.csv')` named its
    // dataset with the password, shown in every diff format and in DOT.
    let yml = ("ripple.yml", "dialect: duckdb\nsql: [jobs]\n");
    let (b, h) = (
        temp_project(&[yml, ("jobs/a.sql", "insert into mart.x select 1 as a")]),
        temp_project(&[
            yml,
            (
                "jobs/a.sql",
                "insert into mart.x select * from read_csv('https://u:HUNTER2xyz@host/x.csv')",
            ),
        ]),
    );
    for format in ["json", "markdown", "text", "github", "html"] {
        let out = Command::cargo_bin("ripple")
            .unwrap()
            .args(["diff", "--format", format, "--base-dir"])
            .arg(b.path())
            .arg("--head-dir")
            .arg(h.path())
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains("HUNTER2"), "{format}: {all}");
        if format == "json" {
            assert!(all.contains("***@host"), "{all}");
        }
    }
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .args(["graph", "--no-cache", "--format", "dot", "--project"])
        .arg(h.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("HUNTER2"));
}

#[test]
fn what_production_runs_but_the_comparison_does_not_render_is_not_hidden() {
    // Review round 25: a change inside `{% if is_incremental() %}` and a
    // seed disabled under the model reading it were "no changes", exit 0.
    let project = ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n");
    let model = |cond: &str| {
        format!(
            "{{{{ config(materialized='incremental') }}}}\nselect id, ts from {{{{ ref('a') }}}}\n{{% if is_incremental() %}}where ts > (select max(ts) from {{{{ this }}}}){cond}{{% endif %}}\n"
        )
    };
    let a = ("models/a.sql", "select 1 as id, now() as ts\n");
    let (found, code) = sql_change(
        &[project, a, ("models/i.sql", &model(""))],
        &[project, a, ("models/i.sql", &model(" and id > 0"))],
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].0.as_str(), found[0].1.as_str(), code),
        ("model.i", "could-not-compare", 1)
    );
    let seed = ("seeds/countries.csv", "code,name\nfr,France\n");
    let reader = ("models/r.sql", "select code from {{ ref('countries') }}\n");
    let disabled = (
        "dbt_project.yml",
        "name: p\nversion: '1.0'\nprofile: p\nseeds:\n  p:\n    countries:\n      +enabled: false\n",
    );
    let (found, code) = sql_change(&[project, seed, reader], &[disabled, seed, reader]);
    assert_eq!(found, owned(&[("seed.countries", "removed", &["model.r"])]));
    assert_eq!(code, 1);
}

#[test]
fn bad_revisions_exit_with_2_and_say_what_to_do() {
    let repo = GitRepo::new(BASE);
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(repo.path())
        .args(["diff", "--base", "no-such-branch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown revision `no-such-branch`"), "{err}");

    // A shallow clone holds only the last commit.
    repo.write(
        "models/orders.sql",
        "select id from {{ source('raw', 'orders') }}\n",
    );
    repo.commit("second");
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    repo.git(&[
        "clone",
        "-q",
        "--depth",
        "1",
        &url,
        clone.path().to_str().unwrap(),
    ]);
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(clone.path())
        .args(["diff", "--base", "HEAD~1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shallow clone"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");

    // Outside any repository.
    let plain = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(plain.path())
        .env("GIT_CEILING_DIRECTORIES", plain.path().parent().unwrap())
        .args(["diff", "--base", "main"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not inside a git repository"));
}

#[test]
fn plain_sql_jobs_and_airflow_task_sql_are_compared_too() {
    let dag = |select: &str| {
        format!(
            "from datetime import datetime\nfrom airflow import DAG\n\
             from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\n\n\
             with DAG(dag_id=\"etl\", schedule=\"@daily\", start_date=datetime(2024, 1, 1)) as dag:\n    \
             load = SQLExecuteQueryOperator(\n        task_id=\"load\",\n        conn_id=\"wh\",\n        \
             sql=\"insert into mart.events_clean {select} from raw.events_raw\",\n    )\n"
        )
    };
    let job = |filter: &str| {
        format!(
            "insert into mart.daily\nselect day, count(*) as n\nfrom mart.events_clean\nwhere {filter}\ngroup by day;\n"
        )
    };
    let base = temp_project(&[
        ("dags/etl.py", &dag("select id, kind, day")),
        ("jobs/daily.sql", &job("kind = 'click'")),
        (
            "jobs/weekly.sql",
            "insert into mart.weekly select day from mart.daily;\n",
        ),
    ]);
    let head = temp_project(&[
        ("dags/etl.py", &dag("select id, upper(kind) as kind, day")),
        ("jobs/daily.sql", &job("kind in ('click', 'tap')")),
        (
            "jobs/weekly.sql",
            "INSERT INTO mart.weekly\nSELECT day FROM mart.daily;\n",
        ),
    ]);
    let (json, code) = run_dirs(base.path(), head.path());
    assert_eq!(code, 1);
    assert_eq!(
        changes(&json),
        [
            (
                "sql:jobs/daily.sql".to_string(),
                "breaking".to_string(),
                vec!["table.mart.weekly".to_string()]
            ),
            (
                // `kind` decides daily's rows (WHERE), so all of it changes.
                "airflow:etl.load".to_string(),
                "column".to_string(),
                vec![
                    "table.mart.daily".to_string(),
                    "table.mart.weekly".to_string()
                ]
            ),
            (
                "sql:jobs/weekly.sql".to_string(),
                "no-op".to_string(),
                vec![]
            ),
        ]
    );
}

#[test]
fn a_star_over_unknown_columns_marks_consumers_as_possibly_affected() {
    // The source declares no columns, so `orders`' own `*` cannot be
    // expanded, nor can `wide`'s over it: the changed column passes
    // through `wide` by name, and `wide` is only possibly affected.
    let files = |expr: &str| {
        temp_project(&[
            BASE[0],
            BASE[1],
            (
                "models/orders.sql",
                &format!(
                    "select *, {expr} as double_amount from {{{{ source('raw', 'orders') }}}}\n"
                ),
            ),
            ("models/wide.sql", "select * from {{ ref('orders') }}\n"),
            (
                "models/pick.sql",
                "select id, double_amount from {{ ref('wide') }}\n",
            ),
            (
                "models/other.sql",
                "select id, status from {{ ref('wide') }}\n",
            ),
        ])
    };
    let (base, head) = (files("amount * 2"), files("amount * 3"));
    let (json, code) = run_dirs(base.path(), head.path());
    assert_eq!(code, 0);
    assert_eq!(
        changes(&json),
        owned(&[("model.orders", "column", &["model.pick", "model.wide"])])
    );
    assert_eq!(
        json["changes"][0]["possibly"],
        serde_json::json!(["model.wide"])
    );
}

/// Checks a Mermaid flowchart the way its grammar reads it: a header, node
/// declarations with quoted labels free of raw quotes, edges and classes
/// between declared nodes, classes that are defined.
fn assert_valid_mermaid(block: &str) {
    let mut lines = block.lines();
    assert_eq!(lines.next(), Some("flowchart LR"));
    let mut nodes = std::collections::BTreeSet::new();
    let mut classes = Vec::new();
    let mut defined = std::collections::BTreeSet::new();
    let node_id = |s: &str| -> String {
        assert!(
            s.starts_with('n') && s.len() > 1 && s[1..].chars().all(|c| c.is_ascii_digit()),
            "node id {s:?}"
        );
        s.to_string()
    };
    for line in lines {
        let line = line.strip_prefix("  ").expect("indented");
        if let Some((id, rest)) = line.split_once("[\"") {
            let label = rest.strip_suffix("\"]").expect("label closes the line");
            assert!(!label.contains('"') && !label.contains('\n'), "{label:?}");
            assert!(nodes.insert(node_id(id)), "node declared twice");
        } else if let Some((a, b)) = line.split_once(" --> ") {
            assert!(
                nodes.contains(&node_id(a)) && nodes.contains(&node_id(b)),
                "{line}"
            );
        } else if let Some(rest) = line.strip_prefix("classDef ") {
            let (name, style) = rest.split_once(' ').unwrap();
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric()) && !style.contains(' '));
            defined.insert(name.to_string());
        } else if let Some(rest) = line.strip_prefix("class ") {
            let (ids, name) = rest.split_once(' ').unwrap();
            for id in ids.split(',') {
                assert!(nodes.contains(&node_id(id)), "{line}");
            }
            classes.push(name.to_string());
        } else {
            panic!("not a flowchart statement: {line:?}");
        }
    }
    assert!(!nodes.is_empty());
    for c in classes {
        assert!(defined.contains(&c), "class {c} is not defined");
    }
}

#[test]
fn the_pull_request_comment() {
    let repo = GitRepo::new(BASE);
    let facts = BASE[4].1.replace("join", "left join");
    repo.write("models/order_facts.sql", &facts);
    repo.write(
        ORDERS,
        &BASE[2]
            .1
            .replace("    amount,\n", "    amount * 100 as amount,\n"),
    );
    repo.remove("models/statuses.sql");
    repo.write(
        "models/odd|name_<b>*.sql",
        "select id from {{ ref('orders') }}\n",
    );
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(repo.path())
        .args(["diff", "--base", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let markdown = String::from_utf8(out.stdout).unwrap();
    insta::assert_snapshot!("pull_request_comment", markdown);
    let block = markdown
        .split("```mermaid\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a mermaid block");
    assert_valid_mermaid(block);
    // The hostile name cannot end a table cell or start markup.
    assert!(markdown.contains("model.odd\\|name\\_&lt;b&gt;\\*"));

    let github = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(repo.path())
        .args(["diff", "--base", "HEAD", "--format", "github"])
        .output()
        .unwrap();
    let github = String::from_utf8(github.stdout).unwrap();
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(lines.len(), 4, "{github}");
    assert!(lines[0].starts_with(
        "::error file=models/order_facts.sql,line=3,title=ripple diff%3A breaking::model.order_facts: breaking"
    ), "{github}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("::warning file=models/orders.sql,line=4,"))
    );
}

#[test]
fn the_bundled_shop_suggests_a_backfill_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = (dir.path().join("base"), dir.path().join("head"));
    copy_tree(std::path::Path::new("fixtures/shop"), &base);
    copy_tree(std::path::Path::new("fixtures/shop"), &head);
    let model = head.join("models/staging/stg_orders.sql");
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(&model, text.replace("lower(status)", "upper(status)")).unwrap();
    let (json, code) = run_dirs(&base, &head);
    assert_eq!(code, 0);
    let c = &json["changes"][0];
    assert_eq!(
        (c["model"].as_str(), c["kind"].as_str()),
        (Some("model.stg_orders"), Some("column"))
    );
    assert_eq!(c["columns"], serde_json::json!(["status"]));
    assert_eq!(
        c["plan"],
        "ripple plan stg_orders --from 2024-01-01 --to <last day to restate>"
    );
    // fct_orders groups by status, so its rows change: everything below it
    // is affected, exactly what the graph lists downstream of stg_orders.
    let graph = Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "graph",
            "--project",
            "fixtures/shop",
            "--select",
            "stg_orders+",
        ])
        .output()
        .unwrap();
    let graph: Value = serde_json::from_slice(&graph.stdout).unwrap();
    let mut below: Vec<String> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .filter(|id| id != "model.stg_orders")
        .collect();
    below.sort();
    assert!(below.len() > 5);
    assert_eq!(changes(&json)[0].2, below);
    // Byte-identical whatever the thread count.
    let render = |threads: &str, format: &str| {
        Command::cargo_bin("ripple")
            .unwrap()
            .env("RAYON_NUM_THREADS", threads)
            .args(["diff", "--format", format, "--base-dir"])
            .arg(&base)
            .arg("--head-dir")
            .arg(&head)
            .output()
            .unwrap()
            .stdout
    };
    for format in ["markdown", "json"] {
        assert_eq!(render("1", format), render("4", format), "{format}");
    }
}

#[test]
fn a_renamed_relation_is_a_setting_change_not_a_change_of_its_readers() {
    let project = BASE[0].1.replace(
        "+materialized: view\n",
        "+materialized: view\n    orders:\n      +alias: orders_v2\n",
    );
    let report = case(
        vec![Edit::Write("dbt_project.yml", project)],
        &[("model.orders", "config", BELOW_ORDERS)],
        [0, 1, 0],
    );
    assert_eq!(
        columns_of(&report),
        ["relation: analytics.orders → analytics.orders_v2"]
    );
}

#[test]
fn lines_point_into_the_file_not_the_rendered_sql() {
    // The loop renders to more lines than it takes, the config block to
    // fewer; the edit is on line 11 of the file.
    let model = |filter: &str| {
        format!(
            "{{{{\n  config(\n    materialized='table'\n  )\n}}}}\n\
             select {{% for c in ['id', 'amount', 'status', 'a', 'b', 'c'] %}}\n  {{{{ c }}}},\n{{% endfor %}}\n  1 as one\n\
             from {{{{ source('raw', 'orders') }}}}\nwhere {filter}\n"
        )
    };
    let files =
        |filter: &str| temp_project(&[BASE[0], BASE[1], ("models/orders.sql", &model(filter))]);
    let (base, head) = (files("amount > 0"), files("amount > 10"));
    let (json, _) = run_dirs(base.path(), head.path());
    assert_eq!(json["changes"][0]["kind"], "breaking");
    assert_eq!(json["changes"][0]["line"], 11);
}

#[test]
fn a_dag_file_that_no_longer_parses_could_not_be_compared() {
    let dag = "from datetime import datetime\nfrom airflow import DAG\n\
               from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\n\n\
               with DAG(dag_id=\"etl\", schedule=\"@daily\", start_date=datetime(2024, 1, 1)) as dag:\n    \
               load = SQLExecuteQueryOperator(task_id=\"load\", conn_id=\"wh\", sql=\"insert into mart.t select id from raw.t\")\n";
    let base = temp_project(&[("dags/etl.py", dag)]);
    // The parser recovers and finds the same task, but Airflow would not
    // load the file: never a silent no-op.
    let broken = format!("{dag}\ndef oops(:\n");
    let head = temp_project(&[("dags/etl.py", &broken)]);
    let (json, code) = run_dirs(base.path(), head.path());
    assert_eq!(code, 1);
    assert_eq!(
        changes(&json),
        owned(&[("airflow:etl.load", "could-not-compare", &[])])
    );
    let reason = json["changes"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("head: dags/etl.py:8:"), "{reason}");
}

#[test]
fn a_script_writing_two_tables_passes_on_only_what_each_reads() {
    let stage = |amount: &str| {
        format!("insert into mart.src\nselect id, {amount} as amount, kind\nfrom raw.events;\n")
    };
    let split = "insert into mart.a select id, amount from mart.src;\n\
                 insert into mart.b select id, kind from mart.src;\n";
    let staged = "create temp table s as select id, amount from mart.src;\n\
                  insert into mart.c select id from s;\n";
    let files = |amount: &str| {
        temp_project(&[
            ("jobs/stage.sql", &stage(amount)),
            ("jobs/split.sql", split),
            ("jobs/staged.sql", staged),
        ])
    };
    let (base, head) = (files("amount"), files("amount * 100"));
    let (json, _) = run_dirs(base.path(), head.path());
    // mart.b never reads amount; mart.c reads it through a staging table,
    // which ripple does not follow column by column.
    assert_eq!(
        changes(&json),
        owned(&[(
            "sql:jobs/stage.sql",
            "column",
            &["table.mart.a", "table.mart.c"]
        )])
    );
}

#[test]
fn columns_declared_in_yaml_are_not_taken_as_all_there_is() {
    // The YAML documents two of orders' columns; a consumer reading an
    // undocumented one is still found, and a `*` over orders is expanded from
    // its query, not from the documentation.
    let files = |amount: &str| {
        temp_project(&[
            BASE[0],
            BASE[1],
            (
                "models/orders.yml",
                "version: 2\nmodels:\n  - name: orders\n    columns:\n      - name: id\n      - name: status\n",
            ),
            (
                "models/orders.sql",
                &format!(
                    "select id, {amount} as amount, status from {{{{ source('raw', 'orders') }}}}\n"
                ),
            ),
            (
                "models/direct.sql",
                "select id, amount from {{ ref('orders') }}\n",
            ),
            (
                "models/through_star.sql",
                "select * from {{ ref('orders') }}\n",
            ),
            (
                "models/picked.sql",
                "select amount from {{ ref('through_star') }}\n",
            ),
            (
                "models/unrelated.sql",
                "select status from {{ ref('through_star') }}\n",
            ),
        ])
    };
    let (base, head) = (files("amount"), files("amount / 100"));
    let (json, _) = run_dirs(base.path(), head.path());
    assert_eq!(
        changes(&json),
        owned(&[(
            "model.orders",
            "column",
            &["model.direct", "model.picked", "model.through_star"]
        )])
    );
}

#[test]
fn seeds_are_not_read_out_of_git_and_a_missing_object_is_named() {
    let mut files = BASE.to_vec();
    files.push(("seeds/countries.csv", "code,name\nfr,France\n"));
    let repo = GitRepo::new(&files);
    let object = |path: &str| {
        let sha = repo.git(&["rev-parse", &format!("HEAD:{path}")]);
        let sha = sha.trim();
        repo.path()
            .join(".git/objects")
            .join(&sha[..2])
            .join(&sha[2..])
    };
    // A seed whose content is not in the clone (as in mirrors of repos with
    // large data files): seeds are read by name, so nothing is missed.
    std::fs::remove_file(object("seeds/countries.csv")).unwrap();
    let (json, code) = run(repo.path(), &["--base", "HEAD"]);
    assert_eq!((changes(&json), code), (vec![], 0));
    // A model's SQL missing from the clone: exit 2, naming the file.
    std::fs::remove_file(object("models/orders.sql")).unwrap();
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(repo.path())
        .args(["diff", "--base", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("models/orders.sql") && err.contains("not in this clone"),
        "{err}"
    );
}

#[test]
fn mixing_a_revision_with_a_folder_is_a_usage_error() {
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .args(["diff", "--base", "HEAD", "--head-dir", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

#[test]
fn models_from_a_manifest_missing_on_one_side_could_not_be_compared() {
    let manifest = r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
        "nodes": {"model.x.a": {"resource_type": "model", "name": "a", "relation_name": "s.a",
                   "original_file_path": "models/a.sql", "compiled_code": "select 1 as one",
                   "depends_on": {"nodes": []}}},
        "sources": {}}"#;
    let config = ("ripple.yml", "manifest: target/manifest.json\n");
    // The manifest is build output: the base revision does not have it.
    let base = temp_project(&[config]);
    let head = temp_project(&[config, ("target/manifest.json", manifest)]);
    let (json, code) = run_dirs(base.path(), head.path());
    assert_eq!(code, 1);
    assert_eq!(
        changes(&json),
        owned(&[("model.a", "could-not-compare", &[])])
    );
    assert!(
        json["changes"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("base: target/manifest.json")
    );
}

#[test]
fn a_line_break_in_a_name_cannot_forge_a_text_report_line() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = (dir.path().join("base"), dir.path().join("head"));
    for (root, sql) in [
        (&base, "select 1 as a\n"),
        (
            &head,
            "select 1 as a, 2 as \"n\nbreaking          model.payments  models/payments.sql:1  FORGED\"\n",
        ),
    ] {
        std::fs::create_dir_all(root.join("models")).unwrap();
        std::fs::write(
            root.join("dbt_project.yml"),
            "name: p\nversion: '1.0'\nprofile: p\n",
        )
        .unwrap();
        std::fs::write(root.join("models/m.sql"), sql).unwrap();
    }
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "diff",
            "--format",
            "text",
            "--fail-on",
            "none",
            "--base-dir",
        ])
        .arg(&base)
        .arg("--head-dir")
        .arg(&head)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("model.m"), "{text}");
    assert!(
        !text.lines().any(|l| l.starts_with("breaking")),
        "a forged line:\n{text}"
    );
}

/// A base revision whose `ripple.yml` does not load is named as in the
/// repository, once: the message named the revision's temporary copy
/// (deleted by the time it was read), twice.
#[test]
fn a_revision_that_does_not_load_is_named_as_in_the_repository() {
    for sub in ["", "analytics/"] {
        let files: Vec<(String, &str)> = BASE
            .iter()
            .map(|(p, t)| (format!("{sub}{p}"), *t))
            .chain(std::iter::once((
                format!("{sub}ripple.yml"),
                "datasets:\n  orders:\n    cost: -1\n",
            )))
            .collect();
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        let repo = GitRepo::new(&files);
        let project = if sub.is_empty() { "." } else { "analytics" };
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args(["diff", "--base", "HEAD", "--project", project])
            .current_dir(repo.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let expected = format!("base (`HEAD`): {sub}ripple.yml:3:");
        assert!(err.contains(&expected), "{err}");
        assert!(!err.contains("ripple-rev"), "{err}");
        assert_eq!(err.matches("not a number").count(), 1, "{err}");
    }
}

#[test]
fn settings_that_change_what_runs_are_compared_whatever_their_key() {
    // Once read as "no changes": only ten dbt keys were compared.
    let base: &[(&str, &str)] = &[
        (
            "dbt_project.yml",
            "name: p\nversion: '1.0'\nprofile: p\nseeds:\n  p:\n    codes:\n      +delimiter: \";\"\n",
        ),
        ("seeds/codes.csv", "id;v\n1;2\n"),
        (
            "models/m.sql",
            "{{ config(post_hook=\"delete from {{ this }} where v = 1\", meta={'owner': 'a'}) }}\nselect * from {{ ref('codes') }}\n",
        ),
        ("models/below.sql", "select id from {{ ref('m') }}\n"),
        (
            "snapshots/sn.sql",
            "{% snapshot sn %}\n{{ config(target_schema='snap', unique_key='id', strategy='check', check_cols=['id', 'v']) }}\nselect * from {{ ref('m') }}\n{% endsnapshot %}\n",
        ),
    ];
    let cases: [(&str, &str, &str, &[Entry]); 4] = [
        (
            "models/m.sql",
            "where v = 1",
            "where v = 2",
            &[("model.m", "config", &["model.below", "snapshot.sn"])],
        ),
        (
            "snapshots/sn.sql",
            "check_cols=['id', 'v']",
            "check_cols=['id']",
            &[("snapshot.sn", "config", &[])],
        ),
        (
            "dbt_project.yml",
            "+delimiter: \";\"",
            "+delimiter: \",\"",
            &[(
                "seed.codes",
                "config",
                &["model.below", "model.m", "snapshot.sn"],
            )],
        ),
        // Documentation only: nothing that runs changed.
        ("models/m.sql", "'owner': 'a'", "'owner': 'b'", &[]),
    ];
    for (file, from, to, expected) in cases {
        let repo = GitRepo::new(base);
        let text = base.iter().find(|(p, _)| *p == file).unwrap().1;
        assert!(text.contains(from), "{from}");
        repo.write(file, &text.replace(from, to));
        let (json, _) = run(repo.path(), &["--base", "HEAD"]);
        assert_eq!(changes(&json), owned(expected), "{file}: {from} → {to}");
    }
}

#[test]
fn a_dags_schedule_and_a_tasks_order_or_connection_are_compared() {
    // Once "no changes": no SQL differs, yet what lands does.
    let dag = "from datetime import datetime\nfrom airflow import DAG\n\
               from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\n\
               from airflow.sensors.external_task import ExternalTaskSensor\n\n\
               with DAG('etl', schedule='@daily', start_date=datetime(2024, 1, 1),\n         \
               default_args={'conn_id': 'dwh'}):\n    \
               wait = ExternalTaskSensor(task_id='wait', external_dag_id='up', external_task_id='load')\n    \
               a = SQLExecuteQueryOperator(task_id='a', sql='insert into mart.a select * from raw.x')\n    \
               b = SQLExecuteQueryOperator(task_id='b', sql='insert into mart.b select * from mart.a', pool='p1')\n    \
               wait >> a >> b\n";
    let base: &[(&str, &str)] = &[("dags/etl.py", dag)];
    let cases: [(&str, &str, Entry, &str); 6] = [
        (
            "from raw.x')",
            "from raw.x', trigger_rule='all_done')",
            ("airflow:etl.a", "config", &["table.mart.b"]),
            "trigger_rule: unset → all_done",
        ),
        (
            "'@daily'",
            "'@hourly'",
            ("airflow:etl", "config", &[]),
            "schedule: @daily → @hourly",
        ),
        (
            "wait >> a >> b",
            "a >> b",
            ("airflow:etl.a", "config", &["table.mart.b"]),
            "upstream: wait → none",
        ),
        (
            "from mart.a', pool",
            "from mart.a', conn_id='dwh_staging', pool",
            ("airflow:etl.b", "config", &[]),
            "connections: conn_id=dwh → conn_id=dwh_staging",
        ),
        (
            "'conn_id': 'dwh'",
            "'conn_id': 'dwh2'",
            ("airflow:etl.a", "config", &["table.mart.b"]),
            "connections: conn_id=dwh → conn_id=dwh2",
        ),
        (
            "pool='p1'",
            "pool='p2'",
            ("airflow:etl.b", "config", &[]),
            "pool: p1 → p2",
        ),
    ];
    for (from, to, expected, column) in cases {
        let repo = GitRepo::new(base);
        assert!(dag.contains(from), "{from}");
        repo.write("dags/etl.py", &dag.replace(from, to));
        let (json, _) = run(repo.path(), &["--base", "HEAD"]);
        let found = changes(&json);
        assert!(
            found.contains(&owned(&[expected])[0]),
            "{from} → {to}: {found:?}"
        );
        let entry = json["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["model"] == expected.0)
            .unwrap();
        assert!(
            entry["columns"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c == column),
            "{from} → {to}: {entry}"
        );
    }
}

#[test]
fn a_file_past_the_size_bound_is_never_copied_and_never_silent() {
    // 600 MB of nothing, 1 MB in git: once copied whole to the scratch
    // folder (RAM), and, deleted in head, read as "no changes".
    let repo = GitRepo::new(&[
        ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
        ("models/a.sql", "select 1 as id\n"),
    ]);
    let huge = repo.path().join("models/huge.sql");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(600_000_000)
        .unwrap();
    repo.commit("a model past the bound");
    // The same on both sides: nothing to report.
    let (json, code) = run(repo.path(), &["--base", "HEAD"]);
    assert_eq!(changes(&json), owned(&[]), "{json}");
    assert_eq!(code, 0);
    repo.remove("models/huge.sql");
    let (json, code) = run(repo.path(), &["--base", "HEAD", "--fail-on", "breaking"]);
    assert_eq!(
        changes(&json),
        owned(&[("models/huge.sql", "could-not-compare", &[])]),
        "{json}"
    );
    let reason = json["changes"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("base: models/huge.sql:0:0: larger than 512 MiB"),
        "{reason}"
    );
    assert_eq!(code, 1);
}

#[cfg(unix)]
#[test]
fn a_link_or_a_submodule_in_the_base_stops_the_comparison() {
    let files: &[(&str, &str)] = &[
        ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
        ("shared/a.sql", "select 1 as id, 2 as v\n"),
        ("models/b.sql", "select v from {{ ref('a') }}\n"),
    ];
    // The base's model is a link; the head's a file dropping `v`: once
    // "added", exit 0 under --fail-on breaking (the base copy left it out).
    let repo = GitRepo::new(files);
    std::os::unix::fs::symlink("../shared/a.sql", repo.path().join("models/a.sql")).unwrap();
    repo.commit("a linked model");
    repo.remove("models/a.sql");
    repo.write("models/a.sql", "select 1 as id\n");
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(repo.path())
        .args(["diff", "--base", "HEAD", "--fail-on", "breaking"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("models/a.sql: is a link"), "{stderr}");
    // A submodule under the project: another repository's files.
    let repo = GitRepo::new(files);
    let head = repo.git(&["rev-parse", "HEAD"]);
    let info = format!("160000,{},models/vendor", head.trim());
    repo.git(&["update-index", "--add", "--cacheinfo", &info]);
    repo.git(&["commit", "-q", "-m", "a submodule"]);
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .current_dir(repo.path())
        .args(["diff", "--base", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`models/vendor` is a git submodule"),
        "{stderr}"
    );
}

#[test]
fn seed_rows_a_python_models_body_and_a_template_branch_are_compared() {
    // Each once read as "no changes", exit 0: a seed's rows (its file is
    // not read), a Python model's body (no SQL), a DAG template's branch
    // for other run dates (the run ripple renders takes the other).
    let files: &[(&str, &str)] = &[
        ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
        ("seeds/codes.csv", "code,label\n01,one\n"),
        ("models/labeled.sql", "select * from {{ ref('codes') }}\n"),
        (
            "models/py_model.py",
            "def model(dbt, session):\n    df = dbt.ref('labeled').df()\n    return df[df.code > 0]\n",
        ),
        (
            "models/after_py.sql",
            "select * from {{ ref('py_model') }}\n",
        ),
        (
            "dags/d.py",
            "from datetime import datetime\nfrom airflow import DAG\n\
             from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\n\n\
             with DAG('d', schedule='@daily', start_date=datetime(2024, 1, 1)):\n    \
             SQLExecuteQueryOperator(task_id='c', sql=\"insert into mart.c select * from raw.x {% if ds.endswith('-01') %}where x = 1{% else %}where x > 0{% endif %}\")\n",
        ),
    ];
    let cases: [(&str, &str, &str, Entry); 3] = [
        (
            "seeds/codes.csv",
            "01,one",
            "01,uno",
            (
                "seed.codes",
                "breaking",
                &["model.after_py", "model.labeled", "model.py_model"],
            ),
        ),
        (
            "models/py_model.py",
            "df.code > 0",
            "df.code < 0",
            ("model.py_model", "could-not-compare", &["model.after_py"]),
        ),
        (
            "dags/d.py",
            "where x > 0",
            "where x < 0",
            ("airflow:d.c", "could-not-compare", &[]),
        ),
    ];
    for (file, from, to, expected) in cases {
        let repo = GitRepo::new(files);
        let text = files.iter().find(|(p, _)| *p == file).unwrap().1;
        assert!(text.contains(from), "{from}");
        repo.write(file, &text.replace(from, to));
        let (json, _) = run(repo.path(), &["--base", "HEAD"]);
        assert_eq!(changes(&json), owned(&[expected]), "{file}");
        // Two revisions: the seeds of both copies compared by object id.
        repo.commit("head");
        let (json, _) = run(repo.path(), &["--base", "HEAD~1", "--head", "HEAD"]);
        assert_eq!(changes(&json), owned(&[expected]), "{file}, two revisions");
    }
    // Unchanged seeds stay silent, whichever way the sides are read.
    let repo = GitRepo::new(files);
    let (json, _) = run(repo.path(), &["--base", "HEAD"]);
    assert_eq!(changes(&json), owned(&[]));
    let (base, head) = (temp_project(files), temp_project(files));
    std::fs::write(head.path().join("seeds/codes.csv"), "code,label\n01,uno\n").unwrap();
    let (json, _) = run_dirs(base.path(), head.path());
    assert_eq!(
        changes(&json),
        owned(&[(
            "seed.codes",
            "breaking",
            &["model.after_py", "model.labeled", "model.py_model"]
        )])
    );
}

#[test]
fn a_macro_change_a_hook_or_an_execute_branch_hides_is_not_silent() {
    // Round 27: `dbt run` went from 1 row to 0 in each model, and diff
    // said "no changes": ripple renders with `execute` false and does not
    // render hooks.
    let files: &[(&str, &str)] = &[
        ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
        (
            "macros/m.sql",
            "{% macro cleanup() %}delete from {{ this }} where amount < 0{% endmacro %}\n{% macro flt() %}{% if execute %}where amount > 0{% endif %}{% endmacro %}\n{% macro plain() %}1{% endmacro %}\n",
        ),
        ("models/base.sql", "select 1 as id, 5 as amount\n"),
        (
            "models/hooked.sql",
            "{{ config(materialized='table', post_hook=\"{{ cleanup() }}\") }}\nselect * from {{ ref('base') }}\n",
        ),
        (
            "models/exec_model.sql",
            "select * from {{ ref('base') }} {{ flt() }}\n",
        ),
        (
            "models/exec_inline.sql",
            "{% if execute %}{% set w = 'where id > 0' %}{% else %}{% set w = '' %}{% endif %}\nselect * from {{ ref('base') }} {{ w }}\n",
        ),
        (
            "models/calm.sql",
            "select {{ plain() }} as x from {{ ref('base') }}\n",
        ),
    ];
    let repo = GitRepo::new(files);
    let macros = files[1]
        .1
        .replace("amount < 0", "amount < 100")
        .replace("amount > 0", "amount > 1000");
    repo.write("macros/m.sql", &macros);
    repo.write(
        "models/exec_inline.sql",
        &files[5].1.replace("id > 0", "id > 1000"),
    );
    let (json, code) = run(repo.path(), &["--base", "HEAD", "--fail-on", "breaking"]);
    assert_eq!(
        changes(&json),
        owned(&[
            ("model.exec_inline", "could-not-compare", &[]),
            ("model.exec_model", "could-not-compare", &[]),
            ("model.hooked", "could-not-compare", &[]),
        ]),
        "{json}"
    );
    assert_eq!(code, 1);
}

#[test]
fn a_change_to_the_projects_run_hooks_is_not_silent() {
    // `on-run-end: delete ... where amount < 0` becoming `< 100` emptied a
    // model while diff said "no changes" (round 27).
    let project = "name: p\nversion: '1.0'\nprofile: p\non-run-end: \"delete from {{ target.schema }}.base where amount < 0\"\n";
    let repo = GitRepo::new(&[
        ("dbt_project.yml", project),
        ("models/base.sql", "select 1 as id, 5 as amount\n"),
        ("models/down.sql", "select * from {{ ref('base') }}\n"),
    ]);
    repo.write("dbt_project.yml", &project.replace("< 0", "< 100"));
    let (json, code) = run(repo.path(), &["--base", "HEAD", "--fail-on", "breaking"]);
    assert_eq!(
        changes(&json),
        owned(&[(
            "dbt_project.yml",
            "could-not-compare",
            &["model.base", "model.down"]
        )]),
        "{json}"
    );
    assert_eq!(code, 1);
    // A change elsewhere in the file is no hook change.
    let repo = GitRepo::new(&[
        ("dbt_project.yml", project),
        ("models/base.sql", "select 1 as id, 5 as amount\n"),
    ]);
    repo.write(
        "dbt_project.yml",
        &project.replace("version: '1.0'", "version: '1.1'"),
    );
    let (json, _) = run(repo.path(), &["--base", "HEAD"]);
    assert_eq!(changes(&json), owned(&[]), "{json}");
}

#[test]
fn promoting_a_model_version_breaks_what_refs_it_unpinned() {
    // Round 28: `latest_version: 1` → `2` made every unpinned `ref('dim')`
    // read `dim_v2` (dbt's rows changed), and diff said "no changes": the
    // ref was printed as the first version's relation at both revisions.
    let files: &[(&str, &str)] = &[
        ("dbt_project.yml", "name: s\nversion: '1.0'\nprofile: s\n"),
        ("models/dim_v1.sql", "select id, name from raw.c\n"),
        (
            "models/dim_v2.sql",
            "select id, upper(name) as name from raw.c\n",
        ),
        (
            "models/names.sql",
            "select id, name from {{ ref('dim') }}\n",
        ),
        (
            "models/pinned.sql",
            "select id from {{ ref('dim', v=1) }}\n",
        ),
        (
            "models/v.yml",
            "version: 2\nmodels:\n  - name: dim\n    latest_version: 1\n    versions:\n      - v: 1\n      - v: 2\n",
        ),
    ];
    let repo = GitRepo::new(files);
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write(
        "models/v.yml",
        &files[5].1.replace("latest_version: 1", "latest_version: 2"),
    );
    let head = repo.commit("promote v2");
    let (json, code) = run(repo.path(), &["--base", &base, "--head", &head]);
    assert_eq!(code, 1, "{json}");
    let changed: Vec<(String, String)> = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["model"].as_str().unwrap().to_string(),
                c["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        changed.contains(&("model.names".to_string(), "breaking".to_string())),
        "{changed:?}"
    );
    // The pinned ref reads v1 at both revisions.
    assert!(
        !changed.iter().any(|(m, _)| m == "model.pinned"),
        "{changed:?}"
    );
}

#[test]
fn an_edit_in_a_branch_the_render_does_not_take_could_not_be_compared() {
    // Round 29: an edit inside `{% if env_var('DEPLOY_ENV', 'dev') ==
    // 'prod' %}` changed production's rows (dbt-duckdb, DEPLOY_ENV=prod),
    // and diff said "no changes": ripple renders the default branch.
    let model = "select id, status from raw.o\n{% if env_var('DEPLOY_ENV', 'dev') == 'prod' %}\nwhere status != 'test'\n{% endif %}\n";
    let files: &[(&str, &str)] = &[
        ("dbt_project.yml", "name: s\nversion: '1.0'\nprofile: s\n"),
        ("models/stg.sql", model),
        ("models/fct.sql", "select id from {{ ref('stg') }}\n"),
    ];
    let repo = GitRepo::new(files);
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write(
        "models/stg.sql",
        &model.replace("!= 'test'", "not in ('test', 'cancelled')"),
    );
    let head = repo.commit("prod filter");
    let (json, code) = run(repo.path(), &["--base", &base, "--head", &head]);
    assert_eq!(code, 1, "{json}");
    let c = &json["changes"][0];
    assert_eq!(c["model"], "model.stg", "{json}");
    assert_eq!(c["kind"], "could-not-compare", "{json}");
    // A comment outside any branch is still no change.
    repo.write(
        "models/fct.sql",
        "-- ids\nselect id from {{ ref('stg') }}\n",
    );
    let later = repo.commit("comment");
    let (json, code) = run(repo.path(), &["--base", &head, "--head", &later]);
    assert_eq!(code, 0, "{json}");
}

#[test]
fn a_contracted_column_type_change_is_a_change_of_its_rows() {
    // Round 29: `numeric(18,4)` → `numeric(18,0)` under an enforced
    // contract rounded every row (dbt-postgres); diff said "no changes".
    let yml = |ty: &str, enforced: bool| {
        format!(
            "version: 2\nmodels:\n  - name: pay\n    config:\n      contract: {{enforced: {enforced}}}\n    columns:\n      - name: id\n        data_type: integer\n      - name: amount\n        data_type: {ty}\n"
        )
    };
    for enforced in [true, false] {
        let base_yml = yml("numeric(18,4)", enforced);
        let files: &[(&str, &str)] = &[
            ("dbt_project.yml", "name: s\nversion: '1.0'\nprofile: s\n"),
            ("models/pay.sql", "select id, amount from raw.p\n"),
            (
                "models/rpt.sql",
                "select sum(amount) as total from {{ ref('pay') }}\n",
            ),
            ("models/pay.yml", &base_yml),
        ];
        let repo = GitRepo::new(files);
        let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
        repo.write("models/pay.yml", &yml("numeric(18,0)", enforced));
        let head = repo.commit("round amounts");
        let (json, _) = run(repo.path(), &["--base", &base, "--head", &head]);
        let models: Vec<&str> = json["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["model"].as_str().unwrap())
            .collect();
        // Only an enforced contract builds the table with the types.
        assert_eq!(models.contains(&"model.pay"), enforced, "{json}");
    }
}
