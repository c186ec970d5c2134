#!/usr/bin/env bash
# The CPU an rtcd-apiserver binary spends per request, for comparing two
# builds (before/after a change) on a shared 2-core machine, where
# throughput moves with whatever else runs but CPU seconds per request do
# not: one etcd member on tmpfs, each binary in turn (A B A B ...), the
# same ConfigMap creates (10 clients) and whole lists of them through
# rtcd-bench, the server's user+system CPU read from /proc.
#
#   scripts/bench/apiserver-cpu.sh OLD_BINARY NEW_BINARY [ROUNDS]
#
# Needs etcd (scripts/install-deps.sh) and a release rtcd-bench (or BENCH, another).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY [ROUNDS]" >&2; exit 2; }
binaries=("$1" "$2")
rounds="${3:-3}"
bench="${BENCH:-${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}/release/rtcd-bench}"
creates=5000
lists=50
dir="$(mktemp -d -p /dev/shm)"
etcd --name cpu --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:18379 \
  --advertise-client-urls http://127.0.0.1:18379 --listen-peer-urls http://127.0.0.1:18380 >"$dir/etcd.log" 2>&1 &
etcd_pid=$!
api_pid=""
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null
  kill "$etcd_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
sleep 2
# User + system CPU seconds of a process.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
per_op() { python3 -c "import sys; print(f'{(float(sys.argv[2]) - float(sys.argv[1])) * 1000 / int(sys.argv[3]):.3f}')" "$@"; }
echo "binary round create_cpu_ms_per_op list_of_${creates}_cpu_ms_per_op"
for round in $(seq 1 "$rounds"); do
  for i in 0 1; do
    "${binaries[$i]}" --etcd-servers=http://127.0.0.1:18379 --secure-port=18443 --plain-http \
      --etcd-prefix="/cpu-$round-$i" >"$dir/api.log" 2>&1 &
    api_pid=$!
    for _ in $(seq 600); do
      [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18443/readyz)" = 200 ] && break
      sleep 0.2
    done
    c0=$(cpu "$api_pid")
    "$bench" --clients 10 apiserver --server http://127.0.0.1:18443 \
      create --total "$creates" --namespace c --val-size 1024 >/dev/null 2>&1
    c1=$(cpu "$api_pid")
    "$bench" --clients 1 apiserver --server http://127.0.0.1:18443 \
      list --objects "$creates" --total "$lists" --namespace c >/dev/null 2>&1
    c2=$(cpu "$api_pid")
    kill "$api_pid"
    wait "$api_pid" 2>/dev/null || true
    api_pid=""
    echo "${binaries[$i]} $round $(per_op "$c0" "$c1" "$creates") $(per_op "$c1" "$c2" "$lists")"
  done
done
