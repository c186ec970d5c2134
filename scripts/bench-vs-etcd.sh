#!/usr/bin/env bash
# Side by side: a three-member etcd (Debian's etcd-server), then a
# three-member rtcd, on loopback with the same settings, each measured with
# the same rtcd-bench workloads; writes docs/bench/report.md (etcd, rtcd,
# ratio) and the raw JSON lines. Stops exactly what it started.
#
#   scripts/bench-vs-etcd.sh            # the full matrix
#   BENCH_SCALE=10 scripts/bench-vs-etcd.sh   # 10x fewer requests (a quick look)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
cargo build --workspace --all-targets --locked --release
bin="$CARGO_TARGET_DIR/release"
scale="${BENCH_SCALE:-1}"
out="${BENCH_OUT:-docs/bench}"
mkdir -p "$out"
work="$(mktemp -d)"
pids=()
stop_members() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap 'stop_members; rm -rf "$work"' EXIT

# Free high ports, away from the ones scripts/up.sh uses.
clients=(42379 42389 42399)
peers=(42380 42390 42400)
endpoints="127.0.0.1:${clients[0]},127.0.0.1:${clients[1]},127.0.0.1:${clients[2]}"

# start_members PROGRAM: three members of one cluster, data under $work.
start_members() {
  local program="$1" cluster="" i
  for i in 0 1 2; do cluster+="${cluster:+,}b$i=http://127.0.0.1:${peers[$i]}"; done
  for i in 0 1 2; do
    "$program" --name "b$i" --data-dir "$work/$(basename "$program")-b$i" \
      --listen-client-urls "http://127.0.0.1:${clients[$i]}" \
      --advertise-client-urls "http://127.0.0.1:${clients[$i]}" \
      --listen-peer-urls "http://127.0.0.1:${peers[$i]}" \
      --initial-advertise-peer-urls "http://127.0.0.1:${peers[$i]}" \
      --initial-cluster "$cluster" --initial-cluster-token bench \
      --quota-backend-bytes 8589934592 \
      >"$work/$(basename "$program")-b$i.log" 2>&1 &
    pids+=($!)
  done
  for _ in $(seq 1 60); do
    if ETCDCTL_API=3 etcdctl --endpoints "$endpoints" endpoint health >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "bench-vs-etcd: $program did not become healthy" >&2
  exit 1
}

# The workload matrix: name | rtcd-bench arguments (totals divided by the scale).
workloads=(
  "put, 1 client, to leader|--target-leader --conns 1 --clients 1 put --total $((2000 / scale)) --key-space-size 100000"
  "put, 1000 clients / 100 conns|--conns 100 --clients 1000 put --total $((100000 / scale)) --key-space-size 100000"
  "range linearizable, 1000 clients|--conns 100 --clients 1000 range foo --consistency l --total $((100000 / scale))"
  "range serializable, 1000 clients|--conns 100 --clients 1000 range foo --consistency s --total $((100000 / scale))"
)

results="$out/results.jsonl"
: >"$results"
for server in etcd rtcd; do
  program="$(command -v etcd)"
  [ "$server" = rtcd ] && program="$bin/rtcd"
  echo "== $server"
  start_members "$program"
  for w in "${workloads[@]}"; do
    name="${w%%|*}"
    read -r -a args <<<"${w#*|}"
    echo "   $name"
    summary="$("$bin/rtcd-bench" --endpoints "$endpoints" --json "${args[@]}")"
    printf '{"server":"%s","workload":"%s","summary":%s}\n' "$server" "$name" "$summary" >>"$results"
  done
  stop_members
  rm -rf "$work"/*
done

python3 - "$results" "$out/report.md" "$scale" <<'PY'
import json, sys, platform, os
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {(r["server"], r["workload"]): r["summary"] for r in rows}
names = list(dict.fromkeys(r["workload"] for r in rows))
lines = [
    "# rtcd vs etcd, same machine, same run",
    "",
    f"Three members each on loopback, one after the other; every workload by `rtcd-bench`"
    f" (scale 1/{sys.argv[3]}). Machine: {os.cpu_count()} cores, {platform.machine()}."
    " Regenerate with `scripts/bench-vs-etcd.sh`.",
    "",
    "| workload | etcd req/s | rtcd req/s | ratio | etcd p50 / p99 ms | rtcd p50 / p99 ms |",
    "|---|---:|---:|---:|---:|---:|",
]
for n in names:
    e, r = by.get(("etcd", n)), by.get(("rtcd", n))
    if not e or not r:
        continue
    ratio = r["requests_per_sec"] / max(e["requests_per_sec"], 1e-9)
    lines.append(
        f"| {n} | {e['requests_per_sec']:.0f} | {r['requests_per_sec']:.0f} | {ratio:.2f}x"
        f" | {e['p50_ms']:.2f} / {e['p99_ms']:.2f} | {r['p50_ms']:.2f} / {r['p99_ms']:.2f} |"
    )
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "bench-vs-etcd: report in $out/report.md"
