# Sourced by the scripts that build rtcd (test.sh, up.sh, the bench scripts):
# compiles RocksDB's C++ once per machine, optimised, and points
# librocksdb-sys at the archive (ROCKSDB_LIB_DIR, ROCKSDB_STATIC) so that every
# cargo profile and target dir links that one archive instead of compiling its
# own. Cargo builds a -sys crate's C++ once per profile: without this, the
# README's two commands (up.sh's release build, test.sh's test build)
# compiled RocksDB twice, about 15 minutes each on two cores.
#
# The archive lives in ~/.cache/rtcd/rocksdb/<librocksdb-sys version>-<features>-<arch>/,
# so a Cargo.lock bump or a feature change builds a new one. The C++ part of
# the archive depends only on librocksdb-sys's version and features (and the
# compiler), not on the Rust code or the profile that links it.
#
# RTCD_ROCKSDB_COMPILE=1 opts out: each profile compiles its own, as cargo
# does by default (the caller's ROCKSDB_LIB_DIR is then left alone).

# use_shared_rocksdb: run from the repository root, with cargo on PATH.
use_shared_rocksdb() {
  if [ "${RTCD_ROCKSDB_COMPILE:-0}" = 1 ]; then
    return 0
  fi
  local version features key dir build lib
  # Cargo.lock: name = "librocksdb-sys" then version = "0.19.0+11.8.1".
  version="$(awk '$1 == "name" && $3 == "\"librocksdb-sys\"" { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)"
  # The workspace's `rocksdb = { ..., features = ["lz4", ...] }`: rocksdb's
  # features of these names are librocksdb-sys's own.
  features="$(sed -n 's/^rocksdb = .*features = \[\([^]]*\)\].*/\1/p' Cargo.toml | tr -d '" ')"
  if [ -z "$version" ]; then
    echo "rocksdb-lib: no librocksdb-sys in Cargo.lock; each profile compiles its own" >&2
    return 0
  fi
  key="$version-${features//,/+}-$(uname -m)"
  dir="$HOME/.cache/rtcd/rocksdb/$key"
  if [ ! -f "$dir/librocksdb.a" ]; then
    build="$HOME/.cache/rtcd/rocksdb/build"
    echo "rocksdb-lib: compiling RocksDB's C++ ($key) once for every profile: about 15 minutes on 2 cores"
    (
      unset ROCKSDB_LIB_DIR ROCKSDB_STATIC
      # Cargo takes features only for the workspace's own packages: build the
      # smallest one that links RocksDB, with the workspace's features.
      # Without debug info: the release profile's line tables make the cc
      # crate pass -g, which makes RocksDB's C++ take much longer to build.
      CARGO_PROFILE_RELEASE_DEBUG=false CARGO_TARGET_DIR="$build" cargo build --locked --release -p rtcd-store
    ) || return 1
    lib="$(find "$build/release/build" -path '*/librocksdb-sys-*/out/librocksdb.a' -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)"
    if [ -z "$lib" ]; then
      echo "rocksdb-lib: the build made no librocksdb.a under $build" >&2
      return 1
    fi
    # Into place in one rename, so an interrupted copy is never taken for the archive.
    rm -rf "$dir.partial"
    mkdir -p "$dir.partial"
    cp "$lib" "$dir.partial/librocksdb.a"
    rm -rf "$dir"
    mv "$dir.partial" "$dir"
    rm -rf "$build"
  fi
  export ROCKSDB_LIB_DIR="$dir" ROCKSDB_STATIC=1
}
