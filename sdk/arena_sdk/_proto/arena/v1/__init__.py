"""Generated from proto/arena/v1 by `make proto` (tools/gen_proto.py). Do not edit."""
