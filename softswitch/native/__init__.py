"""softswitch at native speed: P4 programs compiled to C, loaded with cffi."""
