"""SpecChat: a desktop chat app for local LLMs, made fast by speculative decoding."""

from __future__ import annotations

__version__ = "0.1.0"
