//! Writes a generated dbt-style project: `gen_project MODELS DIR`.
//! Used to measure ripple (and `dbt parse`) on projects too large for a
//! benchmark loop; see docs/performance.md.

#[path = "../benches/support/dbt_project.rs"]
mod support;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(models), Some(dir)) = (args.get(1).and_then(|m| m.parse().ok()), args.get(2)) else {
        eprintln!("usage: gen_project MODELS DIR");
        std::process::exit(2);
    };
    match support::generate(std::path::Path::new(dir), models) {
        Ok(g) => println!(
            "{} models, {} sources, {} edges in {dir}",
            g.models, g.sources, g.edges
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
