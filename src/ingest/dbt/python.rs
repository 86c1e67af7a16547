//! dbt Python models (`models/**/*.py`), read statically as dbt itself
//! parses them — never imported, never run. dbt finds `def model(dbt,
//! session)` and the literal calls `dbt.ref(...)`, `dbt.source(...)` and
//! `dbt.config(...)` in it; ripple reads the same calls with Astral's parser
//! and writes them as the Jinja a SQL model would hold, so refs, sources,
//! configs, versions and packages go through one path. The body is Python,
//! not SQL: the model's edges are its refs and sources, and its columns are
//! unknown.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::Ranged;

use crate::ingest::files::LineIndex;
use crate::project::Diagnostic;

/// The Jinja standing for the Python model `text` of `file`: each literal
/// `dbt.ref`/`dbt.source`/`dbt.config` call on the line it is written on
/// (so findings name the right line), and the findings for calls dbt itself
/// would refuse (arguments that are not literals). An error when the file
/// has no `def model(dbt, session)`, as dbt gives.
pub(super) fn model_jinja(text: &str, file: &str) -> Result<(String, Vec<Diagnostic>), Diagnostic> {
    let (depth, stack) = crate::ingest::python::stack_for(text);
    super::jinja::guard::grow(stack, || read(text, file)).unwrap_or_else(|no_stack| {
        Err(Diagnostic::error(
            "python-model",
            Some(file.to_string()),
            1,
            0,
            format!("this Python model nests {depth} levels deep: {no_stack}"),
        ))
    })
}

fn read(text: &str, file: &str) -> Result<(String, Vec<Diagnostic>), Diagnostic> {
    let parsed =
        ruff_python_parser::parse_unchecked_source(text, ruff_python_ast::PySourceType::Python);
    let lines = LineIndex::new(text);
    let mut findings = Vec::new();
    for e in parsed.errors() {
        let (line, column) = lines.line_column(text, e.location.start().to_usize());
        findings.push(Diagnostic::error(
            "python-syntax-error",
            Some(file.to_string()),
            line,
            column,
            format!(
                "Python syntax error: {}; dbt would not load this model; the rest of the file is still read",
                e.error
            ),
        ));
    }
    let module = parsed.into_syntax();
    // dbt's rule: a top-level `def model(dbt, session)`; its first
    // parameter is what the calls are made on.
    let param = module.body.iter().find_map(|s| match s {
        Stmt::FunctionDef(f) if f.name.as_str() == "model" => Some(
            f.parameters
                .posonlyargs
                .iter()
                .chain(&f.parameters.args)
                .next()
                .map(|a| a.parameter.name.to_string()),
        ),
        _ => None,
    });
    let Some(Some(param)) = param else {
        return Err(Diagnostic::error(
            "python-model",
            Some(file.to_string()),
            1,
            0,
            "a dbt Python model needs a top-level `def model(dbt, session):` (dbt refuses the file too); the file is not read as a model".to_string(),
        ));
    };
    let mut calls = Calls {
        text,
        file,
        param: &param,
        lines: &lines,
        jinja: vec![String::new(); text.lines().count().max(1)],
        findings: &mut findings,
    };
    for s in &module.body {
        calls.visit_stmt(s);
    }
    let mut jinja = calls.jinja.join("\n");
    jinja.push('\n');
    Ok((jinja, findings))
}

/// The `dbt.<method>(...)` calls of one model, written as Jinja by line.
struct Calls<'a> {
    text: &'a str,
    file: &'a str,
    /// The name `model`'s first parameter has (`dbt`).
    param: &'a str,
    lines: &'a LineIndex,
    /// One entry per line of the file: the Jinja its calls stand for.
    jinja: Vec<String>,
    findings: &'a mut Vec<Diagnostic>,
}

impl<'a> Visitor<'a> for Calls<'_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        if let Expr::Call(call) = e
            && let Expr::Attribute(attr) = call.func.as_ref()
            && let Expr::Name(on) = attr.value.as_ref()
            && on.id.as_str() == self.param
            && matches!(attr.attr.as_str(), "ref" | "source" | "config")
        {
            self.call(attr.attr.as_str(), call);
        }
        walk_expr(self, e);
    }
}

impl Calls<'_> {
    fn call(&mut self, method: &str, call: &ruff_python_ast::ExprCall) {
        let start = call.range().start().to_usize();
        let (line, column) = self.lines.line_column(self.text, start);
        let args: Option<Vec<String>> = call.arguments.args.iter().map(literal).collect();
        let keywords: Option<Vec<String>> = call
            .arguments
            .keywords
            .iter()
            .map(|k| {
                let name = k.arg.as_ref()?.as_str();
                Some(format!("{name}={}", literal(&k.value)?))
            })
            .collect();
        let (Some(args), Some(keywords)) = (args, keywords) else {
            self.findings.push(Diagnostic::error(
                "python-model",
                Some(self.file.to_string()),
                line,
                column,
                format!(
                    "`{}.{method}(...)` takes only literal arguments (dbt reads Python models without running them, and refuses this call too); write the names as strings",
                    self.param
                ),
            ));
            return;
        };
        let all: Vec<String> = args.into_iter().chain(keywords).collect();
        if let Some(slot) = self.jinja.get_mut((line as usize).saturating_sub(1)) {
            slot.push_str(&format!("{{{{ {method}({}) }}}}", all.join(", ")));
        }
    }
}

/// A Python literal as a Jinja literal; `None` for anything else.
fn literal(e: &Expr) -> Option<String> {
    Some(match e {
        Expr::StringLiteral(s) => jinja_string(s.value.to_str()),
        Expr::BooleanLiteral(b) => if b.value { "true" } else { "false" }.to_string(),
        Expr::NoneLiteral(_) => "none".to_string(),
        Expr::NumberLiteral(n) => match &n.value {
            ruff_python_ast::Number::Int(i) => i.to_string(),
            ruff_python_ast::Number::Float(f) if f.is_finite() => format!("{f:?}"),
            _ => return None,
        },
        Expr::UnaryOp(u) if u.op == ruff_python_ast::UnaryOp::USub => {
            format!(
                "-{}",
                literal(&u.operand).filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))?
            )
        }
        Expr::List(l) => format!("[{}]", items(&l.elts)?),
        Expr::Tuple(t) => format!("[{}]", items(&t.elts)?),
        Expr::Dict(d) => {
            let pairs: Option<Vec<String>> = d
                .items
                .iter()
                .map(|i| {
                    Some(format!(
                        "{}: {}",
                        literal(i.key.as_ref()?)?,
                        literal(&i.value)?
                    ))
                })
                .collect();
            format!("{{{}}}", pairs?.join(", "))
        }
        _ => return None,
    })
}

fn items(elts: &[Expr]) -> Option<String> {
    let v: Option<Vec<String>> = elts.iter().map(literal).collect();
    Some(v?.join(", "))
}

/// A Jinja string literal holding `s` exactly: a JSON string is one
/// (Jinja reads the same backslash escapes).
fn jinja_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "''".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jinja(text: &str) -> (String, Vec<String>) {
        let (j, f) = model_jinja(text, "models/m.py").unwrap();
        (j, f.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn literal_calls_become_jinja_on_their_line() {
        let (j, f) = jinja(
            "import pandas as pd\n\ndef model(dbt, session):\n    dbt.config(materialized='table', tags=['a', \"b\"], enabled=True)\n    orders = dbt.ref('stg_orders').to_pandas()\n    fx = dbt.source(\"raw\", \"fx\")\n    v = dbt.ref('pkg', 'dim', v=2)\n    return orders\n",
        );
        assert!(f.is_empty(), "{f:?}");
        let lines: Vec<&str> = j.lines().collect();
        assert_eq!(
            lines[3],
            "{{ config(materialized=\"table\", tags=[\"a\", \"b\"], enabled=true) }}"
        );
        assert_eq!(lines[4], "{{ ref(\"stg_orders\") }}");
        assert_eq!(lines[5], "{{ source(\"raw\", \"fx\") }}");
        assert_eq!(lines[6], "{{ ref(\"pkg\", \"dim\", v=2) }}");
    }

    #[test]
    fn the_parameter_name_is_the_models_own() {
        let (j, _) = jinja("def model(d, s):\n    dbt.ref('no')\n    return d.ref('yes')\n");
        assert!(j.contains("ref(\"yes\")") && !j.contains("\"no\""), "{j}");
    }

    #[test]
    fn calls_dbt_would_refuse_are_findings_and_odd_names_stay_strings() {
        let (j, f) = jinja(
            "def model(dbt, session):\n    name = 'x'\n    a = dbt.ref(name)\n    b = dbt.ref(\"it's }} {% x %}\\n\")\n    return a\n",
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].contains("models/m.py:3:9") && f[0].contains("literal"),
            "{}",
            f[0]
        );
        assert!(j.contains(r#"{{ ref("it's }} {% x %}\n") }}"#), "{j}");
    }

    #[test]
    fn a_file_without_a_model_function_is_an_error() {
        let e = model_jinja("def helper():\n    pass\n", "models/h.py").unwrap_err();
        assert!(e.to_string().contains("def model(dbt, session)"), "{e}");
    }
}
