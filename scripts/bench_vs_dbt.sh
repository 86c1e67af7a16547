#!/usr/bin/env bash
# Side by side on one generated project: `dbt parse` (dbt-core, the reference)
# and `ripple graph`, whole process, median of several runs, and the ratio.
#
#   bash scripts/bench_vs_dbt.sh [MODELS] [DBT_RUNS] [RIPPLE_RUNS]
#
# MODELS defaults to 1000 (dbt-core takes about a minute per 10,000 models);
# the project comes from ../shared/tools/gen_project.py (--seed 7), dbt from
# scripts/engines.sh (dbt-core 1.11 with dbt-duckdb), ripple from a release
# build. Figures go in docs/performance.md.
set -euo pipefail

models=${1:-1000}
dbt_runs=${2:-3}
ripple_runs=${3:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
gen="$here/../shared/tools/gen_project.py"
[ -f "$gen" ] || { echo "bench_vs_dbt: $gen not found (the shared generator)" >&2; exit 2; }

eval "$(bash "$here/scripts/engines.sh" all 2>/dev/null)"
dbt=${RIPPLE_TEST_DBT:?dbt not installed: bash scripts/engines.sh install}
(cd "$here" && cargo build --release --quiet)
ripple="$here/target/release/ripple"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
project="$work/p"
python3 "$gen" "$models" --seed 7 --out "$project" >/dev/null

# Median wall seconds of running "$@" N times (output discarded).
median() {
  local n=$1
  shift
  local times=()
  for _ in $(seq "$n"); do
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc)")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

dbt_parse() {
  (cd "$project" && "$dbt" parse --profiles-dir "$project" --no-partial-parse --quiet)
}
ripple_graph() {
  "$ripple" graph --project "$project" --format json
}

# Both must succeed before they are timed.
dbt_parse >/dev/null
ripple_graph >/dev/null

d=$(median "$dbt_runs" dbt_parse)
r=$(median "$ripple_runs" ripple_graph)
echo "models: $models (gen_project.py --seed 7), $(nproc) cores"
echo "dbt parse (dbt-core $("$dbt" --version 2>/dev/null | awk '/installed/ {print $3; exit}')): ${d} s, median of $dbt_runs"
echo "ripple graph: ${r} s, median of $ripple_runs"
echo "ratio: $(echo "scale=1; $d / $r" | bc)x"
