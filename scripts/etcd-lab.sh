#!/usr/bin/env bash
# The etcd lab (issue 21; docs/OPERATIONS.md "Running on etcd"): installs Debian's etcd server and
# client, and starts or stops a small etcd cluster on loopback for trying --store etcd by hand. The
# tests start their own members (test/helpers/etcdCluster.ts) and need only `install`.
#
#   etcd-lab.sh install
#   etcd-lab.sh start DIR CLIENT_PORT PEER_PORT ADDR [ADDR...]   one member per loopback address
#   etcd-lab.sh stop DIR
#   etcd-lab.sh endpoints DIR                                     the --etcd-endpoints value
#
# DIR holds each member's data dir, log and pid (DIR/m1.pid, ...). Stop signals exactly those pids.
set -euo pipefail

die() { echo "etcd-lab: $*" >&2; exit 1; }

install_packages() {
  local missing=()
  [ -x /usr/bin/etcd ] || missing+=(etcd-server)
  command -v etcdctl >/dev/null || missing+=(etcd-client)
  if [ ${#missing[@]} -eq 0 ]; then
    echo "== etcd lab: etcd-server and etcd-client already installed ($(/usr/bin/etcd --version | head -1))"
    return
  fi
  [ "$(id -u)" = 0 ] || die "installing ${missing[*]} needs root"
  echo "== etcd lab: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # An update only when the package lists were never fetched (a fresh container).
  if ! apt-cache policy etcd-server 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update -qq
  fi
  # Debian's etcd-server starts a system etcd on 127.0.0.1:2379 when installed; the lab and the tests
  # never use that one (their own addresses and ports), so it is left as the package sets it up.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

is_loopback() { [[ $1 =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]]; }

start_cluster() {
  [ $# -ge 4 ] || die "usage: $0 start DIR CLIENT_PORT PEER_PORT ADDR [ADDR...]"
  local dir=$1 cport=$2 pport=$3; shift 3
  local addrs=("$@") initial="" i name
  for i in "${!addrs[@]}"; do
    is_loopback "${addrs[$i]}" || die "${addrs[$i]} is not a loopback address (127.x.y.z)"
    initial+="${initial:+,}m$((i + 1))=http://${addrs[$i]}:$pport"
  done
  mkdir -p "$dir"
  for i in "${!addrs[@]}"; do
    name=m$((i + 1))
    if [ -f "$dir/$name.pid" ] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then die "$name is already running (pid $(cat "$dir/$name.pid"))"; fi
    # Generous timing: a loaded laptop must not make the members re-elect every few seconds.
    setsid /usr/bin/etcd --name "$name" --data-dir "$dir/$name" \
      --listen-client-urls "http://${addrs[$i]}:$cport" --advertise-client-urls "http://${addrs[$i]}:$cport" \
      --listen-peer-urls "http://${addrs[$i]}:$pport" --initial-advertise-peer-urls "http://${addrs[$i]}:$pport" \
      --initial-cluster "$initial" --initial-cluster-token "ferry-lab" --initial-cluster-state new \
      --heartbeat-interval 250 --election-timeout 2500 --logger zap --log-level warn \
      >"$dir/$name.log" 2>&1 < /dev/null &
    echo $! >"$dir/$name.pid"
  done
  printf '%s\n' "${addrs[@]/#/http://}" | sed "s/\$/:$cport/" | paste -sd, >"$dir/endpoints"
  local eps; eps=$(cat "$dir/endpoints")
  for _ in $(seq 120); do
    if ETCDCTL_API=3 etcdctl --endpoints "$eps" --dial-timeout 2s endpoint health >/dev/null 2>&1; then
      echo "etcd lab: ${#addrs[@]} member(s) up; --etcd-endpoints $eps"
      return
    fi
    sleep 0.5
  done
  die "the cluster did not become healthy within 60 s; see $dir/m*.log"
}

stop_cluster() {
  [ $# -eq 1 ] || die "usage: $0 stop DIR"
  local dir=$1 f pid
  for f in "$dir"/m*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$f"
  done
}

cmd=${1:-}
shift || true
case "$cmd" in
  install) install_packages ;;
  start) start_cluster "$@" ;;
  stop) stop_cluster "$@" ;;
  endpoints) cat "${1:?usage: $0 endpoints DIR}/endpoints" ;;
  *) die "usage: $0 install | start DIR CLIENT_PORT PEER_PORT ADDR [ADDR...] | stop DIR | endpoints DIR" ;;
esac
