#!/usr/bin/env bash
# The test command: installs what the tests need (npm, and the Debian packages of the fencing lab, etcd, the real clients, the status page's browser and the libvirt lab), builds, runs typecheck, lint and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# The fencing integration tests run the real fence agents against ipmi_sim BMCs (CI runs as root).
bash scripts/fencing-lab.sh install
# The etcd store backend and leader election (issue 21) run against real etcd members (Debian's etcd-server).
bash scripts/etcd-lab.sh install
# The real-clients suite (issue 14) drives a test cloud with Debian's boto3 and aws CLI.
bash scripts/real-clients.sh install
# The status page's browser test (issue 20) drives Debian's chromium with playwright-core.
bash scripts/status-page.sh install
# The libvirt integration test needs libvirtd, QEMU and tini (Debian packages; root on CI).
echo "== libvirt lab packages"
bash scripts/libvirt-lab.sh install
# The deployment files' tests need podman (Debian's), and test/integration/deployCompose.test.ts
# the image, built from a debootstrapped bookworm (up to 5 minutes from scratch, 1 with the base kept).
echo "== deployment image (podman)"
bash scripts/deploy-image.sh
export FERRY_DEPLOY_IMAGE=localhost/ferry:dev
echo "== typecheck (sources and tests)"
npx tsc -p tsconfig.eslint.json
echo "== lint"
npx eslint .
echo "== tests"
npx vitest run "$@"
# A thousand seeded fault schedules through the whole-cloud simulator (docs/SIMULATION.md); the same
# seeds give the same traces on every machine. Skipped when arguments pick particular test files.
if [ $# -eq 0 ]; then
  echo "== simulation (1000 seeds)"
  sim_log=$(mktemp)
  if ! node dist/sim/main.js --seeds 1000 --from 1 --shrink 1 > "$sim_log" 2>&1; then
    cat "$sim_log"
    exit 1
  fi
  grep -E "^ferry sim:" "$sim_log"
  rm -f "$sim_log"
  # Correctness at scale (issue 19): a real CC and CLC supervising 10,000 simulated hosts in scale-mode
  # processes; a burst of 100 failures detected, held by the storm gate, and recovered (scripts/scaleCheck.ts).
  echo "== scale check (10,000 hosts)"
  node dist/scripts/scaleCheck.js --hosts 10000
fi
