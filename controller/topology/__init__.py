"""Multi-plane two-tier Clos topologies: the model, its YAML form, a generator and sizing."""
