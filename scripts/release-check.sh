#!/usr/bin/env bash
# Checks a release end to end, publishing nothing:
#
#   scripts/release-check.sh          everything below (docs/operations.md, "Install")
#   scripts/release-check.sh --quick  linux/amd64 only, no SBOM (the CI stage)
#
# 1. installs what is missing, and says so: Debian's libc6-dev (a static
#    glibc), gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user-static,
#    buildah (and curl, binutils, iproute2, ca-certificates, systemd for
#    systemd-analyze); GoReleaser and syft from the Go module proxy;
# 2. builds the snapshot (goreleaser release --snapshot --clean) into dist/;
# 3. verifies the checksums, checks the archives' content and that every
#    binary is static and stamped with this commit;
# 4. smoke-tests the amd64 archive's hub, hub-hook and hubctl (a temporary
#    data dir, free loopback ports: /readyz, hub health, an agent created
#    with hubctl, a post and a wait over REST, a message from the admin, a
#    message injected by hub-hook's tool-use hook, hub_build_info, SIGTERM) and times start to ready; the arm64 ones the same way under
#    qemu-aarch64-static;
# 5. builds the image (deploy/build-image.sh), unpacks the exported archive
#    and checks its configuration; as root, runs the smoke test on the hub
#    of its root filesystem chrooted there as the image's user, then the
#    image's own command and HEALTHCHECK, read from its configuration, in a
#    network namespace of their own (the hub listens on 0.0.0.0 there);
# 6. checks deploy/hub.service with systemd-analyze verify and its exposure
#    (security --offline=yes) against 2.0; without --quick and as root,
#    boots it under systemd in a systemd-nspawn container (a minimal Debian
#    made once by debootstrap, kept in ~/.cache/hub-release-check) and looks
#    at the hub from inside: ready, agents and messages, seccomp, no
#    capabilities, no new privileges, LimitNOFILE, a clean stop;
# 7. prints the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
case "${1:-}" in
--quick) quick=true ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

GORELEASER_VERSION=v2.15.1
SYFT_VERSION=v1.57.1
start=$(date +%s)
step() { printf '\n==> [%4ss] %s\n' "$(( $(date +%s) - start ))" "$*"; }
fail() { echo "release-check: FAIL: $*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

step "tools"
missing=()
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
command -v buildah >/dev/null || missing+=(buildah)
command -v curl >/dev/null || missing+=(curl)
command -v readelf >/dev/null || missing+=(binutils)
command -v ip >/dev/null || missing+=(iproute2)
[ -s /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
command -v systemd-analyze >/dev/null || missing+=(systemd)
if ! $quick; then
	command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
	[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || missing+=(libc6-dev-arm64-cross)
	command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
fi
if [ "${#missing[@]}" -gt 0 ]; then
	echo "installing Debian packages: ${missing[*]}"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
	echo "Debian packages present"
fi
gobin=$(go env GOPATH)/bin
export PATH="$gobin:$PATH"
# installed BINARY VERSION: whether $gobin/BINARY was built from its module at VERSION.
installed() { [ -x "$gobin/$1" ] && go version -m "$gobin/$1" | awk -v v="$2" '$1 == "mod" && $3 == v { found = 1 } END { exit !found }'; }
if ! installed goreleaser "$GORELEASER_VERSION"; then
	echo "installing GoReleaser $GORELEASER_VERSION (go install; a few minutes the first time)"
	go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi
skip=()
if $quick; then
	skip=(--skip=sbom)
elif ! installed syft "$SYFT_VERSION"; then
	echo "installing syft $SYFT_VERSION for the SBOMs (go install; a few minutes the first time)"
	go install "github.com/anchore/syft/cmd/syft@$SYFT_VERSION"
fi
go version -m "$gobin/goreleaser" | awk '$1 == "mod" { print "goreleaser", $3 }'
$quick || go version -m "$gobin/syft" | awk '$1 == "mod" { print "syft", $3 }'
x86_64-linux-gnu-gcc --version | head -1
$quick || aarch64-linux-gnu-gcc --version | head -1
buildah --version

if $quick; then step "goreleaser release --snapshot --clean (linux/amd64 only, no SBOM)"; else step "goreleaser release --snapshot --clean"; fi
# GoReleaser reads the commit through git, and gives up on all of it when
# the repository has no remote (a local clone of a clone may have none): lend
# it the project's address for this run only.
if [ -z "$(git remote)" ]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/agenthub/hub.git
fi
config=.goreleaser.yaml
if $quick; then
	# The same configuration, amd64 only.
	config=$work/goreleaser-quick.yaml
	sed 's/goarch: \[amd64, arm64\]/goarch: [amd64]/' .goreleaser.yaml >"$config"
	grep -q 'goarch: \[amd64, arm64\]' "$config" && fail "could not narrow $config to amd64"
fi
build_start=$(date +%s)
goreleaser release --snapshot --clean --config "$config" "${skip[@]}" >"$work/goreleaser.log" 2>&1 ||
	{ cat "$work/goreleaser.log" >&2; fail "goreleaser"; }
build_secs=$(( $(date +%s) - build_start ))
tail -3 "$work/goreleaser.log"
echo "built in ${build_secs}s"
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
commit=$(git rev-parse HEAD)
[ -n "$version" ] || fail "no version in dist/metadata.json"
echo "version $version, commit $commit"

step "checksums"
(cd dist && sha256sum -c "hub_${version}_checksums.txt")
arches=(amd64)
$quick || arches+=(arm64)
for arch in "${arches[@]}"; do
	tarball=dist/hub_${version}_linux_${arch}.tar.gz
	[ -f "$tarball" ] || fail "$tarball missing"
	$quick || [ -s "$tarball.sbom.json" ] || fail "$tarball.sbom.json (SBOM) missing"
	mkdir -p "$work/$arch"
	tar -xzf "$tarball" -C "$work/$arch"
	dir=$work/$arch/hub_${version}_linux_${arch}
	for f in hub hub-hook hubctl README.md hub.service; do
		[ -e "$dir/$f" ] || fail "$tarball lacks $f"
	done
	for b in hub hub-hook hubctl; do
		elf=$(readelf -lW -dW "$dir/$b")
		if grep -q 'program interpreter' <<<"$elf" || grep -q NEEDED <<<"$elf"; then
			fail "$arch $b is dynamically linked"
		fi
	done
	echo "$tarball: hub, hub-hook, hubctl (static), README.md, hub.service"
done

# start_hub LABEL DATA_DIR: starts ${hub[@]} on free loopback ports with
# DATA_DIR (as the hub sees it) and waits until /readyz answers 200. Sets
# pid, grpc, http, and ready_ms (from the spawn to that answer; polled
# every 10 ms).
start_hub() {
	local label=$1 hub_data=$2 log=$work/$1.log t0 t1 line
	grpc="" http=""
	t0=$(date +%s%N)
	"${hub[@]}" serve --data-dir "$hub_data" --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 >/dev/null 2>"$log" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 1 3000); do
		if [ -z "$http" ] && line=$(grep -m1 'hub started' "$log" 2>/dev/null); then
			grpc=$(sed -n 's/.* grpc=\([^ ]*\).*/\1/p' <<<"$line")
			http=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$line")
		fi
		if [ -n "$http" ] && curl -fsS "http://$http/readyz" >/dev/null 2>&1; then
			t1=$(date +%s%N)
			ready_ms=$(( (t1 - t0) / 1000000 ))
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$label: the hub exited"; }
		sleep 0.01
	done
	cat "$log" >&2
	fail "$label: not ready within 30 s"
}

# stop_hub LABEL: SIGTERM, and the hub must exit 0.
stop_hub() {
	kill -TERM "$pid"
	wait "$pid" || fail "$1: the hub exited with $? on SIGTERM"
}

# smoke LABEL DATA_AS_SEEN_BY_HUB DATA_ON_THIS_MACHINE: runs ${hub[@]} and
# ${hubctl[@]} through a hub's life.
smoke() {
	local label=$1 data=$3
	start_hub "$label" "$2"
	[ "$("${hub[@]}" health --addr "$http")" = ready ] || fail "$label: hub health"
	local ctl=("${hubctl[@]}" --addr "$grpc" --data-dir "$data")
	local alice bob reply
	alice=$("${ctl[@]}" -o json agent add alice | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
	bob=$("${ctl[@]}" -o json agent add bob | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
	[ -n "$alice" ] && [ -n "$bob" ] || fail "$label: hubctl agent add printed no token"
	curl -fsS -X POST "http://$http/v1/messages" -H "Authorization: Bearer $alice" \
		-d '{"to": ["bob"], "body": "smoke test from alice"}' >/dev/null || fail "$label: post"
	reply=$(curl -fsS -X POST "http://$http/v1/messages:wait" -H "Authorization: Bearer $bob" -d '{"timeout_seconds": 5}')
	grep -q 'smoke test from alice' <<<"$reply" || fail "$label: bob's wait returned $reply"
	"${ctl[@]}" send --to bob "smoke test from the admin" >/dev/null
	reply=$("${ctl[@]}" messages --agent bob)
	grep -q 'smoke test from the admin' <<<"$reply" || fail "$label: hubctl messages printed $reply"
	if [ -n "${hubhook:-}" ]; then
		# What a host runs at a tool use: hub-hook hands it to hub beside it.
		curl -fsS -X POST "http://$http/v1/messages" -H "Authorization: Bearer $bob" \
			-d '{"to": ["alice"], "body": "smoke test of the hook"}' >/dev/null || fail "$label: post to alice"
		reply=$(echo '{"hook_event_name":"PostToolUse","session_id":"smoke","tool_name":"Bash","tool_input":{"command":"true"}}' |
			HUB_ADDR=$grpc HUB_TOKEN=$alice HUB_HOOK_BRIDGE=off "$hubhook" hook claude PostToolUse)
		grep -q 'smoke test of the hook' <<<"$reply" || fail "$label: hub-hook hook claude PostToolUse printed $reply"
	fi
	local metrics
	metrics=$(curl -fsS "http://$http/metrics") || fail "$label: GET /metrics"
	grep -q "^hub_build_info{commit=\"$commit\",goversion=\"[^\"]*\",version=\"v$version\"} 1\$" <<<"$metrics" ||
		fail "$label: /metrics lacks hub_build_info for v$version at $commit"
	stop_hub "$label"
	echo "$label: ready in ${ready_ms} ms; health, agents, post, wait, admin message,${hubhook:+ hook,} build info, SIGTERM: ok"
}

# json_array KEY FILE: the strings of the first "KEY":[…] in FILE, one a
# line (strings without quotes or commas, as in the image's configuration).
# (The file may end without a newline; sed would end its output the same.)
json_array() { { cat "$2"; echo; } | sed -n "s/.*\"$1\":\[\([^]]*\)\].*/\1/p" | head -1 | sed 's/","/\n/g; s/^"//; s/"$//'; }

# median N…: the middle one.
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# check_version BINARY_COMMAND...: the stamped version and commit.
check_version() {
	local out
	out=$("$@" version)
	grep -q "^[a-z-]* v$version\$" <<<"$out" && grep -q "^  commit  $commit\$" <<<"$out" ||
		fail "$* version printed: $out (want v$version, commit $commit)"
}

step "smoke test: linux/amd64 archive"
dir=$work/amd64/hub_${version}_linux_amd64
hub=("$dir/hub") hubctl=("$dir/hubctl") hubhook=$dir/hub-hook
check_version "${hub[@]}"
check_version "${hubctl[@]}"
check_version "$hubhook"
"${hub[@]}" version
smoke amd64 "$work/data-amd64" "$work/data-amd64"
hubhook="" # the other smoke tests run a hub without hub-hook beside it
# Start to ready, five times each: on an empty data dir (the database
# created and migrated) and again on the same one.
fresh=() again=()
for i in 1 2 3 4 5; do
	start_hub "start-$i" "$work/start-$i"
	fresh+=("$ready_ms")
	stop_hub "start-$i"
	start_hub "restart-$i" "$work/start-$i"
	again+=("$ready_ms")
	stop_hub "restart-$i"
done
echo "start to ready (ms), empty data dir: ${fresh[*]} (median $(median "${fresh[@]}")); existing data dir: ${again[*]} (median $(median "${again[@]}"))"

if ! $quick; then
	step "smoke test: linux/arm64 archive under qemu-aarch64-static"
	dir=$work/arm64/hub_${version}_linux_arm64
	hub=(qemu-aarch64-static "$dir/hub") hubctl=(qemu-aarch64-static "$dir/hubctl")
	check_version "${hub[@]}"
	check_version "${hubctl[@]}"
	smoke arm64-qemu "$work/data-arm64" "$work/data-arm64"
fi

step "image: deploy/build-image.sh, exported and unpacked"
image=dist/hub_${version}_image_linux_amd64.tar
bash deploy/build-image.sh --binary "$work/amd64/hub_${version}_linux_amd64/hub" --version "v$version" \
	--revision "$commit" --arch amd64 --output "$image"
mkdir -p "$work/image" "$work/rootfs"
tar -xf "$image" -C "$work/image"
manifest=$work/image/manifest.json
cfg=$work/image/$(sed -n 's/.*"Config":"\([^"]*\)".*/\1/p' "$manifest")
[ -f "$cfg" ] || fail "no image configuration in $image"
for want in '"User":"65532:65532"' '"7700/tcp"' '"7701/tcp"' '"/data":{}' '"Healthcheck":{"Test":\["CMD","/hub","health","--addr","127.0.0.1:7701"\]' \
	'"Entrypoint":\["/hub"\]' '"--insecure"' "\"org.opencontainers.image.version\":\"v$version\"" \
	"\"org.opencontainers.image.revision\":\"$commit\"" '"org.opencontainers.image.source":"https://github.com/agenthub/hub"' \
	'"org.opencontainers.image.created":"[^"]' '"architecture":"amd64"'; do
	grep -q "$want" "$cfg" || fail "the image's configuration lacks $want: $(cat "$cfg")"
done
for layer in $(grep -o '"[^"]*\.tar"' "$manifest" | tr -d '"'); do
	tar -xf "$work/image/$layer" -C "$work/rootfs"
done
rootfs=$work/rootfs
echo "root filesystem: $(cd "$rootfs" && find . -mindepth 1 -maxdepth 4 | sort | tr '\n' ' ')"
[ "$(stat -c '%u:%g %a' "$rootfs/data")" = "65532:65532 700" ] || fail "/data is $(stat -c '%u:%g %a' "$rootfs/data"), want 65532:65532 700"
[ "$(stat -c '%a' "$rootfs/tmp")" = 1777 ] || fail "/tmp is not 1777"
cmp -s "$rootfs/hub" "$work/amd64/hub_${version}_linux_amd64/hub" || fail "the image's /hub is not the release's hub"
if [ "$(id -u)" = 0 ]; then
	# As the container runs it: the image's files only, its user.
	hub=(chroot --userspec=65532:65532 "$rootfs" /hub) hubctl=("$work/amd64/hub_${version}_linux_amd64/hubctl")
	check_version "${hub[@]}"
	smoke image-rootfs /data "$rootfs/data"
	# The image's own ENTRYPOINT + CMD and HEALTHCHECK, word for word from
	# its configuration, in a network namespace of their own (loopback
	# only): the hub listens on 0.0.0.0:7700 and 0.0.0.0:7701 there, as in
	# a container.
	json_array Entrypoint "$cfg" >"$work/run.args"
	json_array Cmd "$cfg" >>"$work/run.args"
	json_array Test "$cfg" | tail -n +2 >"$work/check.args" # after "CMD"
	json_array Env "$cfg" >"$work/env.args"
	echo "image command: $(tr '\n' ' ' <"$work/run.args")"
	echo "image health check: $(tr '\n' ' ' <"$work/check.args")"
	echo "image environment: $(tr '\n' ' ' <"$work/env.args")"
	unshare --net bash -s "$rootfs" "$work" <<-'NETNS' || fail "the image's command and HEALTHCHECK (the hub's log: $(cat "$work/container.log"))"
		set -euo pipefail
		rootfs=$1 work=$2
		ip link set lo up
		mapfile -t run <"$work/run.args"
		mapfile -t check <"$work/check.args"
		mapfile -t environment <"$work/env.args"
		as_image() { env -i "${environment[@]}" chroot --userspec=65532:65532 "$rootfs" "$@"; }
		# Not through as_image: $! is then the hub itself (env and chroot exec it).
		env -i "${environment[@]}" chroot --userspec=65532:65532 "$rootfs" "${run[@]}" >/dev/null 2>"$work/container.log" &
		pid=$!
		trap 'kill "$pid" 2>/dev/null || true' EXIT
		for _ in $(seq 300); do as_image "${check[@]}" >/dev/null 2>&1 && break; sleep 0.1; done
		[ "$(as_image "${check[@]}")" = ready ] || { echo "the health check did not say ready"; exit 1; }
		grep -Eq 'hub started.* grpc=(0\.0\.0\.0|\[::\]):7700 http=(0\.0\.0\.0|\[::\]):7701' "$work/container.log" ||
			{ echo "the hub does not listen on every address at 7700 and 7701"; exit 1; }
		kill -TERM "$pid"
		wait "$pid" || { echo "the hub exited with $? on SIGTERM"; exit 1; }
		if as_image "${check[@]}" 2>/dev/null; then echo "the health check said ready with the hub stopped"; exit 1; fi
	NETNS
	grep 'hub started' "$work/container.log"
	echo "image command and HEALTHCHECK: listening on 7700 and 7701, health 0 while up, 1 once stopped"
else
	hub=("$rootfs/hub") hubctl=("$work/amd64/hub_${version}_linux_amd64/hubctl")
	echo "not root: running the image's hub without chroot"
	smoke image-rootfs "$work/data-image" "$work/data-image"
fi

step "systemd unit: deploy/hub.service"
# verify wants ExecStart's binary to exist: the same unit, on the release's.
sed "s#/usr/local/bin/hub #$work/amd64/hub_${version}_linux_amd64/hub #" deploy/hub.service >"$work/hub.service"
systemd-analyze verify "$work/hub.service"
echo "systemd-analyze verify: ok"
if exposure=$(systemd-analyze security --offline=yes "$work/hub.service" 2>/dev/null | sed -n 's/.*Overall exposure level for hub.service: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p') && [ -n "$exposure" ]; then
	echo "systemd-analyze security --offline=yes: exposure $exposure"
	awk -v e="${exposure% *}" 'BEGIN { exit !(e <= 2.0) }' || fail "exposure $exposure, above 2.0"
else
	echo "systemd-analyze security --offline=yes is not supported by $(systemd-analyze --version | head -1): exposure not checked"
fi

if ! $quick && [ "$(id -u)" = 0 ]; then
	step "systemd unit, booted: hub.service under systemd in a systemd-nspawn container"
	boot_missing=()
	command -v debootstrap >/dev/null || boot_missing+=(debootstrap)
	command -v systemd-nspawn >/dev/null || boot_missing+=(systemd-container)
	if [ "${#boot_missing[@]}" -gt 0 ]; then
		echo "installing Debian packages: ${boot_missing[*]}"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${boot_missing[@]}" >/dev/null
	fi
	# A minimal Debian with systemd, made once (about 300 MB, 2 minutes)
	# and kept; each check boots a copy of it.
	os=${XDG_CACHE_HOME:-$HOME/.cache}/hub-release-check/bookworm
	if [ ! -x "$os/lib/systemd/systemd" ]; then
		echo "debootstrap: a minimal Debian bookworm with systemd into $os"
		rm -rf "$os.tmp" && mkdir -p "$(dirname "$os")"
		debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$os.tmp" >"$work/debootstrap.log" 2>&1 ||
			{ tail -20 "$work/debootstrap.log" >&2; fail "debootstrap"; }
		mv "$os.tmp" "$os"
	fi
	machine=$work/machine
	cp -a "$os" "$machine"
	install -m 0755 "$work/amd64/hub_${version}_linux_amd64/hub" "$work/amd64/hub_${version}_linux_amd64/hubctl" "$machine/usr/local/bin/"
	install -m 0644 deploy/hub.service "$machine/etc/systemd/system/hub.service"
	# A service that looks at the hub from inside, writes what it saw and
	# powers the machine off (systemd expands $NAME and %x in ExecStart: $$
	# and %% hand them to sh).
	cat >"$machine/etc/systemd/system/hub-check.service" <<-'UNIT'
		[Unit]
		After=hub.service
		Wants=hub.service
		[Service]
		Type=oneshot
		Environment=HUB_DATA_DIR=/var/lib/hub
		ExecStart=/bin/sh -c 'exec >/hub-check.out 2>&1; \
		  for i in $(seq 100); do /usr/local/bin/hub health >/dev/null 2>&1 && break; sleep 0.1; done; \
		  /usr/local/bin/hub health; echo "health=$?"; \
		  /usr/local/bin/hubctl agent add alice | head -1; /usr/local/bin/hubctl send --to alice "from the unit"; \
		  /usr/local/bin/hubctl messages --agent alice | grep -c "from the unit"; \
		  pid=$(systemctl show hub -p MainPID --value); \
		  systemctl show hub -p ActiveState -p NRestarts -p User; \
		  grep -E "^(NoNewPrivs|Seccomp|CapEff):" /proc/$$pid/status; grep "open files" /proc/$$pid/limits; \
		  stat -c "data dir %%a" /var/lib/private/hub; \
		  systemctl stop hub; systemctl show hub -p Result -p ExecMainStatus; \
		  journalctl -u hub --no-pager | tail -5; systemctl poweroff'
		UNIT
	ln -s /etc/systemd/system/hub.service "$machine/etc/systemd/system/multi-user.target.wants/hub.service"
	ln -s /etc/systemd/system/hub-check.service "$machine/etc/systemd/system/multi-user.target.wants/hub-check.service"
	# Unified cgroups in the container: this host's hybrid hierarchy lacks
	# controllers nspawn otherwise mounts. Its own network: loopback only.
	SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 timeout 300 systemd-nspawn -q -D "$machine" --private-network --register=no --keep-unit --boot \
		>"$work/nspawn.log" 2>&1 || true
	out=$(cat "$machine/hub-check.out" 2>/dev/null) || { tail -30 "$work/nspawn.log" >&2; fail "the booted machine wrote no result"; }
	for want in '^ready$' '^health=0$' '^Created agent alice' '^1$' '^ActiveState=active$' '^NRestarts=0$' '^User=hub$' \
		'^NoNewPrivs:[[:space:]]*1$' '^Seccomp:[[:space:]]*2$' '^CapEff:[[:space:]]*0*$' '^Max open files *4224 *4224' \
		'^data dir 700$' '^Result=success$' '^ExecMainStatus=0$'; do
		grep -q "$want" <<<"$out" || { echo "$out" >&2; fail "hub.service booted: no line matching $want"; }
	done
	echo "$out" | sed 's/^/  /'
	echo "hub.service under systemd $("$machine/lib/systemd/systemd" --version | head -1 | cut -d' ' -f2): ready, agents and messages, seccomp on, no capabilities, no new privileges, 4224 files, stopped cleanly"
fi

step "sizes"
ls -l dist/*.tar.gz dist/*.tar | awk '{ printf "%10d  %s\n", $5, $9 }'
for arch in "${arches[@]}"; do
	for b in hub hubctl; do
		printf '%10d  %s (linux/%s, in the archive)\n' "$(stat -c %s "$work/$arch/hub_${version}_linux_${arch}/$b")" "$b" "$arch"
	done
done
printf '%10d  image, gzip-compressed (what a registry stores)\n' "$(gzip -c "$image" | wc -c)"
printf '%10d  snapshot build time, seconds\n' "$build_secs"

step "release check passed in $(( $(date +%s) - start ))s"
