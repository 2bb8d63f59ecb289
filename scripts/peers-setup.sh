#!/usr/bin/env bash
# Installs the live peers of the interoperability tier into .peers/ (gitignored):
#   .peers/venv          Python 3.11 with the pins of test/peers/requirements.txt
#   .peers/jars          the Delta jars of test/peers/pom.xml (fetched once with Maven, through the
#                        default ~/.m2 cache), less the jars the pyspark wheel already bundles, plus
#                        the atomic LogStore compiled from test/peers/AtomicLinkLogStore.java
#   .peers/versions.json what was installed, for the reports and docs/interoperability.md
#   .peers/stamp         the hash of the inputs above; a second run with the same inputs only checks it
#
# Usage: npm run peers:setup        (PEERS_FORCE=1 reinstalls whatever the stamp says)
# Needs: python3.11, java and javac 17, mvn. Exits non-zero with the missing tool named otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
peers=$root/.peers
src=$root/test/peers

missing=()
for tool in python3.11 java javac jar mvn; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "peers:setup needs ${missing[*]} on PATH; without .peers/ the peer tier skips" >&2
  exit 1
fi

inputs=("$src/requirements.txt" "$src/pom.xml" "$src/AtomicLinkLogStore.java" "$0")
hash=$( (cat "${inputs[@]}"; python3.11 --version; javac -version 2>&1) | sha256sum | cut -d' ' -f1)
if [ "${PEERS_FORCE:-}" != 1 ] && [ -f "$peers/stamp" ] && [ "$(cat "$peers/stamp")" = "$hash" ] \
  && [ -x "$peers/venv/bin/python" ] && [ -f "$peers/jars/delta-rlc-atomic-logstore.jar" ]; then
  echo "peers: up to date ($peers)"
  exit 0
fi
rm -f "$peers/stamp"
mkdir -p "$peers"

echo "== peers: Python venv ($(python3.11 --version))"
[ -x "$peers/venv/bin/python" ] || python3.11 -m venv "$peers/venv"
"$peers/venv/bin/pip" install --quiet --disable-pip-version-check -r "$src/requirements.txt"

echo "== peers: Delta jars (Maven)"
rm -rf "$peers/jars.new"
mvn --batch-mode --quiet -f "$src/pom.xml" dependency:copy-dependencies \
  -DoutputDirectory="$peers/jars.new" -DincludeScope=runtime
spark_jars=$("$peers/venv/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
# A jar the pyspark wheel already bundles (Scala, Hadoop, Parquet, Jackson, logging) stays Spark's
# own: two versions of one library on one classpath load whichever comes first.
for jar in "$peers/jars.new"/*.jar; do
  base=$(basename "$jar" .jar)
  name=${base%-*}
  if compgen -G "$spark_jars/$name-[0-9]*.jar" >/dev/null; then
    rm "$jar"
  fi
done

echo "== peers: atomic LogStore (javac $(javac -version 2>&1 | cut -d' ' -f2))"
classes=$peers/logstore-classes
rm -rf "$classes" && mkdir -p "$classes"
javac -nowarn --release 17 -d "$classes" -cp "$spark_jars/*:$peers/jars.new/*" "$src/AtomicLinkLogStore.java"
jar --create --file "$peers/jars.new/delta-rlc-atomic-logstore.jar" -C "$classes" .
rm -rf "$classes" "$peers/jars" && mv "$peers/jars.new" "$peers/jars"

"$peers/venv/bin/python" - "$peers/versions.json" <<'PY'
import json, subprocess, sys
# Importing proves the pins agree with each other (pyarrow, for one, refuses NumPy 1.x at import).
import deltalake, delta, numpy, pyarrow, pyspark  # noqa: F401
from importlib.metadata import version
java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
versions = {name: version(name) for name in ["pyspark", "delta-spark", "deltalake", "pyarrow", "numpy", "moto"]}
versions["python"] = sys.version.split()[0]
versions["java"] = java
with open(sys.argv[1], "w") as f:
    json.dump(versions, f, indent=2)
    f.write("\n")
print("== peers:", ", ".join(f"{k} {v}" for k, v in versions.items()))
PY
echo "$hash" > "$peers/stamp"
echo "peers: installed into $peers"
