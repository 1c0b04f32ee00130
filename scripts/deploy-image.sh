#!/usr/bin/env bash
# Builds Ferry's container image from scratch with Debian's podman, no container registry needed:
#   1. a bookworm root filesystem made with debootstrap from the Debian mirror apt uses
#      (minbase + libvirt0 + libstdc++6 + ca-certificates), imported as localhost/ferry-base:bookworm
#      (kept once made: delete it with `podman rmi ferry-base:bookworm` to remake it);
#   2. the build context: this checkout's dist/ (built here), package.json and production-only
#      node_modules (a copy of ./node_modules pruned of dev dependencies; ./node_modules is not touched)
#      and this host's Node >= 20 binary (bookworm's nodejs is 18);
#   3. `podman build -f deploy/Containerfile -t localhost/ferry:dev` (or $FERRY_IMAGE).
# Idempotent: re-running reuses the base and podman's layer cache.
#   scripts/deploy-image.sh install    only install the Debian packages this and test/deploy need
#                                      (podman, runc, debootstrap; python3-yaml and systemd for the files' test)
#   scripts/deploy-image.sh            build (installing them first if missing)
#   scripts/deploy-image.sh --test     build, then run test/integration/deployCompose.test.ts against it
# Work files go to $FERRY_DEPLOY_WORK (default /var/tmp/ferry-deploy). Needs root (debootstrap, rootful podman).
set -euo pipefail
cd "$(dirname "$0")/.."
image="${FERRY_IMAGE:-localhost/ferry:dev}"
base=localhost/ferry-base:bookworm
work="${FERRY_DEPLOY_WORK:-/var/tmp/ferry-deploy}"
mirror="${FERRY_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  # The mirror apt already uses (deb822 or one-line sources), else Debian's CDN.
  mirror=$(grep -hsoE '^(URIs:[[:space:]]*|deb[[:space:]]+)https?://[^[:space:]]+/debian/?([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/* \
    | grep -oE 'https?://[^[:space:]]+' | head -1 || true)
  mirror="${mirror:-http://deb.debian.org/debian}"
fi

need() { command -v "$1" >/dev/null 2>&1; }
if ! need podman || ! need debootstrap || ! need runc || ! need systemd-analyze || ! python3 -c 'import yaml' 2>/dev/null; then
  echo "== installing podman, runc, debootstrap, python3-yaml and systemd (Debian packages)"
  apt-get install -y --no-install-recommends podman debootstrap runc python3-yaml systemd >/dev/null
fi
[ "${1:-}" = install ] && exit 0

mkdir -p "$work"
# podman's settings for this host (docs/OPERATIONS.md "Deployment"): runc, since crun refuses hybrid
# cgroups (a v2 hierarchy with a controller beside the v1 ones); rlimits no higher than this shell's
# hard ones, since podman's defaults (nofile 1048576) need CAP_SYS_RESOURCE to raise past them;
# nproc at most 32768 (podman's own default: a higher one is refused as a raise even under this
# shell's hard limit). The tests and compose runs use the same file: CONTAINERS_CONF=$work/containers.conf.
nofile=$(ulimit -Hn); [ "$nofile" = unlimited ] || [ "$nofile" -gt 1048576 ] && nofile=1048576
nproc=$(ulimit -Hu); [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
conf="$work/containers.conf"
if [ -z "${CONTAINERS_CONF:-}" ]; then
  cat > "$conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "${FERRY_OCI_RUNTIME:-runc}"
CONF
  export CONTAINERS_CONF="$conf"
fi
if ! podman image exists "$base"; then
  rootfs="$work/rootfs"
  if [ ! -f "$rootfs/.ferry-complete" ]; then
    echo "== debootstrap bookworm from $mirror"
    rm -rf "$rootfs"
    debootstrap --variant=minbase --include=libvirt0,libstdc++6,ca-certificates bookworm "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    # Nothing in the image needs apt's package lists or caches.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
    touch "$rootfs/.ferry-complete"
  fi
  echo "== importing the root filesystem as $base"
  tar --exclude=./.ferry-complete -C "$rootfs" -c . | podman import --change 'CMD ["/bin/sh"]' - "$base" >/dev/null
fi

echo "== building dist/"
npx tsc -p tsconfig.json
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then echo "this host's node is $(node --version); the image needs >= 20" >&2; exit 1; fi

ctx="$work/context"
echo "== staging the build context in $ctx"
rm -rf "$ctx" && mkdir -p "$ctx/app"
cp "$(command -v node)" "$ctx/node"
cp deploy/ferry-entrypoint.sh "$ctx/ferry-entrypoint.sh"
cp package.json package-lock.json "$ctx/app/"
# Only what runs: the daemons, their shared code and the PKI tool (no tests, benchmarks or simulator).
mkdir -p "$ctx/app/dist"
for d in clc cc nc shared scripts; do cp -a "dist/$d" "$ctx/app/dist/"; done
# The status page's static files (tsc does not copy them): beside the module that serves them.
cp -a clc/status/assets "$ctx/app/dist/clc/status/assets"
cp -a bin "$ctx/app/bin"
cp -aL node_modules "$ctx/app/node_modules"
(cd "$ctx/app" && npm prune --omit=dev --no-audit --no-fund --loglevel=error --offline >/dev/null)

echo "== podman build -t $image"
# podman build does not apply containers.conf's default_ulimits to RUN steps: give them again.
podman build --quiet --network=none --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" --build-arg "BASE=$base" -f deploy/Containerfile -t "$image" "$ctx" >/dev/null
echo "built $image ($(podman image inspect --format '{{.Size}}' "$image") bytes)"

if [ "${1:-}" = "--test" ]; then
  FERRY_DEPLOY_IMAGE="$image" FERRY_DEPLOY_WORK="$work" npx vitest run test/integration/deployCompose.test.ts
fi
