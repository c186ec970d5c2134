#!/usr/bin/env bash
# Runs rtcd's fuzz targets (fuzz/) with libFuzzer, one after the other.
#
#   scripts/fuzz.sh [--optional] [seconds-per-target] [target...]
#
#   scripts/fuzz.sh                  every target for 60 s
#   scripts/fuzz.sh 3600 store_model one target for an hour
#   scripts/fuzz.sh --optional 15    what scripts/test.sh runs; without a nightly
#                                    toolchain or cargo-fuzz it says so and exits 0
#
# Builds with `cargo +nightly fuzz build` into its own target directory
# (instrumented code cannot share the normal one), then runs each target with
# memory limits. New interesting inputs go to a working corpus under
# ~/.cache/rtcd/fuzz-corpus/<target> (the committed seeds in fuzz/corpus/ are
# only read); a crash, leak, timeout or out-of-memory input is written to
# fuzz/artifacts/<target>/ and fails the run. Reproduce one with
#   $RTCD_FUZZ_TARGET_DIR/<triple>/release/<target> <artifact>
# or, on stable, by copying it to fuzz/regressions/<target>/ and running
# `cargo test -p rtcd-fuzz --test corpus`.
set -euo pipefail
cd "$(dirname "$0")/.."

optional=false
seconds=60
targets=()
for arg in "$@"; do
  case "$arg" in
    --optional) optional=true ;;
    -h | --help)
      sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *[!0-9]*) targets+=("$arg") ;;
    *) seconds="$arg" ;;
  esac
done

all_targets=()
for f in fuzz/fuzz_targets/*.rs; do all_targets+=("$(basename "$f" .rs)"); done
if ((${#targets[@]} == 0)); then targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  [ -f "fuzz/fuzz_targets/$t.rs" ] || { echo "fuzz: no target $t (have: ${all_targets[*]})" >&2; exit 2; }
done

missing() {
  if $optional; then
    echo "fuzz: skipped: $1"
    exit 0
  fi
  echo "fuzz: $1" >&2
  exit 1
}
cargo +nightly --version >/dev/null 2>&1 ||
  missing "needs a nightly toolchain (rustup toolchain install nightly)"
cargo fuzz --version >/dev/null 2>&1 ||
  missing "needs cargo-fuzz (scripts/install-deps.sh installs it: cargo install --locked cargo-fuzz)"

# Never the normal target directory (scripts/test.sh exports that one).
export CARGO_TARGET_DIR="${RTCD_FUZZ_TARGET_DIR:-$HOME/.cache/rtcd/fuzz-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
work_corpus="${RTCD_FUZZ_CORPUS:-$HOME/.cache/rtcd/fuzz-corpus}"
logs="$HOME/.cache/rtcd/fuzz-logs"
triple="$(rustc +nightly -vV | sed -n 's/^host: //p')"
bin_dir="$CARGO_TARGET_DIR/$triple/release"

echo "== cargo +nightly fuzz build (into $CARGO_TARGET_DIR)"
# Release with debug assertions, AddressSanitizer (cargo-fuzz's default):
# overflow checks and leaks count as findings too.
nice -n 10 cargo +nightly fuzz build --fuzz-dir fuzz --release --debug-assertions --features libfuzzer 2>&1 |
  grep -vE '^\s+(Compiling|Checking|Fresh|Downloaded|Downloading)' || true
for t in "${targets[@]}"; do
  [ -x "$bin_dir/$t" ] || { echo "fuzz: build failed: $bin_dir/$t is missing" >&2; exit 1; }
done

mkdir -p "$logs"
failed=()
printf '%-18s %12s %10s %8s %10s  %s\n' target executions "execs/s" "new" "peak-rss" result
for t in "${targets[@]}"; do
  mkdir -p "$work_corpus/$t" "fuzz/artifacts/$t"
  log="$logs/$t.log"
  status=0
  # The first corpus directory receives new inputs; the committed seeds are only read.
  nice -n 10 "$bin_dir/$t" \
    -max_total_time="$seconds" \
    -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -timeout=60 \
    -print_final_stats=1 \
    -artifact_prefix="fuzz/artifacts/$t/" \
    "$work_corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  execs="$(stat number_of_executed_units)"
  if [ -z "$execs" ]; then
    # No final stats after a crash: the last status line has the count.
    execs="$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')"
  fi
  result=ok
  if ((status != 0)); then
    result="FAILED (exit $status)"
    failed+=("$t")
  fi
  printf '%-18s %12s %10s %8s %8sMB  %s\n' "$t" "${execs:-?}" "$(stat average_exec_per_sec)" \
    "$(stat new_units_added)" "$(stat peak_rss_mb)" "$result"
  if ((status != 0)); then
    echo "---- $t: last lines of $log"
    grep -vE '^#[0-9]+\s' "$log" | tail -40
    artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
    echo "---- $t: reproducing input: ${artifact:-none written (see $log)}"
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]} (inputs in fuzz/artifacts/, logs in $logs)" >&2
  exit 1
fi
