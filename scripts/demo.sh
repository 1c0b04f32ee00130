#!/usr/bin/env bash
# The demo command: installs, builds and starts a demo cloud on loopback (1 CLC, 1 CC, 3 NCs on the
# simulated hypervisor, a few running instances). `scripts/demo.sh stop` stops it; `status` lists it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-start}
if [ "$cmd" = start ] || [ ! -f dist/scripts/demo.js ]; then
  bash scripts/install.sh >&2
fi
exec node dist/scripts/demo.js "$cmd"
