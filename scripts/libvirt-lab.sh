#!/usr/bin/env bash
# A real libvirt lab on one machine: two independent libvirtd daemons ("host 1" and "host 2"), each
# in its own mount namespace with private state, both listening on loopback only. Used by CI
# (scripts/test.sh runs `install`) and test/integration/libvirt.test.ts (start/stop), and by hand.
# Every fact it relies on is in ../shared/notes/libvirt-lab.md and docs/libvirt.md.
#
#   scripts/libvirt-lab.sh install           apt packages + libvirt-qemu user (skipped when present)
#   scripts/libvirt-lab.sh start  [LABDIR]   start both daemons (no-op for one already running)
#   scripts/libvirt-lab.sh stop   [LABDIR]   destroy their guests, stop exactly the daemons started here,
#                                            and remove their domain definitions and runtime state
#   scripts/libvirt-lab.sh status [LABDIR]   exit 0 only when both daemons answer
#   scripts/libvirt-lab.sh run-host N [LABDIR]  host N's libvirtd in the foreground, in the caller's
#                                            process group (a fencing-lab BMC's host: power-off kills
#                                            it and its QEMUs); `stop` stops it like the others
#   scripts/libvirt-lab.sh guest  [LABDIR]   a tiny Linux guest (Debian cloud kernel + busybox initrd)
#                                            in LABDIR/guest, whose serial port prints a counter and uptime
#
# LABDIR defaults to $FERRY_LIBVIRT_LAB or /tmp/ferry-libvirt-lab. Host N listens on
# 127.0.0.1:$((FERRY_LIBVIRT_BASE_PORT + N)) (base 16510: ports 16511 and 16512). For NCs on their
# own loopback addresses, FERRY_LIBVIRT_ADDRS="127.0.31.1 127.0.31.2" gives host N the Nth address,
# and FERRY_LIBVIRT_PORT one port for both (e.g. 16509, as in qemu+tcp://{host}:16509/system).
set -euo pipefail

PACKAGES=(libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-dev qemu-system-x86 qemu-utils tini cpio)
HOSTS=(1 2)
BASE_PORT=${FERRY_LIBVIRT_BASE_PORT:-16510}
read -r -a ADDRS <<<"${FERRY_LIBVIRT_ADDRS:-}"

cmd=${1:-}
LAB=${2:-${FERRY_LIBVIRT_LAB:-/tmp/ferry-libvirt-lab}}

die() { echo "libvirt-lab: $*" >&2; exit 1; }
log() { echo "libvirt-lab: $*" >&2; }

need_root() { [ "$(id -u)" -eq 0 ] || die "must run as root (libvirtd and mount namespaces need it)"; }

installed() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || return 1
  done
}

do_install() {
  need_root
  # Two test files may install at once (vitest runs files in parallel): one apt at a time.
  exec 9>/var/lock/ferry-libvirt-lab-install.lock
  flock 9
  if installed; then
    log "packages already installed"
  else
    command -v apt-get >/dev/null || die "no apt-get: the lab needs Debian 12 (or install ${PACKAGES[*]} by hand)"
    export DEBIAN_FRONTEND=noninteractive
    # `apt-get update` only when the package lists are empty or the install fails on stale ones.
    if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then apt-get update -q; fi
    apt-get install -y -q "${PACKAGES[@]}" || { apt-get update -q && apt-get install -y -q "${PACKAGES[@]}"; }
  fi
  # libvirtd looks the user up before it reads user="root" in qemu.conf.
  getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
  getent passwd libvirt-qemu >/dev/null || useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
  mkdir -p /var/log/libvirt
}

port_of() { echo "${FERRY_LIBVIRT_PORT:-$((BASE_PORT + $1))}"; }
addr_of() {
  # Loopback only (the lab has auth_tcp = "none"): do_start refuses anything else.
  echo "${ADDRS[$(($1 - 1))]:-127.0.0.1}"
}
dir_of() { echo "$LAB/host$1"; }
uri_of() { echo "qemu+tcp://$(addr_of "$1"):$(port_of "$1")/system"; }

# A fixed, distinct host_uuid per lab host: libvirt refuses to migrate to a host with its own uuid.
uuid_of() { printf 'f3e77e00-0000-4000-8000-%012d\n' "$1"; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Inside a host's private mount namespace: its own libvirt directories, then libvirtd under tini -s.
# shellcheck disable=SC2016 # expanded by the inner bash
SERVE='
  set -e
  d=$1
  mount --bind "$d/run" /run/libvirt
  mount --bind "$d/lib" /var/lib/libvirt
  mount --bind "$d/log" /var/log/libvirt
  mount --bind "$d/cache" /var/cache/libvirt
  mount --bind "$d/etc" /etc/libvirt
  exec tini -s -- libvirtd --listen -f /etc/libvirt/libvirtd.conf -p /run/libvirt/libvirtd.pid'

write_config() {
  local n=$1 d
  d=$(dir_of "$n")
  mkdir -p "$d"/{run,lib,log,cache,etc,tls}
  chmod 700 "$d/tls"
  # Start from the packaged config, minus autostarted networks (no bridges, no dnsmasq here).
  cp -a /etc/libvirt/. "$d/etc/"
  rm -rf "$d/etc/qemu/networks/autostart"
  cat >"$d/etc/libvirtd.conf" <<EOF
# Written by scripts/libvirt-lab.sh: loopback only, no auth (tests on one machine only).
listen_tls = 0
listen_tcp = 1
listen_addr = "$(addr_of "$n")"
tcp_port = "$(port_of "$n")"
auth_tcp = "none"
auth_unix_rw = "none"
host_uuid = "$(uuid_of "$n")"
log_outputs = "3:file:/var/log/libvirt/libvirtd.log"
EOF
  cat >"$d/etc/qemu.conf" <<EOF
# Written by scripts/libvirt-lab.sh.
user = "root"
group = "root"
stdio_handler = "file"
cgroup_controllers = [ ]
# The driver writes each migration's credential here just before it starts (docs/libvirt.md).
migrate_tls_x509_cert_dir = "$d/tls"
migrate_tls_x509_verify = 1
EOF
}

start_one() {
  local n=$1 d
  d=$(dir_of "$n")
  if alive "$d/daemon.pid"; then log "host $n already running (pid $(cat "$d/daemon.pid"))"; return; fi
  write_config "$n"
  # unshare and bash exec in place, so $! is tini's pid; tini -s reaps orphaned QEMUs at once.
  setsid unshare --mount --propagation private -- bash -c "$SERVE" lab-host "$d" </dev/null >"$d/daemon.out" 2>&1 &
  echo $! >"$d/daemon.pid"
}

wait_ready() {
  local n=$1 d i
  d=$(dir_of "$n")
  for i in $(seq 1 100); do
    if virsh -q -c "$(uri_of "$n")" uri >/dev/null 2>&1; then return 0; fi
    alive "$d/daemon.pid" || break
    sleep 0.1
  done
  echo "--- host $n daemon output:" >&2; cat "$d/daemon.out" >&2 || true
  tail -n 20 "$d/log/libvirtd.log" >&2 2>/dev/null || true
  die "host $n (libvirtd on $(addr_of "$n"):$(port_of "$n")) did not come up"
}

do_start() {
  need_root
  command -v libvirtd >/dev/null && command -v tini >/dev/null || die "libvirtd/tini missing: run '$0 install' first"
  for p in /run/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt /etc/libvirt; do mkdir -p "$p"; done
  mkdir -p "$LAB"
  for a in "${ADDRS[@]}"; do [[ $a == 127.* ]] || die "FERRY_LIBVIRT_ADDRS: $a is not a loopback address"; done
  for n in "${HOSTS[@]}"; do start_one "$n"; done
  for n in "${HOSTS[@]}"; do wait_ready "$n"; done
  for n in "${HOSTS[@]}"; do echo "host$n $(uri_of "$n") qemu:///system?socket=$(dir_of "$n")/run/libvirt-sock"; done
}

# Nothing of a stopped host outlives the lab, not even what a daemon killed beforehand (a BMC's
# power-off) left defined: the next start begins empty. A power cycle through run-host keeps it.
wipe_state() {
  local d
  d=$(dir_of "$1")
  rm -rf "${d:?}/etc" "$d/lib" "$d/run" "$d/cache"
}

stop_one() {
  local n=$1 d pid dom qpid i
  d=$(dir_of "$n")
  [ -f "$d/daemon.pid" ] || { wipe_state "$n"; return 0; }
  pid=$(cat "$d/daemon.pid")
  if kill -0 "$pid" 2>/dev/null; then
    for dom in $(virsh -q -c "$(uri_of "$n")" list --all --name 2>/dev/null); do
      virsh -q -c "$(uri_of "$n")" destroy "$dom" >/dev/null 2>&1 || true
      virsh -q -c "$(uri_of "$n")" undefine --nvram "$dom" >/dev/null 2>&1 || true
    done
  fi
  # QEMUs this daemon started and that are still there (by libvirt's pid files in our private dir).
  for f in "$d"/run/qemu/*.pid; do
    [ -f "$f" ] || continue
    qpid=$(cat "$f")
    if [ -n "$qpid" ] && tr '\0' ' ' <"/proc/$qpid/cmdline" 2>/dev/null | grep -q qemu-system; then kill -9 "$qpid" 2>/dev/null || true; fi
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$d/daemon.pid"
  wipe_state "$n"
  log "host $n stopped"
}

# Host N's libvirtd in the foreground, as this very process (daemon.pid is its pid: unshare without
# --fork and bash exec in place), in the caller's session and process group.
do_run_host() {
  local n=$1 d
  need_root
  [[ $n == 1 || $n == 2 ]] || die "run-host: host 1 or 2"
  command -v libvirtd >/dev/null && command -v tini >/dev/null || die "libvirtd/tini missing: run '$0 install' first"
  for p in /run/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt /etc/libvirt; do mkdir -p "$p"; done
  d=$(dir_of "$n")
  alive "$d/daemon.pid" && die "host $n already running (pid $(cat "$d/daemon.pid"))"
  write_config "$n"
  echo $$ >"$d/daemon.pid"
  exec unshare --mount --propagation private -- bash -c "$SERVE" lab-host "$d"
}

do_stop() {
  for n in "${HOSTS[@]}"; do stop_one "$n"; done
}

do_status() {
  local rc=0 d
  for n in "${HOSTS[@]}"; do
    d=$(dir_of "$n")
    if alive "$d/daemon.pid" && virsh -q -c "$(uri_of "$n")" uri >/dev/null 2>&1; then
      echo "host$n up (pid $(cat "$d/daemon.pid")) $(uri_of "$n")"
    else
      echo "host$n down"; rc=1
    fi
  done
  return $rc
}

# The guest's /init: count and print uptime on the serial port; after a live migration the count
# carries on (its memory moved), where a reboot would start again at 1. With a virtio disk (vda) it
# also writes the count to the disk's first block about once a second, flushed (conv=fsync), so that
# QEMU writes the disk file on the host: host HA's VM activity signal (docs/libvirt.md, Host HA).
# A second disk (vdb, a volume) whose first bytes a test set to "ferry-vol-pattern" gets the pattern:
# at every tick i the record "ferry-vol i uptime" in block i (flushed), then, its buffer cache
# dropped, the first record it wrote read back from the disk and printed as "ferry-vol-read i
# <record>" (so a guest that moved reads what it wrote before the move). Other volumes are never written.
GUEST_INIT='#!/bin/busybox sh
/bin/busybox mkdir -p /proc /dev
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk; do
  /bin/busybox insmod /lib/$m.ko 2>/dev/null
done
i=0
while :; do
  i=$((i + 1))
  read -r up _ </proc/uptime
  echo "ferry-tick $i $up" >/dev/ttyS0
  if [ $((i % 5)) -eq 0 ] && [ -b /dev/vda ]; then
    echo "ferry-tick $i $up" | /bin/busybox dd of=/dev/vda bs=512 count=1 conv=sync,notrunc,fsync 2>/dev/null
  fi
  if [ -b /dev/vdb ] && [ "$(/bin/busybox dd if=/dev/vdb bs=17 count=1 2>/dev/null)" = "ferry-vol-pattern" ]; then
    [ -n "$first" ] || first=$i
    echo "ferry-vol $i $up" | /bin/busybox dd of=/dev/vdb bs=512 seek=$i count=1 conv=sync,notrunc,fsync 2>/dev/null
    /bin/busybox blockdev --flushbufs /dev/vdb
    echo "ferry-vol-read $i $(/bin/busybox dd if=/dev/vdb bs=512 skip=$first count=1 2>/dev/null | /bin/busybox tr -d "\\000")" >/dev/ttyS0
  fi
  /bin/busybox sleep 0.2
done'
# Bumped when the guest changes, so a lab directory with an older build rebuilds it.
GUEST_VERSION=3
# The virtio modules the disk needs (Debian's cloud kernel builds them as modules), in load order.
GUEST_MODULES="virtio/virtio_ring.ko virtio/virtio.ko virtio/virtio_pci_modern_dev.ko virtio/virtio_pci_legacy_dev.ko virtio/virtio_pci.ko block/virtio_blk.ko"

do_guest() {
  local g="$LAB/guest" w kernel
  if [ -s "$g/vmlinuz" ] && [ -s "$g/initrd.img" ] && [ "$(cat "$g/version" 2>/dev/null)" = "$GUEST_VERSION" ]; then
    log "guest already built in $g"; return
  fi
  command -v cpio >/dev/null || die "cpio missing: run '$0 install' first"
  mkdir -p "$g"
  w=$(mktemp -d)
  chmod 755 "$w" # apt downloads as its _apt user
  kernel=$(apt-cache search --names-only '^linux-image-[0-9.]+-[0-9]+-cloud-amd64$' | cut -d' ' -f1 | sort -V | tail -n 1)
  [ -n "$kernel" ] || die "no linux-image-*-cloud-amd64 package known to apt (apt-get update?)"
  (cd "$w" && apt-get download -q "$kernel" busybox-static >/dev/null) || die "apt-get download $kernel busybox-static failed"
  mkdir -p "$w/k" "$w/b" "$w/root/bin" "$w/root/lib"
  dpkg-deb -x "$w"/linux-image-*.deb "$w/k"
  dpkg-deb -x "$w"/busybox-static_*.deb "$w/b"
  cp "$w"/k/boot/vmlinuz-* "$g/vmlinuz"
  cp "$w/b/bin/busybox" "$w/root/bin/busybox"
  for m in $GUEST_MODULES; do cp "$w"/k/lib/modules/*/kernel/drivers/"$m" "$w/root/lib/" || die "kernel module $m missing from $kernel"; done
  printf '%s\n' "$GUEST_INIT" >"$w/root/init"
  chmod 755 "$w/root/init"
  (cd "$w/root" && find . | cpio -o -H newc --quiet | gzip -9) >"$g/initrd.img"
  rm -rf "$w"
  echo "$GUEST_VERSION" >"$g/version"
  log "guest: $g/vmlinuz ($kernel), $g/initrd.img"
}

case "$cmd" in
  install) do_install ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  guest) do_guest ;;
  run-host) LAB=${3:-${FERRY_LIBVIRT_LAB:-/tmp/ferry-libvirt-lab}}; do_run_host "${2:-}" ;;
  *) die "usage: $0 install | start [LABDIR] | stop [LABDIR] | status [LABDIR] | guest [LABDIR]" ;;
esac
