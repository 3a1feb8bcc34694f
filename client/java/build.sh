#!/usr/bin/env bash
# Builds and tests the Java SDK with javac/java only (no Maven repository is
# needed; pom.xml describes the same build for users who have one).
#
#   client/java/build.sh            compile, jar, run the unit tests (offline)
#   client/java/build.sh jar        compile and jar only
#   client/java/build.sh scenario   compile, then run examples/Scenario.java
#                                   against MR_BASE_URL (e.g. after . .run/env)
#
# Tests run on JUnit 5's console launcher from Debian's junit5 package
# (apt-get install junit5), or from JUNIT_CONSOLE_JAR. MR_JAVA_BUILD_DIR
# moves the output (classes, jar, reports) out of client/java/build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${MR_JAVA_BUILD_DIR:-$here/build}
version=1.0.0
jar=$out/member-rewards-partner-$version.jar

rm -rf "$out/classes" "$out/test-classes" "$out/example-classes"
mkdir -p "$out/classes" "$out/test-classes" "$out/example-classes"

# Main sources: Java 17, every lint warning an error.
find "$here/src/main/java" -name '*.java' > "$out/main-sources.txt"
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d "$out/classes" @"$out/main-sources.txt"
printf 'Automatic-Module-Name: com.memberrewards.partner\nImplementation-Version: %s\n' "$version" > "$out/manifest.txt"
jar --create --file "$jar" --manifest "$out/manifest.txt" -C "$out/classes" .
[ "${1:-}" != jar ] || exit 0

javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "$jar" -d "$out/example-classes" "$here/examples/Scenario.java"

if [ "${1:-}" = scenario ]; then
  exec java -cp "$jar:$out/example-classes" Scenario
fi

console=${JUNIT_CONSOLE_JAR:-/usr/share/java/junit-platform-console-standalone.jar}
if [ ! -r "$console" ]; then
  echo "build.sh: JUnit 5 console launcher not found at $console (apt-get install junit5, or set JUNIT_CONSOLE_JAR)" >&2
  exit 2
fi
find "$here/src/test/java" -name '*.java' > "$out/test-sources.txt"
javac --release 17 -encoding UTF-8 -cp "$jar:$console" -d "$out/test-classes" @"$out/test-sources.txt"
cd "$here"  # the tests find ../test-vectors.json from here
java -Dmr.testVectors="$here/../test-vectors.json" -jar "$console" \
  --class-path "$jar:$out/test-classes" --scan-class-path --disable-banner --details=summary \
  --fail-if-no-tests --reports-dir "$out/test-reports"
