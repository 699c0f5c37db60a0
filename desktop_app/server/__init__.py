"""A local OpenAI-compatible API served by the same speculative engine (no Qt here).

``backend.py`` queues requests for one engine; ``openai_schema.py`` turns OpenAI request bodies
into the engine's :class:`GenerateRequest` and its results into OpenAI responses;
``app.py`` is the Starlette application; ``run.py`` starts uvicorn for ``specchat serve``.
"""
