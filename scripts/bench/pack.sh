#!/usr/bin/env bash
# Packs what scripts/bench-vs-etcd.sh needs to run on another machine with
# no Rust, Go or etcd installed: the release rtcd and rtcd-bench, Debian's
# etcd and etcdctl, and etcd's tools/benchmark, stripped and xz-compressed
# into DIR (a few tens of MiB). There:
#
#   BENCH_BIN=DIR scripts/bench-vs-etcd.sh      # unpacks DIR's .xz files first
#
#   scripts/bench/pack.sh DIR [ETCD_BENCHMARK]   # default: $ETCD_BENCHMARK
# Extra binaries (an older rtcd for an A/B, say) can be added as
# RTCD_EXTRA="name=path ..." and are packed under those names.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: $0 DIR [ETCD_BENCHMARK]" >&2; exit 2; }
dir="$1" tool="${2:-${ETCD_BENCHMARK:-}}"
[ -n "$tool" ] || { echo "pack: give etcd's tools/benchmark (argument or ETCD_BENCHMARK)" >&2; exit 2; }
release="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}/release"
mkdir -p "$dir"
pack() {
  local name="$1" path="$2"
  [ -x "$path" ] || { echo "pack: $path is not an executable" >&2; exit 1; }
  strip -o "$dir/$name" "$path" 2>/dev/null || cp "$path" "$dir/$name"
  xz -T0 -6 -f "$dir/$name"
}
pack rtcd "$release/rtcd"
pack rtcd-bench "$release/rtcd-bench"
pack etcd "$(command -v etcd)"
pack etcdctl "$(command -v etcdctl)"
pack benchmark "$tool"
for extra in ${RTCD_EXTRA:-}; do pack "${extra%%=*}" "${extra#*=}"; done
du -sh "$dir"
