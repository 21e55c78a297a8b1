#!/usr/bin/env bash
# deploy/test.sh: Frontier's whole test suite, the command the README gives and .ci/run calls.
#
#   0. builds the Python oracle venvs (oracle/setup.sh; skipped when already built), records the upstream
#      test suites' calls and the property-run cases for the identity package to replay (oracle/record.sh;
#      FRONTIER_PROPERTY_CASES=100000 for a large property run)
#   1. go vet ./... (plain and with the integration tag)
#   2. unit tests: go test -race ./...
#   3. starts Kafka and HBase (deploy/up; fresh data dirs when CI=true), creates the topics and the schema
#   4. integration tests: go test -tags integration ./... with FRONTIER_TEST_* set (deploy/env); among them
#      e2e TestDemo runs the README's `standalone --demo` (~20 s), which exits non-zero when its crawl fails
#      the demo site's ground-truth check
#   5. the fault suite (e2e TestFaults, about 8 minutes): one crawl by the role binaries through a SIGKILL of
#      each role, a Kafka restart and HBase outages of 10, 40 and 90 s, in an order and at moments drawn from a
#      seed it logs (FRONTIER_FAULT_SEED=N replays them); it restarts the servers of step 3 when this run
#      started both, or else a pair of its own on other ports (in $INFRA-faults; FRONTIER_TEST_FAULTS_*_PORT),
#      stopped afterwards
#   6. stops the servers it started, also on failure or interrupt; servers that were already running
#      are left running
#
# Exits non-zero on the first failure. Options (also as environment variables):
#   --no-race        (FRONTIER_TEST_RACE=0)   unit tests without the race detector
#   --unit           (FRONTIER_TEST_UNIT_ONLY=1) steps 1–2 only: no servers, no integration tests
#   --integration    (FRONTIER_TEST_INTEGRATION_ONLY=1) steps 3–5 only
#   --keep           (FRONTIER_TEST_KEEP=1)   leave the servers this run started running
#   --no-faults      (FRONTIER_TEST_NO_FAULTS=1) skip step 5
# Extra go test flags: GOTESTFLAGS (e.g. GOTESTFLAGS='-count=1 -v').
set -euo pipefail
DEPLOY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$DEPLOY_DIR/.." && pwd)
cd "$ROOT"

race=${FRONTIER_TEST_RACE:-1}
unit_only=${FRONTIER_TEST_UNIT_ONLY:-0}
integration_only=${FRONTIER_TEST_INTEGRATION_ONLY:-0}
keep=${FRONTIER_TEST_KEEP:-0}
no_faults=${FRONTIER_TEST_NO_FAULTS:-0}
for a in "$@"; do
	case $a in
	--no-race) race=0 ;;
	--unit) unit_only=1 ;;
	--integration) integration_only=1 ;;
	--keep) keep=1 ;;
	--no-faults) no_faults=1 ;;
	-h | --help)
		sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "deploy/test.sh: unknown argument $a" >&2
		exit 2
		;;
	esac
done
# shellcheck disable=SC2206
gotestflags=(${GOTESTFLAGS:-})

step() { printf '\n==== %s (%s)\n' "$*" "$(date -u +%T)"; }

# The Python oracle (Frontera, Scrapy, w3lib, warcio in .venv/) that the compatibility tests run against;
# a no-op when the venvs are already built from the same requirements.
step "python oracle"
"$ROOT/oracle/setup.sh"
# Recorded in every mode: the integration stage runs the identity package's tests too.
"$ROOT/oracle/record.sh"

if ((!integration_only)); then
	step "go vet"
	go vet ./...
	go vet -tags integration ./...

	step "unit tests"
	if ((race)); then
		go test -race "${gotestflags[@]}" ./...
	else
		go test "${gotestflags[@]}" ./...
	fi
fi

if ((unit_only)); then
	exit 0
fi

# Which servers were already up: those are someone else's and stay up.
source "$DEPLOY_DIR/lib.sh"
started=()
for n in kafka hbase; do
	if [[ -z $(pid_of "$n") ]]; then
		started+=("$n")
	fi
done
faults_env=()
cleanup() {
	local rc=$?
	if ((${#faults_env[@]})); then
		step "stopping the fault suite's servers"
		env "${faults_env[@]}" "$DEPLOY_DIR/down" all || rc=1
	fi
	if ((!keep)) && ((${#started[@]})); then
		step "stopping ${started[*]}"
		local n
		for n in "${started[@]}"; do
			"$DEPLOY_DIR/down" "$n" || rc=1
		done
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "servers"
up_args=()
if [[ ${CI:-} == true ]]; then
	up_args+=(--fresh)
fi
if ((${#started[@]} == 2)); then
	"$DEPLOY_DIR/up" all "${up_args[@]}" >/dev/null
elif ((${#started[@]} == 1)); then
	"$DEPLOY_DIR/up" "${started[0]}" "${up_args[@]}" >/dev/null
fi
# Re-check both (harmless when up) and take their endpoints.
"$DEPLOY_DIR/up" all >"$INFRA/test.env"
cat "$INFRA/test.env"
set -a
# shellcheck disable=SC1091
source "$INFRA/test.env"
set +a
"$DEPLOY_DIR/kafka-topics.sh"
"$DEPLOY_DIR/hbase-schema.sh"

step "integration tests"
go test -tags integration "${gotestflags[@]}" ./...

if ((no_faults)); then
	exit 0
fi
# The fault suite stops and starts Kafka and HBase: the servers this run started (the other integration tests
# are done with them), or else a pair of its own on other ports, never servers someone else runs.
step "fault suite"
if ((${#started[@]} == 2)); then
	FRONTIER_TEST_FAULTS=1 go test -tags integration -run '^TestFaults$' -count=1 -timeout 15m "${gotestflags[@]}" ./e2e
else
	finfra=$INFRA-faults
	mkdir -p "$finfra"
	for n in kafka hbase; do
		# The jars deploy/up fetched for the main pair.
		[[ -e $finfra/$n ]] || ln -s "$INFRA/$n" "$finfra/$n"
	done
	faults_env=(
		FRONTIER_TEST_INFRA_DIR="$finfra"
		FRONTIER_TEST_KAFKA_PORT="${FRONTIER_TEST_FAULTS_KAFKA_PORT:-19192}"
		FRONTIER_TEST_KAFKA_CONTROLLER_PORT="${FRONTIER_TEST_FAULTS_KAFKA_CONTROLLER_PORT:-19193}"
		FRONTIER_TEST_HBASE_ZK_PORT="${FRONTIER_TEST_FAULTS_HBASE_ZK_PORT:-12181}"
		FRONTIER_TEST_HBASE_MASTER_PORT="${FRONTIER_TEST_FAULTS_HBASE_MASTER_PORT:-16100}"
		FRONTIER_TEST_HBASE_RS_PORT="${FRONTIER_TEST_FAULTS_HBASE_RS_PORT:-16120}"
		FRONTIER_TEST_HBASE_THRIFT_PORT="${FRONTIER_TEST_FAULTS_HBASE_THRIFT_PORT:-19090}"
	)
	env "${faults_env[@]}" "$DEPLOY_DIR/up" all >"$finfra/test.env"
	env "${faults_env[@]}" $(cat "$finfra/test.env") FRONTIER_TEST_FAULTS=1 \
		go test -tags integration -run '^TestFaults$' -count=1 -timeout 15m "${gotestflags[@]}" ./e2e
fi
