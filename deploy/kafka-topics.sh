#!/usr/bin/env bash
# deploy/kafka-topics.sh [--config configs/common.yaml] [--set key=value]…
#
# Creates Frontier's topics (spider log, scoring log, spider feed, control) with the topic names and partition
# counts of the config (streams.*.topic, streams.*.partitions; FRONTIER_* variables and --set override them as
# for every role). Idempotent. A topic that already exists with a different partition count is an error that
# names both counts; it is never changed. Each topic gets its own retention (streams.*.retention: 168h for the
# spider log, scoring log and spider feed by default; the control topic is kept forever), existing ones too. The broker is $FRONTIER_TEST_KAFKA when set, else the config's
# kafka.brokers. All arguments go to `frontierctl topics`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
build_ctl
args=()
if [[ -n ${FRONTIER_TEST_KAFKA:-} ]]; then
	args+=(--brokers "$FRONTIER_TEST_KAFKA")
fi
cd "$ROOT"
exec "$CTL" topics "${args[@]}" "$@"
