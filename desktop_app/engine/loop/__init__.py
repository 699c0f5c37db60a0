"""The draft/verify loop: the Engine, the generator's cycle, sampling, and the text stream."""
