#!/usr/bin/env bash
# reference.sh: the HTTP reference run under results/attack: `ratebench
# serve` with GCRA at 100 per second on loopback, attacked open loop with
# Poisson arrivals at 3x that for 10 s, then compared with the same
# workload run in process (results/attack-live, results/attack-vs-live).
#
#   bench/httpexec/reference.sh        # or: make results
set -euo pipefail
cd "$(dirname "$0")/../.."

PORT=${PORT:-18481}
tmp=$(mktemp -d)
server=""
cleanup() {
	[ -n "$server" ] && kill -INT "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/ratebench" ./cmd/ratebench
"$tmp/ratebench" serve -addr "127.0.0.1:$PORT" -algo gcra -limit 100 -window 1s 2>"$tmp/serve.log" &
server=$!
for _ in $(seq 100); do
	grep -q '^listening' "$tmp/serve.log" && break
	sleep 0.1
done
grep -q '^listening' "$tmp/serve.log" || { cat "$tmp/serve.log" >&2; exit 1; }

"$tmp/ratebench" attack -url "http://127.0.0.1:$PORT/" -workload poisson -rate 300 -duration 10s -algo gcra -out results/attack
"$tmp/ratebench" run -mode live -algos gcra -workload poisson -rate 300 -limit 100 -duration 10s -out results/attack-live
"$tmp/ratebench" compare -out results/attack-vs-live results/attack-live results/attack
