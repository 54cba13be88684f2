"""PTF suites for softswitch and BMv2 (see README.md); `python -m ptf_tests.runner` runs one."""
