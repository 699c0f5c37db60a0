"""The llama.cpp layer: models and contexts, the GGUF reader, chat templates, the backend, RPC and threads."""
