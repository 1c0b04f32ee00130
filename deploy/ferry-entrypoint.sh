#!/bin/sh
# The image's entry point: `ferry TIER [FLAGS...]` runs one Ferry daemon in the foreground, with
# its own flags (each also read from its environment variable: FERRY_CLC_*, FERRY_CC_*, FERRY_NC_*,
# FERRY_HEARTBEAT_*, SIMHV_*; `ferry TIER --help` lists them). exec, so the daemon is PID 1's child
# podman signals directly and SIGTERM stops it cleanly (exit 0).
#   clc        cloud controller (admin API)            dist/clc/main.js
#   cc         cluster controller, one per partition   dist/cc/main.js
#   nc         node controller, one per host           dist/nc/main.js
#   simhv      simulated hypervisor, one per host      dist/nc/hypervisor/sim/main.js
#   heartbeat  host-HA heartbeat, one per libvirt host dist/nc/ha/heartbeat/main.js
#   init       the cloud PKI (ferry-init)              dist/scripts/ferry-init.js
# FERRY_HOME (default /opt/ferry) is where dist/ and node_modules/ are.
set -eu
home="${FERRY_HOME:-/opt/ferry}"
tier="${1:-}"
case "$tier" in
  clc) entry=dist/clc/main.js ;;
  cc) entry=dist/cc/main.js ;;
  nc) entry=dist/nc/main.js ;;
  simhv) entry=dist/nc/hypervisor/sim/main.js ;;
  heartbeat) entry=dist/nc/ha/heartbeat/main.js ;;
  init) entry=dist/scripts/ferry-init.js ;;
  *)
    echo "usage: ferry clc|cc|nc|simhv|heartbeat|init [FLAGS...]  (ferry TIER --help lists a tier's flags)" >&2
    exit 2 ;;
esac
shift
exec node "$home/$entry" "$@"
