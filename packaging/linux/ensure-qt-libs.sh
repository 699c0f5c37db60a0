#!/usr/bin/env bash
# Make sure the system libraries Qt's xcb platform plugin needs are present (Debian/Ubuntu).
# As root it installs them with apt; otherwise it prints the exact command and carries on
# (tests run offscreen and do not need them).
set -euo pipefail
PY="${1:-python3}"
[[ "$(uname -s)" == "Linux" ]] || exit 0
command -v dpkg-query >/dev/null 2>&1 || { echo "Not a Debian-based system: install Qt 6's xcb dependencies with your package manager."; exit 0; }

PKGS=(libegl1 libgl1 libfontconfig1 libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3
      libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
      libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libglib2.0-0)
missing=()
for pkg in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "Installing Qt system libraries: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
      || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
  else
    echo "Qt needs these system libraries to show a window. Install them with:"
    echo "  sudo apt-get install -y ${missing[*]}"
  fi
fi
# Fail loudly if Qt itself cannot load (offscreen needs no display).
QT_QPA_PLATFORM=offscreen "$PY" -c "from PySide6.QtWidgets import QApplication" \
  || { echo "PySide6 cannot load; see the messages above."; exit 1; }
