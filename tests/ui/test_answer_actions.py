"""What a LM Studio or Jan user looks for on a message (issue 49), in the real window with the
real engine process (factory models) and the real SQLite file: *Continue* an answer cut short,
*Edit* an answer, *Branch* a conversation into a new one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.engine.api import FinishReason, GenerateRequest
from desktop_app.ui.composer.input_drafts import EDITING_ANSWER
from desktop_app.ui.transcript.message_actions import actions_of
from desktop_app.ui.transcript.version_switch import VersionSwitch
from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, send_and_wait, type_and_send

QUESTION = "Tell me a story about a robot."


def click(qtbot: Any, widget: Any) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def shot(window: Any, name: str) -> None:
    """The window as it looks now, as a PNG in $SPECCHAT_SHOTS (when set) to look at."""
    folder = os.environ.get("SPECCHAT_SHOTS")
    if folder:
        window.chat_view.lay_out()
        window.grab().save(str(Path(folder) / f"{name}.png"))


def transcript(window: Any) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in window.chat_view.messages]


def stored(window: Any, conversation: int | None = None) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in window.history.messages(conversation or window.session.conversation_id)]


def continue_by(qtbot: Any, window: Any, key: bool) -> str:
    """Continue the last answer with its button (or Ctrl+Shift+Return): the continuation's text."""
    with next_answer(qtbot, window.client) as watch:
        if key:
            qtbot.keyClick(
                window.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
            )
        else:
            click(qtbot, actions_of(last_answer(window)).continue_button)
    qtbot.waitUntil(lambda: not window.session.busy)
    assert watch.done is not None, watch.failure
    return str(watch.done.text)


def test_continue_grows_the_answer_as_one_longer_answer_would(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=18, temperature=0)
    whole = send_and_wait(qtbot, window, QUESTION).text
    click(qtbot, window.conversations.new_button)
    window.settings.set("max_tokens", 6)
    cut = send_and_wait(qtbot, window, QUESTION).text
    answer = last_answer(window)
    button = actions_of(answer).continue_button
    assert button is not None and button.isVisible() and button.isEnabled()  # it stopped for its length
    assert whole.startswith(cut) and len(whole) > len(cut)
    requests: list[GenerateRequest] = []
    generate = window.client.generate
    window.client.generate = lambda request: (requests.append(request), generate(request))[1]
    continue_by(qtbot, window, key=False)
    assert requests[-1].continue_answer and requests[-1].messages[-1] == {"role": "assistant", "content": cut}
    assert last_answer(window) is answer and len(window.chat_view.messages) == 2  # the same message grew
    continue_by(qtbot, window, key=True)  # Ctrl+Shift+Return
    assert last_answer(window).text == whole  # greedy: the two continuations are the longer answer's end
    assert stored(window) == transcript(window) == [("user", QUESTION), ("assistant", whole)]
    stats = window.history.messages(window.session.conversation_id)[-1].stats
    assert stats["generated_tokens"] == 18 and stats["finish_reason"] == FinishReason.LENGTH
    assert "18 tokens" in answer.footer.text()
    assert button.isVisible()  # still cut by its length: it may go on again
    shot(window, "continue")
    window.settings.set("max_tokens", 200)
    continue_by(qtbot, window, key=False)
    if last_answer(window).stats["finish_reason"] == FinishReason.STOP:  # the model ended it: nothing to continue
        assert not button.isVisible()


def test_an_edited_answer_is_kept_and_read_by_the_next_answer(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=6)
    original = send_and_wait(qtbot, window, "Original question").text
    chat = window.session.conversation_id
    actions = actions_of(last_answer(window))
    assert actions.edit_action is not None and actions.edit_action in actions.more_button.menu().actions()
    actions.edit_action.trigger()  # ⋯ → Edit
    assert window.input.toPlainText() == original
    assert window.editing_bar.isVisible() and window.editing_bar.label.text() == EDITING_ANSWER
    window.input.setPlainText("An edited answer about robots.")
    shot(window, "edit-answer")
    click(qtbot, window.send_button)  # saves: no new answer starts
    assert not window.session.busy and not window.editing_bar.isVisible()
    assert transcript(window) == [("user", "Original question"), ("assistant", "An edited answer about robots.")]
    switch = last_answer(window).findChildren(VersionSwitch)[0]
    assert switch.label.text() == "2/2"  # the original answer stays, as version 1
    window.close()
    reopened = make_window(target_path=models.target, drafter="none", max_tokens=6)
    assert reopened.session.conversation_id == chat
    assert transcript(reopened) == [("user", "Original question"), ("assistant", "An edited answer about robots.")]
    assert [v.content for v in reopened.history.versions(reopened.session.shown.messages[-1].id)] == [
        original,
        "An edited answer about robots.",
    ]
    requests: list[GenerateRequest] = []
    generate = reopened.client.generate
    reopened.client.generate = lambda request: (requests.append(request), generate(request))[1]
    send_and_wait(qtbot, reopened, "And then?")
    assert requests[0].messages[:3] == [
        {"role": "user", "content": "Original question"},
        {"role": "assistant", "content": "An edited answer about robots."},
        {"role": "user", "content": "And then?"},
    ]


def test_branch_from_the_second_message_makes_a_new_conversation(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=6)
    send_and_wait(qtbot, window, "First question")
    send_and_wait(qtbot, window, "Second question")
    original = window.session.conversation_id
    four = stored(window)
    assert len(four) == 4
    title = window.history.conversation(original).title
    actions = actions_of(window.chat_view.messages[1])  # the first answer
    assert actions.more_button.isEnabled() and actions.branch_action in actions.more_button.menu().actions()
    actions.branch_action.trigger()  # ⋯ → Branch from here
    branch = window.session.conversation_id
    assert branch != original
    assert window.history.conversation(branch).title == f"{title} (branch)"
    assert transcript(window) == four[:2] == stored(window, branch)
    assert stored(window, original) == four  # untouched
    assert window.conversations.titles()[0] == f"{title} (branch)"  # listed, and opened
    shot(window, "branch")
    window.close()
    reopened = make_window(target_path=models.target, drafter="none", max_tokens=6)
    assert reopened.session.conversation_id == branch
    assert stored(reopened, branch) == four[:2] and stored(reopened, original) == four


def test_an_answer_stopped_by_the_user_continues_as_if_never_stopped(qtbot: Any, make_window: Any) -> None:
    window = make_window(drafter="none", max_tokens=3000, temperature=0)  # the built-in model
    ask = "Write a very long story about a lighthouse."
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, ask)
        qtbot.waitUntil(lambda: len(last_answer(window).text) > 20, timeout=ANSWER_TIMEOUT_MS)
        click(qtbot, window.stop_button)
    assert watch.done is not None and watch.done.stats.finish_reason == FinishReason.CANCELLED
    stopped, tokens = watch.done.text, watch.done.stats.generated_tokens
    button = actions_of(last_answer(window)).continue_button
    assert button is not None and button.isVisible()  # stopped: it may go on
    window.settings.set("max_tokens", 8)
    continue_by(qtbot, window, key=False)
    grown = last_answer(window).text
    assert grown.startswith(stopped) and len(grown) > len(stopped)
    assert stored(window)[-1] == ("assistant", grown)
    assert window.history.messages(window.session.conversation_id)[-1].stats["generated_tokens"] == tokens + 8
    click(qtbot, window.conversations.new_button)
    window.settings.set("max_tokens", tokens + 8)
    assert send_and_wait(qtbot, window, ask).text == grown  # greedy: one answer of that length says the same
