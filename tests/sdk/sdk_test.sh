#!/usr/bin/env bash
# sdk_test.sh <what> <work dir> [test.env]: the four SDKs (client/python, go,
# typescript, java) and the Postman collection, for ctest (tests/sdk).
#
#   prepare            copies the npm packages (client/typescript, client/postman)
#                      into <work dir> and installs their locked dev tools with
#                      `npm ci` (typescript, newman), when the lock file changed
#   unit-<sdk>         the SDK's offline unit tests (postman: the collection's
#                      signing re-verified by a local server)
#   scenario-<sdk>     the shared scenario against the stack of test.env
#   newman             the Postman collection against the stack of test.env
#   quickstart-<sdk>   the SDK's section of docs/sdk-quickstart.md, as written
#                      there (snippets.py extracts it), against the stack
#   readme-<sdk>       the quick start of client/<sdk>/README.md, as written
#                      there (its program and run.sh), run twice against the
#                      stack, each time in an empty folder: its ids are fresh
#   packages           the partner packages (tools/package-sdk.sh, as
#                      tools/package.sh builds them) into <work dir>/packages
#   package-<sdk>      the README's install section (install.sh) from those
#                      packages into an empty project, then its quick start
#                      run from what was installed (run-installed.sh)
#
# Nothing is written into the source tree and nothing is cached outside
# <work dir>: npm's cache, Go's build cache, Python's bytecode, the Java and
# TypeScript builds all live there.
set -euo pipefail
what=${1:?what} work=${2:?work dir} test_env=${3:-}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"; work=$(cd "$work" && pwd)
client=$repo/client

export npm_config_cache=$work/npm-cache npm_config_update_notifier=false npm_config_fund=false \
       npm_config_audit=false
export GOCACHE=$work/go-cache GOPATH=$work/gopath GOTMPDIR=$work/go-tmp GOPROXY=off GOFLAGS="-modcacherw -buildvcs=false" \
       GOTELEMETRY=off
export PYTHONPYCACHEPREFIX=$work/pycache
mkdir -p "$GOTMPDIR"

# The npm packages are built where their node_modules are: a copy under
# <work dir>/client keeps the layout (../test-vectors.json) the tests expect.
copy_package() {  # copy_package <name>: client/<name> -> $work/client/<name>, keeping node_modules
  local dest=$work/client/$1
  mkdir -p "$dest"
  find "$dest" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
  tar -C "$client/$1" --exclude=./node_modules --exclude=./dist --exclude=./build-test --exclude=./build \
    --exclude=__pycache__ -cf - . | tar -C "$dest" -xf -
  cp "$client/test-vectors.json" "$work/client/test-vectors.json"
}
npm_install() {  # npm ci in the copy, skipped while the lock file is the one installed
  local dest=$work/client/$1
  if cmp -s "$dest/package-lock.json" "$dest/node_modules/.mr-installed-lock" 2>/dev/null; then
    return 0
  fi
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$dest/package-lock.json" "$dest/node_modules/.mr-installed-lock"
}

# The fixture's everyday club: club-a with its sandbox key A.
stack_env() {
  [ -r "$test_env" ] || { echo "sdk_test.sh: no test.env at '$test_env'" >&2; exit 2; }
  # shellcheck disable=SC1090
  . "$test_env"
  export MR_BASE_URL MR_KEY_ID=$MR_KEY_A_ID MR_KEY_SECRET=$MR_KEY_A_SECRET MR_PARTNER_REF=club-a
  export MR_WEBHOOK_HOST=127.0.0.1 MR_SCENARIO_TIMEOUT=${MR_SCENARIO_TIMEOUT:-90}
}

case "$what" in
  prepare)
    for p in typescript postman; do copy_package "$p"; npm_install "$p"; done
    ;;
  unit-python)
    cd "$client/python" && exec python3 -m unittest -v
    ;;
  unit-go)
    cd "$client/go" && go vet ./... && exec go test -count=1 ./...
    ;;
  unit-typescript)
    copy_package typescript
    cd "$work/client/typescript" && exec npm test
    ;;
  unit-java)
    MR_JAVA_BUILD_DIR=$work/java-unit exec "$client/java/build.sh" test
    ;;
  unit-postman)
    copy_package postman
    exec node "$work/client/postman/signature-check.js"
    ;;
  scenario-python)
    stack_env
    exec python3 "$client/python/examples/scenario.py"
    ;;
  scenario-go)
    stack_env
    (cd "$client/go" && go build -o "$work/go-scenario" ./examples/scenario)
    exec "$work/go-scenario"
    ;;
  scenario-typescript)
    stack_env
    copy_package typescript
    cd "$work/client/typescript" && exec npm run --silent scenario
    ;;
  scenario-java)
    stack_env
    MR_JAVA_BUILD_DIR=$work/java-scenario exec "$client/java/build.sh" scenario
    ;;
  newman)
    stack_env
    copy_package postman
    exec "$work/client/postman/run.sh" --reporters cli
    ;;
  quickstart-*)
    # docs/sdk-quickstart.md as written: the language's program and its
    # run.sh, in an empty folder, with sdk= the client/ folder (a copy here).
    lang=${what#quickstart-}
    stack_env
    copy_package "$lang"
    snippets=$work/quickstart/$lang-snippets scratch=$work/quickstart/$lang
    rm -rf "$snippets" "$scratch"; mkdir -p "$snippets" "$scratch"
    python3 "$repo/tests/sdk/snippets.py" "$repo/docs/sdk-quickstart.md" "$snippets" >/dev/null
    [ -f "$snippets/$lang/run.sh" ] || { echo "sdk_test.sh: no $lang/run.sh snippet in docs/sdk-quickstart.md" >&2; exit 1; }
    cp -R "$snippets/$lang/." "$scratch/"
    cd "$scratch"
    rc=0
    sdk=$work/client bash -euo pipefail run.sh > run.log 2>&1 || rc=$?
    cat run.log
    [ "$rc" -eq 0 ] || exit "$rc"
    # Its last word: the member.created webhook of its own member, verified.
    tail -n 1 run.log | grep -Eq '^verified member\.created evt_[0-9a-f]+ for qs-' ||
      { echo "sdk_test.sh: the $lang quick start did not end with its verified webhook" >&2; exit 1; }
    ;;
  readme-*)
    # The README's quick start as written: its snippets in an empty folder,
    # run.sh there, with sdk= the client/ folder (a copy here); then all of
    # it again in a second empty folder against the same stack, as a
    # partner runs it again (fixed ids would collide). Each run must end
    # with the webhook it verified for its own member.
    lang=${what#readme-}
    stack_env
    copy_package "$lang"
    snippets=$work/readme/$lang-snippets
    rm -rf "$snippets" "$work/readme/$lang"; mkdir -p "$snippets"
    python3 "$repo/tests/sdk/snippets.py" "$client/$lang/README.md" "$snippets" >/dev/null
    [ -f "$snippets/run.sh" ] || { echo "sdk_test.sh: no run.sh snippet in client/$lang/README.md" >&2; exit 1; }
    for run in 1 2; do
      scratch=$work/readme/$lang/run-$run
      mkdir -p "$scratch"; cp -R "$snippets/." "$scratch/"
      rc=0
      (cd "$scratch" && sdk=$work/client bash -euo pipefail run.sh > run.log 2>&1) || rc=$?
      sed "s/^/[run $run] /" "$scratch/run.log"
      [ "$rc" -eq 0 ] || exit "$rc"
      tail -n 1 "$scratch/run.log" | grep -Eq '^verified [a-z]+\.[a-z]+ evt_[0-9a-f]+ for qs-' ||
        { echo "sdk_test.sh: run $run of the $lang README did not end with its verified webhook" >&2; exit 1; }
    done
    ;;
  packages)
    rm -rf "$work/packages"
    exec "$repo/tools/package-sdk.sh" "$work/packages"
    ;;
  package-*)
    # An empty project, the packages the only thing of the SDK it sees:
    # packages= their folder, sdk= only for the TypeScript compiler (the
    # SDK's dev tool, in the prepared copy). mvn is not installed: the
    # Java install.sh (mvn install:install-file) is not run, its
    # run-installed.sh puts the packaged jar on the classpath instead.
    lang=${what#package-}
    stack_env
    [ -d "$work/packages" ] || { echo "sdk_test.sh: no $work/packages: run the packages step first" >&2; exit 2; }
    snippets=$work/package/$lang-snippets scratch=$work/package/$lang
    rm -rf "$snippets" "$scratch"; mkdir -p "$snippets" "$scratch"
    python3 "$repo/tests/sdk/snippets.py" "$client/$lang/README.md" "$snippets" >/dev/null
    for s in install.sh run-installed.sh quickstart.py main.go quickstart.mts Quickstart.java; do
      [ -f "$snippets/$s" ] && cp "$snippets/$s" "$scratch/"
    done
    [ -f "$scratch/install.sh" ] && [ -f "$scratch/run-installed.sh" ] ||
      { echo "sdk_test.sh: client/$lang/README.md lacks an install.sh or run-installed.sh snippet" >&2; exit 1; }
    rc=0
    (
      cd "$scratch"
      export packages=$work/packages sdk=$work/client
      if [ "$lang" != java ]; then bash -euo pipefail install.sh; fi
      bash -euo pipefail run-installed.sh
    ) > "$scratch/run.log" 2>&1 || rc=$?
    cat "$scratch/run.log"
    [ "$rc" -eq 0 ] || exit "$rc"
    tail -n 1 "$scratch/run.log" | grep -Eq '^verified [a-z]+\.[a-z]+ evt_[0-9a-f]+ for qs-' ||
      { echo "sdk_test.sh: the $lang package's quick start did not end with its verified webhook" >&2; exit 1; }
    ;;
  *)
    echo "sdk_test.sh: unknown step '$what'" >&2; exit 2
    ;;
esac
