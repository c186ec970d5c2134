#!/usr/bin/env bash
# The certificates of a secure local cluster (scripts/up.sh, RTCD_SECURE=1),
# made once with openssl in the directory given: a CA (ca.pem), one
# certificate the members use for clients and peers alike (member.pem: for
# 127.0.0.1 and localhost, server and client use), a client certificate for
# etcdctl (root.pem, CN root: the user when auth is on) and one for the API
# server (apiserver-etcd-client.pem). Existing files are kept.
set -euo pipefail
dir="${1:?usage: scripts/etcd-pki.sh DIR}"
mkdir -p "$dir"
cd "$dir"
if [ ! -f ca.pem ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj "/CN=rtcd-local-ca" 2>/dev/null
  echo "etcd-pki: made the CA $dir/ca.pem"
fi
cert() { # file-name common-name
  [ -f "$1.pem" ] && return 0
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days 3650 \
    -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
  echo "etcd-pki: made $dir/$1.pem (CN $2)"
}
cert member rtcd-member
cert root root
cert apiserver-etcd-client rtcd-apiserver
