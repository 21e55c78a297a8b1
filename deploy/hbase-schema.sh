#!/usr/bin/env bash
# deploy/hbase-schema.sh [--config configs/common.yaml] [--set key=value]…
#
# Creates Frontier's HBase namespace (hbase.namespace, if set) and tables (hbase.table_prefix + states, queue,
# metadata, domain_metadata) through the Thrift2 gateway; idempotent. The gateway is $FRONTIER_TEST_HBASE
# (with $FRONTIER_TEST_HBASE_TRANSPORT / _PROTOCOL) when set, else the config's hbase.addr. All arguments go
# to `frontierctl hbase-schema`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
build_ctl
args=()
[[ -n ${FRONTIER_TEST_HBASE:-} ]] && args+=(--addr "$FRONTIER_TEST_HBASE")
[[ -n ${FRONTIER_TEST_HBASE_TRANSPORT:-} ]] && args+=(--transport "$FRONTIER_TEST_HBASE_TRANSPORT")
[[ -n ${FRONTIER_TEST_HBASE_PROTOCOL:-} ]] && args+=(--protocol "$FRONTIER_TEST_HBASE_PROTOCOL")
cd "$ROOT"
exec "$CTL" hbase-schema "${args[@]}" "$@"
