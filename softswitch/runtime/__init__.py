"""softswitch part 2: a drop-in for BMv2 simple_switch_grpc (see DESIGN.md, "The runtime")."""
