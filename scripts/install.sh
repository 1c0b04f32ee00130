#!/usr/bin/env bash
# Installs Ferry's npm dependencies (only when package-lock.json changed) and builds dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  echo "Ferry needs Node.js 20 or newer (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== installing npm dependencies"
  # Not `npm ci`: npm 11 rejects this lock file as out of sync over unrs-resolver's optional
  # platform bindings (pulled in by eslint-plugin-import-x); `npm install` honours the lock as is.
  npm install --no-audit --no-fund --loglevel=error
fi
echo "== building (tsc)"
npx tsc -p tsconfig.json
