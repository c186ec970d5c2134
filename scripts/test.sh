#!/usr/bin/env bash
# THE test command: installs what is missing, builds, checks formatting and
# lints, and runs every test. Prints cargo's test summary lines.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
# RocksDB's C++ compiled once for every profile (scripts/rocksdb-lib.sh).
# shellcheck source=rocksdb-lib.sh
source scripts/rocksdb-lib.sh
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

scripts/install-deps.sh
use_shared_rocksdb

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
# With the test profile, clippy and `cargo test` share one build of every
# dependency (the dev profile would build them all a second time).
cargo clippy --workspace --all-targets --locked --profile test -- -D warnings

echo "== cargo build (the binaries the tests start)"
# Integration tests start rtcd, rtcd-apiserver and rtcd-combined from the
# target dir. Cargo builds a package's binaries only for that package's own
# tests, so one without tests (rtcd-combined) would be missing on a fresh
# machine: build them all first (the test build shares their dependencies).
cargo build --workspace --bins --locked --profile test

echo "== cargo test"
cargo test --workspace --all-targets --locked

echo "== fuzz (15 s per target)"
# A short libFuzzer run of every target (fuzz/): catches what the committed
# seeds (replayed above by rtcd-fuzz's tests) do not. Skipped, with a note,
# without a nightly toolchain or cargo-fuzz.
scripts/fuzz.sh --optional 15
