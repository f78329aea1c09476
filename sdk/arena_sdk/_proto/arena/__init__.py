"""Generated from proto/arena by `make proto` (tools/gen_proto.py). Do not edit."""
