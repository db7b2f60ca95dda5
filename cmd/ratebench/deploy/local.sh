#!/usr/bin/env bash
# local.sh: the two Jobs of submit.sh on one machine. It starts N
# `ratebench attack` processes with the Indexed Job's arguments and
# environment (JOB_COMPLETION_INDEX=i, -shard i/N, -start-at T), waits for
# them all, then merges their folders.
#
#   N=3 TARGET_URL=http://127.0.0.1:8080/ cmd/ratebench/deploy/local.sh [ATTACK FLAGS...]
#
#   N           shards (default 3; at least 2)
#   T           start of the attack, RFC 3339 UTC (default: now + START_IN s)
#   START_IN    seconds until the default T (default 5)
#   TARGET_URL  the URL attacked (default: a `ratebench serve` started here)
#   RATEBENCH   the binary (default: go build into a temporary folder)
#   OUT         holds shard-0 .. shard-(N-1), merged and logs
#               (default results/<timestamp>-shards in the repository)
# Arguments go to every shard's `ratebench attack` (e.g. -rate 500 -duration 10s).
set -euo pipefail

die() { echo "local.sh: $*" >&2; exit 2; }

case ${1:-} in -h | -help | --help) sed -n '2,16p' "${BASH_SOURCE[0]}" >&2; exit 0 ;; esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)

rfc3339() {
	date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$1" +%Y-%m-%dT%H:%M:%SZ
}

N=${N:-3}
START_IN=${START_IN:-5}
OUT=${OUT:-$root/results/$(date -u +%Y%m%d-%H%M%S)-shards}
TARGET_URL=${TARGET_URL:-}
RATEBENCH=${RATEBENCH:-}
[[ $N =~ ^[0-9]+$ ]] && ((N >= 2)) || die "N=$N: want a whole number of shards, at least 2"

tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in ${pids[@]+"${pids[@]}"}; do
		kill "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -z $RATEBENCH ]]; then
	echo "building ratebench"
	(cd "$root" && go build -o "$tmp/ratebench" ./cmd/ratebench)
	RATEBENCH=$tmp/ratebench
fi

server=""
if [[ -z $TARGET_URL ]]; then
	"$RATEBENCH" serve -addr 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.log" &
	server=$!
	pids+=("$server")
	for _ in $(seq 100); do
		TARGET_URL=$(sed -n 's|^listening on \(http://[^ ]*\).*|\1/|p' "$tmp/serve.log")
		[[ -z $TARGET_URL ]] || break
		sleep 0.1
	done
	[[ -n $TARGET_URL ]] || die "ratebench serve did not start: $(cat "$tmp/serve.log")"
	echo "target: $TARGET_URL (ratebench serve, stopped at the end)"
fi

T=${T:-$(rfc3339 $(($(date +%s) + START_IN)))}
mkdir -p "$OUT/logs"
echo "$N shards attack $TARGET_URL from $T into $OUT"

shards=()
for ((i = 0; i < N; i++)); do
	(
		export JOB_COMPLETION_INDEX=$i
		exec "$RATEBENCH" attack -url "$TARGET_URL" \
			-shard "$JOB_COMPLETION_INDEX/$N" -start-at "$T" \
			-out "$OUT/shard-$JOB_COMPLETION_INDEX" "$@"
	) >"$OUT/logs/shard-$i.log" 2>&1 &
	shards+=("$!")
	pids+=("$!")
done

failed=0
for i in "${!shards[@]}"; do
	if ! wait "${shards[$i]}"; then
		echo "local.sh: shard $i failed; see $OUT/logs/shard-$i.log" >&2
		failed=1
	fi
done
((failed == 0)) || exit 1

dirs=()
for ((i = 0; i < N; i++)); do
	dirs+=("$OUT/shard-$i")
done
"$RATEBENCH" merge "${dirs[@]}" -out "$OUT/merged"
echo "merged: $OUT/merged/report.html"
if [[ -n $server ]]; then
	# Stopped with Ctrl-C's signal, the server prints its own totals: the
	# merged 200s and 429s should be the same.
	kill -INT "$server"
	wait "$server" || true
	echo "server $(cat "$tmp/serve.out")"
fi
