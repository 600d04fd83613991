#!/usr/bin/env node
// Real NDNts applications (npm @ndn/* 0.0.20250307, public API only, unmodified) for the
// namewayd end-to-end tests in crates/daemon/tests/ndnts.rs.
//
// Each mode prints one JSON object per line on stdout; diagnostics go to stderr.
//
//   produce      --prefix /p [--size N] [--freshness MS]
//                  @ndn/endpoint produce() + @ndn/nfdmgmt enableNfdPrefixReg(); prints
//                  {"ready":true,"sha256":...} once rib/register answered 200, then
//                  {"served":"/p/x"} per Interest, until killed.
//   consume      --name /p/x [--can-be-prefix] [--must-be-fresh] [--lifetime MS]
//                  @ndn/endpoint consume(), no retransmission; prints {name,size,sha256} or
//                  {error, timeout?}. (NDNts drops Nacks in its logical forwarder: a Nacked
//                  Interest times out.)
//   serve-object --prefix /p --size N [--segment 4000]
//                  @ndn/segmented-object serve(BufferChunkSource); {"ready":true,sha256,segments}
//   fetch-object --name /p     (the name may carry typed components: /p/v=7)
//                  @ndn/segmented-object fetch(); prints {size,segments,sha256} or {error}
//   mgmt         --prefix /p [--strategy /localhost/nfd/strategy/multicast]
//                  @ndn/nfdmgmt list()/invoke(): status/general, faces/list, faces/query (and
//                  one with a malformed filter), faces/channels, cs/info, fib/list, rib/list, rib/register, rib/unregister,
//                  strategy-choice/set|list|unset; one {"op":...} line each, then {"done":true}.
//   dataset      --name faces/list|rib/list|fib/list|status/general|cs/info|strategy-choice/list
//                  one @ndn/nfdmgmt list(); prints {"op":NAME,"ok":true,"items":[...]}
//   payload      --size N [--seed S]    sha256 of the deterministic payload (no forwarder)
//
// Payloads are the same byte sequence as tests/interop/pyndn_app.py's payload(): the
// concatenation of sha256(seed || u64be(counter)), truncated to N bytes.
//
// The forwarder is chosen the NDNts CLI way, through NDNTS_UPLINK: unix:///path/to/nfd.sock,
// tcp://host:port, or ws://host:port / wss://host:port (namewayd's WebSocket face). NDNTS_PKTTRACE=1 logs every packet of the logical forwarder to stderr;
// NDNTS_KEEPALIVE=MS shortens the idle keep-alive. NDNTS_LOCAL=1 marks the uplink face local
// (`l3: { local: true }`, what a web page served by the forwarder's own host may do), so
// enableNfdPrefixReg sends rib/register under /localhost/nfd instead of /localhop/nfd: NDNts
// takes a WebSocket face as non-local unless told. Every mode may also print
// {"event":"up"|"down"|"close"} when the uplink's transport changes state, and
// {"event":"rxerror"} when NDNts cannot decode a packet that the forwarder sent.
import "./polyfill.mjs";

import { createHash } from "node:crypto";
import { parseArgs } from "node:util";

import { consume, produce } from "@ndn/endpoint";
import { Forwarder, FwTracer, ReadvertiseDestination } from "@ndn/fw";
import {
  ChannelStatus, ControlParameters, ControlResponse, CsInfo, FaceQuery, FaceStatus, GeneralStatus, RibEntry,
  StrategyChoice, enableNfdPrefixReg, getPrefix, invoke, list,
} from "@ndn/nfdmgmt";
import { TcpTransport, UnixTransport } from "@ndn/node-transport";
import { WsTransport } from "@ndn/ws-transport";
import { AltUri, Data, Interest, Name, StructFieldName, TT as l3TT, digestSigning } from "@ndn/packet";
// Names typed by tools (v=, seg=, 32=metadata) parse with the naming-convention AltUri.
import { AltUri as TypedUri } from "@ndn/naming-convention2";
import { BufferChunkSource, fetch, serve } from "@ndn/segmented-object";
import { Decoder, EvDecoder, StructBuilder, StructFieldNNI, StructFieldType } from "@ndn/tlv";

function emit(obj) {
  process.stdout.write(`${JSON.stringify(obj, jsonValue)}\n`);
}

/** JSON replacer for NDNts values: bigint counters, Names, byte arrays. */
function jsonValue(_key, value) {
  if (typeof value === "bigint") {
    return Number(value);
  }
  if (value instanceof Name) {
    return AltUri.ofName(value);
  }
  if (value instanceof Uint8Array) {
    return Buffer.from(value).toString("hex");
  }
  return value;
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

function payload(size, seed = "nameway") {
  const parts = [];
  let have = 0;
  for (let counter = 0n; have < size; ++counter) {
    const c = Buffer.alloc(8);
    c.writeBigUInt64BE(counter);
    const d = createHash("sha256").update(Buffer.from(seed)).update(c).digest();
    parts.push(d);
    have += d.length;
  }
  return new Uint8Array(Buffer.concat(parts).subarray(0, size));
}

const { positionals: [mode], values: args } = parseArgs({
  allowPositionals: true,
  options: {
    prefix: { type: "string" },
    name: { type: "string" },
    size: { type: "string", default: "100" },
    freshness: { type: "string", default: "10000" },
    segment: { type: "string", default: "4000" },
    lifetime: { type: "string", default: "4000" },
    seed: { type: "string" },
    strategy: { type: "string", default: "/localhost/nfd/strategy/multicast" },
    "can-be-prefix": { type: "boolean", default: false },
    "must-be-fresh": { type: "boolean", default: false },
  },
});

/** Connects the default logical forwarder to the uplink named by NDNTS_UPLINK. */
async function connect() {
  const uplink = process.env.NDNTS_UPLINK ?? "unix:///run/nfd/nfd.sock";
  const u = new URL(uplink);
  const opts = {
    // NDNTS_KEEPALIVE (ms): a shorter idle keep-alive than NDNts's 60 s default, so tests see
    // the empty LpPacket `64 00` that NDNts sends on an idle face.
    lp: process.env.NDNTS_KEEPALIVE ? { keepAlive: Number(process.env.NDNTS_KEEPALIVE) } : {},
    l3: process.env.NDNTS_LOCAL === "1" ? { local: true } : {},
    // Report transport state changes: a forwarder that closes the face shows up as "down".
    callback: (_transport, l3face) => {
      for (const type of ["up", "down", "close", "rxerror", "txerror"]) {
        l3face.addEventListener(type, (evt) => emit({ event: type, detail: evt.detail && String(evt.detail) }));
      }
    },
  };
  let face;
  switch (u.protocol) {
    case "unix:":
      face = await UnixTransport.createFace(opts, decodeURIComponent(u.pathname));
      break;
    case "tcp:":
      face = await TcpTransport.createFace(opts, u.hostname, Number(u.port || 6363));
      break;
    case "ws:":
    case "wss:":
      // @ndn/ws-transport, as a web page uses it (in Node through the `ws` package). For wss://
      // with a test certificate, NODE_EXTRA_CA_CERTS names the CA file.
      face = await WsTransport.createFace(opts, uplink);
      break;
    default:
      throw new Error(`unsupported NDNTS_UPLINK ${uplink}`);
  }
  process.stderr.write(`ndnts: connected ${face} local=${face.attributes.local}\n`);
  return face;
}

/**
 * enableNfdPrefixReg, and a promise that resolves once `prefix` is ADVERTISED, i.e. once
 * NfdPrefixReg got a ControlResponse with StatusCode 200 for its rib/register command
 * (ReadvertiseDestination only sets that status after doAdvertise succeeded; failures retry).
 */
function register(face, prefix, timeoutMs = 15000) {
  const reg = enableNfdPrefixReg(face);
  const name = new Name(prefix);
  const ready = new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      // `table` is NfdPrefixReg's (protected) per-prefix state from ReadvertiseDestination.
      const record = reg.table.get(name);
      if (record?.status === ReadvertiseDestination.Status.ADVERTISED) {
        clearInterval(poll);
        resolve();
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(poll);
        reject(new Error(`prefix registration of ${prefix} not acknowledged in ${timeoutMs} ms`));
      }
    }, 20);
  });
  return ready;
}

async function runProduce() {
  const face = await connect();
  const ready = register(face, args.prefix);
  const content = payload(Number(args.size));
  const freshnessPeriod = Number(args.freshness);
  produce(args.prefix, async (interest) => {
    emit({ served: AltUri.ofName(interest.name) });
    return new Data(interest.name, Data.FreshnessPeriod(freshnessPeriod), content);
  }, { dataSigner: digestSigning });
  await ready;
  emit({ ready: true, sha256: sha256(content), size: content.length });
}

async function runConsume() {
  const face = await connect();
  const interest = new Interest(args.name, Interest.Lifetime(Number(args.lifetime)));
  interest.canBePrefix = args["can-be-prefix"];
  interest.mustBeFresh = args["must-be-fresh"];
  try {
    const data = await consume(interest, { retx: 0 });
    emit({ name: AltUri.ofName(data.name), size: data.content.length, sha256: sha256(data.content) });
  } catch (err) {
    emit({ error: String(err), timeout: /expire/.test(String(err)) });
  } finally {
    face.close();
  }
}

async function runServeObject() {
  const face = await connect();
  const ready = register(face, args.prefix);
  const data = payload(Number(args.size), args.seed ?? "object");
  const chunkSize = Number(args.segment);
  serve(args.prefix, new BufferChunkSource(data, { chunkSize }), {
    freshnessPeriod: 10000,
    signer: digestSigning,
  });
  await ready;
  emit({ ready: true, sha256: sha256(data), segments: Math.max(1, Math.ceil(data.length / chunkSize)) });
}

async function runFetchObject() {
  const face = await connect();
  try {
    let segments = 0;
    const parts = [];
    for await (const data of fetch(TypedUri.parseName(args.name), { retxLimit: 5 })) {
      parts.push(data.content);
      ++segments;
    }
    const buf = Buffer.concat(parts);
    emit({ size: buf.length, segments, sha256: sha256(buf) });
  } catch (err) {
    emit({ error: String(err) });
  } finally {
    face.close();
  }
}

// @ndn/nfdmgmt 0.0.20250307 has no fib/list item type; this is the FibEntry of the NFD
// management protocol built with NDNts's own StructBuilder (the same strict EvDecoder that the
// package's RibEntry uses).
// NextHopRecord (0x81) is nested: like the package's Route, the inner builder has no TLV-TYPE.
const buildNextHopRecord = new StructBuilder("NextHopRecord")
  .add(0x69, "faceId", StructFieldNNI, { required: true })
  .add(0x6A, "cost", StructFieldNNI, { required: true })
  .setIsCritical(EvDecoder.neverCritical);
class NextHopRecord extends buildNextHopRecord.baseClass() {}
buildNextHopRecord.subclass = NextHopRecord;
const buildFibEntry = new StructBuilder("FibEntry", 0x80)
  .add(l3TT.Name, "name", StructFieldName, { required: true })
  .add(0x81, "nextHops", StructFieldType.nest(NextHopRecord), { required: true, repeat: true })
  .setIsCritical(EvDecoder.neverCritical);
class FibEntry extends buildFibEntry.baseClass() {
  static datasetName = "fib/list";
}
buildFibEntry.subclass = FibEntry;

/** Plain object of a StructBuilder-made item: its own enumerable fields. */
function fields(item) {
  const out = {};
  for (const [k, v] of Object.entries(item)) {
    out[k] = Array.isArray(v) ? v.map((x) => (typeof x === "object" && !(x instanceof Name) ? fields(x) : x)) : v;
  }
  return out;
}

async function runMgmt() {
  const face = await connect();
  const prefix = getPrefix(face.attributes.local);
  const opts = { prefix };
  const steps = [
    ["status/general", () => list(GeneralStatus, opts)],
    ["faces/list", () => list(FaceStatus, opts)],
    ["faces/query", () => list(FaceQuery({ uriScheme: "unix" }), opts)],
    // A FaceQueryFilter that does not decode: NFD answers ControlResponse 400 (read with
    // NDNts's ControlResponse decoder), not a dataset.
    ["faces/query#malformed", async () => {
      const interest = new Interest(prefix.append("faces", "query", "not-a-filter"),
        Interest.CanBePrefix, Interest.MustBeFresh);
      const data = await consume(interest);
      return Decoder.decode(data.content, ControlResponse);
    }],
    ["faces/channels", () => list(ChannelStatus, opts)],
    ["cs/info", () => list(CsInfo, opts)],
    ["rib/register", () => invoke("rib/register", { name: new Name(args.prefix), cost: 7 }, opts)],
    // Dataset replies are cached by the forwarder (FreshnessPeriod 1 s, as NFD), so a listing
    // that must reflect a command waits out that second (an earlier run's replies too).
    ["fib/list", async () => {
      await delay(1100);
      return list(FibEntry, opts);
    }],
    ["rib/list", () => list(RibEntry, opts)],
    ["strategy-choice/set", () => invoke("strategy-choice/set",
      { name: new Name(args.prefix), strategy: new Name(args.strategy) }, opts)],
    ["strategy-choice/list", () => list(StrategyChoice, opts)],
    ["strategy-choice/unset", () => invoke("strategy-choice/unset", { name: new Name(args.prefix) }, opts)],
    ["rib/unregister", () => invoke("rib/unregister", { name: new Name(args.prefix) }, opts)],
    ["rib/list#after", async () => {
      await delay(1100);
      return list(RibEntry, opts);
    }],
  ];
  for (const [op, run] of steps) {
    try {
      const r = await run();
      if (Array.isArray(r)) {
        emit({ op, ok: true, items: r.map(fields) });
      } else {
        // ControlResponse: status, and the echoed ControlParameters when successful.
        const body = r.statusCode === 200 && r.body.length > 0 ?
          fields(ControlParameters.decodeFromResponseBody(r)) : undefined;
        emit({ op, ok: r.statusCode === 200, statusCode: r.statusCode, statusText: r.statusText, body });
      }
    } catch (err) {
      emit({ op, ok: false, error: String(err?.stack ?? err) });
    }
  }
  emit({ done: true });
  face.close();
}

/** One status dataset, by its NFD name (`faces/list`, `rib/list`, ...). */
async function runDataset() {
  const face = await connect();
  const types = {
    "status/general": GeneralStatus, "faces/list": FaceStatus, "faces/channels": ChannelStatus,
    "cs/info": CsInfo, "fib/list": FibEntry, "rib/list": RibEntry, "strategy-choice/list": StrategyChoice,
  };
  const d = types[args.name];
  if (!d) {
    throw new Error(`unknown dataset ${args.name}`);
  }
  try {
    const items = await list(d, { prefix: getPrefix(face.attributes.local) });
    emit({ op: args.name, ok: true, items: items.map(fields) });
  } catch (err) {
    emit({ op: args.name, ok: false, error: String(err) });
  } finally {
    face.close();
  }
}

async function main() {
  if (process.env.NDNTS_PKTTRACE === "1") {
    FwTracer.enable({ output: { log: (s) => process.stderr.write(`${s}\n`) } });
  }
  switch (mode) {
    case "produce":
      return runProduce();
    case "consume":
      return runConsume();
    case "serve-object":
      return runServeObject();
    case "fetch-object":
      return runFetchObject();
    case "mgmt":
      return runMgmt();
    case "dataset":
      return runDataset();
    case "payload":
      emit({ sha256: sha256(payload(Number(args.size), args.seed ?? "nameway")) });
      return undefined;
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

// Producers serve until killed; one-shot modes end once their face is closed. SIGTERM closes
// the logical forwarder (and with it the uplink) cleanly.
process.on("SIGTERM", () => {
  Forwarder.getDefault().close();
  process.exit(0);
});
main().then(
  () => {
    if (!["produce", "serve-object"].includes(mode)) {
      // one-shot: do not wait for stray timers (keep-alive, registration refresh)
      process.exit(0);
    }
  },
  (err) => {
    emit({ error: String(err?.stack ?? err) });
    process.exit(1);
  },
);
