"""Base classes shared by every PTF suite."""

from ptf_tests.base.p4runtime_test import P4RuntimeTest, autocleanup

__all__ = ["P4RuntimeTest", "autocleanup"]
