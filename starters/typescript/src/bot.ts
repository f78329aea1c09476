#!/usr/bin/env node
// A starter bot for the arena in TypeScript: an arena.v1.Bot gRPC server (proto/arena/v1/bot.proto, loaded at
// run time with @grpc/proto-loader, so it always speaks the repository's protocol) that plays Take 5 and Taki
// through the four unary calls (GetInfo, StartMatch, Decide, EndMatch) and through the match stream (PlayMatch: one
// bidirectional stream per seat and match, the same answers tagged with each request's sequence number). GetInfo
// says it serves the stream (serves_match_stream), so the referee uses it; --unary-only makes it keep to the
// unary calls.
//
//   node dist/bot.js --port 50071 [--host 127.0.0.1] [--name ts-starter] [--secret S] [--proto DIR] [--unary-only]
//
// It prints "arena-bot NAME listening on HOST:PORT" once it serves (--port 0 picks a free port). The bot keeps no
// state between calls: every Decide carries the seat's complete view.

import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { refusal, secretProblem } from "./secret";
import * as take5 from "./take5";
import * as taki from "./taki";

const NAME = "ts-starter";
const VERSION = "1.0.0";
const GAMES = ["take5", "taki"];

interface Options {
  host: string;
  port: number;
  name: string;
  secret: string | null;
  protoDir: string;
  stream: boolean;
}

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: node dist/bot.js [--host H] [--port P] [--name N] [--secret S] ` +
    "[--proto DIR] [--unary-only]\n");
  process.exit(2);
}

function parseArgs(argv: string[]): Options {
  const options: Options = {
    host: "127.0.0.1",
    port: 50071,
    name: NAME,
    secret: process.env.ARENA_BOT_SECRET ?? null,
    // dist/bot.js -> the repository's proto/ folder (starters/typescript/dist -> ../../../proto)
    protoDir: process.env.ARENA_PROTO_DIR || path.resolve(__dirname, "..", "..", "..", "proto"),
    stream: true,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    if (flag === "--help" || flag === "-h") {
      process.stdout.write("usage: node dist/bot.js [--host H] [--port P] [--name N] [--secret S] [--proto DIR] " +
        "[--unary-only]\nServes the arena.v1.Bot protocol for Take 5 and Taki (see README.md); --secret defaults to " +
        "ARENA_BOT_SECRET.\n");
      process.exit(0);
    }
    if (flag === "--unary-only") {
      options.stream = false;
      i -= 1;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) usage(`${flag} needs a value`);
    if (flag === "--host") options.host = value;
    else if (flag === "--port") {
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`--port takes 0..65535, got ${value}`);
      options.port = port;
    } else if (flag === "--name") options.name = value;
    else if (flag === "--secret") options.secret = value;
    else if (flag === "--proto") options.protoDir = value;
    else usage(`unknown option ${flag}`);
  }
  // set but no bot secret (e.g. a `$(cat FILE)` that failed): refused, never served without the secret meant
  const problem = options.secret === null ? null : secretProblem(options.secret);
  if (problem !== null) {
    const source = argv.includes("--secret") ? "--secret" : "ARENA_BOT_SECRET";
    usage(`${source} ${problem}; make one with: (umask 077; head -c 24 /dev/urandom | base64 > my.secret)`);
  }
  return options;
}

/** The arena.v1 package as @grpc/proto-loader loads it from `protoDir` (keepCase: field names as in the .proto;
 * enums as their names; oneofs: a virtual field naming the member that is set). */
function loadProtocol(protoDir: string): grpc.GrpcObject {
  const definition = protoLoader.loadSync(path.join(protoDir, "arena", "v1", "bot.proto"), {
    includeDirs: [protoDir],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Message = any;

/** The answer to one DecideRequest: {take5: {card} | {row}} or {taki: TakiAction}. Throws on a kind it does not
 * know (the referee then records a fault and plays a default legal action). */
export function decide(request: Message): Message {
  switch (request.kind) {
    case "TAKE5_CHOOSE_CARD":
      return { take5: { card: take5.chooseCard(request.take5) } };
    case "TAKE5_CHOOSE_ROW":
      return { take5: { row: take5.chooseRow(request.take5) } };
    case "TAKE5_DRAFT_PICK":
      return { take5: { card: take5.draftPick(request.take5) } };
    case "TAKI_TURN":
      return { taki: taki.takeTurn(request.taki) };
    case "TAKI_REACT":
      return { taki: taki.react() };
    default:
      throw new Error(`unknown decision kind ${request.kind}`);
  }
}

function guarded(method: string, secret: string | null, answer: (request: Message) => Message):
    grpc.handleUnaryCall<Message, Message> {
  return (call, callback) => {
    const refused = refusal(method, call.metadata, secret);
    if (refused) {
      callback(refused, null);
      return;
    }
    try {
      callback(null, answer(call.request));
    } catch (err) {
      callback({ code: grpc.status.INTERNAL, details: `${method} failed: ${(err as Error).message}` }, null);
    }
  };
}

/** The match stream (bot.proto, "The match stream"): every RefereeMessage answered in order by a BotMessage made
 * as the unary call would make it; what would be an error status is a StepFailure and the stream goes on. A call
 * without the right secret is refused as a whole, with the status the unary calls give. */
function playMatch(secret: string | null): grpc.handleBidiStreamingCall<Message, Message> {
  return (call) => {
    const refused = refusal("PlayMatch", call.metadata, secret);
    if (refused) {
      // refused once the first message is in (at most 0.5 s after the stream opened), as the Python SDK does: a
      // referee still writing that message then gets this status, not grpc's "Internal error from Core"
      let sent = false;
      const refuse = () => {
        if (sent) return;
        sent = true;
        clearTimeout(timer);
        call.emit("error", refused);
      };
      const timer = setTimeout(refuse, 500);
      call.once("data", refuse);
      call.on("error", () => undefined);
      return;
    }
    call.on("data", (message: Message) => {
      const step = message.request;  // the oneof member that is set: "start", "decide" or "end"
      const sequence = step === "decide" ? message.decide.sequence : "0";
      try {
        if (step === "start") call.write({ sequence, started: { keeps_history: false } });
        else if (step === "decide") call.write({ sequence, decision: decide(message.decide) });
        else if (step === "end") call.write({ sequence, ended: {} });
        else {
          call.write({ sequence, failure: { step: "MATCH_STEP_UNSPECIFIED", code: grpc.status.INVALID_ARGUMENT,
            message: "RefereeMessage carries no request" } });
        }
      } catch (err) {
        const failed = step === "start" ? "MATCH_STEP_START" : step === "end" ? "MATCH_STEP_END" : "MATCH_STEP_DECIDE";
        call.write({ sequence, failure: { step: failed, code: grpc.status.INTERNAL,
          message: `${step} failed: ${(err as Error).message}` } });
      }
    });
    call.on("end", () => call.end());  // the referee ended its side after the end: so does the bot
    call.on("error", () => undefined);  // a broken stream: the referee opens a new one if it needs to
  };
}

function main(): void {
  const options = parseArgs(process.argv.slice(2));
  const arena = loadProtocol(options.protoDir) as Message;
  const server = new grpc.Server();
  server.addService(arena.arena.v1.Bot.service, {
    GetInfo: guarded("GetInfo", null, () => ({
      name: options.name, version: VERSION, games: GAMES, sdk_version: `typescript-starter ${VERSION}`,
      author: "arena starters", serves_match_stream: options.stream,
    })),
    StartMatch: guarded("StartMatch", options.secret, () => ({ keeps_history: false })),
    Decide: guarded("Decide", options.secret, decide),
    EndMatch: guarded("EndMatch", options.secret, () => ({})),
    PlayMatch: playMatch(options.secret),
  });
  server.bindAsync(`${options.host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      process.stderr.write(`cannot listen on ${options.host}:${options.port}: ${err.message}\n`);
      process.exit(1);
    }
    // the SDK's ready line (sdk/arena_sdk/bot_process.py), which `arena play` and the tests read
    const guard = options.secret ? "bot secret on" : "no bot secret: anyone who reaches this port can play it";
    process.stdout.write(`arena-bot ${options.name} listening on ${options.host}:${port} (${guard})\n`);
  });
  const stop = () => server.tryShutdown(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (require.main === module) {
  main();
}
