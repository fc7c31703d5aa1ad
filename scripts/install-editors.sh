#!/usr/bin/env bash
# Install the editors the real-client tests drive (Neovim, Emacs with eglot) when they are
# missing. Idempotent: does nothing when nvim, emacs and eglot are already there. Installs
# only as root with apt-get (CI runs as root); otherwise prints what is missing and exits 0,
# so the tests decide (they fail when NEXA_REQUIRE_EDITORS is set).
set -euo pipefail

missing=()
command -v nvim >/dev/null 2>&1 || missing+=(neovim)
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
if ! dpkg-query -W -f='${Status}' elpa-eglot 2>/dev/null | grep -q "install ok installed"; then
  missing+=(elpa-eglot)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-editors: neovim, emacs and eglot are installed"
  exit 0
fi

if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-editors: missing ${missing[*]}; run as root on Debian/Ubuntu to install them" >&2
  exit 0
fi

echo "install-editors: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3; do
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    break
  fi
  if [ "$attempt" = 3 ]; then
    echo "install-editors: apt-get failed for ${missing[*]}" >&2
    exit 1
  fi
  sleep $((attempt * 5))
done
command -v nvim >/dev/null && nvim --version | head -n 1
command -v emacs >/dev/null && emacs --version | head -n 1
