#!/usr/bin/env bash
# compare.sh: how fast `ratebench attack` sends, beside vegeta and wrk,
# against `ratebench serve` with a limiter that admits everything, on
# loopback, all measured in one run (the machine is the same for all).
#
#   bench/httpexec/compare.sh            # 2 rounds of 10s measures
#   ROUNDS=1 DURATION=5s bench/httpexec/compare.sh
#   CLIENTS="fasthttp net/http" bench/httpexec/compare.sh   # both, same rounds
#
# Each round restarts the server, then measures in turn:
#   wrk and closed, interleaved: wrk -t2 -c32 and ratebench attack -rate 0
#            -connections 32 (closed loops, requests per second), in
#            SLICES blocks of SLICE-long runs ordered wrk, attack, attack,
#            wrk (one attack per client, reversed on the way back): on a
#            shared machine whose speed drifts, each block's ratio
#            compares runs a few seconds apart, and the drift cancels to
#            first order. Each side's rate is its mean over the block's
#            runs; the round's ratio is over all blocks, each block's
#            ratio printed beside;
#   vegeta   vegeta attack -rate=0 -max-workers=32 -duration=DURATION |
#            vegeta report: its rate (closed loop);
#   open     the highest rate, among 50%, 60%, ... 100% of wrk's, that
#            attack sustains in its open loop for DURATION: sent within 1%
#            of the target, nothing dropped, no error (the share of
#            requests sent more than 1ms late is printed beside);
#   fixed    attack at FIXED_RATE (default 40% of wrk's rate, below
#            capacity) for DURATION: the achieved rate against the target.
#
# closed, open and fixed are measured for each attack -client in CLIENTS
# (default: the default client, fasthttp for http). With /usr/bin/time, the closed loops
# also print the sender's CPU (user + system) per request.
#
# Needs wrk (apt-get install -y wrk) and vegeta
# (go install github.com/tsenart/vegeta/v12@v12.13.0): tools for this
# script, not dependencies of the module.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10s}
SLICE=${SLICE:-3s}
SLICES=${SLICES:-2}
CONNS=${CONNS:-32}
PORT=${PORT:-18480}
URL="http://127.0.0.1:$PORT/"

VEGETA=${VEGETA:-$(command -v vegeta || echo "$(go env GOPATH)/bin/vegeta")}
command -v wrk >/dev/null || { echo "compare.sh: wrk not found: apt-get install -y wrk" >&2; exit 2; }
[ -x "$VEGETA" ] || { echo "compare.sh: vegeta not found: go install github.com/tsenart/vegeta/v12@v12.13.0" >&2; exit 2; }

tmp=$(mktemp -d)
server=""
cleanup() {
	if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/ratebench" ./cmd/ratebench
RB="$tmp/ratebench"

start_server() {
	if [ -n "$server" ]; then kill "$server"; wait "$server" 2>/dev/null || true; fi
	"$RB" serve -addr "127.0.0.1:$PORT" -limit 1000000000 -window 1s >"$tmp/serve.out" 2>"$tmp/serve.log" &
	server=$!
	for _ in $(seq 50); do
		grep -q "listening on" "$tmp/serve.log" 2>/dev/null && return
		sleep 0.1
	done
	echo "compare.sh: the server did not start:" >&2
	cat "$tmp/serve.log" >&2
	exit 1
}

# attack RATE DURATION [flags...]: prints "sent completed dropped errors
# late": sent and completed per second, dropped and errors as counts,
# late in percent of the requests sent.
attack() {
	local rate=$1 d=$2
	shift 2
	$TIME "$RB" attack -url "$URL" -rate "$rate" -duration "$d" -no-report -out "$tmp/atk" "$@" >"$tmp/atk.out" 2>"$tmp/atk.err" || {
		cat "$tmp/atk.err" >&2
		exit 1
	}
	awk '
		/ sent [0-9]+\/s of / { for (i = 1; i <= NF; i++) { if ($i == "sent") sent = $(i+1); if ($i == "completed") done = $(i+1); if ($i ~ /^\(/) drop = substr($i, 2); if ($i ~ /^late/) late = $(i-1) } }
		/ closed loop over / { for (i = 1; i <= NF; i++) if ($i == "completed") done = $(i+1); sent = done; drop = 0; late = 0 }
		/^status: / { errs = 0; if (match($0, /errors: .*/)) { s = substr($0, RSTART + 8); n = split(s, parts, /, /); for (k = 1; k <= n; k++) { split(parts[k], kv, ": "); errs += kv[2] } } }
		END { gsub(/\/s/, "", sent); gsub(/\/s/, "", done); gsub(/%/, "", late); print sent + 0, done + 0, drop + 0, errs + 0, late + 0 }
	' "$tmp/atk.out"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

TIME=""
[ -x /usr/bin/time ] && TIME="/usr/bin/time -f %U+%S -o $tmp/cpu"
CLIENTS=${CLIENTS:-default}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server:  ratebench serve -limit 1000000000 -window 1s (admits everything) on $URL; $CONNS connections for the closed loops"
slice_secs=$(awk -v d="$SLICE" 'BEGIN { v = d + 0; if (d ~ /ms$/) v /= 1000; else if (d ~ /m$/) v *= 60; print v }')

# closed_run WHO: one closed-loop run of SLICE by wrk or an attack client;
# prints "requests/s cpu-seconds".
closed_run() {
	local who=$1 rate
	if [ "$who" = wrk ]; then
		rate=$($TIME wrk -t2 -c"$CONNS" -d"$SLICE" "$URL" | awk '/Requests\/sec/ { printf "%d", $2 }')
	else
		local eflag=()
		[ "$who" = default ] || eflag=(-client "$who")
		read -r _ rate _ _ _ < <(attack 0 "$SLICE" -connections "$CONNS" "${eflag[@]}")
	fi
	local c=0
	[ -n "$TIME" ] && c=$(awk -F+ 'END { print $1 + $2 }' "$tmp/cpu")
	echo "$rate $c"
}

# mean rate and CPU per request of WHO over its runs
mean() { echo $((${reqs[$1]} / ${runs[$1]})); }
percpu() {
	[ -n "$TIME" ] || { echo "-"; return; }
	awk -v c="${cpus[$1]}" -v r="${reqs[$1]}" -v s="$slice_secs" 'BEGIN { if (r > 0) printf "%.1fus", c / (r * s) * 1e6; else print "-" }'
}

for round in $(seq "$ROUNDS"); do
	start_server
	# The closed loops, interleaved in blocks: wrk, clients, clients
	# reversed, wrk.
	declare -A reqs=() cpus=() runs=()
	blocks=""
	engines=($CLIENTS)
	back=()
	for ((i = ${#engines[@]} - 1; i >= 0; i--)); do back+=("${engines[i]}"); done
	for _ in $(seq "$SLICES"); do
		declare -A breqs=()
		for who in wrk "${engines[@]}" "${back[@]}" wrk; do
			read -r r c < <(closed_run "$who")
			reqs[$who]=$((${reqs[$who]:-0} + r))
			breqs[$who]=$((${breqs[$who]:-0} + r))
			runs[$who]=$((${runs[$who]:-0} + 1))
			cpus[$who]=$(awk -v a="${cpus[$who]:-0}" -v b="$c" 'BEGIN { print a + b }')
		done
		blocks="$blocks $(ratio "${breqs[${engines[0]}]}" "${breqs[wrk]}")"
		unset breqs
	done
	wrk_rate=$(mean wrk)
	veg_rate=$(echo "GET $URL" | "$VEGETA" attack -rate=0 -max-workers="$CONNS" -duration="$DURATION" | "$VEGETA" report |
		awk -F'[],[ ]+' '/^Requests/ { printf "%d", $(NF-1) }')
	echo "round $round:"
	echo "  wrk -t2 -c$CONNS:                       $wrk_rate requests/s   (mean of ${runs[wrk]} runs of $SLICE; CPU $(percpu wrk) per request)"
	echo "  vegeta -rate=0 -max-workers=$CONNS:     $veg_rate requests/s"

	for engine in $CLIENTS; do
		eflag=()
		[ "$engine" = default ] || eflag=(-client "$engine")
		closed=$(mean "$engine")
		closed_cpu=$(percpu "$engine")

		open=0
		for pct in 50 60 70 80 90 100; do
			r=$((wrk_rate * pct / 100 / 1000 * 1000))
			read -r sent done drop errs late < <(attack "$r" "$DURATION" "${eflag[@]}")
			ok=$(awk -v s="$sent" -v r="$r" -v x="$drop" -v e="$errs" 'BEGIN { print (s >= 0.99 * r && x == 0 && e == 0) ? 1 : 0 }')
			echo "  round $round, client $engine: open loop at $r/s: sent $sent/s, $late% sent >1ms late, $drop dropped, $errs errors: $([ "$ok" = 1 ] && echo sustained || echo not sustained)"
			[ "$ok" = 1 ] || break
			open=$r
		done

		fixed=${FIXED_RATE:-$((wrk_rate * 40 / 100 / 1000 * 1000))}
		read -r fsent fdone fdrop ferrs flate < <(attack "$fixed" "$DURATION" "${eflag[@]}")
		ferr=$(awk -v a="$fsent" -v r="$fixed" 'BEGIN { d = (a - r) / r * 100; printf "%+.2f%%", d }')

		echo "  client $engine:"
		echo "    attack -rate 0 -connections $CONNS:     $closed requests/s   ($(ratio "$closed" "$veg_rate")x vegeta, $(ratio "$closed" "$wrk_rate")x wrk; CPU $closed_cpu per request)"
		[ "$engine" = "${engines[0]}" ] && echo "      each block's ratio to wrk:$blocks"
		echo "    attack open loop, highest sustained: $open requests/s   ($(ratio "$open" "$veg_rate")x vegeta, $(ratio "$open" "$wrk_rate")x wrk)"
		echo "    attack at a fixed $fixed/s:          sent $fsent/s ($ferr), $flate% sent >1ms late, $fdrop dropped, $ferrs errors"
	done
	unset reqs cpus runs
done
