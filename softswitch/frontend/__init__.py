"""P4_16 frontend: preprocessor, lexer, parser and type checker."""
