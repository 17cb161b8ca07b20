#!/usr/bin/env bash
# Builds the hub's container image FROM scratch with buildah, offline (no
# base image to pull), from a static hub binary, and writes it as an
# archive that `podman load` and `docker load` read.
#
#   deploy/build-image.sh --binary dist/hub_linux_amd64_v1/hub --version v1.2.3 \
#       [--revision SHA] [--created RFC3339] [--arch amd64|arm64] [--output FILE]
#
# The image is in Docker's format, the one that keeps HEALTHCHECK (the OCI
# image format has no field for it); its labels are the OCI annotation keys
# (org.opencontainers.image.version, .revision, .source, .created). buildah
# keeps its storage in a temporary directory (vfs driver, chroot isolation:
# it works inside containers and needs no daemon), removed at the end.
# Publishing: skopeo copy docker-archive:FILE docker://REGISTRY/hub:TAG, or
# podman load -i FILE && podman push.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

binary="" version="" revision="" created="" arch="amd64" output=""
while [[ $# -gt 0 ]]; do
	case $1 in
	--binary) binary=$2; shift 2 ;;
	--version) version=$2; shift 2 ;;
	--revision) revision=$2; shift 2 ;;
	--created) created=$2; shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--output) output=$2; shift 2 ;;
	*) echo "build-image: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
	esac
done
if [[ -z "$binary" || -z "$version" ]]; then
	echo "build-image: give --binary PATH (a static linux hub) and --version VERSION" >&2
	exit 2
fi
[[ -x "$binary" ]] || { echo "build-image: $binary is not an executable file" >&2; exit 1; }
if readelf -l "$binary" 2>/dev/null | grep -q 'Requesting program interpreter'; then
	echo "build-image: $binary is dynamically linked; the image is FROM scratch and needs a static binary (the release's)" >&2
	exit 1
fi
: "${revision:=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
: "${created:=$(git -C "$root" show -s --format=%cI HEAD 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)}"
: "${output:=hub_${version#v}_image_linux_${arch}.tar}"
cacerts=/etc/ssl/certs/ca-certificates.crt
[[ -s "$cacerts" ]] || { echo "build-image: $cacerts is missing: install Debian's ca-certificates" >&2; exit 1; }
command -v buildah >/dev/null || { echo "build-image: buildah is missing: apt-get install buildah" >&2; exit 1; }

work=$(mktemp -d)
bah() { buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs "$@"; }
cleanup() {
	bah rmi --all >/dev/null 2>&1 || true
	# vfs layers may hold read-only directories
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# The build context.
ctx=$work/context
mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/owned/data"
install -m 0755 "$binary" "$ctx/hub"
install -m 0644 "$cacerts" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\nhub:x:65532:65532:Agent Hub:/data:/sbin/nologin\n' >"$ctx/rootfs/etc/passwd"
printf 'root:x:0:\nhub:x:65532:\n' >"$ctx/rootfs/etc/group"
chmod 0644 "$ctx/rootfs/etc/passwd" "$ctx/rootfs/etc/group"
chmod 1777 "$ctx/rootfs/tmp"
chmod 0700 "$ctx/owned/data"
# Same content, same image: every file dated from the commit.
epoch=$(date -d "$created" +%s)
find "$ctx" -exec touch -h -d "@$epoch" {} +

# A tag allows letters, digits, _ . and -: semver's build metadata (+…) becomes _….
tag="localhost/hub:${version//+/_}"
bah build --quiet --isolation chroot --format docker --arch "$arch" --os linux \
	--timestamp "$epoch" \
	--build-arg "VERSION=$version" --build-arg "REVISION=$revision" --build-arg "CREATED=$created" \
	-f "$root/deploy/Containerfile" -t "$tag" "$ctx" >/dev/null
rm -f "$output"
bah push --quiet "$tag" "docker-archive:$output:$tag"
echo "build-image: $output ($tag, linux/$arch, $(du -k "$output" | cut -f1) KiB)"
