#!/usr/bin/env bash
# oracle/setup.sh: builds the Python oracle venvs (git-ignored) used to generate and cross-check test vectors.
#   .venv/oracle     frontera 0.8.1 + scrapy + w3lib (current, what `pip install frontera scrapy` installs today)
#   .venv/w3lib122   w3lib 1.22.0 alone (Frontera's era), for the legacy canonicalisation mode
# Idempotent: a venv whose stamp matches this file's requirements is left alone.
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
echo "oracle venvs ready: .venv/oracle .venv/w3lib122"
