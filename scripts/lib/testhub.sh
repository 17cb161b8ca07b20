# A throw-away hub for the scripts that drive one (ci-mcp-ts.sh, bench-mcp.sh).
# Source it, then:
#   testhub_init PREFIX       a temporary dir in $work, removed (and the hub stopped) on exit;
#                             PREFIX starts the messages
#   testhub_start BIN [FLAG…] starts BIN serve on free loopback ports with its data in
#                             $work/data; sets hub_pid, grpc_addr, http_addr, admin_token
#   testhub_agent NAME        creates an agent and prints its token
# shellcheck shell=bash

testhub_init() {
	testhub_prefix=$1
	work=$(mktemp -d)
	hub_pid=""
	trap testhub_cleanup EXIT
}

testhub_cleanup() {
	if [[ -n "$hub_pid" ]] && kill -0 "$hub_pid" 2>/dev/null; then
		kill "$hub_pid" 2>/dev/null || true
		wait "$hub_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}

testhub_start() {
	local bin=$1
	shift
	"$bin" serve --data-dir "$work/data" --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 "$@" 2>"$work/hub.log" &
	hub_pid=$!
	# The hub logs its bound addresses ("hub started ... grpc=… http=…") once it serves.
	grpc_addr="" http_addr=""
	local line
	for _ in $(seq 1 300); do
		if line=$(grep -m1 'hub started' "$work/hub.log" 2>/dev/null); then
			grpc_addr=$(sed -n 's/.* grpc=\([^ ]*\).*/\1/p' <<<"$line")
			http_addr=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$line")
			break
		fi
		kill -0 "$hub_pid" 2>/dev/null || { echo "$testhub_prefix: the hub exited:" >&2; cat "$work/hub.log" >&2; exit 1; }
		sleep 0.1
	done
	if [[ -z "$grpc_addr" || -z "$http_addr" ]]; then
		echo "$testhub_prefix: the hub did not report its addresses within 30s:" >&2
		cat "$work/hub.log" >&2
		exit 1
	fi
	admin_token=$(tr -d '[:space:]' <"$work/data/admin.token")
}

testhub_agent() {
	curl -fsS -X POST "http://$http_addr/v1/admin/agents" \
		-H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' \
		-d "{\"name\":\"$1\"}" |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).token))'
}
