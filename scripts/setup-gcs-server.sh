#!/usr/bin/env bash
# Builds fake-gcs-server, the Google Cloud Storage emulator the gs:// tests run against, into
# .peers/bin/ (ignored by git) from its Go module, at the pinned version. Idempotent: a binary of
# that version already there is kept. Without Go, or without the module proxy, it says why and
# exits 0: the gs:// tests then skip with a one-line reason.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=v1.56.1
BIN_DIR="$PWD/.peers/bin"
BIN="$BIN_DIR/fake-gcs-server"
STAMP="$BIN_DIR/fake-gcs-server.version"

if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  echo "== fake-gcs-server $VERSION already built in .peers/bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "== fake-gcs-server: no Go toolchain here; the gs:// tests will skip" >&2
  exit 0
fi
mkdir -p "$BIN_DIR"
echo "== building fake-gcs-server $VERSION into .peers/bin (a few minutes the first time)"
if GOBIN="$BIN_DIR" GOFLAGS=-mod=mod go install "github.com/fsouza/fake-gcs-server@$VERSION"; then
  echo "$VERSION" >"$STAMP"
else
  echo "== fake-gcs-server: go install failed; the gs:// tests will skip" >&2
fi
