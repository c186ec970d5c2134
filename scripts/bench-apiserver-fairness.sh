#!/usr/bin/env bash
# What one user's flood costs another user of rtcd-apiserver, with API Priority and Fairness on
# and off (max-in-flight only), over one rtcd member on loopback, release builds. For each mode,
# on a fresh member and API server with kube's default seats (400 + 200, or $INFLIGHT and
# $MUTATING_INFLIGHT): `rtcd-bench apiserver fairness` times the quiet user's gets and creates
# alone, then while the noisy user lists 500 ConfigMaps and watches them from the start from
# $FLOOD_CLIENTS (default 32) clients; it prints both runs' p50/p99 and the flood's 429s.
#
#   scripts/bench-apiserver-fairness.sh
#   INFLIGHT=20 MUTATING_INFLIGHT=10 scripts/bench-apiserver-fairness.sh
#
# Stops exactly what it started; its work folder is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh >/dev/null
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
# shellcheck source=rocksdb-lib.sh
source scripts/rocksdb-lib.sh
use_shared_rocksdb
work="$(mktemp -d -t bench-fairness.XXXXXX)"
member_pid=""
api_pid=""
cleanup() {
  local pid
  for pid in $api_pid $member_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

cargo build --release --locked -p rtcd-server --bin rtcd -p rtcd-apiserver --bin rtcd-apiserver \
  -p rtcd-bench --bin rtcd-bench
bin="$CARGO_TARGET_DIR/release"
printf 'quiet-token,quiet,quiet-uid\nnoisy-token,noisy,noisy-uid\n' >"$work/tokens.csv"

api=http://127.0.0.1:16443
start() { # $1: true or false (--enable-priority-and-fairness)
  rm -rf "$work/member"
  "$bin/rtcd" --data-dir "$work/member" --listen-client-urls http://127.0.0.1:23790 \
    --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
    >/dev/null 2>"$work/member.log" &
  member_pid=$!
  sleep 2
  "$bin/rtcd-apiserver" --etcd-servers http://127.0.0.1:23790 --secure-port 16443 --plain-http \
    --token-auth-file "$work/tokens.csv" --enable-priority-and-fairness="$1" \
    --max-requests-inflight "${INFLIGHT:-400}" --max-mutating-requests-inflight "${MUTATING_INFLIGHT:-200}" \
    >/dev/null 2>"$work/apiserver.log" &
  api_pid=$!
  for _ in $(seq 1 100); do curl -sf "$api/readyz" >/dev/null && return; sleep 0.2; done
  echo "the API server did not get ready:" >&2; tail "$work/apiserver.log" >&2; exit 1
}
stop() {
  kill "$api_pid" && wait "$api_pid" 2>/dev/null || true
  kill "$member_pid" && wait "$member_pid" 2>/dev/null || true
  api_pid=""; member_pid=""
}

for apf in true false; do
  start "$apf"
  # The configuration is read within 2 s of the start.
  sleep 3
  echo "== --enable-priority-and-fairness=$apf"
  "$bin/rtcd-bench" --clients 4 apiserver --server "$api" --token quiet-token fairness \
    --flood-token noisy-token --flood-clients "${FLOOD_CLIENTS:-32}" --objects 500 --total 2000 2>/dev/null
  stop
done
