#!/usr/bin/env bash
# rtcd-apiserver over a three-member etcd (Debian's etcd-server), then over a
# three-member rtcd, then inside one member of a three-member rtcd
# (rtcd-combined, reaching its member without a socket), on loopback with the
# same flags, each measured through the API server's REST API with the same
# `rtcd-bench apiserver` runs:
# ConfigMap creates (throughput, latency) at several client counts, lists of
# a namespace of 10,000 ConfigMaps (whole, and in limit=500 pages), and watch
# event latency with 1000 watchers (every watcher must get every event, in
# order). Writes $BENCH_OUT/results.jsonl (raw) and report.md (etcd / rtcd /
# combined and the ratios per measurement). Stops exactly what it started.
#
#   scripts/bench-apiserver.sh                                  # full counts into docs/bench/apiserver
#   BENCH_SCALE=20 BENCH_OUT=/tmp/a scripts/bench-apiserver.sh  # 20x fewer objects, watchers, updates
#
# BENCH_TIMEOUT (seconds, default 900) bounds each rtcd-bench run. Member and
# API server logs are removed on success; on failure their tails are printed
# and they are kept.
set -euo pipefail
# BENCH_OUT is relative to where the script was called from.
out="${BENCH_OUT:+$(realpath -m "$BENCH_OUT")}"
cd "$(dirname "$0")/.."
out="${out:-docs/bench/apiserver}"

scripts/install-deps.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
# RocksDB's C++ compiled once for every profile (scripts/rocksdb-lib.sh).
# shellcheck source=rocksdb-lib.sh
source scripts/rocksdb-lib.sh
use_shared_rocksdb
cargo build --workspace --all-targets --locked --release
bin="$CARGO_TARGET_DIR/release"
scale="${BENCH_SCALE:-1}"
bench_timeout="${BENCH_TIMEOUT:-900}"
export ETCDCTL_API=3
mkdir -p "$out"
started_at=$SECONDS
work="$(mktemp -d -t bench-apiserver-data.XXXXXX)"
logs="$(mktemp -d -t bench-apiserver-logs.XXXXXX)"

# Members by index (0..2) and the API server: the pids of what this script
# started; nothing else is ever signalled.
pids=()
api_pid=""
# stop_pid PID: SIGTERM, up to 20 s to exit, then SIGKILL.
stop_pid() {
  local pid="$1"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
stop_apiserver() {
  # Inside member 0 (rtcd-combined), it stops with the members.
  if [ -n "$api_pid" ] && [ "$api_pid" != "${pids[0]:-}" ]; then stop_pid "$api_pid"; fi
  api_pid=""
}
stop_members() {
  local i
  for i in "${!pids[@]}"; do kill "${pids[$i]}" 2>/dev/null || true; done
  for i in "${!pids[@]}"; do stop_pid "${pids[$i]}"; done
  pids=()
}
cleanup() {
  local status=$?
  stop_apiserver
  stop_members
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then
    for log in "$logs"/*.log; do
      [ -e "$log" ] || continue
      echo "---- tail of $log" >&2
      tail -n 30 "$log" >&2
    done
    echo "bench-apiserver: failed (status $status); logs kept in $logs" >&2
  else
    rm -rf "$logs"
  fi
}
trap cleanup EXIT
# Interrupted: exit, so that cleanup runs.
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
  echo "bench-apiserver: $*" >&2
  exit 1
}

# A JSON string of $1.
json_str() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }

# $1 divided by the scale, at least 1.
scaled() {
  local n=$(($1 / scale))
  echo $((n > 0 ? n : 1))
}

# The members' functions; free high ports, away from the ones scripts/up.sh
# and the other benchmark script use.
bench_name=bench-apiserver
# shellcheck source=bench/members.sh
source scripts/bench/members.sh
bench_ports 16379
etcd_servers="http://127.0.0.1:${clients[0]},http://127.0.0.1:${clients[1]},http://127.0.0.1:${clients[2]}"

# A port nothing listens on now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

api_url=""
# start_cluster SERVER: the three members and rtcd-apiserver on a free port:
# over all three members, or (rtcd-combined) inside member 0, its pid then
# api_pid as well as pids[0]; waits for GET /readyz to answer 200.
start_cluster() {
  local server="$1" port code i
  port="$(free_port)"
  api_url="http://127.0.0.1:$port"
  case "$server" in
    etcd) for i in 0 1 2; do start_member "$server" "$(command -v etcd)" "$i"; done ;;
    rtcd) for i in 0 1 2; do start_member "$server" "$bin/rtcd" "$i"; done ;;
    rtcd-combined)
      start_member "$server" "$bin/rtcd-combined" 0 -- --secure-port="$port" --plain-http
      for i in 1 2; do start_member "$server" "$bin/rtcd" "$i"; done
      ;;
  esac
  wait_healthy 30 || die "$server did not become healthy"
  if [ "$server" = rtcd-combined ]; then
    api_pid="${pids[0]}"
  else
    "$bin/rtcd-apiserver" --etcd-servers="$etcd_servers" --secure-port="$port" --plain-http \
      >>"$logs/$server-apiserver.log" 2>&1 &
    api_pid=$!
  fi
  for _ in $(seq 1 120); do
    kill -0 "$api_pid" 2>/dev/null || die "$server: rtcd-apiserver exited"
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$api_url/readyz" || true)"
    [ "$code" = 200 ] && return 0
    sleep 0.5
  done
  die "$server: rtcd-apiserver's /readyz did not answer 200 within 60 s (last: $code)"
}

# The API server is up and ready, and the members are healthy.
check_all() {
  local code
  kill -0 "$api_pid" 2>/dev/null || { echo "bench-apiserver: rtcd-apiserver (pid $api_pid) exited" >&2; return 1; }
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$api_url/readyz" || true)"
  [ "$code" = 200 ] || { echo "bench-apiserver: /readyz answered $code" >&2; return 1; }
  wait_healthy 15
}

# The measurements: name | rtcd-bench global flags | `apiserver` subcommand
# and its flags. Names are the report's rows. The first create fills the
# namespace the lists then read (list --objects creates what is missing).
list_objects=$(scaled 10000)
watchers=$(scaled 1000)
updates=$(scaled 200)
list_total=100
workloads=(
  "create, 50 clients|--clients 50|create --total $list_objects --namespace bench-list --val-size 1024"
  "list $list_objects, whole|--clients 1|list --objects $list_objects --total $list_total --namespace bench-list"
  "list $list_objects, limit=500 pages|--clients 1|list --objects $list_objects --total $list_total --limit 500 --namespace bench-list"
  "create, 1 client|--clients 1|create --total $(scaled 2000) --namespace bench-create --val-size 1024"
  "create, 10 clients|--clients 10|create --total $(scaled 5000) --namespace bench-create --val-size 1024"
  "create, 100 clients|--clients 100|create --total $(scaled 20000) --namespace bench-create --val-size 1024"
  "watch, $watchers watchers, $updates updates at 20/s|--clients 1|watch --watchers $watchers --updates $updates --rate 20 --namespace bench-watch --val-size 1024 --event-timeout 30"
)

results="$out/results.jsonl"
: >"$results"

# Where this ran, for the report's header.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit+="-dirty"; fi
printf '{"kind":"meta","date":%s,"scale":%s,"cores":%s,"cpu":%s,"kernel":%s,"mem_kib":%s,"etcd_version":%s,"rtcd_commit":%s}\n' \
  "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$scale" "$(nproc)" \
  "$(json_str "$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')")" \
  "$(json_str "$(uname -sr)")" "$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)" \
  "$(json_str "$(etcd --version 2>/dev/null | head -n 1)")" "$(json_str "$commit")" >>"$results"

# run_workload SERVER NAME GLOBAL_FLAGS MEASUREMENT: one rtcd-bench run, one
# line in results (with what rtcd-bench said on stderr, as notes).
run_workload() {
  local server="$1" name="$2" global="$3" measurement="$4" summary status reason notes
  local -a global_args measurement_args
  read -r -a global_args <<<"$global"
  read -r -a measurement_args <<<"$measurement"
  echo "   $name"
  status=0
  summary="$(timeout --foreground "$bench_timeout" "$bin/rtcd-bench" --json "${global_args[@]}" \
    apiserver --server "$api_url" "${measurement_args[@]}" 2>"$work/bench.err")" || status=$?
  notes="$(cat "$work/bench.err")"
  [ -z "$notes" ] || sed 's/^/     /' "$work/bench.err"
  if [ "${summary:0:1}" = "{" ]; then
    # Exit status 1 is "ran, with errors": still a result (the report shows the count).
    printf '{"kind":"workload","server":"%s","workload":%s,"measure":%s,"args":%s,"summary":%s,"notes":%s}\n' \
      "$server" "$(json_str "$name")" "$(json_str "${measurement_args[0]}")" \
      "$(json_str "$global apiserver $measurement")" "$summary" "$(json_str "$notes")" >>"$results"
    if [ "$status" -ne 0 ]; then
      echo "     exit $status: $(python3 -c 'import json, sys; s = json.loads(sys.argv[1]); print(s["errors"], "errors:", "; ".join(s.get("error_samples", [])))' "$summary")"
    fi
  else
    if [ "$status" -eq 124 ]; then
      reason="timed out after ${bench_timeout}s"
    else
      reason="$(grep -m1 . "$work/bench.err" || echo "exit status $status, no output")"
    fi
    echo "     skipped: $reason"
    printf '{"kind":"workload","server":"%s","workload":%s,"measure":%s,"args":%s,"skipped":%s}\n' \
      "$server" "$(json_str "$name")" "$(json_str "${measurement_args[0]}")" \
      "$(json_str "$global apiserver $measurement")" "$(json_str "$reason")" >>"$results"
  fi
  # A measurement must not leave the API server or a member dead.
  check_all || die "$server: not healthy after \"$name\""
}

# record_env SERVER WHEN: the load average as a backend's runs begin and
# end (other work on the machine skews the numbers).
record_env() {
  local server="$1" when="$2"
  printf '{"kind":"env","server":"%s","when":"%s","loadavg":%s}\n' \
    "$server" "$when" "$(json_str "$(cut -d' ' -f1-3 /proc/loadavg)")" >>"$results"
}

# measure_memory SERVER: VmRSS of the API server and of every member.
measure_memory() {
  local server="$1" i api rss=()
  api="$(awk '/^VmRSS:/ {print $2}' "/proc/$api_pid/status")"
  for i in 0 1 2; do rss+=("$(awk '/^VmRSS:/ {print $2}' "/proc/${pids[$i]}/status")"); done
  printf '{"kind":"memory","server":"%s","apiserver_rss_kib":%s,"member_rss_kib":[%s,%s,%s]}\n' \
    "$server" "$api" "${rss[@]}" >>"$results"
  echo "   RSS (KiB): rtcd-apiserver $api; members ${rss[*]}"
}

for server in etcd rtcd rtcd-combined; do
  echo "== $server"
  record_env "$server" start
  start_cluster "$server"
  echo "   rtcd-apiserver at $api_url (pid $api_pid)"
  for w in "${workloads[@]}"; do
    IFS='|' read -r name global measurement <<<"$w"
    run_workload "$server" "$name" "$global" "$measurement"
  done
  measure_memory "$server"
  record_env "$server" end
  stop_apiserver
  stop_members
  rm -rf "${work:?}"/*
done

# The report: etcd / rtcd / ratio per measurement.
python3 - "$results" "$out/report.md" <<'PY'
import json
import sys

results_path, report_path = sys.argv[1], sys.argv[2]
rows = [json.loads(line) for line in open(results_path) if line.strip()]
meta = next((r for r in rows if r.get("kind") == "meta"), {})
servers = ("etcd", "rtcd", "rtcd-combined")
# The ratios shown: rtcd over etcd, and the combined layout over the separate one.
ratios = (("rtcd", "etcd"), ("rtcd-combined", "rtcd"))
workloads, order, memory, env = {}, [], {}, {}
for r in rows:
    kind = r.get("kind")
    if kind == "workload":
        if r["workload"] not in order:
            order.append(r["workload"])
        workloads[(r["server"], r["workload"])] = r
    elif kind == "memory":
        memory[r["server"]] = r
    elif kind == "env":
        env.setdefault(r["server"], {})[r.get("when", "start")] = r["loadavg"]


def num(v, digits=2):
    if v is None:
        return "—"
    if isinstance(v, int) or abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def ratio(a, b):
    if a is None or b is None or a == 0:
        return "—"
    return f"{b / a:.2f}×"


def summary(server, name):
    r = workloads.get((server, name))
    return None if r is None else r.get("summary")


# Per measurement kind: (label, how to read it from a summary).
def metrics(measure):
    if measure == "create":
        return [
            ("creates/s", lambda s: s["requests_per_sec"]),
            ("p50 ms", lambda s: s["p50_ms"]),
            ("p99 ms", lambda s: s["p99_ms"]),
        ]
    if measure == "list":
        return [
            ("p50 ms", lambda s: s["p50_ms"]),
            ("p99 ms", lambda s: s["p99_ms"]),
            ("mean ms", lambda s: s["avg_ms"]),
        ]
    return [
        ("p50 ms", lambda s: s["p50_ms"]),
        ("p99 ms", lambda s: s["p99_ms"]),
        ("max ms", lambda s: s["slowest_ms"]),
        ("events received", lambda s: s["requests"]),
        ("missed or out of order", lambda s: s["errors"]),
    ]


lines = [
    "# rtcd-apiserver on rtcd vs on etcd, same machine, same run",
    "",
    "`rtcd-apiserver` over a three-member etcd, then over a three-member rtcd, then inside one member of a "
    "three-member rtcd (`rtcd-combined`: the API server reaches its member through the etcd API over in-memory "
    "pipes, no socket), on loopback with the same member flags as `scripts/bench-vs-etcd.sh`, one cluster at a "
    "time, each measured through the API server's REST API with the same `rtcd-bench apiserver` runs. The "
    "separate API server talks to all three members; the combined one to its own. The API server, the members "
    "and the load generator share the machine. Regenerate with `scripts/bench-apiserver.sh`.",
    "",
    f"- Date: {meta.get('date', '?')}",
    f"- Machine: {meta.get('cores', '?')} cores, {meta.get('cpu', '?')}, "
    f"{round(meta.get('mem_kib', 0) / 1048576)} GiB, {meta.get('kernel', '?')}",
    f"- etcd: {meta.get('etcd_version', '?')} (Debian etcd-server)",
    f"- rtcd and rtcd-apiserver: commit {meta.get('rtcd_commit', '?')}",
    f"- Scale: 1/{meta.get('scale', 1)} of the full counts",
    "- Load average (1, 5, 15 min) as each layout's runs began and ended (the runs themselves keep "
    "the cores busy; a high figure at the start would mean other work on the machine): "
    + "; ".join(f"{s} {env.get(s, {}).get('start', '?')} → {env.get(s, {}).get('end', '?')}" for s in servers),
    "",
    "## Results",
    "",
    "rtcd / etcd is rtcd's number over etcd's, combined / rtcd the combined layout's over the separate one's: "
    "above 1 is better for the first in creates/s, below 1 in latencies.",
    "",
    "| measurement | metric | " + " | ".join(servers) + " | " + " | ".join(f"{a} / {b}" for a, b in ratios) + " |",
    "|---|---|" + "---:|" * (len(servers) + len(ratios)),
]


def row(label, metric, cells, ratio_cells=None):
    ratio_cells = ratio_cells or [""] * len(ratios)
    return f"| {label} | {metric} | " + " | ".join(cells) + " | " + " | ".join(ratio_cells) + " |"


for name in order:
    first = next(workloads[(s, name)] for s in servers if (s, name) in workloads)
    measure = first.get("measure", "")
    sums = {s: summary(s, name) for s in servers}
    skipped = [f"{s}: {workloads[(s, name)]['skipped']}" for s in servers if (s, name) in workloads and "skipped" in workloads[(s, name)]]
    label = name
    for metric, read in metrics(measure):
        vals = {s: (read(sums[s]) if sums[s] else None) for s in servers}
        if metric == "events received" and measure == "watch":
            expected = None
            args = first["args"].split()
            try:
                expected = int(args[args.index("--watchers") + 1]) * int(args[args.index("--updates") + 1])
            except (ValueError, IndexError):
                pass
            lines.append(row(label, metric, [f"{num(vals[s])} / {num(expected)}" if vals[s] is not None else "—" for s in servers]))
        elif metric == "missed or out of order":
            lines.append(row(label, metric, [num(vals[s]) for s in servers]))
        else:
            lines.append(row(label, metric, [num(vals[s]) for s in servers], [ratio(vals[b], vals[a]) for a, b in ratios]))
        label = ""
    if measure != "watch":
        errs = {s: (sums[s]["errors"] if sums[s] else None) for s in servers}
        if any(errs.values()):
            lines.append(row("", "errors", [num(errs[s]) for s in servers]))
    for note in skipped:
        lines.append(row("", "skipped", [note] + [""] * (len(servers) - 1)))

if memory:
    lines += [
        "",
        "## Memory at the end",
        "",
        "VmRSS after all the runs (the API server's watch cache then holds every ConfigMap created). "
        "rtcd-combined's API server is member 0's process: its RSS is both.",
        "",
        "| | " + " | ".join(servers) + " | " + " | ".join(f"{a} / {b}" for a, b in ratios) + " |",
        "|---|" + "---:|" * (len(servers) + len(ratios)),
    ]
    api = {s: memory[s]["apiserver_rss_kib"] / 1024 if s in memory else None for s in servers}
    mem = {s: max(memory[s]["member_rss_kib"]) / 1024 if s in memory else None for s in servers}
    for label, values in (("rtcd-apiserver RSS (MiB)", api), ("member RSS, max of three (MiB)", mem)):
        cells = " | ".join(num(values[s], 0) for s in servers)
        ratio_cells = " | ".join(ratio(values[b], values[a]) for a, b in ratios)
        lines.append(f"| {label} | {cells} | {ratio_cells} |")

lines += [
    "",
    "## How each is measured",
    "",
    "- **create**: `--clients` concurrent clients POST new ConfigMaps (1 KiB of data each) over "
    "keep-alive HTTP/1.1 connections; each must be answered 201. Latency is request to whole response.",
    "- **list, whole**: a full `GET` of the namespace, no limit (served from the API server's watch "
    "cache once it has caught up with etcd's current revision), one at a time; latency is request to "
    "last byte (decoding on the client is left out). One untimed list first.",
    "- **list, limit=500 pages**: the same namespace in pages of 500, following `continue` to the end "
    "as client-go and kubectl do (every page is a range read from etcd, pinned to the first page's "
    "revision); latency is the whole traversal, request to last byte summed over pages.",
    "- **watch**: the watchers each open `GET …/configmaps?watch=true&resourceVersion=N` on their own "
    "connection in one namespace, one after another; then one writer merge-patches one ConfigMap there "
    "at 20 updates/s, each patch setting `data.seq` and `data.sent` (Unix time in ns just before it is "
    "sent). Every watcher records receive time − `data.sent` for each MODIFIED event; latency is over "
    "all watchers × events. A watcher must get every successful update's event exactly once and in "
    "order; anything missed or out of order counts in \"missed or out of order\".",
    "",
    "## Runs",
    "",
    "The exact `rtcd-bench` arguments, and what it said besides the summary.",
    "",
]
for name in order:
    for s in servers:
        r = workloads.get((s, name))
        if r is None:
            continue
        lines.append(f"- {s}, {name}: `rtcd-bench --json {r['args']}`")
        notes = (r.get("notes") or "").strip()
        for note in notes.splitlines():
            lines.append(f"  - {note}")
        for sample in (r.get("summary") or {}).get("error_samples", []):
            lines.append(f"  - error: {sample}")
open(report_path, "w").write("\n".join(lines) + "\n")
PY
echo "bench-apiserver: report in $out/report.md ($((SECONDS - started_at)) s)"
