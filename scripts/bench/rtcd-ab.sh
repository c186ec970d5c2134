#!/usr/bin/env bash
# A/B of two rtcd binaries on the same machine: a three-member cluster of
# each in turn (A, B, A, B, ...), the same rtcd-bench workloads against each,
# then the median throughput and p99 per workload and binary, and B's ratio to
# A. Alternating rounds spreads the machine's drift over both, which a
# back-to-back comparison on two shared cores does not.
#
#   scripts/bench/rtcd-ab.sh OLD_RTCD NEW_RTCD [ROUNDS]     # ROUNDS defaults to 3
#   BENCH_SCALE=4 scripts/bench/rtcd-ab.sh ...               # 4x fewer requests
#   AB_ONLY='1 client' scripts/bench/rtcd-ab.sh ...          # only workloads whose name matches
#
# rtcd-bench comes from $CARGO_TARGET_DIR/release (or $RTCD_BENCH).
set -euo pipefail
cd "$(dirname "$0")/../.."

[ $# -ge 2 ] || { echo "usage: $0 OLD_RTCD NEW_RTCD [ROUNDS]" >&2; exit 2; }
a="$(realpath "$1")" b="$(realpath "$2")" rounds="${3:-3}"
scale="${BENCH_SCALE:-1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
bench="${RTCD_BENCH:-$CARGO_TARGET_DIR/release/rtcd-bench}"
export ETCDCTL_API=3
bench_name=rtcd-ab
work="$(mktemp -d -t rtcd-ab-data.XXXXXX)"
logs="$(mktemp -d -t rtcd-ab-logs.XXXXXX)"
results="$logs/results.jsonl"
pids=()
die() { echo "$bench_name: $*" >&2; exit 1; }
stop_members() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap 'stop_members; rm -rf "$work"' EXIT
# shellcheck source=members.sh
. scripts/bench/members.sh
bench_ports 24379

workloads=(
  "put, 1 client, to leader|--target-leader --conns 1 --clients 1 put --total $((2000 / scale)) --key-space-size 100000"
  "put, 100 clients / 100 conns|--conns 100 --clients 100 put --total $((30000 / scale)) --key-space-size 100000"
  "put, 1000 clients / 100 conns|--conns 100 --clients 1000 put --total $((60000 / scale)) --key-space-size 100000"
  "range linearizable, 1000 clients|--conns 100 --clients 1000 range foo --consistency l --total $((60000 / scale))"
  "watch-latency, 1000 watchers, 200 puts/s|--conns 10 watch-latency --streams 10 --watchers-per-stream 100 --put-total $((1000 / scale)) --put-rate 200"
  "kube mix, 100 clients|--conns 10 --clients 100 kube --total $((10000 / scale)) --objects 2000 --watchers 100"
)

for round in $(seq 1 "$rounds"); do
  for side in A B; do
    program="$a"; [ "$side" = B ] && program="$b"
    echo "round $round, $side ($program)"
    rm -rf "${work:?}"/*
    start_members "$side" "$program"
    for entry in "${workloads[@]}"; do
      name="${entry%%|*}"
      [[ "$name" =~ ${AB_ONLY:-.} ]] || continue
      # shellcheck disable=SC2086
      summary="$("$bench" --endpoints "$endpoints" --json ${entry#*|} 2>>"$logs/bench.err" || true)"
      [ "${summary:0:1}" = "{" ] || { echo "   $name: no result (see $logs/bench.err)"; continue; }
      printf '{"side":"%s","workload":"%s","summary":%s}\n' "$side" "$name" "$summary" >>"$results"
    done
    stop_members
  done
done

python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
names = list(dict.fromkeys(r["workload"] for r in rows))
def median(side, name, key):
    values = [r["summary"][key] for r in rows if r["side"] == side and r["workload"] == name and key in r["summary"]]
    return statistics.median(values) if values else None
print(f"| workload | A req/s | B req/s | B / A | A p99 ms | B p99 ms |")
print(f"|---|---:|---:|---:|---:|---:|")
for name in names:
    a, b = median("A", name, "requests_per_sec"), median("B", name, "requests_per_sec")
    ratio = f"{b / a:.2f}x" if a and b else "-"
    fmt = lambda v: f"{v:,.0f}" if v is not None else "-"
    p = lambda v: f"{v:.2f}" if v is not None else "-"
    print(f"| {name} | {fmt(a)} | {fmt(b)} | {ratio} | {p(median('A', name, 'p99_ms'))} | {p(median('B', name, 'p99_ms'))} |")
EOF
echo "raw results: $results"
