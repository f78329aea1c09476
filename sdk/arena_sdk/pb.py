"""The generated protocol modules (package ``arena.v1``), under stable names.

``bot_pb2`` / ``bot_pb2_grpc``: the Bot service every bot serves. ``arena_pb2`` / ``arena_pb2_grpc``: the Arena
service of the referee. Generated from ``proto/arena/v1`` by ``make proto``.
"""

from ._proto.arena.v1 import arena_pb2, arena_pb2_grpc, bot_pb2, bot_pb2_grpc

__all__ = ["arena_pb2", "arena_pb2_grpc", "bot_pb2", "bot_pb2_grpc"]
