"""P4Info generation: the control-plane description p4c writes with ``--p4runtime-files``."""

from softswitch.p4info.builder import build_p4info
from softswitch.p4info.ids import Prefix, SymbolTable, hashed_id, jenkins_one_at_a_time
from softswitch.p4info.output import read_p4info, write_p4info

__all__ = [
    "Prefix",
    "SymbolTable",
    "build_p4info",
    "hashed_id",
    "jenkins_one_at_a_time",
    "read_p4info",
    "write_p4info",
]
