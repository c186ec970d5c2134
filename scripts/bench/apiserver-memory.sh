#!/usr/bin/env bash
# What an rtcd-apiserver binary holds in memory per stored object: one etcd
# member on tmpfs, each binary in turn, VmRSS read from /proc once the
# server is ready and idle, then again after OBJECTS ConfigMaps of about
# 1 KiB (their watch cache then holds every one), with the JSON size of one
# ConfigMap as served for the ratio. kube-apiserver's watch cache holds
# about 2-3 times an object's JSON.
#
#   scripts/bench/apiserver-memory.sh BINARY [BINARY...]
#
# OBJECTS (default 100000); BENCH, the rtcd-bench binary (default: the
# release one). Needs etcd (scripts/install-deps.sh).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BINARY [BINARY...]" >&2; exit 2; }
objects="${OBJECTS:-100000}"
bench="${BENCH:-${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}/release/rtcd-bench}"
dir="$(mktemp -d -p /dev/shm)"
etcd --name memory --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:18479 \
  --advertise-client-urls http://127.0.0.1:18479 --listen-peer-urls http://127.0.0.1:18480 \
  --quota-backend-bytes 8589934592 >"$dir/etcd.log" 2>&1 &
etcd_pid=$!
api_pid=""
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null
  kill "$etcd_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
sleep 2
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# Waits for /readyz, then for the server to settle (controllers started,
# bootstrap objects written).
wait_ready() {
  for _ in $(seq 240); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18443/readyz)" = 200 ] && { sleep 5; return 0; }
    sleep 0.5
  done
  echo "rtcd-apiserver did not become ready" >&2
  return 1
}
echo "binary objects rss_before_mib rss_after_mib json_bytes_per_object rss_bytes_per_object ratio"
i=0
for binary in "$@"; do
  i=$((i + 1))
  "$binary" --etcd-servers=http://127.0.0.1:18479 --secure-port=18443 --plain-http \
    --etcd-prefix="/memory-$i" >"$dir/api.log" 2>&1 &
  api_pid=$!
  wait_ready
  before="$(rss_kib "$api_pid")"
  "$bench" --clients 10 apiserver --server http://127.0.0.1:18443 \
    create --total "$objects" --namespace memory --val-size 900 >/dev/null 2>&1
  # The watch cache takes in the last creates; then the allocator settles.
  sleep 5
  after="$(rss_kib "$api_pid")"
  # One ConfigMap, and how many there are (the first item and the rest).
  read -r name count < <(curl -s 'http://127.0.0.1:18443/api/v1/namespaces/memory/configmaps?limit=1' |
    python3 -c 'import json, sys; l = json.load(sys.stdin); print(l["items"][0]["metadata"]["name"], 1 + l["metadata"].get("remainingItemCount", 0))')
  [ "$count" = "$objects" ] || { echo "$binary: $count ConfigMaps stored, not $objects" >&2; exit 1; }
  json="$(curl -s "http://127.0.0.1:18443/api/v1/namespaces/memory/configmaps/$name" | tr -d '\n' | wc -c)"
  python3 - "$binary" "$objects" "$before" "$after" "$json" <<'EOF'
import sys
binary, objects, before, after, json = sys.argv[1], *map(int, sys.argv[2:])
per = (after - before) * 1024 / objects
print(f"{binary} {objects} {before / 1024:.0f} {after / 1024:.0f} {json} {per:.0f} {per / json:.2f}")
EOF
  kill "$api_pid"
  wait "$api_pid" 2>/dev/null || true
  api_pid=""
done
