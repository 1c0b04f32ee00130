#!/usr/bin/env bash
# The demo command: installs, builds and starts a demo cloud on loopback (1 CLC, 1 CC, 3 NCs on the
# simulated hypervisor, a few running instances). `scripts/demo.sh stop` stops it; `status` lists it.
# `scripts/demo.sh replicated [start|failover|status|stop|reset]`: the replicated demo on etcd
# (scripts/demoReplicated.ts; installs Debian's etcd with scripts/etcd-lab.sh install when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = replicated ]; then
  cmd=${2:-start}
  if [ "$cmd" = start ] || [ ! -f dist/scripts/demoReplicated.js ]; then
    bash scripts/install.sh >&2
  fi
  if [ "$cmd" = start ]; then
    bash scripts/etcd-lab.sh install >&2
  fi
  exec node dist/scripts/demoReplicated.js "$cmd"
fi
cmd=${1:-start}
if [ "$cmd" = start ] || [ ! -f dist/scripts/demo.js ]; then
  bash scripts/install.sh >&2
fi
exec node dist/scripts/demo.js "$cmd"
