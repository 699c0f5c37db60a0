"""Deterministic generator of small GGUF test models that share the default model's tokenizer.

Every model here is a llama-architecture network with random (seeded) weights and the real
SmolLM2 tokenizer and chat template copied from the embedded default model, so the engine's
tokenizer, template and compatibility code paths see the real thing.

- ``target``: ``TARGET_LAYERS`` layers.
- ``draft``: the target's first ``DRAFT_LAYERS`` layers plus the same embeddings and norm. The
  target's later layers are scaled down (``TAIL_SCALE``), so they nudge the residual stream and
  the two models' greedy choices agree on most, not all, positions.
- ``draft_other_vocab``: a draft whose vocabulary has some token texts swapped.
- ``thinking``: the target's weights with a Qwen3.5-style thinking template (``THINKING_TEMPLATE``).
- ``fim``: the target's weights with fill-in-the-middle tokens declared (``_with_fim_tokens``).
- ``tools``: the target's weights with Qwen 2.5's tool-calling template (``TOOLS_TEMPLATE``).
- ``tool_tokens``: ``tools`` with Qwen 2.5's ``<tool_call>`` / ``</tool_call>`` tokens
  (``_with_tool_tokens``): one token each, which a ``logit_bias`` can favour.
- ``truncated``: a valid header cut off before the tensor data ends.
- ``not_gguf``: a text file with a .gguf name.

No weights are committed: tests build these into a temp dir once per session (< 5 s).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

from desktop_app.engine.llama.default_model import default_model_path
from desktop_app.engine.llama.gguf_file import read_gguf

N_EMBD = 64
N_HEAD = 4
N_HEAD_KV = 2
N_FF = 192
TARGET_LAYERS = 6
DRAFT_LAYERS = 3
TAIL_SCALE = 0.1
SEED = 1234
CONTEXT = 4096


@dataclass(frozen=True)
class Tokenizer:
    """Tokenizer metadata read from a GGUF file, ready to be written into another."""

    model: str
    pre: str | None
    tokens: list[str]
    token_types: list[int]
    merges: list[str]
    bos_id: int
    eos_id: int
    add_bos: bool
    chat_template: str | None
    fim: tuple[int, int, int] | None = None  # fill-in-the-middle token ids (prefix, suffix, middle)


def read_tokenizer(path: Path) -> Tokenizer:
    info = read_gguf(path)
    return Tokenizer(
        model=info.get("tokenizer.ggml.model"),
        pre=info.get("tokenizer.ggml.pre"),
        tokens=list(info.get("tokenizer.ggml.tokens")),
        token_types=list(info.get("tokenizer.ggml.token_type")),
        merges=list(info.get("tokenizer.ggml.merges", [])),
        bos_id=int(info.get("tokenizer.ggml.bos_token_id")),
        eos_id=int(info.get("tokenizer.ggml.eos_token_id")),
        add_bos=bool(info.get("tokenizer.ggml.add_bos_token", False)),
        chat_template=info.get("tokenizer.chat_template"),
    )


def _write_tokenizer(writer: gguf.GGUFWriter, tok: Tokenizer) -> None:
    writer.add_tokenizer_model(tok.model)
    if tok.pre:
        writer.add_tokenizer_pre(tok.pre)
    writer.add_token_list(tok.tokens)
    writer.add_token_types(tok.token_types)
    if tok.merges:
        writer.add_token_merges(tok.merges)
    writer.add_bos_token_id(tok.bos_id)
    writer.add_eos_token_id(tok.eos_id)
    writer.add_add_bos_token(tok.add_bos)
    if tok.chat_template:
        writer.add_chat_template(tok.chat_template)
    if tok.fim:
        for name, token in zip(("pre", "suf", "mid"), tok.fim, strict=True):
            writer.add_uint32(f"tokenizer.ggml.fim_{name}_token_id", token)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    n_layers: int
    n_embd: int = N_EMBD
    n_ff: int = N_FF
    n_head: int = N_HEAD
    n_head_kv: int = N_HEAD_KV
    tail_from: int = DRAFT_LAYERS
    tail_scale: float = TAIL_SCALE
    seed: int = SEED


def _weights(spec: ModelSpec, n_vocab: int) -> dict[str, np.ndarray]:
    """Seeded weights; layer i is the same in every model built from the same seed and shape."""
    rng = np.random.default_rng(spec.seed)
    d, ff = spec.n_embd, spec.n_ff
    d_kv = d // spec.n_head * spec.n_head_kv
    tensors: dict[str, np.ndarray] = {
        "token_embd.weight": rng.normal(0.0, 1.0, (n_vocab, d)).astype(np.float32),
        "output_norm.weight": np.ones(d, dtype=np.float32),
        # An untied output head: with tied embeddings a random model just repeats its input.
        "output.weight": rng.normal(0.0, 1.0, (n_vocab, d)).astype(np.float32),
    }
    for i in range(spec.n_layers):
        layer_rng = np.random.default_rng([spec.seed, i])
        scale = 1.0 if i < spec.tail_from else spec.tail_scale

        def mat(rows: int, cols: int, gain: float = 1.0, layer_rng: np.random.Generator = layer_rng) -> np.ndarray:
            return (layer_rng.normal(0.0, gain / np.sqrt(cols), (rows, cols))).astype(np.float32)

        tensors.update(
            {
                f"blk.{i}.attn_norm.weight": np.ones(d, dtype=np.float32),
                f"blk.{i}.attn_q.weight": mat(d, d, 2.0),
                f"blk.{i}.attn_k.weight": mat(d_kv, d, 2.0),
                f"blk.{i}.attn_v.weight": mat(d_kv, d),
                f"blk.{i}.attn_output.weight": mat(d, d) * scale,
                f"blk.{i}.ffn_norm.weight": np.ones(d, dtype=np.float32),
                f"blk.{i}.ffn_gate.weight": mat(ff, d),
                f"blk.{i}.ffn_up.weight": mat(ff, d),
                f"blk.{i}.ffn_down.weight": mat(d, ff) * scale,
            }
        )
    return tensors


_QUANT = {"token_embd.weight": gguf.GGMLQuantizationType.Q8_0, "output.weight": gguf.GGMLQuantizationType.Q4_0}


def write_model(path: Path, spec: ModelSpec, tokenizer: Tokenizer) -> Path:
    """Write one llama-architecture GGUF (quantized 2-D weights, F32 norms) to ``path``."""
    tokens = tokenizer.tokens
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"specchat-test-{spec.name}")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(spec.n_embd)
    writer.add_block_count(spec.n_layers)
    writer.add_feed_forward_length(spec.n_ff)
    writer.add_head_count(spec.n_head)
    writer.add_head_count_kv(spec.n_head_kv)
    writer.add_rope_dimension_count(spec.n_embd // spec.n_head)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    _write_tokenizer(writer, tokenizer)
    for name, array in _weights(spec, len(tokens)).items():
        # 2-D weights quantized: llama.cpp's quantized CPU kernels give bit-identical rows for
        # batched and single-token decodes (its F32 matmuls do not), as real GGUF models do.
        qtype = _QUANT.get(name, gguf.GGMLQuantizationType.Q8_0 if array.ndim == 2 else None)
        if qtype is not None:
            writer.add_tensor(name, gguf.quants.quantize(array, qtype), raw_dtype=qtype)
        else:
            writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _swapped_vocab(tokenizer: Tokenizer) -> Tokenizer:
    """Same tokenizer with the texts of ids 300..309 rotated: a different vocabulary."""
    tokens = list(tokenizer.tokens)
    block = tokens[300:310]
    tokens[300:310] = block[1:] + block[:1]
    return dataclasses.replace(tokenizer, tokens=tokens)


def _rename_architecture(data: bytes, new: bytes) -> bytes:
    """Patch general.architecture's value ("llama") in place: a valid GGUF llama.cpp cannot run."""
    key = b"general.architecture"
    at = data.index(key) + len(key) + 4 + 8  # value type (u32) and string length (u64)
    assert data[at : at + 5] == b"llama" and len(new) == 5
    return data[:at] + new + data[at + 5 :]


@dataclass(frozen=True)
class FactoryModels:
    target: Path
    draft: Path
    draft_other_vocab: Path
    truncated: Path
    not_gguf: Path
    unknown_arch: Path
    looping_template: Path
    thinking: Path
    fim: Path
    tools: Path
    tool_tokens: Path


# A chat template that renders for hours (Jinja's sandbox does not stop CPU bombs).
LOOPING_TEMPLATE = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}hi"

# A thinking model's template, as Qwen3.5's is written (ChatML, which the SmolLM2 vocabulary has):
# the generation prompt opens "<think>" unless enable_thinking is false (then it is closed empty);
# an earlier answer's reasoning (reasoning_content, or before "</think>" in its content) is kept
# only after the last question, so earlier turns reach the model without it.
THINKING_TEMPLATE = """{%- set ns = namespace(last_query=-1) -%}
{%- for message in messages -%}{%- if message.role == 'user' -%}{%- set ns.last_query = loop.index0 -%}{%- endif -%}{%- endfor -%}
{%- for message in messages -%}
{%- if message.role == 'assistant' -%}
{%- set content = message.content -%}
{%- set reasoning = '' -%}
{%- if message.reasoning_content is defined and message.reasoning_content is not none -%}
{%- set reasoning = message.reasoning_content -%}
{%- elif '</think>' in content -%}
{%- set reasoning = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') -%}
{%- set content = content.split('</think>')[-1].lstrip('\n') -%}
{%- endif -%}
{%- if loop.index0 > ns.last_query and reasoning -%}
{{- '<|im_start|>assistant\n<think>\n' + reasoning.strip('\n') + '\n</think>\n\n' + content + '<|im_end|>\n' -}}
{%- else -%}
{{- '<|im_start|>assistant\n' + content + '<|im_end|>\n' -}}
{%- endif -%}
{%- else -%}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\n\n</think>\n\n' -}}
{%- else -%}{{- '<think>\n' -}}{%- endif -%}
{%- endif -%}"""

# Qwen 2.5 Instruct's template (Hermes-style tool calling) as it ships: the tools in the system
# message, calls as <tool_call> JSON blocks, tool results in a user turn as <tool_response>.
TOOLS_TEMPLATE = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""


def build_all(directory: Path) -> FactoryModels:
    """Build every test model into ``directory`` (existing files are reused)."""
    directory.mkdir(parents=True, exist_ok=True)
    out = FactoryModels(
        target=directory / "target.gguf",
        draft=directory / "draft.gguf",
        draft_other_vocab=directory / "draft-other-vocab.gguf",
        truncated=directory / "truncated.gguf",
        not_gguf=directory / "not-a-model.gguf",
        unknown_arch=directory / "unknown-arch.gguf",
        looping_template=directory / "looping-template.gguf",
        thinking=directory / "thinking.gguf",
        fim=directory / "fim.gguf",
        tools=directory / "tools.gguf",
        tool_tokens=directory / "tool-tokens.gguf",
    )
    if all(p.exists() for p in vars(out).values()):
        return out
    tokenizer = read_tokenizer(default_model_path())
    write_model(out.target, ModelSpec("target", TARGET_LAYERS), tokenizer)
    write_model(out.draft, ModelSpec("draft", DRAFT_LAYERS), tokenizer)
    write_model(out.draft_other_vocab, ModelSpec("draft-other", DRAFT_LAYERS), _swapped_vocab(tokenizer))
    data = out.target.read_bytes()
    out.truncated.write_bytes(data[: len(data) * 2 // 3])
    out.not_gguf.write_text("This is not a model file, just text with a .gguf name.\n")
    out.unknown_arch.write_bytes(_rename_architecture(out.draft.read_bytes(), b"zebra"))
    looping = dataclasses.replace(tokenizer, chat_template=LOOPING_TEMPLATE)
    write_model(out.looping_template, ModelSpec("draft", DRAFT_LAYERS), looping)
    thinking = dataclasses.replace(tokenizer, chat_template=THINKING_TEMPLATE)
    write_model(out.thinking, ModelSpec("target", TARGET_LAYERS), thinking)
    write_model(out.fim, ModelSpec("target", TARGET_LAYERS), _with_fim_tokens(tokenizer))
    with_tools = dataclasses.replace(tokenizer, chat_template=TOOLS_TEMPLATE)
    write_model(out.tools, ModelSpec("target", TARGET_LAYERS), with_tools)
    write_model(out.tool_tokens, ModelSpec("target", TARGET_LAYERS), _with_tool_tokens(with_tools))
    return out


TOOL_CALL_TOKENS = (14, 15)  # <tool_call> and </tool_call> in the tool_tokens model


def _with_tool_tokens(tok: Tokenizer) -> Tokenizer:
    """The vocabulary with two unused special tokens (Jupyter markers) renamed ``<tool_call>`` and
    ``</tool_call>``, user-defined tokens as Qwen 2.5's vocabulary has them (one token each, shown
    as text): what a client's ``logit_bias`` names to make this random model start a call."""
    tokens, types = list(tok.tokens), list(tok.token_types)
    for token, text in zip(TOOL_CALL_TOKENS, ("<tool_call>", "</tool_call>"), strict=True):
        tokens[token], types[token] = text, gguf.TokenType.USER_DEFINED
    return dataclasses.replace(tok, tokens=tokens, token_types=types)


def _with_fim_tokens(tok: Tokenizer) -> Tokenizer:
    """The vocabulary with three unused special tokens (Jupyter markers) renamed and declared as
    StarCoder's fill-in-the-middle tokens, for a model that can fill in the middle."""
    tokens = list(tok.tokens)
    ids = (11, 12, 13)
    for token, text in zip(ids, ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"), strict=True):
        tokens[token] = text
    return dataclasses.replace(tok, tokens=tokens, fim=ids)


def build_bench_pair(directory: Path) -> tuple[Path, Path]:
    """A bigger pair for benchmarks (not tests): 16 layers of width 256, and its first 2 as draft."""
    directory.mkdir(parents=True, exist_ok=True)
    shape = dict(n_embd=256, n_ff=1024, n_head=8, n_head_kv=4, tail_from=2, tail_scale=0.06)
    tokenizer = read_tokenizer(default_model_path())
    target = write_model(directory / "bench-target.gguf", ModelSpec("bench-target", 16, **shape), tokenizer)  # type: ignore[arg-type]
    draft = write_model(directory / "bench-draft.gguf", ModelSpec("bench-draft", 2, **shape), tokenizer)  # type: ignore[arg-type]
    return target, draft


def build_deep_pair(directory: Path) -> tuple[Path, Path]:
    """A deep target (300 narrow layers) and its first 2 layers as draft: after 298 nudging
    layers the draft agrees too rarely to pay on a CPU (benchmarks: a draft Auto leaves unused)."""
    directory.mkdir(parents=True, exist_ok=True)
    shape = {"n_embd": 128, "n_ff": 512, "n_head": 4, "n_head_kv": 2}
    tokenizer = read_tokenizer(default_model_path())
    target = write_model(directory / "deep-target.gguf", ModelSpec("deep-target", 300, **shape), tokenizer)
    draft = write_model(directory / "deep-draft.gguf", ModelSpec("deep-draft", 2, **shape), tokenizer)
    return target, draft


if __name__ == "__main__":
    import sys
    import time

    start = time.perf_counter()
    if len(sys.argv) > 2 and sys.argv[1] == "--hybrid-mtp":
        from tests.factory_hybrid import build_hybrid_mtp

        print(build_hybrid_mtp(Path(sys.argv[2])))
        sys.exit(0)
    if len(sys.argv) > 2 and sys.argv[1] in ("--bench-pair", "--deep-pair"):
        for path in (build_bench_pair if sys.argv[1] == "--bench-pair" else build_deep_pair)(Path(sys.argv[2])):
            print(f"{path.stat().st_size / 1e6:7.2f} MB  {path}")
        sys.exit(0)
    models = build_all(Path(sys.argv[1] if len(sys.argv) > 1 else "build/test-models"))
    print(f"built in {time.perf_counter() - start:.2f}s")
    for name, path in vars(models).items():
        print(f"{name:18} {path.stat().st_size / 1e6:7.2f} MB  {path}")
