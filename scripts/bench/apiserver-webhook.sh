#!/usr/bin/env bash
# What a mutating admission webhook costs: pod creates against the same rtcd
# member and API server, alternating in the same run between
#   off: no webhook configured
#   on:  the sample proxy injector (rtcd-sample-injector) installed as a
#        MutatingWebhookConfiguration reached through its Service's
#        endpoints over HTTPS on loopback, every pod of the namespace
#        injected (one webhook call and one JSON patch per create)
# Measures pod creates/s with 10 clients and the create latency of a single
# client (the p50/p99 difference is what one webhook call adds).
# Plain HTTP between client and API server, so only the webhook differs.
#
#   scripts/bench/apiserver-webhook.sh [ROUNDS]      # default 3 rounds
#   BENCH_SCALE=5 scripts/bench/apiserver-webhook.sh # 5x fewer pods
#   RTCD_BENCH_BUILT=1 ...                            # no build first
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
scale="${BENCH_SCALE:-1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
# RocksDB's C++ compiled once for every profile (scripts/rocksdb-lib.sh).
# shellcheck source=../rocksdb-lib.sh
source scripts/rocksdb-lib.sh
if [ -z "${RTCD_BENCH_BUILT:-}" ]; then
  use_shared_rocksdb
  cargo build --release --locked -p rtcd-server -p rtcd-apiserver -p rtcd-bench
fi
bin="$CARGO_TARGET_DIR/release"
kubectl="${KUBECTL:-$HOME/.cache/rtcd/venv/bin/kubectl}"
[ -x "$kubectl" ] || kubectl="$(command -v kubectl)"
work="$(mktemp -d -t bench-webhook.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}" ${api_pid:-} ${injector_pid:-}; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=scripts/bench/single-member.sh
. scripts/bench/single-member.sh

start_member

# One API server port for the whole run: the injector reads namespaces
# through the kubeconfig it was started with.
api_port="$(port)" api_url="" api_pid="" injector_pid=""
start_apiserver() {
  api_url="http://127.0.0.1:$api_port"
  "$bin/rtcd-apiserver" --etcd-servers "http://127.0.0.1:$client" --secure-port "$api_port" --plain-http \
    >>"$work/apiserver.log" 2>&1 &
  api_pid=$!
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$api_url/readyz" || true)" = 200 ] && break
    sleep 0.5
  done
  cat >"$work/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: "$api_url"}}]
users: [{name: bench, user: {}}]
contexts: [{name: bench, context: {cluster: bench, user: bench}}]
current-context: bench
KUBECONFIG
}
stop_apiserver() { kill "$api_pid" 2>/dev/null || true; wait "$api_pid" 2>/dev/null || true; }
k() { "$kubectl" --kubeconfig "$work/kubeconfig" "$@"; }

# The injector runs for the whole run; only its configuration comes and goes.
injector_port="$(port)"
start_apiserver
"$bin/rtcd-sample-injector" install --dir "$work/injector" --port "$injector_port" >"$work/injector.yaml"
"$bin/rtcd-sample-injector" serve --cert-file "$work/injector/tls.crt" --key-file "$work/injector/tls.key" \
  --port "$injector_port" --kubeconfig "$work/kubeconfig" >"$work/injector.log" 2>&1 &
injector_pid=$!

pods=$((3000 / scale)) single=$((500 / scale))
results="$work/results.jsonl"
for round in $(seq 1 "$rounds"); do
  for mode in off called on; do
    [ "$round" = 1 ] && [ "$mode" = off ] || start_apiserver
    ns="bench-$mode-$round"
    k create namespace "$ns" >/dev/null
    if [ "$mode" != off ]; then
      k apply -f "$work/injector.yaml" >/dev/null
      [ "$mode" = called ] || k annotate namespace "$ns" rtcd.dev/inject=enabled >/dev/null
    else
      k delete mutatingwebhookconfiguration rtcd-sample-injector-webhook-config --ignore-not-found >/dev/null
    fi
    echo "round $round: webhook $mode"
    many="$("$bin/rtcd-bench" --json --clients 10 apiserver --server "$api_url" \
      create --kind pod --total "$pods" --namespace "$ns")"
    one="$("$bin/rtcd-bench" --json --clients 1 apiserver --server "$api_url" \
      create --kind pod --total "$single" --namespace "$ns")"
    injected="$(k get pods -n "$ns" -o jsonpath='{range .items[*]}{.spec.containers[*].name}{"\n"}{end}' | grep -c rtcd-proxy || true)"
    printf '{"mode":"%s","many":%s,"one":%s,"injected":%s}\n' "$mode" "$many" "$one" "$injected" >>"$results"
    stop_apiserver
  done
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(mode, kind, key):
    return statistics.median(r[kind][key] for r in rows if r["mode"] == mode)
print(f"{'':32}{'off':>10}{'called':>10}{'on':>10}{'called/off':>12}{'on/off':>8}")
for kind, key, label in [("many", "requests_per_sec", "pod creates/s (10 clients)"), ("many", "p99_ms", "p99 ms (10 clients)"),
                         ("one", "requests_per_sec", "pod creates/s (1 client)"), ("one", "p50_ms", "p50 ms (1 client)"),
                         ("one", "p99_ms", "p99 ms (1 client)")]:
    a, c, b = med("off", kind, key), med("called", kind, key), med("on", kind, key)
    print(f"{label:32}{a:10.2f}{c:10.2f}{b:10.2f}{c / a:12.2f}{b / a:8.2f}")
for mode in ("off", "called", "on"):
    failed = sum(r[k]["errors"] for r in rows if r["mode"] == mode for k in ("many", "one"))
    injected = sum(r["injected"] for r in rows if r["mode"] == mode)
    print(f"{mode}: {len([r for r in rows if r['mode'] == mode])} rounds, {failed} failed requests, {injected} pods injected")
PY
