"""The model library's words about what it lists: the count under its tables (the built-in
model counted, words in the plural only for more than one) and the note over the
Compatibility tab (what it shows, and why it is empty when it is)."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.library.local import LocalModel, PairVerdict


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the word for it: "1 model", "2 models", "no pairs" (``many``: an irregular plural)."""
    word = one if n == 1 else many or one + "s"
    return f"{n:,} {word}" if n else f"no {word}"


def library_status(models: Sequence[LocalModel], verdicts: Sequence[PairVerdict]) -> str:
    """The line under the library's tables, e.g. "3 models (1 built in) · 1 draft/target pair fits"."""
    builtin = sum(m.builtin for m in models)
    models_text = counted(len(models), "model").capitalize()
    if builtin and builtin == len(models):
        models_text += " (built in)"
    elif builtin:
        models_text += f" ({builtin:,} built in)"
    fits = sum(v.compatibility.compatible for v in verdicts)
    return f"{models_text} · {counted(fits, 'draft/target pair')} {'fits' if fits == 1 else 'fit'}"


def compatibility_note(models: Sequence[LocalModel], verdicts: Sequence[PairVerdict]) -> str:
    """What the Compatibility tab shows, and when it shows nothing, why."""
    what = (
        "Each pair of your model files, a larger one to answer (target) and a smaller one to draft "
        "for it: a draft model speeds the target up only when both share a vocabulary."
    )
    if verdicts:
        return what
    files = sum(not m.builtin for m in models)
    why = (
        "No model files yet"
        if not files
        else f"Only {counted(files, 'model file')}: a pair needs two"
        if files == 1
        else "No two of your files can be paired"
    )
    return (
        f"{what}\n{why}. Add a small and a large model of one family (the Catalog tab "
        "lists such pairs) to see whether they work together. The built-in demo model is not paired."
    )
