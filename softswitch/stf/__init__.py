"""STF: p4c's "simple test framework" scripts (table entries, packets in, packets expected out).

`script` reads an STF file into typed commands and compares output packets with `expect` patterns
the way p4c's ``backends/bmv2/bmv2stf.py`` does; the runner that drives an engine ``Switch`` with
those commands lives next to it.
"""
