# Sourced by the side-by-side benchmark scripts (bench-vs-etcd.sh,
# bench-apiserver.sh): a three-member cluster of etcd or rtcd on loopback,
# started with the same flags whichever program it is.
#
# The caller sets: bench_name (for messages), work (data dirs), logs (member
# logs), pids=() (members by index), and a die function; then calls
# bench_ports with its first client port.

# bench_ports PORT: client ports PORT, PORT+10, PORT+20 and peer ports one
# above each; refuses to go on if any is taken. Keep PORT below Linux's
# ephemeral range (32768 and up): there an outgoing connection (a leader
# redialing a killed member) can take a port before its member restarts.
bench_ports() {
  local base="$1" port i
  clients=("$base" "$((base + 10))" "$((base + 20))")
  peers=("$((base + 1))" "$((base + 11))" "$((base + 21))")
  endpoints="127.0.0.1:${clients[0]},127.0.0.1:${clients[1]},127.0.0.1:${clients[2]}"
  for port in "${clients[@]}" "${peers[@]}"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      die "port $port is already in use (a leftover cluster?); not starting anything"
    fi
  done
  cluster=""
  for i in 0 1 2; do cluster+="${cluster:+,}b$i=http://127.0.0.1:${peers[$i]}"; done
}

# start_member SERVER PROGRAM I [ARG...]: member I in the background, pid in
# pids[I]; the same flags (and data dir) whether it is new or restarted, then
# any further ARGs.
start_member() {
  local server="$1" program="$2" i="$3"
  shift 3
  "$program" --name "b$i" --data-dir "$work/$server-b$i" \
    --listen-client-urls "http://127.0.0.1:${clients[$i]}" \
    --advertise-client-urls "http://127.0.0.1:${clients[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${peers[$i]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${peers[$i]}" \
    --initial-cluster "$cluster" --initial-cluster-token bench \
    --quota-backend-bytes 8589934592 "$@" \
    >>"$logs/$server-b$i.log" 2>&1 &
  pids[i]=$!
}

members_alive() {
  local i
  for i in "${!pids[@]}"; do
    kill -0 "${pids[$i]}" 2>/dev/null || { echo "$bench_name: member b$i (pid ${pids[$i]}) exited" >&2; return 1; }
  done
}

# wait_healthy SECONDS: every member answers `endpoint health`.
wait_healthy() {
  local tries=$(($1 * 2))
  for _ in $(seq 1 "$tries"); do
    members_alive || return 1
    if etcdctl --endpoints "$endpoints" endpoint health >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  return 1
}

start_members() {
  local server="$1" program="$2" i
  for i in 0 1 2; do start_member "$server" "$program" "$i"; done
  wait_healthy 30 || die "$server did not become healthy"
}
