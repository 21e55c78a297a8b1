#!/usr/bin/env bash
# oracle/record.sh: runs the upstream projects' own test suites against their live code and records every
# identity call they make (oracle/upstream_record.py), then generates the property-run cases
# (oracle/gen_property.py), for identity/upstream_test.go and identity/property_test.go to replay through
# Frontier.
#
#   .oracle/upstream.jsonl   every canonicalize_url / fingerprint call of w3lib 2.5.0 tests/test_url.py and
#                            Scrapy 2.19.0 tests/test_utils_request.py, with the live result
#   .oracle/property.jsonl   hypothesis-generated URLs (fixed seed) with w3lib's canonical forms and
#                            Frontera's fingerprints; FRONTIER_PROPERTY_CASES cases (default 3000), then
#                            FRONTIER_PROPERTY_REQUESTS Scrapy requests (default 1000) with their fingerprints
#
# Needs oracle/setup.sh first (the venv with pytest and hypothesis, the unpacked source distributions).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=$ROOT/.venv/oracle/bin/python
OUT=$ROOT/.oracle
SRC=$OUT/src
rm -f "$OUT/upstream.jsonl" "$OUT/upstream.jsonl.tmp" "$OUT/property.jsonl"

# Upstream tests that are not run, with their reason, are the "deselect" lines of the exclusions file.
deselect=()
while IFS=$'\t' read -r kind what _; do
	if [[ $kind == deselect ]]; then deselect+=(--deselect "$what"); fi
done <"$ROOT/oracle/upstream_exclusions.tsv"

suite() { # name dir pytest-args...
	local name=$1 dir=$2
	shift 2
	local rc=0
	(cd "$dir" && UPSTREAM_SUITE=$name UPSTREAM_RECORD_OUT=$OUT/upstream.jsonl.tmp PYTHONPATH=$ROOT/oracle \
		PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest -q -p no:cacheprovider -p upstream_record \
		--hypothesis-seed=0 "${deselect[@]}" "$@" >"$OUT/$name.log" 2>&1) || rc=$?
	tail -n 1 "$OUT/$name.log"
	# An upstream test that fails still made its calls, and they were recorded with their live results
	# (the replay checks Frontier against those, not against the test's expectations): a warning. A
	# suite that did not run (usage or collection error, interrupt) is an error.
	if ((rc == 1)); then
		echo "oracle/record.sh: warning: some $name tests failed against their own package, see $OUT/$name.log" >&2
	elif ((rc != 0)); then
		echo "oracle/record.sh: the $name suite failed (exit $rc), see $OUT/$name.log" >&2
		tail -n 30 "$OUT/$name.log" >&2
		exit 1
	fi
}
suite w3lib "$SRC/w3lib-2.5.0" tests/test_url.py
# Scrapy's root conftest.py starts mock servers and needs test-only packages; test_utils_request.py needs
# none of that, and its pyproject addopts name a plugin (--reactor) that is not installed.
suite scrapy "$SRC/scrapy-2.19.0" --noconftest -o addopts= tests/test_utils_request.py
mv "$OUT/upstream.jsonl.tmp" "$OUT/upstream.jsonl"
echo "recorded $(wc -l <"$OUT/upstream.jsonl") upstream calls in .oracle/upstream.jsonl"

"$PY" -W ignore::DeprecationWarning "$ROOT/oracle/gen_property.py" --cases "${FRONTIER_PROPERTY_CASES:-3000}" \
	--requests "${FRONTIER_PROPERTY_REQUESTS:-1000}" --out "$OUT/property.jsonl"
