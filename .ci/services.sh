#!/usr/bin/env bash
# Preflight for the object-store tests. The tests start their own servers, each on a free port of
# 127.0.0.1, and stop them when done: Azurite (in memory, telemetry off) and, for S3, s3rver with
# the test suite's conditional-put guard (under OpenSSL's legacy provider). moto's server from the
# peer setup (.peers/venv) is checked only for its sequential conditional-put refusal: it checks
# and writes without a lock, so two concurrent puts of one key can both win. This script only checks that they can
# run on this machine, so that a missing piece fails here with a clear message rather than in the
# middle of the test run. It starts nothing and leaves nothing behind.
#
# To run the tests against servers that are already up instead, export
# DELTA_RLC_AZURITE_ENDPOINT (e.g. http://127.0.0.1:10000/devstoreaccount1) and/or
# DELTA_RLC_S3_ENDPOINT (a path-style endpoint that honours If-None-Match: *).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "services: $*" >&2
  exit 1
}

version() {
  node -p "require('./node_modules/$1/package.json').version" 2>/dev/null || true
}

azurite=$(version azurite)
s3rver=$(version s3rver)
[ -n "$azurite" ] || fail "azurite is not installed: run 'npm ci' (dev dependencies included)"
[ -n "$s3rver" ] || fail "s3rver is not installed: run 'npm ci' (dev dependencies included)"

node -e "const s = require('net').createServer(); s.on('error', () => process.exit(1)); s.listen(0, '127.0.0.1', () => s.close())" ||
  fail "cannot listen on 127.0.0.1; the test servers bind there only"

# s3rver encrypts listing continuation tokens with DES, which OpenSSL 3 keeps in its legacy provider.
node --openssl-legacy-provider -e "require('crypto').createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8))" 2>/dev/null ||
  fail "this Node build lacks OpenSSL's legacy provider (DES); s3rver cannot page listings"

if [ -x .peers/venv/bin/moto_server ] && [ -x .peers/venv/bin/python ]; then
  moto=$(.peers/venv/bin/python -c "import moto; print(moto.__version__)" 2>/dev/null) ||
    fail "moto_server is in .peers/venv but moto does not import: rerun 'npm run peers:setup'"
  s3="S3 on s3rver $s3rver with the conditional-put guard; moto $moto for its refusal test"
else
  s3="S3 on s3rver $s3rver with the conditional-put guard (moto not installed: its test skips)"
fi
echo "== services: azurite $azurite, s3rver $s3rver; $s3; the tests start and stop them on free 127.0.0.1 ports"
