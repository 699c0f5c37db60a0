"""The one speculation control: Off, Auto (the best drafter the loaded models offer) or one drafter.

It edits the two settings underneath, ``spec_mode`` (off / on / auto) and ``drafter`` (best or a
DrafterKind value): Off is ``spec_mode`` off; any other entry is the drafter, with ``spec_mode``
auto, or on when "Always draft this many" is ticked. Drafters the loaded models lack are greyed,
their reason in the entry's tooltip, and cannot be chosen.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel

from desktop_app.engine.api import DRAFTER_PREFERENCE, NO_DRAFTER, DrafterKind, LoadedModels, SpecMode
from desktop_app.store import Settings
from desktop_app.store.settings import BEST_DRAFTER
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.widgets.plain_text import plain_tip

OFF = SpecMode.OFF.value
AUTO = BEST_DRAFTER
OFF_LABEL = "Off"
AUTO_LABEL = "Auto (the best drafter available)"

REASON_ROLE = Qt.ItemDataRole.UserRole + 1  # an entry's tooltip text, unformatted


def choice_of(spec_mode: str, drafter: str) -> str:
    """The control's entry for saved settings: OFF, AUTO or a DrafterKind value. A drafter of
    "none" (how files before the one control said off) is off too."""
    if spec_mode == OFF or drafter == NO_DRAFTER:
        return OFF
    return drafter


def migrate(settings: Settings) -> bool:
    """Old settings' drafter "none" becomes ``spec_mode`` off with the best drafter; True when
    something changed (to be saved)."""
    if settings["drafter"] != NO_DRAFTER:
        return False
    settings.set("spec_mode", OFF)
    settings.set("drafter", BEST_DRAFTER)
    return True


def why_unavailable(kind: DrafterKind, models: LoadedModels) -> str:
    """Why ``kind`` cannot draft with the loaded models ("" when it can)."""
    if models.speculation_refusal:
        return models.speculation_refusal
    if kind in models.drafters:
        return ""
    if kind is DrafterKind.MODEL:
        if models.draft_error:
            return f"the draft model cannot draft: {models.draft_error}"
        return "needs a draft model: choose one in the model bar"
    if kind is DrafterKind.MTP:
        return f"{models.target.name} has no MTP head"
    if kind is DrafterKind.ASSISTANT:
        return "needs a Gemma 4 assistant file: choose one as the draft in the model bar"
    return "these models cannot use it"


def fill(box: QComboBox) -> None:
    """Off, Auto, then every drafter in Auto's order of preference."""
    box.clear()
    box.addItem(OFF_LABEL, OFF)
    box.setItemData(0, SpecMode.OFF.description, Qt.ItemDataRole.ToolTipRole)
    box.addItem(AUTO_LABEL, AUTO)
    box.setItemData(1, "Drafts with the best drafter the models offer, only when it pays", Qt.ItemDataRole.ToolTipRole)
    for kind in DRAFTER_PREFERENCE:
        box.addItem(kind.label, kind.value)
        box.setItemData(box.count() - 1, plain_tip(f"{kind.label}: {kind.term}"), Qt.ItemDataRole.ToolTipRole)


class SpeculationChoice(QObject):
    """Keeps the control (``box`` and the ``always`` check box) and the settings in step, and the
    entries' availability in step with the loaded models."""

    def __init__(
        self,
        settings: Settings,
        client: EngineClient,
        box: QComboBox,
        always: QCheckBox,
        note: QLabel,
        save: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._client = client
        self._box = box
        self._always = always
        self._note = note
        self._save = save
        self._had_draft = bool(settings["draft_path"])  # a draft was chosen before this session's load
        if migrate(settings):
            save()
        self._wanted = choice_of(settings["spec_mode"], settings["drafter"])
        self._updating = True
        fill(box)
        always.setChecked(settings["spec_mode"] == SpecMode.ON.value)
        if client.models is not None:  # otherwise every entry stands until the models say
            self._show_availability(client.models)
        self._select(self._wanted)
        self._updating = False
        box.currentIndexChanged.connect(lambda _i: self._chosen())
        always.toggled.connect(lambda _on: self._chosen())
        client.model_loaded.connect(self._on_models)

    @property
    def choice(self) -> str:
        return str(self._box.currentData())

    def reload(self) -> None:
        """Show the saved choice again (the Preferences window changed the settings)."""
        self._wanted = choice_of(self._settings["spec_mode"], self._settings["drafter"])
        self._updating = True
        self._always.setChecked(self._settings["spec_mode"] == SpecMode.ON.value)
        self._select(self._wanted)
        self._updating = False

    def _item_enabled(self, index: int) -> bool:
        model = self._box.model()
        assert isinstance(model, QStandardItemModel)
        item = model.item(index)
        return item is not None and item.isEnabled()

    def _show_availability(self, models: LoadedModels) -> None:
        model = self._box.model()
        assert isinstance(model, QStandardItemModel)
        refusal = models.speculation_refusal
        for index in range(self._box.count()):
            key = str(self._box.itemData(index))
            item = model.item(index)
            if key == OFF:
                continue
            if key == AUTO:
                why = refusal or ""
                tip = shown = why or "Drafts with the best drafter the models offer, only when it pays"
            else:
                kind = DrafterKind(key)
                why = why_unavailable(kind, models)
                tip = f"Not available: {why}" if why else f"{kind.label} guesses the next tokens"
                shown = f"{tip} ({kind.term})"  # the expert's name in the tooltip only
            item.setEnabled(not why)
            item.setToolTip(plain_tip(shown))
            item.setData(tip, REASON_ROLE)  # as written, for the note under the box

    def _select(self, key: str) -> None:
        """Show ``key``; an entry that cannot be chosen now shows Auto (or Off) and says so."""
        index = self._box.findData(key)
        self._note.clear()
        if index < 0 or not self._item_enabled(index):
            fallback = AUTO if self._item_enabled(self._box.findData(AUTO)) else OFF
            if index >= 0:
                reason = self._box.itemData(index, REASON_ROLE)
                shown = "Off" if fallback == OFF else "Auto"
                self._note.setText(f"{self._box.itemText(index)}: {reason}. Using {shown} instead.")
            index = self._box.findData(fallback)
        self._box.setCurrentIndex(index)
        self._always.setEnabled(self.choice != OFF)

    def _on_models(self, models: LoadedModels) -> None:
        had_draft, self._had_draft = self._had_draft, models.draft is not None
        self._updating = True
        self._show_availability(models)
        self._select(self._wanted)  # the user's choice stays saved: it returns with models that offer it
        self._updating = False
        if models.draft is not None and not had_draft and self._wanted in (OFF, DrafterKind.NGRAM.value):
            self._select(AUTO)  # a draft model was just chosen: Auto drafts with it (saved by _chosen)
            self._note.setText("A draft model was loaded: Auto drafts with it.")

    def _chosen(self) -> None:
        if self._updating:
            return
        self._wanted = self.choice
        self._note.clear()
        self._always.setEnabled(self.choice != OFF)
        self._store()

    def _store(self) -> None:
        """Save what the user chose (Off keeps the drafter chosen before it)."""
        choice = self.choice
        if choice != OFF:
            self._settings.set("drafter", choice)
        always = self._always.isChecked()
        self._settings.set("spec_mode", OFF if choice == OFF else SpecMode.ON.value if always else SpecMode.AUTO.value)
        self._save()
