"""Which drafting a target (and draft) file supports, and why: inferred from the files.

The same reading as llama.cpp's ``common_speculative_types_from_gguf``: a target whose last
block has ``nextn.eh_proj`` carries an MTP head; a ``gemma4-assistant`` draft drafts for a
``gemma4`` target from its hidden states; any other same-vocabulary draft is a draft model;
prompt lookup needs nothing. A recurrent or hybrid target can speculate only where llama.cpp
can roll its state back (``llm_arch_supports_rs_rollback`` in ``src/llama-arch.cpp``).
No llama.cpp here: the model library and ``specchat models pair`` use it on files alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_app.engine.api import DRAFTER_PREFERENCE, DrafterKind
from desktop_app.engine.llama.compat import DraftCompatibility
from desktop_app.engine.llama.gguf_file import GGUFInfo

# llama.cpp's llm_arch_supports_rs_rollback (vendored in llama-cpp-python 0.3.36)
ROLLBACK_ARCHITECTURES = frozenset(
    {
        "kimi-k3",
        "qwen35",
        "qwen35moe",
        "qwen4exp",
        "deepseek4",
        "glm5-next",
        "nemotron_h",
        "nemotron_h_moe",
        "lfm2",
        "lfm2moe",
        "bailingmoe3",
    }
)
ASSISTANT_TARGETS = {"gemma4-assistant": "gemma4"}  # assistant architecture -> its target's


def has_mtp_layers(info: GGUFInfo) -> bool:
    """The file carries next-token-prediction layers it can draft with (its last block has
    ``nextn.eh_proj``, as llama.cpp checks)."""
    blocks = info.arch_int("block_count")
    if is_assistant(info) or not blocks:
        return False
    return f"blk.{blocks - 1}.nextn.eh_proj.weight" in {t.name for t in info.tensors}


def is_assistant(info: GGUFInfo) -> bool:
    return info.architecture in ASSISTANT_TARGETS


def assistant_mismatch(target: GGUFInfo, assistant: GGUFInfo) -> list[str]:
    """Why this assistant cannot draft for this target ([] when it can). Checked before any
    context is created: llama.cpp crashes on an assistant paired with another architecture."""
    wanted = ASSISTANT_TARGETS[assistant.architecture]
    if target.architecture != wanted:
        return [
            f"{assistant.path.name} is a {assistant.architecture} drafter: it needs a {wanted} target, "
            f"not {target.architecture}"
        ]
    width, wants = target.arch_int("embedding_length"), assistant.arch_int("embedding_length_out")
    if width is not None and wants is not None and width != wants:
        return [f"{assistant.path.name} reads {wants}-wide hidden states; {target.path.name} has {width}"]
    return []


def rollback_refusal(target: GGUFInfo, recurrent: bool) -> str | None:
    """Why a recurrent/hybrid target cannot speculate (None when it can)."""
    if recurrent and target.architecture not in ROLLBACK_ARCHITECTURES:
        return (
            f"{target.path.stem} ({target.architecture}) keeps a recurrent state that llama.cpp cannot roll "
            "back for this architecture, so rejected draft tokens cannot be undone: speculation stays off"
        )
    return None


@dataclass(frozen=True)
class DraftingSupport:
    """The drafters a target (with an optional draft file) supports, best first, and why."""

    drafters: tuple[DrafterKind, ...]
    reasons: tuple[str, ...]
    refusal: str | None = None

    def summary(self) -> str:
        if self.refusal:
            return self.refusal
        return ", ".join(k.label for k in self.drafters) + (f" ({'; '.join(self.reasons)})" if self.reasons else "")


def drafting_support(
    target: GGUFInfo,
    draft: GGUFInfo | None = None,
    recurrent: bool = False,
    vocabulary: DraftCompatibility | None = None,
) -> DraftingSupport:
    """What ``target`` (and ``draft``, whose vocabulary check is ``vocabulary``) can draft with."""
    refusal = rollback_refusal(target, recurrent)
    if refusal:
        return DraftingSupport((), (), refusal)
    kinds = {DrafterKind.NGRAM}
    reasons = []
    if has_mtp_layers(target):
        kinds.add(DrafterKind.MTP)
        reasons.append(f"{target.path.stem} has built-in MTP layers")
    if draft is not None:
        mismatch = assistant_mismatch(target, draft) if is_assistant(draft) else []
        if vocabulary is not None and not vocabulary.compatible:
            mismatch += vocabulary.reasons
        if mismatch:
            reasons.append(f"{draft.path.stem} cannot draft: " + "; ".join(mismatch))
        elif is_assistant(draft):
            kinds.add(DrafterKind.ASSISTANT)
            reasons.append(f"{draft.path.stem} is a Gemma 4 assistant for it")
        else:
            kinds.add(DrafterKind.MODEL)
            reasons.append(f"{draft.path.stem} shares its vocabulary")
    if recurrent:
        reasons.append("its hybrid cache rolls rejected drafts back")
    return DraftingSupport(tuple(k for k in DRAFTER_PREFERENCE if k in kinds), tuple(reasons))
