#!/usr/bin/env bash
# CI's short run of the fault rig (scripts/faults.sh): two fixed seeds of a
# minute of faults each on three replicas, a few minutes in all. It is
# skipped, saying why, only where network namespaces cannot be created (no
# root, or a sandbox without them); anywhere else a failed check fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

probe=hubf$$-probe
if ! as_root true 2>/dev/null; then
	echo "ci-faults: skipped: the fault rig needs root (or password-less sudo) to create network namespaces, and this machine gives neither"
	exit 0
fi
if ! command -v ip >/dev/null; then
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
fi
if ! as_root ip netns add "$probe" 2>/dev/null; then
	echo "ci-faults: skipped: network namespaces cannot be created here (ip netns add failed)"
	exit 0
fi
as_root ip netns del "$probe"

exec bash scripts/faults.sh --seeds "${FAULTS_SEEDS:-1,2}" --run "${FAULTS_RUN:-60s}" --replicas 3
