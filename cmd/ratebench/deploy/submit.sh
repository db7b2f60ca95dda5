#!/usr/bin/env bash
# submit.sh: run one sharded attack on Kubernetes, then merge its shards.
#
#   N=4 TARGET_URL=http://limiter.default.svc:8080/ IMAGE=REGISTRY/ratebench:TAG \
#     cmd/ratebench/deploy/submit.sh [-dry-run] [-- ATTACK FLAGS...]
#
# Everything is set here, once, from the environment:
#   N            shards, one pod each (default 3; at least 2)
#   T            start of the attack, RFC 3339 UTC (default: now + START_IN s)
#   START_IN     seconds until the default T (default 30)
#   TARGET_URL   the URL attacked (required)
#   IMAGE        the ratebench image (default ratebench:latest)
#   PVC          the ReadWriteMany claim holding /results (default ratebench-results)
#   STORAGE_CLASS, PVC_SIZE
#                used only when the claim does not exist yet (size default 10Gi)
#   RUN          name of this run: Job names and /results/RUN (default: a timestamp)
#   NAMESPACE    kubectl namespace (default: the context's)
#   WAIT         seconds to wait for each Job (default 3600)
# Flags after -- go to every shard's `ratebench attack` (e.g. -rate 2000 -duration 1m).
# -dry-run prints the filled manifests and applies nothing.
set -euo pipefail

die() { echo "submit.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dry=0
extra=()
while (($#)); do
	case $1 in
	-dry-run | --dry-run) dry=1 ;;
	-h | -help | --help) sed -n '2,20p' "${BASH_SOURCE[0]}" >&2; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	*) die "unknown argument $1 (attack flags go after --)" ;;
	esac
	shift
done

# rfc3339 prints Unix time $1 as RFC 3339 UTC (GNU date, then BSD date).
rfc3339() {
	date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$1" +%Y-%m-%dT%H:%M:%SZ
}

# yamlstr prints $1 as a YAML double-quoted string.
yamlstr() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

N=${N:-3}
START_IN=${START_IN:-30}
T=${T:-$(rfc3339 $(($(date +%s) + START_IN)))}
TARGET_URL=${TARGET_URL:-}
IMAGE=${IMAGE:-ratebench:latest}
PVC=${PVC:-ratebench-results}
STORAGE_CLASS=${STORAGE_CLASS:-}
PVC_SIZE=${PVC_SIZE:-10Gi}
RUN=${RUN:-$(date -u +%Y%m%d-%H%M%S)}
WAIT=${WAIT:-3600}

[[ $N =~ ^[0-9]+$ ]] && ((N >= 2)) || die "N=$N: want a whole number of shards, at least 2"
[[ -n $TARGET_URL ]] || die "set TARGET_URL, the URL every shard attacks"
[[ $RUN =~ ^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$ ]] || die "RUN=$RUN: want lowercase letters, digits and -, at most 40"
[[ $WAIT =~ ^[0-9]+$ ]] || die "WAIT=$WAIT: want seconds"
for v in T TARGET_URL IMAGE PVC STORAGE_CLASS PVC_SIZE; do
	[[ ${!v} != *[\"\\]* ]] || die "$v may not hold \" or \\"
done

# The attack's extra flags and the merge's inputs, as YAML flow-list items.
ATTACK_ARGS=""
for a in ${extra[@]+"${extra[@]}"}; do
	ATTACK_ARGS+=", $(yamlstr "$a")"
done
SHARD_DIRS=""
for ((i = 0; i < N; i++)); do
	SHARD_DIRS+="${SHARD_DIRS:+, }\"/results/$RUN/shard-$i\""
done
export N T TARGET_URL IMAGE PVC STORAGE_CLASS PVC_SIZE RUN ATTACK_ARGS SHARD_DIRS

# render fills the listed placeholders only: $(JOB_COMPLETION_INDEX) stays.
render() {
	envsubst '${N} ${T} ${TARGET_URL} ${IMAGE} ${PVC} ${STORAGE_CLASS} ${PVC_SIZE} ${RUN} ${ATTACK_ARGS} ${SHARD_DIRS}' <"$here/$1"
}

if ((dry)); then
	render pvc.yaml
	echo ---
	render attack-job.yaml
	echo ---
	render merge-job.yaml
	exit 0
fi

kc=(kubectl)
[[ -z ${NAMESPACE:-} ]] || kc+=(-n "$NAMESPACE")

# wait_job waits for job/$1 to complete; it stops early when the Job fails.
wait_job() {
	local job=$1 deadline=$(($(date +%s) + WAIT)) failed
	until "${kc[@]}" wait --for=condition=complete --timeout=10s "job/$job" >/dev/null 2>&1; do
		failed=$("${kc[@]}" get "job/$job" -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}' 2>/dev/null || true)
		if [[ $failed == True ]]; then
			echo "submit.sh: job/$job failed; its pods:" >&2
			"${kc[@]}" get pods -l "job-name=$job" -o wide >&2 || true
			echo "logs: ${kc[*]} logs -l job-name=$job --tail=20 --prefix" >&2
			return 1
		fi
		if (($(date +%s) >= deadline)); then
			echo "submit.sh: job/$job not complete after ${WAIT}s" >&2
			return 1
		fi
	done
}

if ! "${kc[@]}" get "pvc/$PVC" >/dev/null 2>&1; then
	[[ -n $STORAGE_CLASS ]] || die "no claim $PVC: set STORAGE_CLASS to a ReadWriteMany class to create it, or PVC to an existing one"
	render pvc.yaml | "${kc[@]}" apply -f -
fi

now=$(date +%s)
echo "run $RUN: $N shards attack $TARGET_URL from $T (now $(rfc3339 "$now"))"
render attack-job.yaml | "${kc[@]}" apply -f -
wait_job "ratebench-attack-$RUN"

render merge-job.yaml | "${kc[@]}" apply -f -
wait_job "ratebench-merge-$RUN"
"${kc[@]}" logs "job/ratebench-merge-$RUN"
echo "merged: /results/$RUN/merged on claim $PVC (report.html, result.json, requests.csv)"
