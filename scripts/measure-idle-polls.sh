#!/usr/bin/env bash
# Counts how often an idle demo cloud's CC asks NC 127.0.1.1 for its report (issue 19, docs/PERFORMANCE.md
# "Node polling period"): starts the demo from this checkout's build (dist/), waits for it to settle,
# reads the NC's ferry_wire_requests_total{op="ncDescribeResource"} twice SECONDS apart, stops the demo.
#   bash scripts/measure-idle-polls.sh [SECONDS]    (default 60; run `npm run build` first)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
node dist/scripts/demo.js start > /dev/null
trap 'node dist/scripts/demo.js stop > /dev/null' EXIT
token=$(cat .ferry-demo/hosts/127.0.1.1/nc/metrics.token)
describes() {
  curl -fsS -H "Authorization: Bearer $token" http://127.0.1.1:9192/metrics \
    | awk '/^ferry_wire_requests_total\{op="ncDescribeResource",code="OK"/ { print $2 }'
}
sleep 15
a=$(describes)
sleep "$seconds"
b=$(describes)
n=$((b - a))
echo "ncDescribeResource on 127.0.1.1 in ${seconds} s: ${n} (one every $(awk -v s="$seconds" -v n="$n" 'BEGIN { printf "%.2f", s / n }') s)"
