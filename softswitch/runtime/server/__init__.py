"""The P4Runtime server: gRPC service, arbitration, streams and entity translation."""
