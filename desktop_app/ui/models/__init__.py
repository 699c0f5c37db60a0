"""Models: the model library and its catalog, downloads, loading, the load banner and the workers dialog."""
