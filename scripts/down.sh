#!/usr/bin/env bash
# Stops exactly the API server and members scripts/up.sh started (by their pid files under
# ./data), gracefully first. Data is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

# The API server first: it is a client of the members.
for pidfile in data/apiserver.pid data/m1.pid data/m2.pid data/m3.pid; do
  [ -f "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  # Only signal the process if it still is the rtcd up.sh started.
  if kill -0 "$pid" 2>/dev/null && grep -q rtcd "/proc/$pid/cmdline" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 20); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid"
    fi
    echo "down: stopped ${pidfile%.pid} (pid $pid)"
  fi
  rm -f "$pidfile"
done
