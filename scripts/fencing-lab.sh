#!/usr/bin/env bash
# The power-fencing lab (issue 6; facts in docs/OPERATIONS.md "Fencing lab"): installs the ClusterLabs
# fence agents and OpenIPMI's BMC simulator, and starts or stops one ipmi_sim BMC per simulated host
# whose power-off kills the host's process group and power-on starts it again. The Redfish lab BMC is
# Ferry's own (node dist/scripts/redfish-bmc/main.js, docs/OPERATIONS.md "Redfish lab").
#
#   fencing-lab.sh install
#   FENCING_LAB_PASSWORD=... fencing-lab.sh start-bmc DIR ADDR PORT USER [HOST_COMMAND...]
#   fencing-lab.sh stop-bmc DIR
#   fencing-lab.sh status DIR
#
# DIR holds one BMC's files (lan.conf, bmc.emu, chassis_control, state, pids); ADDR must be a loopback
# address (127.0.0.0/8). The password comes from the environment, never from the command line. With a
# HOST_COMMAND the host starts powered on; each power-on runs it again in a new session (setsid).
set -euo pipefail

die() { echo "fencing-lab: $*" >&2; exit 1; }

install_packages() {
  # command -> package; ss and ps are used by the BMC scripts and missing from slim images.
  # fence_redfish (the Redfish lab, scripts/redfish-bmc/) needs python3-requests, a dependency of
  # fence-agents that is checked anyway in case it was removed.
  local missing=() pair
  for pair in ipmi_sim:openipmi ipmitool:ipmitool fence_ipmilan:fence-agents fence_redfish:fence-agents ss:iproute2 ps:procps; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
  done
  python3 -c 'import requests' 2>/dev/null || missing+=(python3-requests)
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk 'NF && !seen[$0]++')
  if [ ${#missing[@]} -eq 0 ]; then
    echo "== fencing lab: openipmi, ipmitool, fence-agents and python3-requests already installed"
    return
  fi
  [ "$(id -u)" = 0 ] || die "installing ${missing[*]} needs root"
  echo "== fencing lab: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # An update only when the package lists were never fetched (a fresh container).
  if ! apt-cache policy fence-agents 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update -qq
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# True if UDP ADDR:PORT is bound (two ipmi_sim on one port do not conflict visibly: the newer wins).
udp_bound() { ss -Hlun "src $1:$2" 2>/dev/null | grep -q .; }

write_chassis_control() {
  local dir=$1
  cat >"$dir/chassis_control" <<'EOS'
#!/usr/bin/env bash
# ipmi_sim's chassis_control: "$0 DIR get power" | "set power 0|1" | "set reset 1" | "set shutdown 1".
# ipmi_sim waits for it and retransmits after ~1 s, so it is fast and idempotent.
dir=$1; shift
# Close what ipmi_sim lets us inherit (its UDP socket has no close-on-exec) before starting a host.
for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done

# The host's live (non-zombie) processes: its process group and every descendant of a member. A
# real host's power takes everything; a process that left the group (libvirt daemonizes each QEMU
# into a session of its own) is still the child of a subreaper in it (tini -s), so it goes too.
host_pids() {
  ps -e -o pid=,ppid=,pgid=,stat= | awk -v pg="$1" '
    { pid[NR] = $1; ppid[NR] = $2; grp[NR] = $3; st[NR] = $4 }
    END {
      for (i = 1; i <= NR; i++) if (grp[i] == pg) mine[pid[i]] = 1
      do {
        added = 0
        for (i = 1; i <= NR; i++) if (!(pid[i] in mine) && (ppid[i] in mine)) { mine[pid[i]] = 1; added = 1 }
      } while (added)
      for (i = 1; i <= NR; i++) if ((pid[i] in mine) && st[i] !~ /^Z/) print pid[i]
    }'
}

# The host's process group id, if any of its processes lives; zombies count as dead.
live_group() {
  local pg
  pg=$(cat "$dir/host.pgid" 2>/dev/null) || return 1
  [ -n "$pg" ] || return 1
  [ -n "$(host_pids "$pg")" ] || return 1
  echo "$pg"
}

power_on() {
  live_group >/dev/null && return 0
  [ -x "$dir/host.sh" ] || return 0
  rm -f "$dir/host.pgid"
  # A new session: the host survives this script, and its pid is its process group id. It must not
  # hold the power lock (fd 9).
  setsid bash -c 'echo $$ > "$1/host.pgid.tmp" && mv "$1/host.pgid.tmp" "$1/host.pgid" && exec "$1/host.sh"' _ "$dir" \
    </dev/null >>"$dir/host.log" 2>&1 9>&- &
  # Return only once the host is there: a retransmitted "power on" (a busy machine makes this script
  # outlast the client's ~1 s retry) that found no host.pgid would start a second host beside it.
  for _ in $(seq 3000); do [ -s "$dir/host.pgid" ] && return 0; sleep 0.01; done
}

power_off() {
  local pg pids
  pg=$(live_group) || return 0
  # The lab's witness of every real power-off (a host found off already is not powered off again).
  echo "$(date +%s%3N) off pg $pg" >>"$dir/power.log"
  # Freeze first (no process forks or leaves the tree meanwhile), then kill every one at once.
  for _ in 1 2; do pids=$(host_pids "$pg"); [ -n "$pids" ] && kill -STOP $pids 2>/dev/null; done
  pids=$(host_pids "$pg")
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  kill -KILL -- "-$pg" 2>/dev/null
  for _ in $(seq 50); do live_group >/dev/null || return 0; sleep 0.01; done
}

# One power change at a time: a retransmitted command waits for the first and then finds it done.
case "$1" in set) exec 9>"$dir/power.lock"; flock 9; echo "$(date +%s%3N) command $*" >>"$dir/power.log" ;; esac

case "$1 $2" in
  "get power") if live_group >/dev/null; then echo "power:1"; else echo "power:0"; fi ;;
  "set power") if [ "$3" = 1 ]; then power_on; else power_off; fi ;;
  "set reset") power_off; power_on ;;
  "set shutdown") power_off ;;
esac
exit 0
EOS
  chmod 700 "$dir/chassis_control"
}

start_bmc() {
  [ $# -ge 4 ] || die "usage: FENCING_LAB_PASSWORD=... $0 start-bmc DIR ADDR PORT USER [HOST_COMMAND...]"
  local dir=$1 addr=$2 port=$3 user=$4
  shift 4
  local password=${FENCING_LAB_PASSWORD:?set FENCING_LAB_PASSWORD}
  [[ $addr =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "$addr is not a loopback address"
  [[ $port =~ ^[0-9]+$ ]] || die "bad port $port"
  [[ $user =~ ^[A-Za-z0-9_.-]{1,16}$ ]] || die "bad user name"
  [[ $password =~ ^[A-Za-z0-9_.-]{1,20}$ ]] || die "the password must be 1-20 characters of [A-Za-z0-9_.-]"
  udp_bound "$addr" "$port" && die "$addr:$port is already in use"
  mkdir -p "$dir/state"
  dir=$(cd "$dir" && pwd)
  (umask 077 && cat >"$dir/lan.conf" <<EOF
name "ferry-lab-bmc"
set_working_mc 0x20
  startlan 1
    addr $addr $port
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  chassis_control "$dir/chassis_control $dir"
  user 2 true "$user" "$password" admin 10 none md2 md5 straight
EOF
  )
  cat >"$dir/bmc.emu" <<'EOF'
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
mc_enable 0x20
EOF
  write_chassis_control "$dir"
  if [ $# -gt 0 ]; then
    { echo '#!/usr/bin/env bash'; printf 'exec'; printf ' %q' "$@"; echo; } >"$dir/host.sh"
    chmod 700 "$dir/host.sh"
    "$dir/chassis_control" "$dir" set power 1
  fi
  setsid ipmi_sim -n -c "$dir/lan.conf" -f "$dir/bmc.emu" -s "$dir/state" </dev/null >>"$dir/bmc.log" 2>&1 &
  echo $! >"$dir/bmc.pid"
  for _ in $(seq 100); do
    udp_bound "$addr" "$port" && { echo "bmc $addr:$port pid $(cat "$dir/bmc.pid")"; return 0; }
    kill -0 "$(cat "$dir/bmc.pid")" 2>/dev/null || die "ipmi_sim exited: $(tail -3 "$dir/bmc.log")"
    sleep 0.05
  done
  die "ipmi_sim did not bind $addr:$port"
}

stop_bmc() {
  [ $# -eq 1 ] || die "usage: $0 stop-bmc DIR"
  local dir=$1 pid pg
  pid=$(cat "$dir/bmc.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  [ -x "$dir/chassis_control" ] && "$dir/chassis_control" "$dir" set power 0
  pg=$(cat "$dir/host.pgid" 2>/dev/null || true)
  if [ -n "$pg" ]; then kill -KILL -- "-$pg" 2>/dev/null || true; fi
  rm -f "$dir/bmc.pid"
}

status_bmc() {
  [ $# -eq 1 ] || die "usage: $0 status DIR"
  local dir=$1
  echo "bmc pid: $(cat "$dir/bmc.pid" 2>/dev/null || echo none)"
  echo "host: $("$dir/chassis_control" "$dir" get power) pgid $(cat "$dir/host.pgid" 2>/dev/null || echo none)"
}

cmd=${1:-}
shift || true
case "$cmd" in
  install) install_packages ;;
  start-bmc) start_bmc "$@" ;;
  stop-bmc) stop_bmc "$@" ;;
  status) status_bmc "$@" ;;
  *) die "usage: $0 install | start-bmc DIR ADDR PORT USER [HOST_COMMAND...] | stop-bmc DIR | status DIR" ;;
esac
