#!/usr/bin/env bash
# The test command: installs what the tests need (npm and the libvirt lab's Debian packages), builds, runs typecheck, lint and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# The fencing integration tests run the real fence agents against ipmi_sim BMCs (CI runs as root).
bash scripts/fencing-lab.sh install
# The libvirt integration test needs libvirtd, QEMU and tini (Debian packages; root on CI).
echo "== libvirt lab packages"
bash scripts/libvirt-lab.sh install
echo "== typecheck (sources and tests)"
npx tsc -p tsconfig.eslint.json
echo "== lint"
npx eslint .
echo "== tests"
npx vitest run "$@"
