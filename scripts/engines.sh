#!/usr/bin/env bash
# Real database engines for ripple's tests: PostgreSQL (Debian's packages, a
# throw-away cluster on a unix socket), the DuckDB CLI, dbt with dbt-duckdb,
# and Airflow (each in its own Python venv); and a browser for the HTML
# reports: Debian's chromium, driven by playwright-core from npm (which uses
# that chromium and downloads no browser of its own).
#
#   bash scripts/engines.sh install   install what is missing (idempotent)
#   bash scripts/engines.sh start     start the PostgreSQL cluster (no-op if up)
#   bash scripts/engines.sh stop      stop it
#   bash scripts/engines.sh env       print `export RIPPLE_TEST_...` lines
#   bash scripts/engines.sh all       install + start + env
#
# Typical use:  eval "$(bash scripts/engines.sh all)"
#
# Progress and errors go to stderr; only the export lines go to stdout.
#
# Settings (environment):
#   RIPPLE_ENGINES_DIR     venvs and the cluster's data (default <repo>/.engines)
#   RIPPLE_ENGINES         which engines (default "postgres duckdb dbt airflow browser")
#   RIPPLE_PG_PORT         the cluster's port, i.e. its socket's name (default 54329)
#   RIPPLE_PG_SOCKET_DIR   the socket's folder (default /tmp/ripple-pg as root,
#                          /tmp/ripple-pg-<uid> otherwise)
#   RIPPLE_PYTHON          the Python that makes the venvs (default python3)
#
# Runs as root (CI) or as a normal user. As root, PostgreSQL runs as the
# system user ripple_pg (made when missing): the server refuses to run as root.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
engines_dir=${RIPPLE_ENGINES_DIR:-$repo/.engines}
engines=${RIPPLE_ENGINES:-postgres duckdb dbt airflow browser}
python=${RIPPLE_PYTHON:-python3}
pg_port=${RIPPLE_PG_PORT:-54329}
pg_role=ripple
pg_os_user=ripple_pg
if [ "$(id -u)" -eq 0 ]; then
  is_root=1
  pg_socket_dir=${RIPPLE_PG_SOCKET_DIR:-/tmp/ripple-pg}
else
  is_root=0
  pg_socket_dir=${RIPPLE_PG_SOCKET_DIR:-/tmp/ripple-pg-$(id -u)}
fi

# Pinned. dbt-core 1.12+ does not work here. The dbt venv's duckdb (the
# Python package dbt-duckdb writes with) is the CLI's version: DuckDB 2.0
# writes files the 1.5 CLI cannot open, so tests could not read what dbt built.
duckdb_version=1.5.6
duckdb_spec=("duckdb-cli==$duckdb_version")
# dbt-postgres 1.11.0 is the newest that keeps dbt-core at 1.11.16.
dbt_spec=(dbt-core==1.11.16 dbt-duckdb==1.11.1 dbt-postgres==1.11.0 "duckdb==$duckdb_version")
# The PostgreSQL provider: tests run the generated DAG's SQL tasks on the
# throw-away cluster (its connection type `postgres`).
airflow_spec=(apache-airflow==3.3.2 apache-airflow-providers-postgres==7.1.1)
# The generated DAG must import on Airflow 2 too (its operators' import paths).
airflow2_spec=(apache-airflow==2.10.5 apache-airflow-providers-postgres==6.4.1)
# Drives Debian's chromium for the HTML report tests (tests/browser/check.mjs).
playwright_spec=playwright-core@1.65.1

say() { echo "engines: $*" >&2; }
die() {
  echo "engines: error: $*" >&2
  exit 1
}
wants() { [[ " $engines " == *" $1 "* ]]; }

# Seconds since the epoch, for the timings printed as progress.
now() { date +%s; }

# ---------------------------------------------------------------- PostgreSQL

# The bin folder of the newest PostgreSQL under /usr/lib/postgresql, or fails.
pg_bin() {
  local initdb found=
  for initdb in /usr/lib/postgresql/*/bin/initdb; do
    [ -x "$initdb" ] && found+="$initdb"$'\n'
  done
  [ -n "$found" ] || return 1
  dirname "$(printf %s "$found" | sort -V | tail -n 1)"
}

# Runs a command as the user that owns the cluster, from a folder that user
# can enter (initdb and postgres want a readable working directory).
as_pg() {
  if [ "$is_root" -eq 1 ]; then
    (cd / && runuser -u "$pg_os_user" -- "$@")
  else
    (cd / && "$@")
  fi
}

pg_user_name() {
  if [ "$is_root" -eq 1 ]; then echo "$pg_os_user"; else id -un; fi
}

ensure_pg_os_user() {
  [ "$is_root" -eq 1 ] || return 0
  if ! id "$pg_os_user" >/dev/null 2>&1; then
    say "creating system user $pg_os_user (PostgreSQL refuses to run as root)"
    useradd --system --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$pg_os_user" ||
      die "could not create the system user $pg_os_user"
  fi
}

# The cluster's data folder: under RIPPLE_ENGINES_DIR when the cluster's user
# can write there (not so for ripple_pg when the repo sits under /root, say),
# else under /tmp. Prints it; makes it when missing.
pg_data_dir() {
  local dir=$engines_dir/pg
  if mkdir -p "$dir" 2>/dev/null; then
    [ "$is_root" -eq 0 ] || chown "$pg_os_user:" "$dir"
    if as_pg test -w "$dir" -a -x "$dir" 2>/dev/null; then
      echo "$dir"
      return
    fi
  fi
  dir=/tmp/ripple-pg-data-$(pg_user_name)
  mkdir -p "$dir"
  [ "$is_root" -eq 0 ] || chown "$pg_os_user:" "$dir"
  as_pg test -w "$dir" || die "$dir is not writable by $(pg_user_name)"
  echo "$dir"
}

pg_ready() {
  local bin
  bin=$(pg_bin) || return 1
  "$bin/pg_isready" -q -h "$pg_socket_dir" -p "$pg_port" >/dev/null 2>&1
}

# The data folder of the server behind our socket, read from its lock file.
pg_running_data_dir() {
  sed -n 2p "$pg_socket_dir/.s.PGSQL.$pg_port.lock" 2>/dev/null
}

install_postgres() {
  if pg_bin >/dev/null; then
    say "postgres: $(pg_bin) is there"
    return
  fi
  [ "$is_root" -eq 1 ] ||
    die "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb) and installing it needs root: apt-get install postgresql"
  local t0
  t0=$(now)
  say "postgres: apt-get update && apt-get install -y postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die "apt-get update failed"
  apt-get install -y -qq postgresql >&2 || die "apt-get install postgresql failed"
  pg_bin >/dev/null || die "postgresql installed, yet no /usr/lib/postgresql/*/bin/initdb"
  say "postgres: installed in $(($(now) - t0))s"
}

start_postgres() {
  local bin data log major
  bin=$(pg_bin) || die "PostgreSQL is not installed: run bash scripts/engines.sh install"
  if pg_ready; then
    say "postgres: already running on $pg_socket_dir port $pg_port (data $(pg_running_data_dir))"
    return
  fi
  ensure_pg_os_user

  mkdir -p "$pg_socket_dir"
  [ "$is_root" -eq 0 ] || chown "$pg_os_user:" "$pg_socket_dir"
  chmod 0755 "$pg_socket_dir"
  [ "$(stat -c %U "$pg_socket_dir")" = "$(pg_user_name)" ] ||
    die "$pg_socket_dir belongs to $(stat -c %U "$pg_socket_dir"), not $(pg_user_name): set RIPPLE_PG_SOCKET_DIR to a folder of your own"

  data=$(pg_data_dir)
  major=$(basename "$(dirname "$bin")")
  if [ -f "$data/PG_VERSION" ] && [ "$(cat "$data/PG_VERSION")" != "$major" ]; then
    say "postgres: $data was made by PostgreSQL $(cat "$data/PG_VERSION"); making it anew for $major"
    rm -rf "$data"
    data=$(pg_data_dir)
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    [ -z "$(ls -A "$data")" ] ||
      die "$data is not empty and holds no cluster; remove it and run again"
    say "postgres: initdb $data"
    as_pg "$bin/initdb" -D "$data" -U "$pg_role" --auth=trust --no-sync \
      -E UTF8 --locale=C >"$data.initdb.log" 2>&1 ||
      die "initdb failed: see $data.initdb.log"
    rm -f "$data.initdb.log"
    echo "include_if_exists = 'ripple.conf'" | as_pg tee -a "$data/postgresql.conf" >/dev/null
  fi
  # Rewritten at each start, so the socket and port follow the settings.
  as_pg tee "$data/ripple.conf" >/dev/null <<EOF
# Written by scripts/engines.sh: a throw-away test cluster.
listen_addresses = ''
port = $pg_port
unix_socket_directories = '$pg_socket_dir'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF
  log=$data/server.log
  say "postgres: starting (socket $pg_socket_dir, port $pg_port, data $data)"
  # 9>&-: the server must not inherit (and so hold for its life) the lock.
  if ! as_pg "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null 9>&-; then
    tail -n 20 "$log" >&2 2>/dev/null || true
    die "PostgreSQL did not start: see $log"
  fi
  pg_ready || die "PostgreSQL started but does not answer on $pg_socket_dir port $pg_port"
}

stop_postgres() {
  local bin data owner
  bin=$(pg_bin) || { say "postgres: not installed"; return; }
  if ! pg_ready; then
    say "postgres: not running on $pg_socket_dir port $pg_port"
    return
  fi
  data=$(pg_running_data_dir)
  [ -n "$data" ] || die "cannot tell the data folder of the server on $pg_socket_dir"
  owner=$(stat -c %U "$data")
  say "postgres: stopping (data $data)"
  if [ "$owner" = "$(id -un)" ]; then
    (cd / && "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null)
  elif [ "$is_root" -eq 1 ]; then
    (cd / && runuser -u "$owner" -- "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null)
  else
    die "the server on $pg_socket_dir belongs to $owner"
  fi
}

# ------------------------------------------------------------------- browser

install_browser() {
  local t0 dir=$engines_dir/browser
  if [ ! -x /usr/bin/chromium ]; then
    [ "$is_root" -eq 1 ] ||
      die "chromium is not installed and installing it needs root: apt-get install chromium"
    t0=$(now)
    say "browser: apt-get update && apt-get install -y chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq chromium >&2 || die "apt-get install chromium failed"
    say "browser: chromium installed in $(($(now) - t0))s"
  else
    say "browser: /usr/bin/chromium is there"
  fi
  command -v node >/dev/null || die "node not found (the browser tests run playwright-core with it)"
  command -v npm >/dev/null || die "npm not found (it installs playwright-core)"
  if [ -f "$dir/.ripple-installed" ] && [ "$(cat "$dir/.ripple-installed")" = "$playwright_spec" ] &&
    [ -f "$dir/node_modules/playwright-core/package.json" ]; then
    say "browser: $dir is there ($playwright_spec)"
    return
  fi
  t0=$(now)
  rm -rf "$dir"
  mkdir -p "$dir"
  say "browser: npm install $playwright_spec into $dir"
  # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: playwright-core downloads nothing, but
  # say so, in case a later version would.
  (cd "$dir" && echo '{"private":true}' >package.json &&
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --silent "$playwright_spec" >&2) ||
    die "npm install $playwright_spec failed"
  echo "$playwright_spec" >"$dir/.ripple-installed"
  say "browser: installed in $(($(now) - t0))s"
}

# --------------------------------------------------------------- Python venvs

# ensure_venv NAME CHECK-COMMAND PACKAGE...: a venv at $engines_dir/NAME with
# the packages. Kept when its stamp names the same packages and CHECK-COMMAND
# (run with the venv's bin first on PATH) passes; made anew otherwise, so an
# interrupted install is retried from scratch.
ensure_venv() {
  local name=$1 check=$2
  shift 2
  local dir=$engines_dir/$name want="$*" t0
  if [ -f "$dir/.ripple-installed" ] && [ "$(cat "$dir/.ripple-installed")" = "$want" ] &&
    PATH="$dir/bin:$PATH" bash -c "$check" >/dev/null 2>&1; then
    say "$name: $dir is there ($want)"
    return
  fi
  command -v "$python" >/dev/null || die "$python not found (set RIPPLE_PYTHON)"
  t0=$(now)
  say "$name: pip install $want into $dir"
  rm -rf "$dir"
  "$python" -m venv "$dir" >&2 || die "$python -m venv $dir failed"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$@" >&2 ||
    die "pip install $want failed"
  local out
  out=$(PATH="$dir/bin:$PATH" bash -c "$check" 2>&1) ||
    die "$name installed but does not run ($check): $out"
  echo "$want" >"$dir/.ripple-installed"
  say "$name: installed in $(($(now) - t0))s: $(printf %s "$out" | head -n 2 | tr '\n' ' ')"
}

install_all() {
  mkdir -p "$engines_dir" 2>/dev/null || die "cannot make $engines_dir (set RIPPLE_ENGINES_DIR)"
  exec 9>"$engines_dir/.lock"
  flock 9
  if wants postgres; then install_postgres; fi
  if wants duckdb; then ensure_venv duckdb 'duckdb --version' "${duckdb_spec[@]}"; fi
  # Both adapters must load: `dbt --version` lists the plugins it found.
  if wants dbt; then ensure_venv dbt 'dbt --version | grep -q postgres && dbt --version | grep -q duckdb' "${dbt_spec[@]}"; fi
  if wants browser; then install_browser; fi
  if wants airflow; then
    # Importing airflow writes an airflow.cfg into AIRFLOW_HOME: a temp one.
    # shellcheck disable=SC2016 # expanded by the check's own shell
    ensure_venv airflow \
      'h=$(mktemp -d) && AIRFLOW_HOME=$h python -c "import airflow, airflow.providers.postgres.hooks.postgres; print(airflow.__version__)"; s=$?; rm -rf "$h"; exit $s' \
      "${airflow_spec[@]}"
    # shellcheck disable=SC2016 # expanded by the check's own shell
    ensure_venv airflow2 \
      'h=$(mktemp -d) && AIRFLOW_HOME=$h python -c "import airflow, airflow.providers.postgres.hooks.postgres; print(airflow.__version__)"; s=$?; rm -rf "$h"; exit $s' \
      "${airflow2_spec[@]}"
  fi
  exec 9>&-
}

start_all() {
  if wants postgres; then
    mkdir -p "$engines_dir" 2>/dev/null || die "cannot make $engines_dir (set RIPPLE_ENGINES_DIR)"
    exec 9>"$engines_dir/.lock"
    flock 9
    start_postgres
    exec 9>&-
  fi
}

# The CLI binary that duckdb-cli ships. Its bin/duckdb is a Python wrapper
# that runs the binary as a child process (adding an extensions path with
# -cmd): the binary itself starts in a few milliseconds rather than ~70.
duckdb_binary() {
  local binary
  for binary in "$engines_dir"/duckdb/lib/python3*/site-packages/duckdb_cli/duckdb; do
    if [ -x "$binary" ]; then
      echo "$binary"
      return
    fi
  done
  echo "$engines_dir/duckdb/bin/duckdb"
}

# A venv that ensure_venv finished.
venv_ok() { [ -f "$engines_dir/$1/.ripple-installed" ] && [ -x "$engines_dir/$1/bin/$2" ]; }

print_env() {
  local bin
  if wants postgres && pg_ready; then
    bin=$(pg_bin)
    printf 'export RIPPLE_TEST_PGHOST=%q\n' "$pg_socket_dir"
    printf 'export RIPPLE_TEST_PGPORT=%q\n' "$pg_port"
    printf 'export RIPPLE_TEST_PGUSER=%q\n' "$pg_role"
    printf 'export RIPPLE_TEST_PSQL=%q\n' "$bin/psql"
  elif wants postgres; then
    say "postgres: not running (bash scripts/engines.sh start); no RIPPLE_TEST_PG* set"
  fi
  if wants duckdb && venv_ok duckdb duckdb; then
    printf 'export RIPPLE_TEST_DUCKDB=%q\n' "$(duckdb_binary)"
  fi
  if wants dbt && venv_ok dbt dbt; then
    printf 'export RIPPLE_TEST_DBT=%q\n' "$engines_dir/dbt/bin/dbt"
  fi
  if wants airflow && venv_ok airflow python; then
    printf 'export RIPPLE_TEST_AIRFLOW_PYTHON=%q\n' "$engines_dir/airflow/bin/python"
  fi
  if wants airflow && venv_ok airflow2 python; then
    printf 'export RIPPLE_TEST_AIRFLOW2_PYTHON=%q\n' "$engines_dir/airflow2/bin/python"
  fi
  if wants browser && [ -x /usr/bin/chromium ] && [ -f "$engines_dir/browser/.ripple-installed" ] &&
    command -v node >/dev/null; then
    printf 'export RIPPLE_TEST_CHROMIUM=%q\n' /usr/bin/chromium
    printf 'export RIPPLE_TEST_NODE=%q\n' "$(command -v node)"
    printf 'export RIPPLE_TEST_PLAYWRIGHT=%q\n' "$engines_dir/browser/node_modules/playwright-core"
  fi
}

case "${1:-}" in
  install) install_all ;;
  start) start_all ;;
  stop) if wants postgres; then stop_postgres; fi ;;
  env) print_env ;;
  all)
    install_all
    start_all
    print_env
    ;;
  *)
    echo "usage: bash scripts/engines.sh install|start|stop|env|all" >&2
    exit 2
    ;;
esac
