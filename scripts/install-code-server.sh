#!/usr/bin/env bash
# Installs what the real-VS-Code suite (vscode-extension/test/e2e) needs, from the package
# registries only: Debian's chromium, ripgrep and CJK fonts (plus the build tools code-server's
# native modules need), and code-server from npm into DIR. Prints the code-server executable
# as the last line.
#
#   scripts/install-code-server.sh DIR
#
# code-server 4.100.3 (= VS Code 1.100.3) is the newest release whose engines.node accepts
# Node 20. Its @vscode/ripgrep postinstall downloads a release archive from a host CI cannot
# reach; that module first looks in its download cache (<tmpdir>/vscode-ripgrep-cache-<version>),
# so a tarball of Debian's rg placed there under the expected archive name satisfies it.
# npm runs no dependency install script unless allowed: the outer install skips all scripts,
# then argon2 is rebuilt and code-server's own postinstall runs with an allow list (an npmrc
# of this run, never the user's).
set -euo pipefail
DIR=${1:?usage: install-code-server.sh DIR}
VERSION=4.100.3
RIPGREP_MODULE_VERSION=1.15.11
RIPGREP_ARCHIVE=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
BIN="$DIR/node_modules/code-server/out/node/entry.js"
if [ -f "$DIR/.installed-$VERSION" ]; then
  echo "code-server $VERSION already installed in $DIR"
  echo "$DIR/node_modules/.bin/code-server"
  exit 0
fi

need=()
for pkg in chromium ripgrep fonts-noto-cjk build-essential python3 pkg-config libsecret-1-dev libkrb5-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "== apt: ${need[*]}"
  apt-get update -q > "$DIR/apt.log" 2>&1 || { cat "$DIR/apt.log"; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >> "$DIR/apt.log" 2>&1 || { cat "$DIR/apt.log"; exit 1; }
fi

echo "== ripgrep from Debian into @vscode/ripgrep's download cache"
TMP=$(node -p 'require("os").tmpdir()')
CACHE="$TMP/vscode-ripgrep-cache-$RIPGREP_MODULE_VERSION"
if [ ! -f "$CACHE/$RIPGREP_ARCHIVE" ]; then
  mkdir -p "$CACHE" "$DIR/rg"
  cp "$(command -v rg)" "$DIR/rg/rg"
  tar -czf "$CACHE/$RIPGREP_ARCHIVE" -C "$DIR/rg" rg
fi

echo "== code-server $VERSION from npm into $DIR"
cd "$DIR"
[ -f package.json ] || echo '{"name": "nexa-e2e-code-server", "private": true}' > package.json
npm install --ignore-scripts --no-audit --no-fund --loglevel=error "code-server@$VERSION" > "$DIR/npm.log" 2>&1 || { cat "$DIR/npm.log"; exit 1; }
{
  [ -f "$HOME/.npmrc" ] && grep -v '^allow-scripts=' "$HOME/.npmrc"
  echo "allow-scripts=argon2,@parcel/watcher,@vscode/ripgrep,@vscode/spdlog,@vscode/deviceid,kerberos,native-watchdog,node-pty,vscode-extensions"
} > "$DIR/npmrc" || true
export NPM_CONFIG_USERCONFIG="$DIR/npmrc" npm_config_yes=true npm_config_nodedir=/usr
npm rebuild argon2 >> "$DIR/npm.log" 2>&1 || { cat "$DIR/npm.log"; exit 1; }
(
  cd node_modules/code-server
  # postinstall.sh checks the package manager and, as root, --unsafe-perm.
  export npm_config_unsafe_perm=true npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64"
  sh ./postinstall.sh > "$DIR/postinstall.log" 2>&1 || { cat "$DIR/postinstall.log"; exit 1; }
)
[ -x "$DIR/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] || { echo "ripgrep missing in code-server"; exit 1; }
[ -f "$BIN" ] || { echo "code-server entry point missing"; exit 1; }
touch "$DIR/.installed-$VERSION"
echo "$DIR/node_modules/.bin/code-server"
