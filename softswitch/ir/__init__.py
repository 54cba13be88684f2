"""The checked program (softswitch's IR): its instance tree, control-plane names and JSON form."""
