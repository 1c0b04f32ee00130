#!/usr/bin/env bash
# The real clients issue 14's suite drives a test cloud with (test/integration/realClients.test.ts):
# boto3/botocore and the aws CLI as Debian 12 packages them. The tests call /usr/bin/python3 and
# /usr/bin/aws by absolute path, so only the Debian ones count (a pyenv python or a pip aws on PATH
# does not). euca2ools and the Eucalyptus 4 admin tools need Python 2 and are reproduced in
# TypeScript instead (test/clients/), so nothing is installed for them.
#
#   real-clients.sh install   # nothing when present; apt-get update only when the lists were never fetched
#   real-clients.sh check     # exit 1, naming what is missing
set -euo pipefail

die() { echo "real-clients: $*" >&2; exit 1; }

missing_packages() {
  local missing=()
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import boto3, botocore' 2>/dev/null || missing+=(python3-boto3)
  [ -x /usr/bin/aws ] || missing+=(awscli)
  printf '%s\n' "${missing[@]}"
}

install_packages() {
  local missing
  mapfile -t missing < <(missing_packages | awk 'NF')
  if [ ${#missing[@]} -eq 0 ]; then
    echo "== real clients: python3-boto3 and awscli already installed"
    return
  fi
  [ "$(id -u)" = 0 ] || die "installing ${missing[*]} needs root"
  echo "== real clients: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # An update only when the package lists were never fetched (a fresh container).
  if ! apt-cache policy awscli 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update -qq
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

case "${1:-}" in
  install) install_packages ;;
  check)
    mapfile -t missing < <(missing_packages | awk 'NF')
    [ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (run: scripts/real-clients.sh install)"
    ;;
  *) die "usage: real-clients.sh install|check" ;;
esac
