"""What take_screenshot.py shows besides the live chat: a stored conversation with math, a quote
and code (find.png, dark.png), the fake hub's repositories (hub.png) and a few API requests
(api.png). Qt-free, so the script imports it before the window's modules."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any

FIND_TEXT = "variance"
MATH_QUESTION = "What is the variance of a list of numbers, and how do I compute it in Python?"
MATH_ANSWER = r"""The **variance** of $n$ numbers is the mean squared distance from their mean $\mu$:

$$\sigma^2 = \frac{1}{n}\sum_{i=1}^{n} (x_i - \mu)^2$$

> For a *sample* divide by $n - 1$ instead: the sample variance $s^2$ corrects the bias of using
> the sample's own mean (Bessel's correction).

```python
def variance(xs: list[float]) -> float:
    mean = sum(xs) / len(xs)
    return sum((x - mean) ** 2 for x in xs) / len(xs)
```

`statistics.pvariance(xs)` gives the same number; `statistics.variance(xs)` the sample variance.
"""
FOLLOW_UP = "And the standard deviation?"
FOLLOW_ANSWER = r"""Its square root, in the data's own units: $\sigma = \sqrt{\sigma^2}$.

```python
import math

def std_dev(xs: list[float]) -> float:
    return math.sqrt(variance(xs))
```
"""


def stats(tokens: int, seconds: float) -> dict[str, Any]:
    """A stored answer's figures, as the engine writes them (its footer reads them)."""
    speed = round(tokens / seconds, 3)
    return {
        "generated_tokens": tokens,
        "decode_s": seconds,
        "decode_tokens_per_s": speed,
        "ttft_s": 0.41,
        "mode": "off",
    }


def math_messages() -> list[tuple[str, str, dict[str, Any] | None]]:
    return [
        ("user", MATH_QUESTION, None),
        ("assistant", MATH_ANSWER, stats(172, 4.3)),
        ("user", FOLLOW_UP, None),
        ("assistant", FOLLOW_ANSWER, stats(48, 1.2)),
    ]


GB = 10**9
HUB_REPO = "example/Qwen2.5-3B-Instruct-GGUF"
HUB_QUANTS = (("Q2_K", 1.27), ("Q3_K_M", 1.59), ("Q4_K_M", 1.93), ("Q5_K_M", 2.22), ("Q6_K", 2.54), ("Q8_0", 3.29))


def fill_hub(hub: Any) -> None:
    """A repository of quantizations (a 16-bit one split in two) and two more found by the search."""
    for quant, size_gb in HUB_QUANTS:
        hub.add_file(HUB_REPO, f"qwen2.5-3b-instruct-{quant.lower()}.gguf", b"gguf", listed_size=int(size_gb * GB))
    for part in (1, 2):
        hub.add_file(HUB_REPO, f"qwen2.5-3b-instruct-f16-0000{part}-of-00002.gguf", b"gguf", listed_size=3_100_000_000)
    hub.add_file(HUB_REPO, "README.md", b"# Qwen2.5 3B Instruct")
    hub.repos[HUB_REPO].downloads, hub.repos[HUB_REPO].likes = 48_213, 312
    for repo, downloads in (("someone/Qwen2.5-3B-Coder-GGUF", 9_870), ("another/Qwen2.5-3B-Math-GGUF", 1_204)):
        hub.add_file(repo, "model-Q4_K_M.gguf", b"gguf", listed_size=int(1.93 * GB))
        hub.repos[repo].downloads, hub.repos[repo].likes = downloads, downloads // 200


API_REQUESTS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "Name three moons of Jupiter."}], "max_tokens": 24},
    ),
    ("/v1/completions", {"prompt": "The capital of France is", "max_tokens": 8}),
    (
        "/v1/chat/completions",
        {
            "messages": [{"role": "user", "content": "Say hello."}],
            "max_tokens": 12,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    ),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": -1}),  # a 400
    ("/v1/embeddings", {"input": "a short text to embed"}),
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def send_api_requests(port: int, done: list[int]) -> threading.Thread:
    """Send API_REQUESTS one after another from a thread (the window answers them); each status
    (or 0 for no answer) is appended to ``done``."""

    def post(path: str, body: dict[str, Any]) -> int:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                reply.read()
                return int(reply.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except OSError:
            return 0

    def run() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the server starts in its own thread
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        for path, body in API_REQUESTS:
            done.append(post(path, body))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
