#!/usr/bin/env bash
# Runs the PostgreSQL tests on a throw-away cluster, for CI.
#
#   scripts/ci-postgres.sh                # the PostgreSQL test suite
#   scripts/ci-postgres.sh -- CMD ARGS…   # any command, with the cluster up
#
# Installs Debian's postgresql package when its binaries are missing, starts
# a fresh cluster in a temporary directory as a non-root user (postgres when
# run as root) on a free loopback port, exports HUB_TEST_DATABASE_URL, and
# stops and removes the cluster at the end, even on failure. The default
# run fails if any PostgreSQL test was skipped, so a broken URL cannot pass
# as a green run.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
	echo "ci-postgres: installing Debian's postgresql package"
	as_root apt-get update
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
	pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi

# The cluster's owner: never root (initdb refuses it).
if [ "$(id -u)" = 0 ]; then
	owner=postgres
	run_pg() { runuser -u postgres -- "$@"; }
else
	owner=$(id -un)
	run_pg() { "$@"; }
fi

dir=$(mktemp -d /tmp/hub-pg.XXXXXX)
chown "$owner" "$dir"
chmod 700 "$dir"
started=0
cleanup() {
	status=$?
	if [ "$started" = 1 ]; then
		run_pg "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
	exit "$status"
}
trap cleanup EXIT INT TERM

(cd "$dir" && run_pg "$pgbin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1) || {
	cat "$dir/initdb.log" >&2
	exit 1
}

# A free loopback port: try random ones until the server starts on one.
for _ in $(seq 1 20); do
	port=$((20000 + RANDOM % 40000))
	if (cd "$dir" && run_pg "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" start >/dev/null); then
		started=1
		break
	fi
done
if [ "$started" != 1 ]; then
	echo "ci-postgres: the cluster did not start" >&2
	tail -20 "$dir/server.log" >&2 || true
	exit 1
fi
export HUB_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "ci-postgres: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (HUB_TEST_DATABASE_URL set)"

if [ "${1:-}" = "--" ]; then
	shift
	"$@"
	exit $?
fi

# The tests that use HUB_TEST_DATABASE_URL: all of the PostgreSQL store's
# (the conformance suite included), copy-store's, the app's two-replica
# test, two real hub processes on one database, a SQLite hub moved to
# PostgreSQL with the real binaries, the kill -9 harness on PostgreSQL and
# a short hubbench run on two replicas.
log="$dir/test.log"
status=0
{
	go test -race -count=1 -v -timeout 15m ./internal/store/postgres/ ./internal/store/copystore/ &&
		go test -race -count=1 -v -timeout 15m -run Postgres ./internal/app/ &&
		go test -count=1 -v -timeout 15m -run 'TwoReplicas|CopyStore' ./test/e2e/ &&
		go test -count=1 -v -timeout 15m -run Postgres ./test/crash/ ./cmd/hubbench/
} >"$log" 2>&1 || status=$?
grep -E '^(=== RUN|--- (FAIL|SKIP)|FAIL|ok|PASS)' "$log" | grep -v '^=== RUN' || true
if [ "$status" != 0 ]; then
	echo "ci-postgres: tests failed; the last lines of the log:" >&2
	tail -60 "$log" >&2
	exit "$status"
fi
if grep -q -- '--- SKIP' "$log"; then
	echo "ci-postgres: PostgreSQL tests were skipped although HUB_TEST_DATABASE_URL was set:" >&2
	grep -B2 -A3 -- '--- SKIP' "$log" >&2
	exit 1
fi
ran=$(grep -c -- '--- PASS' "$log" || true)
if [ "$ran" -lt 20 ]; then
	echo "ci-postgres: only $ran PostgreSQL tests passed; expected the whole suite to run" >&2
	exit 1
fi
echo "ci-postgres: $ran PostgreSQL tests and subtests passed, none skipped"
