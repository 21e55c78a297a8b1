# shellcheck shell=bash
# Shared settings and helpers for deploy/up, deploy/down and deploy/env.
# Sourced, never run. Every setting can be overridden from the environment with a
# FRONTIER_TEST_* variable: configs.Load rejects any other unknown FRONTIER_* name.

set -euo pipefail

DEPLOY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$DEPLOY_DIR/.." && pwd)

INFRA=${FRONTIER_TEST_INFRA_DIR:-$ROOT/.infra}
DATA=${FRONTIER_TEST_DATA_DIR:-$INFRA/data}
RUN=$INFRA/run   # pid files and generated configs
LOGS=$INFRA/logs

HOST=127.0.0.1
KAFKA_PORT=${FRONTIER_TEST_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${FRONTIER_TEST_KAFKA_CONTROLLER_PORT:-19093}
HBASE_ZK_PORT=${FRONTIER_TEST_HBASE_ZK_PORT:-2181}
HBASE_MASTER_PORT=${FRONTIER_TEST_HBASE_MASTER_PORT:-16000}
HBASE_RS_PORT=${FRONTIER_TEST_HBASE_RS_PORT:-16020}
THRIFT_PORT=${FRONTIER_TEST_HBASE_THRIFT_PORT:-9090}
# The Thrift2 gateway speaks the binary protocol over the framed transport.
THRIFT_TRANSPORT=framed
THRIFT_PROTOCOL=binary
THRIFT_MAX_FRAME_MB=${FRONTIER_TEST_HBASE_THRIFT_MAX_FRAME_MB:-64}

KAFKA_HEAP=${FRONTIER_TEST_KAFKA_HEAP:-512m}
HBASE_HEAP=${FRONTIER_TEST_HBASE_HEAP:-1g}
THRIFT_HEAP=${FRONTIER_TEST_THRIFT_HEAP:-256m}

KAFKA_TIMEOUT=${FRONTIER_TEST_KAFKA_START_TIMEOUT:-120}
HBASE_TIMEOUT=${FRONTIER_TEST_HBASE_START_TIMEOUT:-240}

CTL=$INFRA/bin/frontierctl

log() { printf 'deploy: %s\n' "$*" >&2; }
die() { printf 'deploy: %s\n' "$*" >&2; exit 1; }

# pid_of NAME prints the pid recorded for NAME if that process is still ours
# (alive and carrying the -Dfrontier.deploy=NAME marker), else nothing.
pid_of() {
	local f=$RUN/$1.pid pid
	[[ -s $f ]] || return 0
	pid=$(<"$f")
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-Dfrontier.deploy=$1 "; then
		echo "$pid"
	fi
}

# port_busy PORT succeeds when something listens on 127.0.0.1:PORT (or any address).
port_busy() {
	(exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# tail_log NAME prints the end of a server's own log.
tail_log() {
	local f=$LOGS/$1.log
	if [[ -s $f ]]; then
		printf -- '---- last 60 lines of %s ----\n' "$f" >&2
		tail -n 60 "$f" >&2
		printf -- '---- end of %s ----\n' "$f" >&2
	else
		printf 'deploy: %s is empty or missing\n' "$f" >&2
	fi
}

# launch NAME CMD... starts CMD detached in its own session, stdout+stderr to
# $LOGS/NAME.log, and records its pid in $RUN/NAME.pid.
launch() {
	local name=$1
	shift
	mkdir -p "$RUN" "$LOGS"
	: >"$LOGS/$name.log"
	# The inner shell writes its own pid, then execs the JVM, so the pid is the JVM's.
	setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' launch "$RUN/$name.pid" "$@" \
		</dev/null >>"$LOGS/$name.log" 2>&1 &
	local i
	for i in $(seq 50); do
		[[ -s $RUN/$name.pid ]] && return 0
		sleep 0.1
	done
	die "$name: no pid file after launch"
}

# stop NAME [TIMEOUT] sends SIGTERM to the recorded pid, waits, then SIGKILL.
stop() {
	local name=$1 timeout=${2:-60} pid i
	pid=$(pid_of "$name")
	if [[ -z $pid ]]; then
		rm -f "$RUN/$name.pid"
		return 0
	fi
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < timeout * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name did not stop in ${timeout}s; killing pid $pid"
		kill -KILL "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	rm -f "$RUN/$name.pid"
}

# build_ctl compiles cmd/frontierctl (readiness probes, topics, schema) into .infra/bin.
build_ctl() {
	# go build is quick when nothing changed (build cache), and picks up changes in the packages it uses.
	{
		mkdir -p "$(dirname "$CTL")"
		if ! (cd "$ROOT" && go build -o "$CTL.new" ./cmd/frontierctl); then
			# A half-edited package elsewhere in the checkout should not stop the servers from starting.
			[[ -x $CTL ]] || die "cannot build cmd/frontierctl"
			log "cannot rebuild cmd/frontierctl; using the previous build $CTL"
			return 0
		fi
		mv "$CTL.new" "$CTL"
	}
}

env_lines() {
	cat <<EOT
FRONTIER_TEST_KAFKA=$HOST:$KAFKA_PORT
FRONTIER_TEST_HBASE=$HOST:$THRIFT_PORT
FRONTIER_TEST_HBASE_TRANSPORT=$THRIFT_TRANSPORT
FRONTIER_TEST_HBASE_PROTOCOL=$THRIFT_PROTOCOL
FRONTIER_TEST_HBASE_ZK=$HOST:$HBASE_ZK_PORT
FRONTIER_TEST_DEPLOY_DIR=$DEPLOY_DIR
EOT
}
