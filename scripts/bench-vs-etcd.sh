#!/usr/bin/env bash
# Side by side: a three-member etcd (Debian's etcd-server), then a
# three-member rtcd, on loopback with the same flags, each measured with the
# same workload matrix, BENCH_ROUNDS times (default 3) so the report can show
# each number's spread; then, on each, the RSS after loading 1M keys of 256 B
# and the time a killed follower takes to serve again after a restart.
#
# Every workload runs with rtcd-bench. With ETCD_BENCHMARK set to a build of
# etcd's own tools/benchmark, the workloads both tools have (put, txn-put,
# range) also run with it, in the same round, so the report shows both tools'
# numbers side by side and how far rtcd-bench is from etcd's tool. Each run's
# client CPU (user + system, as a share of all cores over its wall time) is
# recorded: on a small machine the load generator competes with the server.
#
# Writes $BENCH_OUT/results.jsonl (raw), report.md (targets, then etcd / rtcd /
# ratio per workload and tool) and two charts, throughput.svg and
# latency-cdf.svg (scripts/bench/report.py). Stops exactly what it started.
#
#   scripts/bench-vs-etcd.sh                                # the full matrix into docs/bench
#   BENCH_SCALE=20 BENCH_OUT=/tmp/b scripts/bench-vs-etcd.sh  # 20x fewer requests (a quick look)
#   ETCD_BENCHMARK=~/go/bin/benchmark BENCH_ROUNDS=5 scripts/bench-vs-etcd.sh
#   BENCH_ONLY='^put' scripts/bench-vs-etcd.sh   # only the workloads whose names match (grep -E),
#                                                # without the 1M-key load, memory and restart
#   RTCD_BENCH_BUILT=1 ...                       # use the release binaries already in $CARGO_TARGET_DIR
#   BENCH_BIN=DIR ...       # binaries copied to another machine: rtcd, rtcd-bench, etcd, etcdctl and
#                           # (as ETCD_BENCHMARK) etcd's tool named benchmark, all from DIR; nothing is
#                           # installed or built (scripts/bench/pack.sh makes DIR). Needs bash and python3.
#   BENCH_PROFILE=1 ...     # also where each member's CPU and wake-ups went per workload
#                           # (scripts/bench/threads.py), into $BENCH_OUT/profile.md
#
# BENCH_TIMEOUT (seconds, default 1800) bounds each run. A workload that
# rtcd-bench rejects (a subcommand it does not have yet) is reported as
# "skipped: <its error>" rather than failing the run. Member logs are removed
# on success; on failure their tails are printed and they are kept.
set -euo pipefail
# BENCH_OUT is relative to where the script was called from.
out="${BENCH_OUT:+$(realpath -m "$BENCH_OUT")}"
cd "$(dirname "$0")/.."
out="${out:-docs/bench}"

if [ -n "${BENCH_BIN:-}" ]; then
  bin="$(realpath "$BENCH_BIN")"
  # scripts/bench/pack.sh's compressed binaries (python3's lzma: no xz needed).
  for packed in "$bin"/*.xz; do
    [ -e "$packed" ] || continue
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$packed" "${packed%.xz}"
    chmod +x "${packed%.xz}"
    rm "$packed"
  done
  export PATH="$bin:$PATH"
  if [ -z "${ETCD_BENCHMARK:-}" ] && [ -x "$bin/benchmark" ]; then ETCD_BENCHMARK="$bin/benchmark"; fi
else
  scripts/install-deps.sh
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
  # RocksDB's C++ compiled once for every profile (scripts/rocksdb-lib.sh).
  # shellcheck source=rocksdb-lib.sh
  source scripts/rocksdb-lib.sh
  if [ -z "${RTCD_BENCH_BUILT:-}" ]; then
    use_shared_rocksdb
    cargo build --workspace --all-targets --locked --release
  fi
  bin="$CARGO_TARGET_DIR/release"
fi
profile="${BENCH_PROFILE:-}"
scale="${BENCH_SCALE:-1}"
bench_timeout="${BENCH_TIMEOUT:-1800}"
rounds="${BENCH_ROUNDS:-3}"
only="${BENCH_ONLY:-}"
etcd_tool="${ETCD_BENCHMARK:-}"
if [ -n "$etcd_tool" ]; then
  etcd_tool="$(realpath "$etcd_tool")"
  [ -x "$etcd_tool" ] || { echo "bench-vs-etcd: ETCD_BENCHMARK=$ETCD_BENCHMARK is not an executable" >&2; exit 1; }
fi
export ETCDCTL_API=3
mkdir -p "$out"
if [ -n "$profile" ]; then
  printf '# Where the members spent CPU and wake-ups, per workload\n\n' >"$out/profile.md"
fi
started_at=$SECONDS
work="$(mktemp -d -t bench-vs-etcd-data.XXXXXX)"
logs="$(mktemp -d -t bench-vs-etcd-logs.XXXXXX)"

# Members by index (0..2): the pid of what this script started, restarted
# members included; nothing else is ever signalled.
pids=()
stop_members() {
  local i pid
  for i in "${!pids[@]}"; do kill "${pids[$i]}" 2>/dev/null || true; done
  for i in "${!pids[@]}"; do
    pid="${pids[$i]}"
    # Up to 20 s to exit on SIGTERM, then SIGKILL.
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  pids=()
}
cleanup() {
  local status=$?
  stop_members
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then
    for log in "$logs"/*.log; do
      [ -e "$log" ] || continue
      echo "---- tail of $log" >&2
      tail -n 30 "$log" >&2
    done
    echo "bench-vs-etcd: failed (status $status); member logs kept in $logs" >&2
  else
    rm -rf "$logs"
  fi
}
trap cleanup EXIT
# Interrupted: exit, so that cleanup runs.
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
  echo "bench-vs-etcd: $*" >&2
  exit 1
}

# A JSON string of $1.
json_str() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }

# The members' functions; free high ports, away from the ones scripts/up.sh
# and the other benchmark script use.
bench_name=bench-vs-etcd
# shellcheck source=bench/members.sh
source scripts/bench/members.sh
bench_ports 14379

# The workload matrix: name | tools | arguments (totals divided by the
# scale). "both": etcd's tools/benchmark takes the same arguments and runs it
# too (with ETCD_BENCHMARK); "rtcd-bench": only rtcd-bench has it. Names are
# the report's rows; scripts/bench/report.py looks some up by name (targets,
# charts), so keep them in step.
workloads=(
  "put, 1 client, to leader|both|--target-leader --conns 1 --clients 1 put --total $((2000 / scale)) --key-space-size 100000"
  "put, 1 client|both|--conns 1 --clients 1 put --total $((2000 / scale)) --key-space-size 100000"
  "put, 10 clients / 10 conns|both|--conns 10 --clients 10 put --total $((10000 / scale)) --key-space-size 100000"
  "put, 100 clients / 100 conns|both|--conns 100 --clients 100 put --total $((50000 / scale)) --key-space-size 100000"
  "put, 1000 clients / 100 conns|both|--conns 100 --clients 1000 put --total $((100000 / scale)) --key-space-size 100000"
  "put, 1000 clients / 100 conns, one key|both|--conns 100 --clients 1000 put --total $((100000 / scale)) --key-space-size 1"
  "txn-put, 1000 clients / 100 conns|both|--conns 100 --clients 1000 txn-put --total $((100000 / scale)) --key-space-size 100000"
  "range linearizable, 1000 clients|both|--conns 100 --clients 1000 range foo --consistency l --total $((100000 / scale))"
  "range serializable, 1000 clients|both|--conns 100 --clients 1000 range foo --consistency s --total $((100000 / scale))"
  "watch-latency, 1000 watchers, 200 puts/s|rtcd-bench|--conns 10 watch-latency --streams 10 --watchers-per-stream 100 --put-total $((2000 / scale)) --put-rate 200"
  "lease keep-alive, 100 clients|both|--conns 10 --clients 100 lease-keepalive --total $((100000 / scale))"
  "kube mix, 100 clients|rtcd-bench|--conns 10 --clients 100 kube --total $((20000 / scale)) --objects 2000 --watchers 100"
)
load_keys=$((1000000 / scale))
load_name="load $load_keys keys (256 B values), 1000 clients / 100 conns"
load_args="--conns 100 --clients 1000 put --total $load_keys --key-space-size $load_keys --sequential-keys --val-size 256"

results="$out/results.jsonl"
: >"$results"

# Where this ran, for the report's header.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit+="-dirty"; fi
printf '{"kind":"meta","date":%s,"scale":%s,"rounds":%s,"etcd_tool":%s,"cores":%s,"cpu":%s,"kernel":%s,"mem_kib":%s,"etcd_version":%s,"rtcd_commit":%s}\n' \
  "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$scale" "$rounds" \
  "$(if [ -n "$etcd_tool" ]; then json_str "$etcd_tool"; else echo null; fi)" "$(nproc)" \
  "$(json_str "$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')")" \
  "$(json_str "$(uname -sr)")" "$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)" \
  "$(json_str "$(etcd --version 2>/dev/null | head -n 1)")" "$(json_str "$commit")" >>"$results"

# run_tool TOOL ARGS...: one run of TOOL (rtcd-bench or etcd-benchmark)
# against the members; its summary as rtcd-bench's JSON on stdout, its
# stderr in $work/bench.err, its CPU and wall seconds ("user sys real") in
# $work/time. Exit status: the tool's (timeout's 124 when it ran out).
run_tool() {
  local tool="$1" status=0 TIMEFORMAT='%3U %3S %3R'
  shift
  case "$tool" in
    rtcd-bench)
      { time timeout --foreground "$bench_timeout" "$bin/rtcd-bench" --endpoints "$endpoints" --json "$@" \
        >"$work/bench.out" 2>"$work/bench.err"; } 2>"$work/time" || status=$?
      cat "$work/bench.out"
      ;;
    etcd-benchmark)
      { time timeout --foreground "$bench_timeout" "$etcd_tool" --endpoints "$endpoints" --precise "$@" \
        >"$work/bench.out" 2>"$work/bench.err"; } 2>"$work/time" || status=$?
      python3 scripts/bench/etcd_tool.py <"$work/bench.out" || true
      ;;
  esac
  return "$status"
}

# run_workload SERVER NAME TOOL ROUND ARGS...: one run, one line in results.
run_workload() {
  local server="$1" name="$2" tool="$3" round="$4" summary status reason cpu
  shift 4
  echo "   $name ($tool, round $round)"
  status=0
  [ -n "$profile" ] && python3 scripts/bench/threads.py snap "${pids[@]}" >"$work/threads.before"
  summary="$(run_tool "$tool" "$@")" || status=$?
  if [ -n "$profile" ] && [ "${summary:0:1}" = "{" ]; then
    python3 scripts/bench/threads.py snap "${pids[@]}" >"$work/threads.after"
    python3 scripts/bench/threads.py diff "$work/threads.before" "$work/threads.after" \
      "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get("requests", 0))' "$summary")" \
      "$server: $name ($tool, round $round)" >>"$out/profile.md"
  fi
  if [ "${summary:0:1}" = "{" ]; then
    # The client's CPU as a share of the machine over its wall time.
    cpu="$(awk -v cores="$(nproc)" '{ if ($3 > 0) printf "%.3f", ($1 + $2) / ($3 * cores); else print "null" }' "$work/time")"
    # Exit status 1 is "ran, with errors": still a result (the report shows the count).
    printf '{"kind":"workload","server":"%s","workload":%s,"tool":"%s","round":%s,"client_cpu":%s,"args":%s,"summary":%s}\n' \
      "$server" "$(json_str "$name")" "$tool" "$round" "${cpu:-null}" "$(json_str "$*")" "$summary" >>"$results"
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
    printf '{"kind":"workload","server":"%s","workload":%s,"tool":"%s","round":%s,"args":%s,"skipped":%s}\n' \
      "$server" "$(json_str "$name")" "$tool" "$round" "$(json_str "$*")" "$(json_str "$reason")" >>"$results"
  fi
  # A workload must not leave a member dead or the cluster unhealthy.
  wait_healthy 15 || die "$server is not healthy after \"$name\""
}

# tools_for TOOLS ROUND: the tools to run for a workload marked TOOLS, in
# this round's order (the order alternates, so neither tool always runs on
# the cluster the other has just warmed).
tools_for() {
  if [ "$1" != both ] || [ -z "$etcd_tool" ]; then
    echo rtcd-bench
  elif [ $(($2 % 2)) -eq 1 ]; then
    echo rtcd-bench etcd-benchmark
  else
    echo etcd-benchmark rtcd-bench
  fi
}

# measure_memory SERVER STAGE KEYS: VmRSS and data dir size of every member,
# after the matrix (STAGE matrix) or after loading KEYS keys (loaded).
measure_memory() {
  local server="$1" stage="$2" keys="$3" i rss=() disk=()
  for i in 0 1 2; do
    rss+=("$(awk '/^VmRSS:/ {print $2}' "/proc/${pids[$i]}/status")")
    disk+=("$(du -sb "$work/$server-b$i" | cut -f1)")
  done
  printf '{"kind":"memory","server":"%s","stage":"%s","keys":%s,"value_bytes":256,"rss_kib":[%s,%s,%s],"data_dir_bytes":[%s,%s,%s]}\n' \
    "$server" "$stage" "$keys" "${rss[@]}" "${disk[@]}" >>"$results"
  echo "   $stage: RSS (KiB): ${rss[*]}; data dirs (bytes): ${disk[*]}"
}

# The index (0..2) of a member that is not the leader.
pick_follower() {
  etcdctl --endpoints "$endpoints" endpoint status -w json | python3 -c '
import json, sys
ports = sys.argv[1:]
for s in json.load(sys.stdin):
    st = s["Status"]
    if st["header"]["member_id"] != st["leader"]:
        print(ports.index(s["Endpoint"].rsplit(":", 1)[1]))
        break
else:
    sys.exit("no follower in endpoint status")
' "${clients[@]}"
}

# restart_follower SERVER PROGRAM: kill -9 a follower, start it again with the
# same flags and data dir, and time from the exec until it answers a
# serializable read (polled every 50 ms).
restart_follower() {
  local server="$1" program="$2" i t0 t1 secs="null"
  i="$(pick_follower)" || die "$server: could not find a follower"
  echo "   kill -9 b$i (pid ${pids[$i]}), restart"
  kill -KILL "${pids[$i]}"
  wait "${pids[$i]}" 2>/dev/null || true
  echo "==== $(date -u +%FT%TZ) bench-vs-etcd: killed with SIGKILL, restarting" >>"$logs/$server-b$i.log"
  t0=$EPOCHREALTIME
  start_member "$server" "$program" "$i"
  local deadline=$((SECONDS + 120))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "${pids[$i]}" 2>/dev/null || die "$server: restarted member b$i exited"
    # etcdctl waits out its whole timeout on a closed port: knock first.
    if (exec 3<>"/dev/tcp/127.0.0.1/${clients[$i]}") 2>/dev/null &&
      etcdctl --endpoints "127.0.0.1:${clients[$i]}" --dial-timeout 1s --command-timeout 1s \
        get foo --consistency=s >/dev/null 2>&1; then
      t1=$EPOCHREALTIME
      secs="$(python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$t0" "$t1")"
      break
    fi
    sleep 0.05
  done
  if [ "$secs" = null ]; then
    echo "   b$i did not serve within 120 s"
  else
    echo "   b$i served after $secs s"
  fi
  printf '{"kind":"restart","server":"%s","member":"b%s","keys":%s,"seconds":%s}\n' \
    "$server" "$i" "$load_keys" "$secs" >>"$results"
  # The rest of the cluster must be whole again before it is stopped.
  wait_healthy 60 || die "$server is not healthy after the restart"
}

for server in etcd rtcd; do
  program="$(command -v etcd)"
  [ "$server" = rtcd ] && program="$bin/rtcd"
  echo "== $server ($program)"
  start_members "$server" "$program"
  for round in $(seq 1 "$rounds"); do
    for w in "${workloads[@]}"; do
      IFS='|' read -r name tools rest <<<"$w"
      if [ -n "$only" ] && ! grep -qE -- "$only" <<<"$name"; then continue; fi
      read -r -a args <<<"$rest"
      for tool in $(tools_for "$tools" "$round"); do
        run_workload "$server" "$name" "$tool" "$round" "${args[@]}"
      done
    done
  done
  if [ -z "$only" ]; then
    measure_memory "$server" matrix 0
    read -r -a args <<<"$load_args"
    run_workload "$server" "$load_name" rtcd-bench 1 "${args[@]}"
    sleep 5
    measure_memory "$server" loaded "$load_keys"
    restart_follower "$server" "$program"
  fi
  stop_members
  rm -rf "${work:?}"/*
done

python3 scripts/bench/report.py "$results" "$out"
echo "bench-vs-etcd: report in $out/report.md ($((SECONDS - started_at)) s)"
