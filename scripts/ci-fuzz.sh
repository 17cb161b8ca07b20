#!/usr/bin/env bash
# Short fuzz run of every fuzz target (go test -fuzz), for CI.
#
#   scripts/ci-fuzz.sh                 # each target for 10 s
#   FUZZTIME=2m scripts/ci-fuzz.sh     # longer
#   scripts/ci-fuzz.sh FuzzParseMentions   # only the named targets
#
# `go test ./...` already runs every target on its seed corpus
# (f.Add and testdata/fuzz/<Target>/). A failure found here is written by Go
# to testdata/fuzz/<Target>/ in the package: commit it with the fix, and it
# becomes a regression test. Prints one line per target with its exec count.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME="${FUZZTIME:-10s}"
# package:target, one per fuzz target in the repository.
TARGETS=(
	./internal/hub:FuzzParseHeartbeatID
	./internal/hub:FuzzParseMentions
	./internal/hub:FuzzValidateChannel
	./internal/hub:FuzzParseCronExpr
	./internal/hub:FuzzPatternsOverlap
	./internal/hub:FuzzCoversProject
	./internal/gateway:FuzzDecodePostMessageRequest
	./internal/gateway:FuzzDecodeWaitForMessagesRequest
	./internal/gateway:FuzzDecodeCreateActivityLogRequest
	./internal/termtext:FuzzClean
)

# Any target not listed above is a mistake: list every Fuzz function.
missing=0
while IFS= read -r line; do
	file=${line%%:*}
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"${line#*:}")
	pkg="./$(dirname "${file#./}")"
	if ! printf '%s\n' "${TARGETS[@]}" | grep -qx "$pkg:$name"; then
		echo "ci-fuzz: $pkg $name is not listed in scripts/ci-fuzz.sh" >&2
		missing=1
	fi
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | grep -v '^./.git/' | sed -E 's/^([^:]*):[0-9]+:/\1:/')
[ "$missing" = 0 ] || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
total=0
for t in "${TARGETS[@]}"; do
	pkg=${t%%:*}
	name=${t#*:}
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	fuzz() { go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" >"$log" 2>&1; }
	if fuzz; then
		result=ok
	elif ! grep -q 'Failing input written to' "$log" && grep -q 'context deadline exceeded' "$log" && fuzz; then
		# Go's fuzzing engine (before Go 1.27, go.dev/issue/75804) may end
		# a run at -fuzztime with "context deadline exceeded" and no input
		# of ours when a worker answers late on a loaded machine; a finding
		# always writes its input. Run again once, and say so.
		result=ok
		echo "ci-fuzz: $name: the fuzzing engine timed out with no finding; ran again" >&2
	else
		result=FAIL
		failed=1
	fi
	# The last progress line: "fuzz: elapsed: 10s, execs: 123456 (12345/sec), new interesting: …"
	execs=$(grep -Eo 'execs: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
	total=$((total + execs))
	printf 'ci-fuzz: %-4s %-22s %-38s %10s execs in %s\n' "$result" "$pkg" "$name" "$execs" "$FUZZTIME"
	if [ "$result" = FAIL ]; then
		tail -n 40 "$log"
	fi
done
echo "ci-fuzz: $total execs in all"
exit "$failed"
