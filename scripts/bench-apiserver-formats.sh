#!/usr/bin/env bash
# rtcd-apiserver's answers in JSON and in Kubernetes protobuf, and its pod creates against an
# earlier revision's, over one real etcd (Debian's etcd-server) on loopback, release builds:
#   * creates: `rtcd-bench --clients 50 apiserver create --kind pod --total 5000`, three rounds
#     alternating this checkout and BASE (when given), each on a fresh etcd;
#   * a list of 10,000 pods, 20 times as JSON and 20 times as protobuf: bytes, wall time and the
#     API server's CPU time (utime+stime from /proc, in 1/100 s);
#   * one watcher each way while 1,000 pods are created: the bytes each received.
#
#   scripts/bench-apiserver-formats.sh              # this checkout only
#   scripts/bench-apiserver-formats.sh b33c885      # and creates/s against that revision
#
# Stops exactly what it started; its work folders are removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-}"

scripts/install-deps.sh >/dev/null
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
# shellcheck source=rocksdb-lib.sh
source scripts/rocksdb-lib.sh
use_shared_rocksdb
work="$(mktemp -d -t bench-formats.XXXXXX)"
etcd_pid=""
api_pid=""
cleanup() {
  local pid
  for pid in $api_pid $etcd_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$base" ]; then git worktree remove --force "$work/base" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cargo build --release --locked -p rtcd-apiserver --bin rtcd-apiserver -p rtcd-bench --bin rtcd-bench
cp "$CARGO_TARGET_DIR/release/rtcd-apiserver" "$work/apiserver-head"
bench="$CARGO_TARGET_DIR/release/rtcd-bench"
cp "$bench" "$work/rtcd-bench"
bench="$work/rtcd-bench"
builds=(head)
if [ -n "$base" ]; then
  git worktree add --detach "$work/base" "$base" >/dev/null
  (cd "$work/base" && cargo build --release --locked -p rtcd-apiserver --bin rtcd-apiserver)
  cp "$CARGO_TARGET_DIR/release/rtcd-apiserver" "$work/apiserver-base"
  builds=(base head)
fi

api=http://127.0.0.1:16443
start() { # $1: build
  rm -rf "$work/etcd"
  etcd --data-dir "$work/etcd" --listen-client-urls http://127.0.0.1:23790 \
    --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 >/dev/null 2>&1 &
  etcd_pid=$!
  sleep 2
  "$work/apiserver-$1" --etcd-servers http://127.0.0.1:23790 --secure-port 16443 --plain-http \
    >/dev/null 2>"$work/apiserver.log" &
  api_pid=$!
  for _ in $(seq 1 100); do curl -sf "$api/readyz" >/dev/null && return; sleep 0.2; done
  echo "the API server did not get ready:" >&2; tail "$work/apiserver.log" >&2; exit 1
}
stop() {
  kill "$api_pid" && wait "$api_pid" 2>/dev/null || true
  kill "$etcd_pid" && wait "$etcd_pid" 2>/dev/null || true
  api_pid=""; etcd_pid=""
}
cpu() { awk '{print $14 + $15}' "/proc/$api_pid/stat"; }
create() { # $1: namespace, $2: pods
  "$bench" --clients 50 apiserver --server "$api" create --kind pod --total "$2" --namespace "$1"
}

for round in 1 2 3; do
  for build in "${builds[@]}"; do
    start "$build"
    echo "creates, round $round, $build: $(create bench 5000 | grep 'Requests/sec' | tr -s ' \t' ' ')"
    stop
  done
done

start head
create list 10000 >/dev/null
url="$api/api/v1/namespaces/list/pods"
curl -s -o /dev/null "$url"
for accept in application/json application/vnd.kubernetes.protobuf; do
  bytes=$(curl -s -H "Accept: $accept" "$url" | wc -c)
  before=$(cpu); started=$(date +%s.%N)
  for _ in $(seq 1 20); do curl -s -o /dev/null -H "Accept: $accept" "$url"; done
  wall=$(echo "$(date +%s.%N) - $started" | bc)
  echo "list of 10000 pods as $accept: $bytes bytes; 20 lists: ${wall} s wall, $(( $(cpu) - before ))/100 s API server CPU"
done
watch_url="$api/api/v1/namespaces/watch/pods?watch=1&timeoutSeconds=120"
curl -sN -H "Accept: application/json" "$watch_url" >"$work/watch.json" &
json_watch=$!
curl -sN -H "Accept: application/vnd.kubernetes.protobuf" "$watch_url" >"$work/watch.pb" &
pb_watch=$!
sleep 1
create watch 1000 >/dev/null
sleep 3
kill "$json_watch" "$pb_watch" 2>/dev/null || true
echo "watch of 1000 ADDED events: JSON $(wc -c <"$work/watch.json") bytes, protobuf $(wc -c <"$work/watch.pb") bytes"
stop
