"""Reading a chat template's reasoning: the family's markers, the Think switch and its default,
earlier answers handed back without their reasoning; and counting an answer's thinking tokens.
No model is loaded: the templates are written here in the shape of each family's own."""

from __future__ import annotations

from desktop_app.engine.api import Message
from desktop_app.engine.llama.chat_template import CHATML, ChatTemplate
from desktop_app.engine.llama.template_reasoning import TemplateReasoning, detect_reasoning
from desktop_app.engine.loop.reasoning_count import ReasoningCount
from desktop_app.engine.reasoning import GEMMA4_CHANNEL, GPT_OSS_CHANNELS, THINK_TAGS
from desktop_app.engine.stats import GenerationStats
from tests.model_factory import THINKING_TEMPLATE

# Gemma 4's shape: thinking off unless enable_thinking, then an empty thought channel closes it.
GEMMA4_LIKE = (
    "{% if enable_thinking is defined and enable_thinking %}<|turn>system\n<|think|><turn|>\n{% endif %}"
    "{% for m in messages %}<|turn>{{ 'model' if m.role == 'assistant' else m.role }}\n{{ m.content }}<turn|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|turn>model\n"
    "{% if not enable_thinking | default(false) %}<|channel>thought\n<channel|>{% endif %}{% endif %}"
)
# gpt-oss's shape: reasoning effort in the system message, answers in the final channel.
GPT_OSS_LIKE = (
    "<|start|>system<|message|>Reasoning: {{ reasoning_effort | default('medium') }}<|end|>"
    "{% for m in messages %}{% if m.role == 'assistant' %}<|start|>assistant<|channel|>final<|message|>"
    "{% if '<|channel|>analysis<|message|>' in m.content %}{{ raise_exception('channel tags in content') }}{% endif %}"
    "{{ m.content }}<|end|>{% else %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<|start|>assistant{% endif %}"
)


def no_tokens(_text: str) -> bool:
    return False


def test_each_family_is_read_from_its_template_with_its_switch_and_default() -> None:
    qwen = detect_reasoning(ChatTemplate(THINKING_TEMPLATE), no_tokens)
    assert qwen.format == THINK_TAGS and qwen.switch is not None
    assert (qwen.switch.variable, qwen.switch.default) == ("enable_thinking", True)
    gemma = detect_reasoning(ChatTemplate(GEMMA4_LIKE), no_tokens)
    assert gemma.format == GEMMA4_CHANNEL and gemma.switch is not None
    assert (gemma.switch.variable, gemma.switch.default) == ("enable_thinking", False)
    oss = detect_reasoning(ChatTemplate(GPT_OSS_LIKE), no_tokens)
    assert oss.format == GPT_OSS_CHANNELS and oss.switch is not None
    assert (oss.switch.variable, oss.switch.default) == ("reasoning_effort", True)
    assert "Reasoning: low" in ChatTemplate(GPT_OSS_LIKE).render([], **oss.variables(False))
    plain = detect_reasoning(ChatTemplate(CHATML), no_tokens)
    assert plain.format is None and plain.switch is None
    # a <think> model whose template leaves the tags to it: read from the vocabulary
    assert detect_reasoning(ChatTemplate(CHATML), lambda text: text in ("<think>", "</think>")).format == THINK_TAGS


def test_the_prompt_that_opens_the_section_is_seen() -> None:
    qwen = detect_reasoning(ChatTemplate(THINKING_TEMPLATE), no_tokens)
    template = ChatTemplate(THINKING_TEMPLATE)
    hi = [Message(role="user", content="Hi")]
    assert qwen.opened(template.render(hi, **qwen.variables(None))) == "<think>\n"
    assert qwen.opened(template.render(hi, **qwen.variables(False))) == ""
    gemma = detect_reasoning(ChatTemplate(GEMMA4_LIKE), no_tokens)
    assert gemma.opened(ChatTemplate(GEMMA4_LIKE).render(hi)) == ""  # closed empty: thinking off


CONVERSATION = [
    Message(role="user", content="What is 2+2?"),
    Message(role="assistant", content="<think>\nweighing zebra arithmetic\n</think>\n\nIt is 4."),
    Message(role="user", content="And 3+3?"),
]


def test_earlier_reasoning_reaches_no_template_even_one_that_does_not_drop_it() -> None:
    oss_answer = (
        "<|channel|>analysis<|message|>weighing zebra arithmetic<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is 4."
    )
    cases = [
        (THINKING_TEMPLATE, detect_reasoning(ChatTemplate(THINKING_TEMPLATE), no_tokens), CONVERSATION[1]["content"]),
        (GPT_OSS_LIKE, detect_reasoning(ChatTemplate(GPT_OSS_LIKE), no_tokens), oss_answer),  # it refuses channel tags
        (CHATML, TemplateReasoning(THINK_TAGS), CONVERSATION[1]["content"]),  # a template that keeps what it is given
    ]
    for source, reasoning, answer in cases:
        messages = [CONVERSATION[0], Message(role="assistant", content=answer), CONVERSATION[2]]
        prompt = ChatTemplate(source).render(reasoning.messages(messages))
        assert "zebra" not in prompt and "It is 4." in prompt
    assert "zebra" in ChatTemplate(CHATML).render(CONVERSATION)  # as written, ChatML would have shown it


def test_tokens_and_drafts_count_apart_when_the_model_opens_the_section_itself() -> None:
    stats = GenerationStats()
    count = ReasoningCount(THINK_TAGS, "", stats)
    count.drafts(3, 2)  # while "<th" might still be the start marker
    for i, piece in enumerate(["<th", "ink>", "hmm", "</thi"]):
        count.token(piece.encode(), now=float(i))
    assert count.thinking
    count.drafts(4, 1)
    count.token(b"nk>", now=10.0)
    count.drafts(5, 5)
    count.token(b" Yes", now=11.0)
    assert (stats.thinking_tokens, stats.thinking_drafted, stats.thinking_accepted, stats.thinking_s) == (5, 7, 3, 10.0)


def test_an_answer_without_a_section_counts_no_thinking() -> None:
    stats = GenerationStats()
    count = ReasoningCount(THINK_TAGS, "", stats)
    for piece in ["<", "b>bold</b> <think>"]:
        count.drafts(2, 2)
        count.token(piece.encode(), now=1.0)
    assert (stats.thinking_tokens, stats.thinking_drafted, stats.thinking_s) == (0, 0, 0.0)
