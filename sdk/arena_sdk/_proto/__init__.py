"""Generated from proto/. by `make proto` (tools/gen_proto.py). Do not edit."""
