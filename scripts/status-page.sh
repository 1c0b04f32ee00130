#!/usr/bin/env bash
# What the status page's browser test (test/integration/statusPage.test.ts, issue 20) needs: Debian's
# chromium, driven by playwright-core (an npm devDependency) at /usr/bin/chromium. playwright-core
# never downloads a browser here; the test launches this one by path.
#
#   status-page.sh install   # nothing when present; apt-get update only when the lists were never fetched
#   status-page.sh check     # exit 1, naming what is missing
set -euo pipefail

die() { echo "status-page: $*" >&2; exit 1; }

case "${1:-}" in
  install)
    if [ -x /usr/bin/chromium ]; then
      echo "== status page: chromium already installed"
      exit 0
    fi
    [ "$(id -u)" = 0 ] || die "installing chromium needs root"
    echo "== status page: installing chromium"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-cache policy chromium 2>/dev/null | grep -q 'Candidate: [0-9]'; then
      apt-get update -qq
    fi
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
    ;;
  check)
    [ -x /usr/bin/chromium ] || die "missing: chromium (run: scripts/status-page.sh install)"
    ;;
  *) die "usage: status-page.sh install|check" ;;
esac
