//! dbt's context: every function, object and cross-database macro a model
//! or macro may call without defining it.

use super::*;

/// dbt's context: everything a model or macro may call without defining it.
pub(super) fn add_builtins(
    env: &mut Environment<'static>,
    settings: &Arc<Settings>,
    table: &Arc<MacroTable>,
) {
    let s = settings.clone();
    env.add_function(
        "ref",
        move |state: &State, args: Rest<Value>, kwargs: Kwargs| -> Result<Value, Error> {
            let strings: Vec<String> = args.iter().map(|v| v.to_string()).collect();
            let (package, name) = match strings.as_slice() {
                [name] => (None, name.clone()),
                [package, name] => (Some(package.clone()), name.clone()),
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "ref() takes a model name, or a package and a model name",
                    ));
                }
            };
            let version = kwargs
                .get::<Option<Value>>("v")?
                .or(kwargs.get::<Option<Value>>("version")?)
                .map(|v| v.to_string());
            if let Some(cap) = capture(state) {
                lock(&cap.references).push(Target::Ref {
                    package,
                    name: name.clone(),
                    version: version.clone(),
                });
            }
            let relations = &s.relations;
            let pinned = version
                .as_deref()
                .and_then(|v| relations.by_name.get(&super::versioned_key(&name, v)));
            let relation = pinned
                .or_else(|| relations.by_name.get(&name))
                .cloned()
                .unwrap_or_else(|| Relation {
                    database: relations.default_database.clone(),
                    schema: relations.default_schema.clone(),
                    identifier: name,
                    exact: false,
                });
            let relation = Relation {
                exact: super::quotes_exact_case(&s.adapter),
                ..relation
            };
            if let Some(cap) = capture(state) {
                lock(&cap.printed).push(relation.name());
            }
            Ok(Value::from_object(relation))
        },
    );
    let s = settings.clone();
    env.add_function(
        "source",
        move |state: &State, source: String, table: String| -> Result<Value, Error> {
            if let Some(cap) = capture(state) {
                lock(&cap.references).push(Target::Source {
                    source: source.clone(),
                    table: table.clone(),
                });
            }
            let relation = s
                .relations
                .sources
                .get(&(source.clone(), table.clone()))
                .cloned()
                .unwrap_or(Relation {
                    database: None,
                    schema: source,
                    identifier: table,
                    exact: false,
                });
            let relation = Relation {
                exact: super::quotes_exact_case(&s.adapter),
                ..relation
            };
            if let Some(cap) = capture(state) {
                lock(&cap.printed).push(relation.name());
            }
            Ok(Value::from_object(relation))
        },
    );
    // dbt's `builtins.ref` / `builtins.source`: what a project's own `ref`
    // or `source` macro calls to reach the originals.
    let original = |name: &str| {
        env.globals()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let builtins = Builtins {
        r#ref: original("ref"),
        source: original("source"),
    };
    env.add_global("builtins", Value::from_object(builtins));
    env.add_function(
        "config",
        |state: &State, _args: Rest<ValueOrKwargs>, kwargs: Kwargs| -> Result<Value, Error> {
            let keys: Vec<String> = kwargs.args().map(str::to_string).collect();
            let mut values = Vec::with_capacity(keys.len());
            for key in keys {
                let value: Value = kwargs.get(&key)?;
                // Converted whole: measured first (see `guard::install`,
                // which leaves this function to do it).
                super::guard::check(state, "`config()`", std::slice::from_ref(&value))?;
                values.push((
                    key,
                    serde_json::to_value(&value).unwrap_or(serde_json::Value::Null),
                ));
            }
            if let Some(cap) = capture(state) {
                lock(&cap.config).extend(values);
            }
            Ok(Value::from(""))
        },
    );
    let s = settings.clone();
    let t = table.clone();
    env.add_function(
        "var",
        move |state: &State, name: String, default: Option<Value>| -> Result<Value, Error> {
            let named = |e: &dyn std::fmt::Display| {
                Error::new(ErrorKind::InvalidOperation, format!("var `{name}`: {e}"))
            };
            let package = capture(state).and_then(|c| c.package.clone());
            let values = match package.as_ref().and_then(|p| s.package_vars.get(p)) {
                Some(scope) => &scope.vars,
                None => &s.vars,
            };
            let key = (
                package.filter(|p| s.package_vars.contains_key(p)),
                name.clone(),
            );
            match t.vars.get(&key) {
                Some(Ok(template)) => super::call_macro(state, template, super::VAR_MACRO, &[])
                    .map_err(|e| match e.detail() {
                        Some(detail) => named(&detail),
                        None => named(&e.kind()),
                    }),
                Some(Err(message)) => Err(named(message)),
                None => super::compat::mutable(var(values, &key.1, default)),
            }
        },
    );
    env.add_function("env_var", env_var);
    filters::add(env);
    // dbt's type filters mark a value for its native renderer (YAML
    // configs); a model's SQL and its `config()` are rendered as text, where
    // dbt defines all four as the value unchanged.
    for name in ["as_bool", "as_number", "as_native", "as_text"] {
        env.add_filter(name, |v: Value| v);
    }
    // dbt's own naming, which a project's `generate_*_name` overrides call.
    env.add_function(
        "default__generate_alias_name",
        |custom: Option<Value>, node: Option<Value>| -> Value {
            if let Some(c) = custom.filter(given) {
                return Value::from(c.to_string().trim().to_string());
            }
            let node = node.unwrap_or_default();
            let name = node
                .get_attr("name")
                .map(|v| v.to_string())
                .unwrap_or_default();
            match node.get_attr("version") {
                Ok(v) if given(&v) => Value::from(format!("{name}_v{v}")),
                _ => Value::from(name),
            }
        },
    );
    let s = settings.clone();
    env.add_function(
        "default__generate_schema_name",
        move |custom: Option<Value>, _node: Option<Value>| -> Value {
            match custom.filter(given) {
                Some(c) => Value::from(format!("{}_{}", s.target.schema, c.to_string().trim())),
                None => Value::from(s.target.schema.clone()),
            }
        },
    );
    env.add_function("is_incremental", || false);
    env.add_function("should_full_refresh", || false);
    env.add_function("log", |_args: Rest<ValueOrKwargs>| "");
    env.add_function("print", |_args: Rest<ValueOrKwargs>| "");
    // The warehouse cannot answer here: the calls answer nothing and are
    // recorded, for the `needs-warehouse` diagnostic.
    env.add_function("run_query", |state: &State, _args: Rest<ValueOrKwargs>| {
        asks_warehouse(state, "run_query");
        Value::from(())
    });
    env.add_function(
        "load_result",
        |state: &State, _args: Rest<ValueOrKwargs>| {
            asks_warehouse(state, "load_result");
            Value::from(())
        },
    );
    env.add_function("statement", |state: &State, _args: Rest<ValueOrKwargs>| {
        asks_warehouse(state, "statement");
        ""
    });
    // Its exact value does not matter to lineage; it must be deterministic.
    env.add_function("local_md5", |s: String| {
        format!("{:x}", crate::text::fnv64(&s, crate::text::FNV_BASIS))
    });
    // Paired as they are read, paid for by the pair and held to the items a
    // list may have: `zip(s, s)` of a 30 MB string made 60 million values.
    env.add_function(
        "zip",
        |state: &State, a: Value, b: Value| -> Result<Value, Error> {
            let mut pairs = Vec::new();
            for (x, y) in a.try_iter()?.zip(b.try_iter()?) {
                if pairs.len() >= super::guard::MAX_ITEMS {
                    return Err(super::guard::too_many("`zip()`"));
                }
                state.consume_fuel(1)?;
                pairs.push(Value::from(vec![x, y]));
            }
            Ok(Value::from(pairs))
        },
    );
    env.add_function("fromjson", |s: String| -> Value {
        serde_json::from_str::<serde_json::Value>(&s)
            .map(|v| Value::from(Serde(&v)))
            .unwrap_or(Value::from(()))
    });
    env.add_function("tojson", |v: Value| {
        serde_json::to_string(&v).unwrap_or_default()
    });
    env.add_function(
        "return",
        |state: &State, value: Option<Value>| -> Result<Value, Error> {
            if let Some(cap) = capture(state) {
                *lock(&cap.returned) = Some(value.unwrap_or(Value::from(())));
            }
            // Unwinds to the enclosing macro call, which returns the value.
            Err(Error::new(
                ErrorKind::InvalidOperation,
                "return() outside a macro",
            ))
        },
    );
    env.add_function("set", |v: Option<Value>| -> Result<Value, Error> {
        let mut items: Vec<Value> = match v {
            Some(v) => v.try_iter()?.collect(),
            None => Vec::new(),
        };
        items.sort();
        items.dedup();
        Ok(Value::from(items))
    });

    env.add_global("execute", false);
    env.add_global(
        "flags",
        context! { FULL_REFRESH => false, WHICH => "parse" },
    );
    env.add_global("invocation_id", "00000000-0000-0000-0000-000000000000");
    env.add_global("project_name", settings.project_name.clone());
    env.add_global("dbt_version", "1.11.0");
    env.add_global(
        "target",
        context! {
            name => settings.target.name.clone(),
            schema => settings.target.schema.clone(),
            database => settings.target.database.clone(),
            type => settings.adapter.clone(),
            threads => 1,
        },
    );
    env.add_global(
        "graph",
        context! { nodes => context! {}, sources => context! {}, exposures => context! {} },
    );
    // dbt-core's global macros are callable without `dbt.` too
    // (`{{ safe_cast(...) }}`), unless the project defines its own.
    for (name, _, _) in CROSS_DB {
        if !table.global.contains_key(*name) {
            env.add_function(*name, move |args: Rest<ValueOrKwargs>| {
                cross_db(name, &args)
            });
        }
    }
    env.add_global("exceptions", Value::from_object(Exceptions));
    env.add_global(
        "adapter",
        Value::from_object(Adapter {
            adapter: settings.adapter.clone(),
            macros: table.clone(),
            dispatch: settings.dispatch.clone(),
            project: settings.project_name.clone(),
        }),
    );
    env.add_global("api", Value::from_object(Namespace::placeholder("api")));
    env.add_global(
        "dbt",
        Value::from_object(Namespace {
            package: "dbt".to_string(),
            macros: table.clone(),
        }),
    );
    for package in &table.packages {
        env.add_global(
            package.clone(),
            Value::from_object(Namespace {
                package: package.clone(),
                macros: table.clone(),
            }),
        );
    }
}

/// Records that rendering reached a call only the warehouse can answer.
fn asks_warehouse(state: &State, call: &str) {
    if let Some(cap) = capture(state) {
        lock(&cap.warehouse).insert(format!("`{call}`"));
    }
}

/// Whether a macro argument was given (not `none`, not left out).
fn given(v: &Value) -> bool {
    !v.is_none() && !v.is_undefined()
}

/// dbt's `var(name, default)`: the project's value, else the default.
pub(super) fn var(
    vars: &BTreeMap<String, serde_json::Value>,
    name: &str,
    default: Option<Value>,
) -> Value {
    match vars.get(name) {
        Some(v) => Value::from(Serde(v)),
        None => default.unwrap_or(Value::from(())),
    }
}

/// dbt's `env_var(name, default)`. ripple never reads the environment, so
/// that results cannot depend on it: the default, or an empty string.
pub(super) fn env_var(_name: String, default: Option<Value>) -> Value {
    default.unwrap_or(Value::from(""))
}

/// `builtins`: dbt's own `ref` and `source`, for a project macro that
/// replaces them.
#[derive(Debug)]
struct Builtins {
    r#ref: Value,
    source: Value,
}

impl Object for Builtins {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "ref" => Some(self.r#ref.clone()),
            "source" => Some(self.source.clone()),
            _ => None,
        }
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        // Arguments a method turns into text are measured first.
        super::guard::check(state, format_args!("`.{method}()`"), args)?;
        match method {
            "ref" => self.r#ref.call(state, args),
            "source" => self.source.call(state, args),
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

/// `exceptions.raise_compiler_error(msg)` fails the render, as in dbt;
/// `exceptions.warn(...)` does nothing.
#[derive(Debug)]
struct Exceptions;

impl Object for Exceptions {
    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        // Arguments a method turns into text are measured first.
        super::guard::check(state, format_args!("`.{method}()`"), args)?;
        match method {
            "raise_compiler_error" | "raise_not_implemented" => Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "the template raised an error: {}",
                    args.first().map(|a| a.to_string()).unwrap_or_default()
                ),
            )),
            _ => Ok(Value::from("")),
        }
    }
}

/// `adapter`: `dispatch()` resolves to `<adapter>__name`, then `default__name`,
/// as dbt does; every other method answers a placeholder.
#[derive(Debug)]
struct Adapter {
    adapter: String,
    macros: Arc<MacroTable>,
    /// `dispatch:` search orders by namespace.
    dispatch: BTreeMap<String, Vec<String>>,
    /// The root project's name, as search orders write it.
    project: String,
}

/// The prefixes `adapter.dispatch` tries, as dbt's adapters inherit:
/// Redshift from Postgres, Databricks from Spark; `default` last.
pub(super) fn adapter_prefixes(adapter: &str) -> Vec<&str> {
    let mut out = vec![adapter];
    match adapter {
        "redshift" => out.push("postgres"),
        "databricks" => out.push("spark"),
        _ => {}
    }
    out.push("default");
    out
}

impl Object for Adapter {
    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        // Arguments a method turns into text are measured first.
        super::guard::check(state, format_args!("`.{method}()`"), args)?;
        match method {
            "dispatch" => {
                let name = args.first().map(|v| v.to_string()).unwrap_or_default();
                let namespace = args
                    .get(1)
                    .filter(|v| !v.is_none() && !v.is_undefined() && !v.is_kwargs())
                    .map(|v| v.to_string());
                // dbt's order: each package of the search order (the
                // namespace's `dispatch:` config, else the root project then
                // the namespace), and in each the adapter's prefixes.
                // `None` is the root project; without a namespace, any macro.
                let packages: Vec<Option<String>> = match &namespace {
                    None => vec![None],
                    Some(ns) => match self.dispatch.get(ns) {
                        Some(order) => order
                            .iter()
                            .map(|p| (*p != self.project).then(|| p.clone()))
                            .collect(),
                        None => vec![None, Some(ns.clone())],
                    },
                };
                for package in &packages {
                    for prefix in adapter_prefixes(&self.adapter) {
                        let candidate = format!("{prefix}__{name}");
                        let found = match package {
                            Some(p) => self.macros.by_package.get(&(p.clone(), candidate.clone())),
                            None if namespace.is_some() => self.macros.root.get(&candidate),
                            None => self.macros.global.get(&candidate),
                        };
                        if let Some(template) = found {
                            return Ok(Value::from_function(macro_caller(
                                template.clone(),
                                candidate,
                            )));
                        }
                    }
                }
                // dbt's own implementation (its global project), which
                // ripple holds as the cross-database macros: what older
                // dbt_utils shims reach with `adapter.dispatch(name, 'dbt')`.
                if matches!(namespace.as_deref(), None | Some("dbt"))
                    && CROSS_DB.iter().any(|(n, _, _)| *n == name)
                {
                    return Ok(Value::from_function(move |args: Rest<ValueOrKwargs>| {
                        cross_db(&name, &args)
                    }));
                }
                // Leniently past dbt (which would fail): any package's
                // implementation. Never the unprefixed macro itself, which
                // dbt's dispatch never finds: a shim named like the macro it
                // dispatches would call itself until the depth limit.
                let any = adapter_prefixes(&self.adapter)
                    .into_iter()
                    .map(|prefix| format!("{prefix}__{name}"))
                    .find_map(|c| self.macros.global.get(&c).map(|t| (t.clone(), c)));
                if let Some((template, candidate)) = any {
                    return Ok(Value::from_function(macro_caller(template, candidate)));
                }
                if let Some(cap) = capture(state) {
                    lock(&cap.unknown).insert(format!("adapter.dispatch('{name}')"));
                }
                Ok(placeholder_function())
            }
            "quote" | "quote_as_configured" => Ok(args.first().cloned().unwrap_or_default()),
            "get_relation" | "load_relation" | "list_relations_without_caching" => {
                asks_warehouse(state, &format!("adapter.{method}"));
                Ok(Value::from(()))
            }
            "get_columns_in_relation" => {
                asks_warehouse(state, "adapter.get_columns_in_relation");
                Ok(Value::from(Vec::<Value>::new()))
            }
            _ => Ok(Value::from_safe_string(PLACEHOLDER.to_string())),
        }
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "type" => Some(Value::from(self.adapter.clone())),
            _ => None,
        }
    }
}

fn placeholder_function() -> Value {
    Value::from_function(|_args: Rest<ValueOrKwargs>| {
        Value::from_safe_string(PLACEHOLDER.to_string())
    })
}

/// A package namespace (`dbt_utils.star(...)`, `dbt.current_timestamp()`):
/// the package's macro when it is installed, a placeholder otherwise.
#[derive(Debug)]
pub(super) struct Namespace {
    package: String,
    macros: Arc<MacroTable>,
}

impl Namespace {
    pub(super) fn placeholder(name: &str) -> Namespace {
        Namespace {
            package: name.to_string(),
            macros: Arc::new(MacroTable::default()),
        }
    }
}

impl Namespace {
    /// The template of this package's macro `name`.
    fn find(&self, name: &str) -> Option<&String> {
        self.macros
            .by_package
            .get(&(self.package.clone(), name.to_string()))
            .or_else(|| {
                (self.package == "dbt")
                    .then(|| self.macros.global.get(name))
                    .flatten()
            })
    }
}

impl Namespace {
    /// Whether `name` is one of dbt-core's cross-database macros.
    fn is_cross_db(&self, name: &str) -> bool {
        self.package == "dbt" && CROSS_DB.iter().any(|(n, _, _)| *n == name)
    }
}

impl Object for Namespace {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let name = key.as_str()?;
        let found = self.find(name);
        if found.is_none() && self.is_cross_db(name) {
            let name = name.to_string();
            return Some(Value::from_function(move |args: Rest<ValueOrKwargs>| {
                cross_db(&name, &args)
            }));
        }
        Some(match found {
            Some(template) => {
                Value::from_function(macro_caller(template.clone(), name.to_string()))
            }
            None => Value::from_object(Namespace {
                package: format!("{}.{name}", self.package),
                macros: Arc::new(MacroTable::default()),
            }),
        })
    }

    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, _args: &[Value]) -> Result<Value, Error> {
        if let Some(cap) = capture(state) {
            lock(&cap.unknown).insert(format!("{}()", self.package));
        }
        Ok(Value::from_safe_string(PLACEHOLDER.to_string()))
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        // Arguments a method turns into text are measured first.
        super::guard::check(state, format_args!("`.{method}()`"), args)?;
        if let Some(template) = self.find(method) {
            return call_macro(state, template, method, args);
        }
        if self.is_cross_db(method) {
            let args: Vec<ValueOrKwargs> = args.iter().cloned().map(ValueOrKwargs::from).collect();
            return cross_db(method, &args);
        }
        if let Some(cap) = capture(state) {
            lock(&cap.unknown).insert(format!("{}.{method}()", self.package));
        }
        Ok(Value::from_safe_string(PLACEHOLDER.to_string()))
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(PLACEHOLDER)
    }
}

/// dbt's own cross-database macros (`dbt.date_trunc(...)`), which live in
/// dbt-core rather than in any project: each renders as portable SQL with
/// its arguments pasted in as dbt does. `{0}`, `{1}`, ... are the positional
/// arguments; `{*}` all of them, comma-separated.
const CROSS_DB: &[(&str, &[&str], &str)] = &[
    (
        "date_trunc",
        &["datepart", "date"],
        "date_trunc('{0}', {1})",
    ),
    (
        "dateadd",
        &["datepart", "interval", "from_date_or_timestamp"],
        "dateadd({0}, {1}, {2})",
    ),
    (
        "datediff",
        &["first_date", "second_date", "datepart"],
        "datediff({2}, {0}, {1})",
    ),
    ("last_day", &["date", "datepart"], "last_day({0})"),
    ("current_timestamp", &[], "current_timestamp"),
    ("current_timestamp_backcompat", &[], "current_timestamp"),
    ("type_string", &[], "varchar"),
    ("type_float", &[], "float"),
    ("type_numeric", &[], "numeric"),
    ("type_int", &[], "integer"),
    ("type_bigint", &[], "bigint"),
    ("type_timestamp", &[], "timestamp"),
    ("type_boolean", &[], "boolean"),
    ("safe_cast", &["field", "type"], "cast({0} as {1})"),
    ("cast", &["field", "type"], "cast({0} as {1})"),
    ("cast_bool_to_text", &["field"], "cast({0} as varchar)"),
    ("hash", &["field"], "md5(cast({0} as varchar))"),
    ("concat", &["fields"], "concat({0})"),
    ("string_literal", &["value"], "'{0}'"),
    ("any_value", &["expression"], "any_value({0})"),
    ("bool_or", &["expression"], "bool_or({0})"),
    (
        "split_part",
        &["string_text", "delimiter_text", "part_number"],
        "split_part({0}, {1}, {2})",
    ),
    (
        "position",
        &["substring_text", "string_text"],
        "position({0} in {1})",
    ),
    (
        "replace",
        &["field", "old_chars", "new_chars"],
        "replace({0}, {1}, {2})",
    ),
    (
        "right",
        &["string_text", "length_expression"],
        "right({0}, {1})",
    ),
    ("length", &["expression"], "length({0})"),
    (
        "listagg",
        &["measure", "delimiter_text"],
        "string_agg({0}, {1})",
    ),
    ("except", &[], "except"),
    ("intersect", &[], "intersect"),
    ("escape_single_quotes", &["expression"], "{0}"),
];

fn cross_db(name: &str, args: &[ValueOrKwargs]) -> Result<Value, Error> {
    let Some((_, params, pattern)) = CROSS_DB.iter().find(|(n, _, _)| *n == name) else {
        return Ok(Value::from_safe_string(PLACEHOLDER.to_string()));
    };
    let mut filled: Vec<String> = vec![String::new(); params.len()];
    let mut next = 0;
    for a in args {
        if a.is_kwargs() {
            for (i, param) in params.iter().enumerate() {
                if let Ok(v) = a.get_attr(param)
                    && !v.is_undefined()
                {
                    filled[i] = flatten(&v);
                }
            }
        } else if next < filled.len() {
            filled[next] = flatten(a);
            next += 1;
        }
    }
    let mut out = pattern.to_string();
    for (i, arg) in filled.iter().enumerate() {
        out = out.replace(&format!("{{{i}}}"), arg);
    }
    Ok(Value::from_safe_string(out))
}

/// A macro argument as dbt pastes it: lists comma-joined, the rest as text.
fn flatten(v: &Value) -> String {
    match v.try_iter() {
        Ok(items) if v.kind() == minijinja::value::ValueKind::Seq => {
            items.map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
        }
        _ => v.to_string(),
    }
}
