"""The v1model engine: code generation, pipeline, externs, packet replication."""
