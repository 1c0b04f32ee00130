#!/usr/bin/env bash
# The test command: installs what the tests need, builds, runs typecheck, lint and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# The fencing integration tests run the real fence agents against ipmi_sim BMCs (CI runs as root).
bash scripts/fencing-lab.sh install
echo "== typecheck (sources and tests)"
npx tsc -p tsconfig.eslint.json
echo "== lint"
npx eslint .
echo "== tests"
npx vitest run "$@"
