#!/usr/bin/env bash
# Install SpecChat's launcher, AppStream metainfo and icons for the current user.
# Usage: install-desktop.sh PATH_TO_SPECCHAT_EXECUTABLE
set -euo pipefail
EXE="$(realpath "${1:?path to the specchat executable}")"
HERE="$(cd "$(dirname "$0")" && pwd)"
ICONS="$HERE/../../resources/icons"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$DATA/applications" "$DATA/metainfo"
sed "s|^Exec=specchat|Exec=$EXE|" "$HERE/app.specchat.SpecChat.desktop" > "$DATA/applications/app.specchat.SpecChat.desktop"
cp "$HERE/app.specchat.SpecChat.metainfo.xml" "$DATA/metainfo/"
for size in 16 24 32 48 64 128 256 512; do
  dir="$DATA/icons/hicolor/${size}x${size}/apps"
  mkdir -p "$dir" && cp "$ICONS/specchat-$size.png" "$dir/app.specchat.SpecChat.png"
done
mkdir -p "$DATA/icons/hicolor/scalable/apps" && cp "$ICONS/specchat.svg" "$DATA/icons/hicolor/scalable/apps/app.specchat.SpecChat.svg"
command -v update-desktop-database >/dev/null && update-desktop-database "$DATA/applications" || true
echo "Installed SpecChat launcher to $DATA/applications (runs $EXE)"
