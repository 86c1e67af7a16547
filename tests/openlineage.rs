//! `ripple graph --format openlineage`: every event validates against the
//! official OpenLineage JSON Schema (vendored in tests/openlineage/, offline),
//! every facet against its own facet schema; the events say what the graph
//! says; the output is a snapshot and is byte-identical run after run.

use std::collections::{BTreeMap, BTreeSet};

use assert_cmd::Command;
use serde_json::{Value, json};

#[path = "support/temp_project.rs"]
mod temp_project;

#[path = "../benches/support/dbt_project.rs"]
mod generated;

const SCHEMA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/openlineage");
const FACETS: &[(&str, &str)] = &[
    ("sql", "SQLJobFacet"),
    ("jobType", "JobTypeJobFacet"),
    ("sourceCodeLocation", "SourceCodeLocationJobFacet"),
    ("schema", "SchemaDatasetFacet"),
    ("columnLineage", "ColumnLineageDatasetFacet"),
    ("parent", "ParentRunFacet"),
];

fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{SCHEMA_DIR}/{name}.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Validators for the event and for each facet, references resolved
/// against the vendored files only.
struct Schemas {
    event: jsonschema::Validator,
    facets: BTreeMap<&'static str, jsonschema::Validator>,
}

impl Schemas {
    fn new() -> Schemas {
        let spec = load("OpenLineage");
        let mut registry = jsonschema::Registry::new()
            .add(spec["$id"].as_str().unwrap(), spec.clone())
            .unwrap();
        let mut facet_docs = Vec::new();
        for (key, file) in FACETS {
            let doc = load(file);
            registry = registry
                .add(doc["$id"].as_str().unwrap(), doc.clone())
                .unwrap();
            facet_docs.push((*key, doc));
        }
        let registry = registry.prepare().unwrap();
        let build = |schema: &Value| {
            jsonschema::options()
                .offline()
                .with_registry(&registry)
                .build(schema)
                .unwrap()
        };
        let event = build(&json!({"$ref": spec["$id"]}));
        let facets = facet_docs
            .iter()
            .map(|(key, doc)| (*key, build(&json!({"$ref": doc["$id"]}))))
            .collect();
        Schemas { event, facets }
    }

    /// Every error of `event` and of each facet in it.
    fn errors(&self, event: &Value) -> Vec<String> {
        let mut errors: Vec<String> = self
            .event
            .iter_errors(event)
            .map(|e| format!("event: {e} at {}", e.instance_path()))
            .collect();
        let mut facet_maps: Vec<&Value> = vec![&event["job"]["facets"], &event["run"]["facets"]];
        for side in ["inputs", "outputs"] {
            for d in event[side].as_array().into_iter().flatten() {
                facet_maps.push(&d["facets"]);
            }
        }
        for map in facet_maps {
            for (key, facet) in map.as_object().into_iter().flatten() {
                let validator = self
                    .facets
                    .get(key.as_str())
                    .unwrap_or_else(|| panic!("no schema vendored for facet {key}"));
                let wrapped = json!({ key.clone(): facet });
                errors.extend(
                    validator
                        .iter_errors(&wrapped)
                        .map(|e| format!("facet {key}: {e} at {}", e.instance_path())),
                );
                // Facets must name their producer and schema.
                for field in ["_producer", "_schemaURL"] {
                    if facet.get(field).and_then(Value::as_str).is_none() {
                        errors.push(format!("facet {key}: no {field}"));
                    }
                }
            }
        }
        errors
    }
}

/// `ripple graph --format openlineage` of `project` at a fixed event time.
fn export(project: &std::path::Path, extra: &[&str]) -> std::process::Output {
    Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "graph",
            "--format",
            "openlineage",
            "--event-time",
            "2026-01-10",
            "--project",
        ])
        .arg(project)
        .args(extra)
        .output()
        .unwrap()
}

fn events(project: &std::path::Path, extra: &[&str]) -> (String, Vec<Value>) {
    let out = export(project, extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let parsed = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    (text, parsed)
}

fn shop() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/shop")
}

#[test]
fn shop_events_validate_and_match_the_snapshot() {
    let schemas = Schemas::new();
    let (text, parsed) = events(&shop(), &[]);
    assert!(!parsed.is_empty());
    for e in &parsed {
        let errors = schemas.errors(e);
        assert!(errors.is_empty(), "{errors:#?}\n{e:#}");
    }
    // dbt models and Airflow SQL tasks are there (plain SQL scripts are in
    // `events_say_what_the_graph_says`).
    let integrations: BTreeSet<&str> = parsed
        .iter()
        .map(|e| {
            e["job"]["facets"]["jobType"]["integration"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(integrations, BTreeSet::from(["AIRFLOW", "DBT"]));
    // The schemas do reject what is not OpenLineage.
    let mut broken = parsed[0].clone();
    broken["job"].as_object_mut().unwrap().remove("namespace");
    broken["job"]["facets"]["sql"]
        .as_object_mut()
        .unwrap()
        .remove("query");
    broken["outputs"][0]["facets"]["columnLineage"]["fields"] =
        json!({"x": {"inputFields": [{"name": "a"}]}});
    let errors = schemas.errors(&broken);
    for wanted in ["event:", "facet sql:", "facet columnLineage:"] {
        assert!(
            errors.iter().any(|e| e.starts_with(wanted)),
            "{wanted} in {errors:#?}"
        );
    }
    let (again, _) = events(&shop(), &[]);
    assert_eq!(text, again, "byte-identical on a second run");
    insta::assert_snapshot!("shop_openlineage", text);
}

#[test]
fn run_mode_pairs_start_and_complete_with_stable_ids_and_parents() {
    let schemas = Schemas::new();
    let (_, parsed) = events(&shop(), &["--openlineage-mode", "run"]);
    assert_eq!(parsed.len() % 2, 0);
    for pair in parsed.chunks(2) {
        for e in pair {
            let errors = schemas.errors(e);
            assert!(errors.is_empty(), "{errors:#?}\n{e:#}");
        }
        assert_eq!(pair[0]["eventType"], "START");
        assert_eq!(pair[1]["eventType"], "COMPLETE");
        assert_eq!(pair[0]["run"], pair[1]["run"]);
        let integration = pair[0]["job"]["facets"]["jobType"]["integration"]
            .as_str()
            .unwrap();
        let parent = &pair[0]["run"]["facets"]["parent"];
        match integration {
            // An Airflow task's parent is its DAG, named as Airflow's
            // integration names it (`dag.task` for the task).
            "AIRFLOW" => {
                let name = pair[0]["job"]["name"].as_str().unwrap();
                let dag = parent["job"]["name"].as_str().unwrap();
                assert!(name.starts_with(&format!("{dag}.")), "{name} under {dag}");
            }
            "DBT" => assert_eq!(parent["job"]["name"], "dbt.shop"),
            _ => assert!(parent.is_null()),
        }
    }
    let ids: BTreeSet<&str> = parsed
        .iter()
        .map(|e| e["run"]["runId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), parsed.len() / 2, "one run id per job");
}

#[test]
fn events_say_what_the_graph_says() {
    let dir = temp_project::temp_project(&[
        (
            "load.sql",
            "copy raw.orders from 's3://lake/orders/' iam_role 'r' format as parquet",
        ),
        (
            "daily.sql",
            "insert into mart.daily (day, revenue) select o.day, sum(o.amount) as revenue from raw.orders o join raw.fx f on f.day = o.day where o.status = 'ok' group by o.day",
        ),
        (
            "ripple.yml",
            "dialect: redshift\ntarget: { schema: mart, database: prod }\nopenlineage: { namespace: 'redshift://cluster.eu-west-1:5439', job_namespace: nightly }\n",
        ),
    ]);
    let schemas = Schemas::new();
    let (_, parsed) = events(dir.path(), &[]);
    for e in &parsed {
        let errors = schemas.errors(e);
        assert!(errors.is_empty(), "{errors:#?}\n{e:#}");
    }
    let by_name: BTreeMap<&str, &Value> = parsed
        .iter()
        .map(|e| (e["job"]["name"].as_str().unwrap(), e))
        .collect();
    assert_eq!(
        by_name.keys().copied().collect::<Vec<_>>(),
        ["daily.sql", "load.sql"]
    );
    assert_eq!(
        by_name["load.sql"]["job"]["facets"]["jobType"]["integration"],
        "SQL"
    );
    let load = by_name["load.sql"];
    assert_eq!(load["job"]["namespace"], "nightly");
    // A URL is named per the spec: bucket as namespace, key as name.
    assert_eq!(
        load["inputs"],
        json!([{"namespace": "s3://lake", "name": "orders/"}])
    );
    assert_eq!(load["outputs"][0]["name"], "prod.raw.orders");
    let daily = by_name["daily.sql"];
    let ns = "redshift://cluster.eu-west-1:5439";
    assert_eq!(
        daily["inputs"],
        json!([{"namespace": ns, "name": "prod.raw.fx"}, {"namespace": ns, "name": "prod.raw.orders"}])
    );
    let facets = &daily["outputs"][0]["facets"];
    assert_eq!(daily["outputs"][0]["name"], "prod.mart.daily");
    let fields = &facets["columnLineage"]["fields"];
    let inputs = |col: &str| -> Vec<String> {
        fields[col]["inputFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}.{}",
                    f["name"].as_str().unwrap(),
                    f["field"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(inputs("day"), ["prod.raw.orders.day"]);
    assert_eq!(inputs("revenue"), ["prod.raw.orders.amount"]);
    let conditions: BTreeSet<String> = facets["columnLineage"]["dataset"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["transformations"][0]["type"], "INDIRECT");
            format!(
                "{}.{}",
                f["name"].as_str().unwrap(),
                f["field"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        conditions,
        BTreeSet::from(
            [
                "prod.raw.fx.day",
                "prod.raw.orders.day",
                "prod.raw.orders.status"
            ]
            .map(String::from)
        )
    );
    assert_eq!(
        facets["schema"]["fields"],
        json!([{"name": "day", "ordinal_position": 1}, {"name": "revenue", "ordinal_position": 2}])
    );
    assert_eq!(
        daily["job"]["facets"]["sourceCodeLocation"]["url"],
        "file:daily.sql#L1"
    );
    // --select narrows to the jobs that write the selection.
    let (_, selected) = events(dir.path(), &["--select", "mart.daily"]);
    assert_eq!(selected.len(), 1);
    assert_eq!(selected[0]["job"]["name"], "daily.sql");
}

#[test]
fn every_event_of_a_10k_model_project_validates() {
    let dir = tempfile::tempdir().unwrap();
    let made = generated::generate(dir.path(), 10_000).unwrap();
    let g = ripple::graph::LineageGraph::build(
        ripple::ingest::load_project(dir.path(), &ripple::ingest::LoadOptions::default()).unwrap(),
    );
    let nodes = g.graph.node_indices().collect();
    let schemas = Schemas::new();
    for mode in [
        ripple::emit::openlineage::Mode::Static,
        ripple::emit::openlineage::Mode::Run,
    ] {
        let options = ripple::emit::openlineage::Options {
            mode,
            event_time: 0,
        };
        let text = ripple::emit::openlineage::events(&g, &nodes, &options).text;
        let mut count = 0;
        let mut edges = 0;
        for line in text.lines() {
            let e: Value = serde_json::from_str(line).unwrap();
            let errors = schemas.errors(&e);
            assert!(errors.is_empty(), "{errors:#?}\n{e:#}");
            count += 1;
            edges += e["inputs"].as_array().unwrap().len();
        }
        let per_job = if mode == ripple::emit::openlineage::Mode::Run {
            2
        } else {
            1
        };
        assert_eq!(count, made.models * per_job, "one event (pair) per model");
        // Every ref of every model is an input of its event.
        assert_eq!(edges, made.edges * per_job);
    }
}

/// A local HTTP server that answers each request with the next of
/// `statuses` (then 201) and records what it was sent.
struct Server {
    url: String,
    requests: std::sync::mpsc::Receiver<(String, String)>,
}

impl Server {
    fn start(statuses: Vec<u16>) -> Server {
        Server::answering(statuses, None)
    }

    /// [`Server::start`] whose answers' body is `message` (else
    /// `answer <status>`).
    fn answering(statuses: Vec<u16>, message: Option<&'static str>) -> Server {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/api/v1/lineage", listener.local_addr().unwrap());
        let (tx, requests) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut statuses = statuses.into_iter();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    head.push_str(&line);
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let status = statuses.next().unwrap_or(201);
                let text = message.map_or(format!("answer {status}"), str::to_string);
                let reply = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = stream.write_all(reply.as_bytes());
                if tx.send((head, String::from_utf8(body).unwrap())).is_err() {
                    return;
                }
            }
        });
        Server { url, requests }
    }
}

fn post(url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--post", url];
    args.extend_from_slice(extra);
    export(&shop(), &args)
}

#[test]
fn post_sends_every_event_in_order_and_retries_a_server_error() {
    let (text, _) = events(&shop(), &[]);
    // The second request fails once: it is sent again.
    let server = Server::start(vec![201, 503]);
    let out = post(&server.url, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout without --output");
    let lines: Vec<&str> = text.lines().collect();
    let got: Vec<(String, String)> = server.requests.try_iter().collect();
    assert_eq!(got.len(), lines.len() + 1, "one retry");
    let bodies: Vec<&str> = got.iter().map(|(_, b)| b.as_str()).collect();
    assert_eq!(bodies[0], lines[0]);
    assert_eq!(bodies[1], lines[1], "the refused try");
    assert_eq!(&bodies[2..], &lines[1..], "then every event, in order");
    let (head, _) = &got[0];
    assert!(
        head.starts_with("POST /api/v1/lineage HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.contains("Content-Type: application/json\r\n"),
        "{head}"
    );
    assert!(
        stderr.contains(&format!(
            "posted {} events to {} (1 retried)",
            lines.len(),
            server.url
        )),
        "{stderr}"
    );
}

#[test]
fn a_servers_answer_cannot_print_lines_of_its_own() {
    let server = Server::answering(
        vec![400],
        Some("bad\nposted 30 events to http://x\n::error file=a::forged"),
    );
    let out = post(&server.url, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        !stderr
            .lines()
            .any(|l| l.starts_with("posted") || l.starts_with("::error")),
        "{stderr}"
    );
    assert!(stderr.contains("bad\\nposted 30 events"), "{stderr}");
}

#[test]
fn post_stops_at_a_refused_event_and_says_what_was_sent() {
    let server = Server::start(vec![201, 201, 400]);
    let out = post(&server.url, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("event 3 (line 3 of the export) was refused with HTTP 400: answer 400")
            && stderr.contains("2 event(s) before it were accepted"),
        "{stderr}"
    );
    assert_eq!(
        server.requests.try_iter().count(),
        3,
        "nothing after the refusal"
    );
}

#[test]
fn post_stops_at_a_redirect_and_flags_say_their_range() {
    // A redirect was retried like a server error, to the same answer.
    let server = Server::start(vec![201, 307]);
    let out = post(&server.url, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("event 2 was answered HTTP 307, a redirect")
            && stderr.contains("1 event(s) before it were accepted"),
        "{stderr}"
    );
    assert_eq!(server.requests.try_iter().count(), 2, "no retry");
    // A number past the range says the range, not a Rust type.
    for (flag, value, range) in [
        ("--post-retries", "99999999999999999999", "from 0 to 100"),
        ("--post-timeout", "0", "from 1 to 604800"),
        ("--post-timeout", "1.5", "from 1 to 604800"),
    ] {
        let out = post(&server.url, &[flag, value]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("`{value}` is not a whole number {range}")),
            "{stderr}"
        );
        assert!(!stderr.contains("target type"), "{stderr}");
    }
}

#[test]
fn post_gives_up_on_a_server_that_is_not_there_and_refuses_https() {
    // A port that was free a moment ago: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/api/v1/lineage");
    let out = post(&url, &["--post-retries", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("event 1 failed 2 time(s)") && stderr.contains("Is the server up?"),
        "{stderr}"
    );
    // A host that cannot resolve (`.invalid` never does, RFC 6761): the
    // resolver's reason is in the message.
    let out = post(
        "http://nosuchhost.invalid/api/v1/lineage",
        &["--post-retries", "0"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("nosuchhost.invalid does not resolve: "),
        "{stderr}"
    );
    let out = post("https://marquez.example/api/v1/lineage", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("plain HTTP only"), "{stderr}");
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .args(["graph", "--post", "http://localhost:1/"])
        .arg("--project")
        .arg(shop())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("add `--format openlineage`"));
}

/// A ref cycle (a reads b, b reads a) is reported by `check` and exported
/// like any other graph: each job once, no endless walk of its columns.
#[test]
fn a_ref_cycle_exports_without_recursing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("models")).unwrap();
    std::fs::write(
        root.join("dbt_project.yml"),
        "name: cyc\nmodel-paths: [models]\n",
    )
    .unwrap();
    std::fs::write(
        root.join("models/a.sql"),
        "select id, x from {{ ref('b') }}\n",
    )
    .unwrap();
    std::fs::write(root.join("models/b.sql"), "select * from {{ ref('a') }}\n").unwrap();
    for extra in [&[][..], &["--openlineage-mode", "run"][..]] {
        let (_, events) = events(root, &[&["--no-cache"][..], extra].concat());
        let jobs: BTreeSet<String> = events
            .iter()
            .filter_map(|e| Some(e.pointer("/job/name")?.as_str()?.to_string()))
            .collect();
        assert_eq!(jobs.len(), 2, "{events:#?}");
    }
    let check = Command::cargo_bin("ripple")
        .unwrap()
        .args(["check", "--no-cache", "--project"])
        .arg(root)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&check.stdout).contains("cycle"));
}

#[test]
fn credentials_in_a_url_never_reach_a_namespace() {
    // `s3://KEY:SECRET@bucket` was sent whole as the namespace, and a host
    // with a space made a namespace that is no URI.
    let dir = temp_project::temp_project(&[
        (
            "load.sql",
            "copy raw.orders from 's3://AKIAXXXX:secretkey@lake/orders/' iam_role 'r' format as parquet;\ncopy raw.fx from 'https://ex ample.com/fx/' iam_role 'r' format as parquet;\ncopy raw.rates from 's3://lake/rates/' credentials 'aws_access_key_id=AKIAYYYY;aws_secret_access_key=othersecret' format as parquet;\ncopy raw.slash from 's3://AKIASLASH:wJal/K7MD+bP@lake/slash/' iam_role 'r' format as parquet;\ncopy raw.hash from 's3://AKIAHASH:sec#ret@lake/hash/' iam_role 'r' format as parquet;\ncopy raw.sas from 'https://acct.blob.core.windows.net/c/x.parquet?sv=2020&sig=SASSECRET' iam_role 'r' format as parquet;\ncopy raw.m from 's3://lake/m/?api_key=APIKEY999' iam_role 'r' master_symmetric_key 'MSK999' encrypted;\ninsert into raw.h select 'Bearer BEARER999' as h from raw.m; /* password = 'CPW999' */\ninsert into raw.k select dblink('host=db password=COLPW999', 'q') from raw.m",
        ),
        ("ripple.yml", "dialect: redshift\n"),
    ]);
    let (_, parsed) = events(dir.path(), &[]);
    let schemas = Schemas::new();
    let mut namespaces = BTreeSet::new();
    for e in &parsed {
        let errors = schemas.errors(e);
        assert!(errors.is_empty(), "{errors:#?}\n{e:#}");
        // Neither the datasets nor the job's `sql` facet (its text with
        // the secrets masked) carry a credential to the lineage server.
        let whole = e.to_string();
        // A raw secret holding `/` or `#` was cut there: its rest leaked
        // into the dataset's name and the facet (review round 20).
        for secret in [
            "secretkey",
            "AKIAXXXX",
            "AKIAYYYY",
            "othersecret",
            "AKIASLASH",
            "K7MD",
            "AKIAHASH",
            "ret@",
            "SASSECRET",
            "APIKEY999",
            "MSK999",
            "BEARER999",
            "CPW999",
            "COLPW999",
        ] {
            assert!(!whole.contains(secret), "{secret} in {whole}");
        }
        let inputs = e["inputs"].as_array().unwrap();
        for d in inputs.iter().chain(e["outputs"].as_array().unwrap()) {
            let text = d.to_string();
            assert!(
                !text.contains("secretkey") && !text.contains("AKIAXXXX"),
                "{text}"
            );
            namespaces.insert(d["namespace"].as_str().unwrap().to_string());
        }
    }
    assert!(namespaces.contains("s3://lake"), "{namespaces:?}");
    assert!(
        namespaces.contains("https://ex%20ample.com"),
        "{namespaces:?}"
    );
}

#[test]
fn a_status_code_that_is_none_is_named_not_called_a_missing_line() {
    // `HTTP/1.1 99999999999999999999 OK` was reported as "no status line".
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api/v1/lineage", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 65536];
            let _ = stream.read(&mut buf);
            let _ = stream
                .write_all(b"HTTP/1.1 99999999999999999999 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    let out = post(&url, &["--post-retries", "0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("status code `99999999999999999999` is not a three-digit HTTP status")
            && !stderr.contains("no status line"),
        "{stderr}"
    );
}
