#!/usr/bin/env bash
# Starts a local three-member rtcd cluster on etcd's Procfile ports:
#   m1  client 127.0.0.1:2379   peer 127.0.0.1:2380
#   m2  client 127.0.0.1:22379  peer 127.0.0.1:22380
#   m3  client 127.0.0.1:32379  peer 127.0.0.1:32380
# Data and logs go under ./data/ (data/m1, data/m1.log, data/m1.pid, ...).
# Installs what is missing and builds first. Stop it with scripts/down.sh.
# RTCD_BUILD_PROFILE=dev skips the optimised build (faster to build).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
profile="${RTCD_BUILD_PROFILE:-release}"
# Same target selection as scripts/test.sh, so the RocksDB build is shared.
cargo build --workspace --all-targets --locked --profile "$profile"
case "$profile" in dev) bin_dir=debug ;; *) bin_dir="$profile" ;; esac
rtcd="$CARGO_TARGET_DIR/$bin_dir/rtcd"

mkdir -p data
clients=(2379 22379 32379)
peers=(2380 22380 32380)
cluster="m1=http://127.0.0.1:2380,m2=http://127.0.0.1:22380,m3=http://127.0.0.1:32380"
for i in 0 1 2; do
  name="m$((i + 1))"
  if [ -f "data/$name.pid" ] && kill -0 "$(cat "data/$name.pid")" 2>/dev/null; then
    echo "up: $name already running (pid $(cat "data/$name.pid"))"
    continue
  fi
  client="http://127.0.0.1:${clients[$i]}"
  peer="http://127.0.0.1:${peers[$i]}"
  nohup "$rtcd" --name "$name" --data-dir "data/$name" \
    --listen-client-urls "$client" --advertise-client-urls "$client" \
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "$cluster" --initial-cluster-token rtcd-local \
    >"data/$name.log" 2>&1 &
  echo $! >"data/$name.pid"
  echo "up: started $name (pid $!), log data/$name.log"
done

endpoints="127.0.0.1:2379,127.0.0.1:22379,127.0.0.1:32379"
for _ in $(seq 1 60); do
  if ETCDCTL_API=3 etcdctl --endpoints "$endpoints" endpoint health >/dev/null 2>&1; then
    cat <<MSG

rtcd is up: three members, one cluster.

  export ETCDCTL_API=3 ENDPOINTS=$endpoints
  etcdctl --endpoints \$ENDPOINTS member list -w table
  etcdctl --endpoints \$ENDPOINTS endpoint status -w table
  etcdctl --endpoints 127.0.0.1:22379 put greeting hello
  etcdctl --endpoints 127.0.0.1:32379 get greeting

Any member takes reads and writes. The Kubernetes-style API server
(rtcd-apiserver, for kubectl) is not built yet.
Stop everything with scripts/down.sh; data stays in ./data until you remove it.
MSG
    exit 0
  fi
  sleep 0.5
done
echo "up: the cluster did not become healthy in 30 s; see data/m*.log" >&2
exit 1
