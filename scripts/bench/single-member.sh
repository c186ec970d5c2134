# Sourced by the API server benchmark scripts (apiserver-security.sh,
# apiserver-webhook.sh): free loopback ports, and one rtcd member for the
# API server to store into.
#
# The caller sets: bin (the release binaries), work (a scratch directory)
# and pids=() (processes to stop on exit).

# port: a free loopback port.
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_member: one rtcd member under $work/member; sets client (its client port).
start_member() {
  local peer
  client="$(port)" peer="$(port)"
  "$bin/rtcd" --name b --data-dir "$work/member" --listen-client-urls "http://127.0.0.1:$client" \
    --advertise-client-urls "http://127.0.0.1:$client" --listen-peer-urls "http://127.0.0.1:$peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer" --initial-cluster "b=http://127.0.0.1:$peer" \
    >"$work/rtcd.log" 2>&1 &
  pids+=($!)
}
