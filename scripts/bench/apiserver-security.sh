#!/usr/bin/env bash
# What rtcd-apiserver's security front costs: the same rtcd member and the
# same rtcd-bench runs against the API server in two configurations,
# alternating, in the same run:
#   open:    --authorization-mode=AlwaysAllow, no audit (every request anonymous)
#   secured: a token user authorized by RBAC (a ClusterRoleBinding to
#            cluster-admin, so every request walks the bindings), and an audit
#            policy at Metadata level writing every request to a log file
# Measures ConfigMap creates (10 clients) and whole lists of a namespace.
# Plain HTTP on loopback in both, so TLS is not part of the difference.
#
#   scripts/bench/apiserver-security.sh [ROUNDS]      # default 3 rounds
#   BENCH_SCALE=5 scripts/bench/apiserver-security.sh # 5x fewer objects
#   RTCD_BENCH_BUILT=1 ...                             # no build first
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
scale="${BENCH_SCALE:-1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
# RocksDB's C++ compiled once for every profile (scripts/rocksdb-lib.sh).
# shellcheck source=../rocksdb-lib.sh
source scripts/rocksdb-lib.sh
# RTCD_BENCH_BUILT=1: measure the release binaries already built.
if [ -z "${RTCD_BENCH_BUILT:-}" ]; then
  use_shared_rocksdb
  cargo build --release --locked -p rtcd-server -p rtcd-apiserver -p rtcd-bench
fi
bin="$CARGO_TARGET_DIR/release"
work="$(mktemp -d -t bench-security.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}" ${api_pid:-}; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=scripts/bench/single-member.sh
. scripts/bench/single-member.sh

start_member

printf 'bench-token,bench,bench-uid\nadmin-token,admin,admin-uid,system:masters\n' >"$work/tokens.csv"
cat >"$work/policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
POLICY

api_pid="" api_url=""
start_apiserver() { # MODE
  local port
  port="$(port)"
  api_url="http://127.0.0.1:$port"
  local -a flags=(--etcd-servers "http://127.0.0.1:$client" --secure-port "$port" --plain-http)
  if [ "$1" = secured ]; then
    flags+=(--authorization-mode RBAC --token-auth-file "$work/tokens.csv"
      --audit-policy-file "$work/policy.yaml" --audit-log-path "$work/audit.log")
  fi
  "$bin/rtcd-apiserver" "${flags[@]}" >>"$work/apiserver-$1.log" 2>&1 &
  api_pid=$!
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer admin-token' "$api_url/readyz" || true)" = 200 ] && break
    sleep 0.5
  done
  if [ "$1" = secured ]; then
    # curl, not kubectl: kubectl sends no bearer token over plain HTTP.
    local binding='{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"bench"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
      "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"bench"}]}'
    local code=""
    for _ in $(seq 1 40); do
      code="$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer admin-token' \
        -H 'Content-Type: application/json' -d "$binding" "$api_url/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" || true)"
      [ "$code" = 201 ] || [ "$code" = 409 ] && break
      sleep 0.5
    done
    [ "$code" = 201 ] || [ "$code" = 409 ] || { echo "bench: cannot bind the bench user (HTTP $code)" >&2; exit 1; }
  fi
}
stop_apiserver() { kill "$api_pid" 2>/dev/null || true; wait "$api_pid" 2>/dev/null || true; }

creates=$((3000 / scale)) objects=$((3000 / scale))
results="$work/results.jsonl"
for round in $(seq 1 "$rounds"); do
  for mode in open secured; do
    start_apiserver "$mode"
    token=()
    [ "$mode" = secured ] && token=(--token bench-token)
    echo "round $round: $mode"
    create="$("$bin/rtcd-bench" --json --clients 10 apiserver --server "$api_url" "${token[@]}" \
      create --total "$creates" --namespace "create-$mode-$round" --val-size 1024)"
    list="$("$bin/rtcd-bench" --json --clients 1 apiserver --server "$api_url" "${token[@]}" \
      list --objects "$objects" --total 30 --namespace "list-$mode")"
    printf '{"mode":"%s","create":%s,"list":%s}\n' "$mode" "$create" "$list" >>"$results"
    stop_apiserver
  done
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(mode, kind, key):
    vals = [r[kind][key] for r in rows if r["mode"] == mode]
    return statistics.median(vals)
print(f"{'':28}{'open':>12}{'secured':>12}{'ratio':>8}")
for kind, key, label in [("create", "requests_per_sec", "creates/s (10 clients)"), ("create", "p99_ms", "create p99 ms"),
                         ("list", "requests_per_sec", "lists/s"), ("list", "p50_ms", "list p50 ms"), ("list", "p99_ms", "list p99 ms")]:
    try:
        a, b = med("open", kind, key), med("secured", kind, key)
    except KeyError:
        continue
    print(f"{label:28}{a:12.1f}{b:12.1f}{b / a:8.2f}")
for mode in ("open", "secured"):
    failed = sum(r[kind]["errors"] for r in rows if r["mode"] == mode for kind in ("create", "list"))
    print(f"{mode}: {len([r for r in rows if r['mode'] == mode])} rounds, {failed} failed requests")
PY
