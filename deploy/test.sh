#!/usr/bin/env bash
# deploy/test.sh: Frontier's whole test suite, the command the README gives and .ci/run calls.
#
#   0. builds the Python oracle venvs (oracle/setup.sh; skipped when already built), records the upstream
#      test suites' calls and the property-run cases for the identity package to replay (oracle/record.sh;
#      FRONTIER_PROPERTY_CASES=100000 for a large property run)
#   1. go vet ./... (plain and with the integration tag), while step 0 runs
#   2. unit tests: go test -race ./..., then, without -race, the packages that have a race_on_test.go (tests
#      that shrink or skip single-goroutine or crawl-sized work under the race detector run whole there)
#   3. starts Kafka and HBase (deploy/up; fresh data dirs when CI=true), creates the topics and the schema
#   4. integration tests: the tests declared in the files only -tags integration builds, with FRONTIER_TEST_*
#      set (deploy/env); the unit tests ran in step 2 and are not run again; among them e2e TestDemo runs the
#      README's `standalone --demo` (~20 s), which exits non-zero when its crawl fails the demo site's
#      ground-truth check
#   5. the fault suite (e2e TestFaults, about 8 minutes): one crawl by the role binaries through a SIGKILL of
#      each role, a Kafka restart and HBase outages of 10, 40 and 90 s, in an order and at moments drawn from a
#      seed it logs (to replay them, run it alone with FRONTIER_FAULT_SEED=N: docs/reliability.md); it restarts
#      the servers of step 3 when this run started both, or else a pair of its own on other ports (in
#      $INFRA-faults; FRONTIER_TEST_FAULTS_*_PORT), stopped afterwards
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

# The Python oracle (Frontera, Scrapy, w3lib, warcio in .venv/) that the compatibility tests run against (a
# no-op when the venvs are already built from the same requirements), and the identity package's recordings.
# On a fresh clone it is mostly downloads and Python, so go vet runs meanwhile; its output follows vet's.
oracle() { "$ROOT/oracle/setup.sh" && "$ROOT/oracle/record.sh"; }
if ((!integration_only)); then
	step "python oracle, and go vet meanwhile"
	oracle_log=$(mktemp)
	oracle >"$oracle_log" 2>&1 &
	oracle_pid=$!
	trap 'kill "$oracle_pid" 2>/dev/null || true' EXIT
	vet_rc=0
	go vet ./... && go vet -tags integration ./... || vet_rc=$?
	oracle_rc=0
	wait "$oracle_pid" || oracle_rc=$?
	trap - EXIT
	cat "$oracle_log"
	rm -f "$oracle_log"
	if ((vet_rc || oracle_rc)); then
		echo "deploy/test.sh: go vet exit $vet_rc, python oracle exit $oracle_rc" >&2
		exit 1
	fi

	step "unit tests"
	if ((race)); then
		go test -race "${gotestflags[@]}" ./...
		# The packages whose tests do less under the race detector (race_on_test.go says what), whole.
		mapfile -t norace < <(find . -name race_on_test.go -not -path './.*' -printf '%h\n' | sort -u)
		if ((${#norace[@]})); then
			step "unit tests without -race: ${norace[*]}"
			go test "${gotestflags[@]}" "${norace[@]}"
		fi
	else
		go test "${gotestflags[@]}" ./...
	fi
fi

if ((unit_only)); then
	exit 0
fi
if ((integration_only)); then
	# The Frontera interop tests (e2e) run Frontera from the oracle venv.
	step "python oracle"
	oracle
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

# The tests of the files only the integration tag builds, in the packages that have them: every other test ran in
# the unit stage. One go test call, so that packages still run side by side; a name in the pattern that is also
# a unit test's in another of these packages runs that one too, which costs little and misses nothing.
integration_tests() {
	local f='{{.ImportPath}} {{.Dir}} {{join .TestGoFiles ","}},{{join .XTestGoFiles ","}}'
	local -A plain
	local p d files fs x n
	while read -r p d files; do plain[$p]=$files; done < <(go list -f "$f" ./...)
	itest_pkgs=() itest_names=()
	while read -r p d files; do
		IFS=, read -ra fs <<<"$files"
		n=${#itest_names[@]}
		for x in "${fs[@]}"; do
			[[ -z $x || ,${plain[$p]-}, == *,"$x",* ]] && continue
			mapfile -t -O "${#itest_names[@]}" itest_names < <(sed -nE 's/^func ((Test|Example|Fuzz)[A-Za-z0-9_]*)\(.*/\1/p' "$d/$x" | grep -vx TestMain)
		done
		if ((${#itest_names[@]} > n)); then itest_pkgs+=("$p"); fi
	done < <(go list -tags integration -f "$f" ./...)
}
integration_tests
step "integration tests: ${#itest_names[@]} tests in ${itest_pkgs[*]#github.com/frontiercrawl/frontier/}"
go test -tags integration -run "^($(IFS='|'; echo "${itest_names[*]}"))\$" "${gotestflags[@]}" "${itest_pkgs[@]}"

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
