#!/usr/bin/env bash
# deploy/test.sh: Frontier's whole test suite, the command the README gives and .ci/run calls.
#
#   0. builds the Python oracle venvs (oracle/setup.sh; skipped when already built), records the upstream
#      test suites' calls and the property-run cases for the identity package to replay (oracle/record.sh;
#      FRONTIER_PROPERTY_CASES=100000 for a large property run)
#   1. go vet ./... (plain and with the integration tag), while step 0 runs
#   2. Kafka and HBase (deploy/up; fresh data dirs when CI=true), the topics and the schema, and the fault
#      suite's own pair of servers on other ports (in $INFRA-faults; FRONTIER_TEST_FAULTS_*_PORT): they start
#      in the background at the outset, while steps 0-1 run, and the suite waits for them after step 1
#   3. the fault suite (e2e TestFaults, about 9 minutes) on its own pair of servers, in the background beside
#      steps 4 and 5: one crawl by the role binaries through a SIGKILL of each role, a Kafka restart and HBase
#      outages of 10, 40 and 90 s, in an order and at moments drawn from a seed it logs (to replay them, run it
#      alone with FRONTIER_FAULT_SEED=N: docs/reliability.md); its output follows step 5's
#   4. unit tests: go test -race ./..., then, without -race, the packages that have a race_on_test.go (tests
#      that shrink or skip single-goroutine or crawl-sized work under the race detector run whole there)
#   5. integration tests: the tests declared in the files only -tags integration builds, with FRONTIER_TEST_*
#      set (deploy/env); the unit tests ran in step 4 and are not run again; among them e2e TestDemo runs the
#      README's `standalone --demo` (~20 s), which exits non-zero when its crawl fails the demo site's
#      ground-truth check
#   6. stops the servers it started (the fault suite's pair too, all at once), also on failure or interrupt;
#      servers that were already running are left running
#
# Exits non-zero on the first failure. Options (also as environment variables):
#   --no-race        (FRONTIER_TEST_RACE=0)   unit tests without the race detector
#   --unit           (FRONTIER_TEST_UNIT_ONLY=1) steps 0, 1 and 4 only: no servers, no integration tests
#   --integration    (FRONTIER_TEST_INTEGRATION_ONLY=1) the oracle and steps 2, 3 and 5 only (the fault
#                    suite then runs beside step 5 alone)
#   --keep           (FRONTIER_TEST_KEEP=1)   leave the servers this run started running
#   --no-faults      (FRONTIER_TEST_NO_FAULTS=1) skip step 3 (and its servers)
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

# Which servers were already up: those are someone else's and stay up. Decided before anything starts.
source "$DEPLOY_DIR/lib.sh"
started=()
for n in kafka hbase; do
	if [[ -z $(pid_of "$n") ]]; then
		started+=("$n")
	fi
done
# The fault suite's own pair of servers, on other ports and in $INFRA-faults, so that it can stop and start them
# while the integration tests use the main pair.
finfra=$INFRA-faults
faults_env=(
	FRONTIER_TEST_INFRA_DIR="$finfra"
	FRONTIER_TEST_KAFKA_PORT="${FRONTIER_TEST_FAULTS_KAFKA_PORT:-19192}"
	FRONTIER_TEST_KAFKA_CONTROLLER_PORT="${FRONTIER_TEST_FAULTS_KAFKA_CONTROLLER_PORT:-19193}"
	FRONTIER_TEST_HBASE_ZK_PORT="${FRONTIER_TEST_FAULTS_HBASE_ZK_PORT:-12181}"
	FRONTIER_TEST_HBASE_MASTER_PORT="${FRONTIER_TEST_FAULTS_HBASE_MASTER_PORT:-16100}"
	FRONTIER_TEST_HBASE_RS_PORT="${FRONTIER_TEST_FAULTS_HBASE_RS_PORT:-16120}"
	FRONTIER_TEST_HBASE_THRIFT_PORT="${FRONTIER_TEST_FAULTS_HBASE_THRIFT_PORT:-19090}"
)
# killtree PID stops a background job and everything it started.
killtree() {
	local c
	for c in $(pgrep -P "$1"); do killtree "$c"; done
	kill "$1" 2>/dev/null || true
}
servers_pid= oracle_pid= faults_pid=
cleanup() {
	local rc=$? p
	for p in $oracle_pid $faults_pid $servers_pid; do
		# Still running (a failure or an interrupt ended the run early): stop it; the servers a start had
		# already launched are stopped below, through their pid files.
		killtree "$p"
		wait "$p" 2>/dev/null || true
	done
	if ((!keep)) && ((!unit_only)); then
		# Each server's clean shutdown is mostly waiting, so they all stop at once.
		local what=() downs=() n
		((no_faults)) || what+=("the fault suite's pair")
		what+=("${started[@]}")
		if ((${#what[@]})); then
			step "stopping $(printf '%s, ' "${what[@]}" | sed 's/, $//')"
		fi
		if ((!no_faults)); then
			env "${faults_env[@]}" "$DEPLOY_DIR/down" all &
			downs+=($!)
		fi
		for n in "${started[@]}"; do
			"$DEPLOY_DIR/down" "$n" &
			downs+=($!)
		done
		for p in "${downs[@]}"; do
			wait "$p" || rc=1
		done
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# servers starts Kafka and HBase (fresh data dirs when CI=true), creates the topics and the schema, writes the
# endpoints to $INFRA/test.env, then starts the fault suite's pair and writes its endpoints to $finfra/test.env.
servers() {
	local up_args=()
	if [[ ${CI:-} == true ]]; then
		up_args+=(--fresh)
	fi
	if ((${#started[@]} == 2)); then
		"$DEPLOY_DIR/up" all "${up_args[@]}" >/dev/null
	elif ((${#started[@]} == 1)); then
		"$DEPLOY_DIR/up" "${started[0]}" "${up_args[@]}" >/dev/null
	fi
	# Re-check both (harmless when up) and take their endpoints.
	"$DEPLOY_DIR/up" all >"$INFRA/test.env.tmp"
	(
		set -a
		# shellcheck disable=SC1091
		source "$INFRA/test.env.tmp"
		set +a
		"$DEPLOY_DIR/kafka-topics.sh"
		"$DEPLOY_DIR/hbase-schema.sh"
	)
	mv "$INFRA/test.env.tmp" "$INFRA/test.env"
	if ((!no_faults)); then
		mkdir -p "$finfra"
		local n
		for n in kafka hbase; do
			# The jars deploy/up fetched for the main pair.
			[[ -e $finfra/$n ]] || ln -s "$INFRA/$n" "$finfra/$n"
		done
		env "${faults_env[@]}" "$DEPLOY_DIR/up" all "${up_args[@]}" >"$finfra/test.env"
	fi
}
# The servers start while the oracle, vet and the unit tests run: most of a start is waiting.
if ((!unit_only)); then
	servers_log=$(mktemp)
	servers >"$servers_log" 2>&1 &
	servers_pid=$!
fi

# wait_servers waits for the servers' start (once) and prints its log and the main pair's endpoints.
wait_servers() {
	[[ -n $servers_pid ]] || return 0
	step "servers"
	local rc=0
	wait "$servers_pid" || rc=$?
	servers_pid=
	cat "$servers_log"
	rm -f "$servers_log"
	if ((rc)); then
		echo "deploy/test.sh: starting the servers failed (exit $rc)" >&2
		exit 1
	fi
	cat "$INFRA/test.env"
}
# start_faults WHAT starts the fault suite (once, unless --no-faults) in the background on its own pair of
# servers, beside WHAT; its output is printed when it is waited for, after the integration tests. It stops and
# starts that pair itself, and its crawl is mostly waiting for outages to end and for a polite crawl, so it
# shares the cores well with the stage beside it.
start_faults() {
	((!no_faults)) && [[ -z $faults_pid ]] || return 0
	faults_log=$(mktemp)
	env "${faults_env[@]}" $(cat "$finfra/test.env") FRONTIER_TEST_FAULTS=1 \
		go test -tags integration -run '^TestFaults$' -count=1 -timeout 15m "${gotestflags[@]}" ./e2e >"$faults_log" 2>&1 &
	faults_pid=$!
	step "fault suite started (pid $faults_pid), beside $1"
}

# The Python oracle (Frontera, Scrapy, w3lib, warcio in .venv/) that the compatibility tests run against (a
# no-op when the venvs are already built from the same requirements), and the identity package's recordings.
# On a fresh clone it is mostly downloads and Python, so go vet runs meanwhile; its output follows vet's.
oracle() { "$ROOT/oracle/setup.sh" && "$ROOT/oracle/record.sh"; }
if ((!integration_only)); then
	step "python oracle, and go vet meanwhile"
	oracle_log=$(mktemp)
	oracle >"$oracle_log" 2>&1 &
	oracle_pid=$!
	vet_rc=0
	go vet ./... && go vet -tags integration ./... || vet_rc=$?
	oracle_rc=0
	wait "$oracle_pid" || oracle_rc=$?
	oracle_pid=
	cat "$oracle_log"
	rm -f "$oracle_log"
	if ((vet_rc || oracle_rc)); then
		echo "deploy/test.sh: go vet exit $vet_rc, python oracle exit $oracle_rc" >&2
		exit 1
	fi

	if ((!unit_only)); then
		# The fault suite runs beside the unit tests: it is mostly waiting (outages, a polite crawl), and the
		# unit tests leave the integration tests' stage to themselves.
		wait_servers
		start_faults "the unit tests"
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

wait_servers
set -a
# shellcheck disable=SC1091
source "$INFRA/test.env"
set +a

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
# go test starts the packages' test binaries in the order given, two at a time: e2e, by far the longest, first,
# so that it does not wait behind the others.
for i in "${!itest_pkgs[@]}"; do
	if [[ ${itest_pkgs[i]} == */e2e ]]; then
		itest_pkgs=("${itest_pkgs[i]}" "${itest_pkgs[@]:0:i}" "${itest_pkgs[@]:i+1}")
		break
	fi
done

# With --integration the fault suite starts here, beside the integration tests.
start_faults "the integration tests"
step "integration tests: ${#itest_names[@]} tests in ${itest_pkgs[*]#github.com/frontiercrawl/frontier/}"
it_rc=0
go test -tags integration -timeout 20m -run "^($(IFS='|'; echo "${itest_names[*]}"))\$" "${gotestflags[@]}" "${itest_pkgs[@]}" || it_rc=$?
faults_rc=0
if [[ -n $faults_pid ]]; then
	step "fault suite"
	wait "$faults_pid" || faults_rc=$?
	cat "$faults_log"
	rm -f "$faults_log"
fi
if ((it_rc || faults_rc)); then
	echo "deploy/test.sh: integration tests exit $it_rc, fault suite exit $faults_rc" >&2
	exit 1
fi
