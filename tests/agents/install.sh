#!/usr/bin/env bash
# Installs the coding agents `make agents-test` drives, at pinned versions, into a cache that
# later runs reuse: $SPECCHAT_AGENTS_CACHE (default ~/.cache/specchat/agents). Each tool lives in
# its own folder named after its version, so a bump installs afresh and an unchanged pin is a no-op.
# Prints nothing but errors when everything is already there.
set -euo pipefail

CLAUDE_CODE=2.1.332   # @anthropic-ai/claude-code
CODEX=0.171.0         # @openai/codex
QWEN_CODE=0.24.4      # @qwen-code/qwen-code
CONTINUE_CLI=1.5.47   # @continuedev/cli
AIDER=0.86.2          # aider-chat (PyPI)

CACHE="${SPECCHAT_AGENTS_CACHE:-$HOME/.cache/specchat/agents}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$CACHE"

npm_tool() {  # folder package version
  local dir="$CACHE/$1-$3"
  if [ ! -f "$dir/.done" ]; then
    echo "installing $2@$3 into $dir"
    rm -rf "$dir" && mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$2@$3" >/dev/null
    touch "$dir/.done"
  fi
  ln -sfn "$dir" "$CACHE/$1"
}

npm_tool claude-code @anthropic-ai/claude-code "$CLAUDE_CODE" &
npm_tool codex @openai/codex "$CODEX" &
npm_tool qwen-code @qwen-code/qwen-code "$QWEN_CODE" &
npm_tool continue-cli @continuedev/cli "$CONTINUE_CLI" &

dir="$CACHE/aider-$AIDER"
if [ ! -f "$dir/.done" ]; then
  echo "installing aider-chat==$AIDER into $dir"
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "aider-chat==$AIDER"
  touch "$dir/.done"
fi
ln -sfn "$dir" "$CACHE/aider"

fail=0
for job in $(jobs -p); do wait "$job" || fail=1; done
exit $fail
