// What a speculative verify pass costs in a llama.cpp build, through its C API: seconds per
// llama_decode of B rows with logits for every row, DEPTH tokens into the context, the median of REPS,
// each after a one-token pass (as a speculative loop meets it; docs/benchmarks/2026-12-05-verify-cols.md).
// Build against a llama.cpp build dir and run:
//   gcc -O2 -o pass_bench pass_bench.c -I SRC/include -I SRC/ggml/include -L BUILD/bin -lllama -lggml -lggml-base -Wl,-rpath,BUILD/bin
//   ./pass_bench MODEL THREADS DEPTH REPS FLASH_ATTN B1 B2 ...
#include "llama.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void * a, const void * b) { double x = *(const double *) a, y = *(const double *) b; return (x > y) - (x < y); }

static void decode(struct llama_context * ctx, struct llama_batch * batch, int n, int pos, int all) {
    batch->n_tokens = n;
    for (int i = 0; i < n; ++i) {
        batch->token[i] = 100 + (pos + i) % 1000;
        batch->pos[i] = pos + i;
        batch->n_seq_id[i] = 1;
        batch->seq_id[i][0] = 0;
        batch->logits[i] = all || i == n - 1;
    }
    if (llama_decode(ctx, *batch) != 0) { fprintf(stderr, "decode failed\n"); exit(1); }
}

int main(int argc, char ** argv) {
    if (argc < 7) { fprintf(stderr, "usage: pass_bench MODEL THREADS DEPTH REPS FA B...\n"); return 1; }
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.use_extra_bufts = false;  // no repacking (as --no-repack / LLAMA_ARG_REPACK=0)
    struct llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 4096; cp.n_batch = 512; cp.n_ubatch = 512;
    cp.n_threads = cp.n_threads_batch = atoi(argv[2]);
    cp.flash_attn_type = atoi(argv[5]) ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) return 1;
    const int depth = atoi(argv[3]), reps = atoi(argv[4]);
    struct llama_batch batch = llama_batch_init(512, 0, 1);
    for (int p = 0; p < depth; p += 256) decode(ctx, &batch, depth - p < 256 ? depth - p : 256, p, 0);
    llama_memory_t mem = llama_get_memory(ctx);
    double * t = malloc(sizeof(double) * reps);
    for (int a = 6; a < argc; ++a) {
        const int b = atoi(argv[a]);
        for (int r = 0; r < reps; ++r) {
            decode(ctx, &batch, 1, depth, 1);
            llama_memory_seq_rm(mem, 0, depth, -1);
            const double t0 = now();
            decode(ctx, &batch, b, depth, 1);
            t[r] = now() - t0;
            llama_memory_seq_rm(mem, 0, depth, -1);
        }
        qsort(t, reps, sizeof(double), cmp);
        printf("%d %.3f\n", b, t[reps / 2] * 1000);
        fflush(stdout);
    }
    return 0;
}
