"""Files attached to a message: documents read as text and images, Qt-free and llama-free, for the
window, the API and the history alike (:mod:`.attachment` declares the one shape they share)."""
