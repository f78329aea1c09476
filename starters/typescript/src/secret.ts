// The bot secret: with one set (--secret, or the ARENA_BOT_SECRET environment variable), StartMatch, Decide and
// EndMatch answer only calls that carry it in the `arena-bot-secret` call metadata. The arena's referee sends the
// secret the owner gave at registration (`arena bot register NAME HOST:PORT --bot-secret S`), so only the arena
// can drive the bot. GetInfo stays open: registration and health checks use it. The same rule as the Python SDK
// (sdk/arena_sdk/server.py, secret_gate).

import { createHash, timingSafeEqual } from "node:crypto";
import * as grpc from "@grpc/grpc-js";

export const BOT_SECRET_METADATA = "arena-bot-secret";
export const MIN_BOT_SECRET = 16;
export const MAX_BOT_SECRET = 256;

/** Why `secret` cannot be a bot secret ("is empty", "has N characters ...", "has a space ..."), or null when it can
 * be one: 16..256 visible ASCII characters without spaces, what gRPC call metadata carries and what the arena's
 * registration accepts (the Python SDK's rule, sdk/arena_sdk/guard.py, secret_problem). Never holds the secret. */
export function secretProblem(secret: string): string | null {
  if (secret.trim() === "") {
    return "is empty";
  }
  if (secret.length < MIN_BOT_SECRET || secret.length > MAX_BOT_SECRET) {
    return `has ${secret.length} characters: a bot secret has ${MIN_BOT_SECRET}..${MAX_BOT_SECRET}`;
  }
  if (!/^[\x21-\x7e]+$/.test(secret)) {
    return "has a space, a tab or a non-ASCII character: a bot secret is visible ASCII characters without spaces " +
      "(gRPC call metadata carries no other)";
  }
  return null;
}

/** True when `given` equals `expected`, compared in constant time over their SHA-256 digests (so neither the
 * content nor the length of the secret shows in the time taken). */
export function secretMatches(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}

/** The refusal of a call to `method` that does not carry `secret`, or null when it may go on (no secret set, or
 * the right one given). UNAUTHENTICATED without the metadata, PERMISSION_DENIED with another value. */
export function refusal(method: string, metadata: grpc.Metadata, secret: string | null):
    Partial<grpc.StatusObject> | null {
  if (!secret) {
    return null;
  }
  const values = metadata.get(BOT_SECRET_METADATA);
  if (values.length === 0) {
    return {
      code: grpc.status.UNAUTHENTICATED,
      details: `this bot answers ${method} only to its arena: the call carries no ${BOT_SECRET_METADATA} ` +
        "metadata (the secret given at registration)",
    };
  }
  const given = typeof values[0] === "string" ? values[0] : values[0].toString("latin1");
  if (!secretMatches(given, secret)) {
    return {
      code: grpc.status.PERMISSION_DENIED,
      details: `this bot answers ${method} only to its arena: wrong ${BOT_SECRET_METADATA}`,
    };
  }
  return null;
}
