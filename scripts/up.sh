#!/usr/bin/env bash
# Starts a local three-member rtcd cluster on etcd's Procfile ports:
#   m1  client 127.0.0.1:2379   peer 127.0.0.1:2380
#   m2  client 127.0.0.1:22379  peer 127.0.0.1:22380
#   m3  client 127.0.0.1:32379  peer 127.0.0.1:32380
# Data and logs go under ./data/ (data/m1, data/m1.log, data/m1.pid, ...).
# On top, rtcd-apiserver (Kubernetes-style API) on https://127.0.0.1:6443,
# secure as kubeadm sets it up: a cluster CA and certificates made once by
# rtcd-pki under ./data/pki (reused on the next run), client certificates and
# ServiceAccount tokens, RBAC, and an audit log (./data/audit.log). The
# administrator's kubeconfig (O=system:masters) is ./data/kubeconfig.
# Installs what is missing and builds first. Stop it with scripts/down.sh.
# RTCD_BUILD_PROFILE=test skips the optimised build (the one scripts/test.sh makes).
# RTCD_APISERVER=combined runs the API server inside m1's process
# (rtcd-combined), storing through the etcd API without a socket, instead of
# as a process of its own over all three members.
# RTCD_SECURE=1 runs the members as a production etcd runs: TLS on client and
# peer URLs with certificates required on both (a CA and certificates made
# once with openssl under ./data/etcd-pki), the API server connecting over
# mutual TLS. scripts/down.sh, then up again to switch.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rtcd/target}"
# RocksDB's C++ compiled once for every profile (scripts/rocksdb-lib.sh).
# shellcheck source=rocksdb-lib.sh
source scripts/rocksdb-lib.sh
profile="${RTCD_BUILD_PROFILE:-release}"
# Same target selection as scripts/test.sh, so the RocksDB build is shared.
use_shared_rocksdb
cargo build --workspace --all-targets --locked --profile "$profile"
case "$profile" in dev | test) bin_dir=debug ;; *) bin_dir="$profile" ;; esac
rtcd="$CARGO_TARGET_DIR/$bin_dir/rtcd"
apiserver="$CARGO_TARGET_DIR/$bin_dir/rtcd-apiserver"
pki="$CARGO_TARGET_DIR/$bin_dir/rtcd-pki"
combined="$CARGO_TARGET_DIR/$bin_dir/rtcd-combined"
api_port="${RTCD_APISERVER_PORT:-6443}"
api_layout="${RTCD_APISERVER:-separate}"
case "$api_layout" in
  separate | combined) ;;
  *) echo "up: RTCD_APISERVER must be separate or combined, not $api_layout" >&2; exit 2 ;;
esac

mkdir -p data
# The cluster's certificates and keys: made once, then reused.
"$pki" init --dir data/pki --server "https://127.0.0.1:$api_port" | sed 's/^/up: /'
cp data/pki/admin.kubeconfig data/kubeconfig
# The API server's flags (its etcd apart), in either layout.
api_flags=(
  --bind-address 127.0.0.1 --secure-port "$api_port"
  --tls-cert-file data/pki/apiserver.crt --tls-private-key-file data/pki/apiserver.key
  --client-ca-file data/pki/ca.crt
  --cluster-signing-cert-file data/pki/ca.crt --cluster-signing-key-file data/pki/ca.key
  --authorization-mode RBAC
  --service-account-issuer https://kubernetes.default.svc.cluster.local
  --service-account-signing-key-file data/pki/sa.key --service-account-key-file data/pki/sa.pub
  --audit-policy-file scripts/apiserver/audit-policy.yaml --audit-log-path data/audit.log
  # The aggregation layer, as kubeadm sets it up; endpoints routing since
  # nothing on this machine routes Services' cluster IPs.
  --requestheader-client-ca-file data/pki/front-proxy-ca.crt --requestheader-allowed-names front-proxy-client
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group
  --requestheader-extra-headers-prefix X-Remote-Extra- --requestheader-uid-headers X-Remote-Uid
  --proxy-client-cert-file data/pki/front-proxy-client.crt --proxy-client-key-file data/pki/front-proxy-client.key
  --enable-aggregator-routing=true
)
clients=(2379 22379 32379)
peers=(2380 22380 32380)
scheme=http
tls_flags=()
etcdctl_tls=()
api_etcd_tls=()
if [ "${RTCD_SECURE:-0}" = 1 ]; then
  scheme=https
  scripts/etcd-pki.sh data/etcd-pki | sed 's/^/up: /'
  pki_dir=data/etcd-pki
  tls_flags=(--cert-file "$pki_dir/member.pem" --key-file "$pki_dir/member.key"
    --trusted-ca-file "$pki_dir/ca.pem" --client-cert-auth
    --peer-cert-file "$pki_dir/member.pem" --peer-key-file "$pki_dir/member.key"
    --peer-trusted-ca-file "$pki_dir/ca.pem" --peer-client-cert-auth)
  etcdctl_tls=(--cacert "$pki_dir/ca.pem" --cert "$pki_dir/root.pem" --key "$pki_dir/root.key")
  api_etcd_tls=(--etcd-cafile "$pki_dir/ca.pem" --etcd-certfile "$pki_dir/apiserver-etcd-client.pem"
    --etcd-keyfile "$pki_dir/apiserver-etcd-client.key")
fi
cluster="m1=$scheme://127.0.0.1:2380,m2=$scheme://127.0.0.1:22380,m3=$scheme://127.0.0.1:32380"
for i in 0 1 2; do
  name="m$((i + 1))"
  if [ -f "data/$name.pid" ] && kill -0 "$(cat "data/$name.pid")" 2>/dev/null; then
    echo "up: $name already running (pid $(cat "data/$name.pid"))"
    if [ "$name" = m1 ] && grep -q rtcd-combined "/proc/$(cat data/m1.pid)/cmdline" 2>/dev/null; then
      running=combined
    else
      running=separate
    fi
    if [ "$name" = m1 ] && [ "$running" != "$api_layout" ]; then
      echo "up: m1 runs with the $running API server layout, not $api_layout: scripts/down.sh first" >&2
      exit 1
    fi
    continue
  fi
  client="$scheme://127.0.0.1:${clients[$i]}"
  peer="$scheme://127.0.0.1:${peers[$i]}"
  member=("$rtcd")
  if [ "$api_layout" = combined ] && [ "$name" = m1 ]; then member=("$combined"); fi
  member+=(--name "$name" --data-dir "data/$name"
    --listen-client-urls "$client" --advertise-client-urls "$client"
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer"
    --initial-cluster "$cluster" --initial-cluster-token rtcd-local "${tls_flags[@]}")
  if [ "${member[0]}" = "$combined" ]; then member+=(-- "${api_flags[@]}"); fi
  nohup "${member[@]}" >"data/$name.log" 2>&1 &
  echo $! >"data/$name.pid"
  echo "up: started $name (pid $!), log data/$name.log"
done

endpoints="127.0.0.1:2379,127.0.0.1:22379,127.0.0.1:32379"
if [ "$scheme" = https ]; then endpoints="https://127.0.0.1:2379,https://127.0.0.1:22379,https://127.0.0.1:32379"; fi
healthy=""
for _ in $(seq 1 60); do
  if ETCDCTL_API=3 etcdctl --endpoints "$endpoints" "${etcdctl_tls[@]}" endpoint health >/dev/null 2>&1; then
    healthy=1
    break
  fi
  sleep 0.5
done
if [ -z "$healthy" ]; then
  echo "up: the cluster did not become healthy in 30 s; see data/m*.log" >&2
  exit 1
fi

# The API server, on all three members (or already in m1's process).
api_log=data/apiserver.log
if [ "$api_layout" = combined ]; then
  api_log=data/m1.log
  echo "up: rtcd-apiserver runs in m1's process (rtcd-combined), log $api_log"
elif [ -f data/apiserver.pid ] && kill -0 "$(cat data/apiserver.pid)" 2>/dev/null; then
  echo "up: rtcd-apiserver already running (pid $(cat data/apiserver.pid))"
else
  nohup "$apiserver" --etcd-servers "$scheme://127.0.0.1:2379,$scheme://127.0.0.1:22379,$scheme://127.0.0.1:32379" \
    "${api_etcd_tls[@]}" "${api_flags[@]}" >data/apiserver.log 2>&1 &
  echo $! >data/apiserver.pid
  echo "up: started rtcd-apiserver (pid $!), log data/apiserver.log"
fi
kubectl_bin="${RTCD_VENV:-$HOME/.cache/rtcd/venv}/bin/kubectl"
etcdctl_hint="(plain text: no certificates needed)"
if [ "$scheme" = https ]; then
  etcdctl_hint="export ETCDCTL_CACERT=$PWD/data/etcd-pki/ca.pem ETCDCTL_CERT=$PWD/data/etcd-pki/root.pem ETCDCTL_KEY=$PWD/data/etcd-pki/root.key"
fi
for _ in $(seq 1 60); do
  if "$kubectl_bin" --kubeconfig data/kubeconfig get namespace default -o name >/dev/null 2>&1; then
    cat <<MSG

rtcd is up: three members, one cluster, and rtcd-apiserver on top.

  export ETCDCTL_API=3 ENDPOINTS=$endpoints
  $etcdctl_hint
  etcdctl --endpoints \$ENDPOINTS member list -w table
  etcdctl --endpoints \$ENDPOINTS endpoint status -w table
  etcdctl --endpoints $scheme://127.0.0.1:22379 put greeting hello
  etcdctl --endpoints $scheme://127.0.0.1:32379 get greeting

  export PATH="$(dirname "$kubectl_bin"):\$PATH" KUBECONFIG="$PWD/data/kubeconfig"
  kubectl version
  kubectl create namespace demo
  kubectl create deployment web --image=nginx -n demo
  kubectl get all -n demo -o wide
  kubectl get configmaps -A -w
  kubectl auth whoami

Users: a certificate signed by the cluster CA (data/pki/ca.crt), or a
ServiceAccount token; then bind a role:
  $(dirname "$pki")/rtcd-pki user --dir data/pki --name jane --group dev
  kubectl create rolebinding jane-view --clusterrole=view --user=jane -n demo
  kubectl --kubeconfig data/pki/jane.kubeconfig get pods -n demo
  kubectl create serviceaccount robot -n demo
  kubectl create rolebinding robot-edit --clusterrole=edit --serviceaccount=demo:robot -n demo
  kubectl --token "\$(kubectl create token robot -n demo)" get pods -n demo
Every request is audited in data/audit.log (scripts/apiserver/audit-policy.yaml).

Any member takes reads and writes; the API server keeps its objects under
/registry in the same cluster (etcdctl get /registry --prefix --keys-only).
Stop everything with scripts/down.sh; data stays in ./data until you remove it.
MSG
    exit 0
  fi
  sleep 0.5
done
echo "up: rtcd-apiserver did not become ready in 30 s; see $api_log" >&2
exit 1
