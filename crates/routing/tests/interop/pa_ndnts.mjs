// NDNts's side of crates/routing/tests/interop.rs (npm @ndn/* 0.0.20250307, public API only).
// Fed to node on standard input with tests/interop/ndnts as the working directory, so the
// packages resolve from its node_modules; the mode and arguments come in NDNTS_ARGS.
//
//   make ROUTER_HASH_HEX  prints {"plain": {...}, "sc": {...}}: a plain announcement of
//                         /example/ndnts from @ndn/nfdmgmt PrefixAnn.build (ECDSA key from
//                         @ndn/keychain), and an announcement of a self-certifying name built
//                         field by field with @ndn/packet and @ndn/tlv: Nameway's
//                         NwDelegate and NwPublicKey, Ed25519, KeyLocator = KeyDigest(h)
//   parse PA_HEX          prints what PrefixAnn.fromData reads from the announcement

// Node 20 lacks Promise.withResolvers (ES2024), which @ndn/util calls; the standard
// definition is installed only when missing.
if (typeof Promise.withResolvers !== "function") {
  Promise.withResolvers = function () {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

const { createHash } = await import("node:crypto");
const { Ed25519, generateSigningKey } = await import("@ndn/keychain");
const { Keyword, Segment, Version } = await import("@ndn/naming-convention2");
const { PrefixAnn } = await import("@ndn/nfdmgmt");
const { Component, Data, Name, ValidityPeriod } = await import("@ndn/packet");
const { Decoder, Encoder, NNI } = await import("@ndn/tlv");
const { fromHex, toHex } = await import("@ndn/util");

const [mode, arg] = JSON.parse(process.env.NDNTS_ARGS);
const wireOf = (data) => toHex(Encoder.encode(data)).toLowerCase();

function scName(h) {
  return new Name([Keyword.create("sc"), new Component(0x08, h)]);
}

async function make(routerHex) {
  const now = Date.now();
  const [appKey] = await generateSigningKey("/example/ndnts");
  const plain = await PrefixAnn.build({
    announced: "/example/ndnts",
    version: now,
    expirationPeriod: 3_600_000,
    validityPeriod: new ValidityPeriod(now, now + 3_600_000),
    signer: appKey,
  });

  const [priv, pub] = await generateSigningKey("/owner", Ed25519);
  const h = new Uint8Array(createHash("sha256").update(pub.spki).digest());
  const lifetime = 600_000;
  const data = new Data();
  data.name = scName(h).append(Keyword.create("PA"), Version.create(now), Segment.create(0));
  data.contentType = 5;
  data.content = Encoder.encode([
    [0x6d, NNI(lifetime)],
    new ValidityPeriod(now, now + lifetime),
    [0x8e00, scName(fromHex(routerHex))],
    [0x8e02, pub.spki],
  ]);
  await priv.withKeyLocator(h).sign(data);
  // NDNts reads its own output as a Prefix Announcement.
  const back = PrefixAnn.fromData(data);
  return {
    plain: { wire: wireOf(plain.data), version: now },
    sc: {
      wire: wireOf(data),
      h: toHex(h).toLowerCase(),
      version: now,
      announced_by_ndnts: back.announced.toString(),
    },
  };
}

function parse(hex) {
  const data = new Decoder(fromHex(hex)).decode(Data);
  const pa = PrefixAnn.fromData(data);
  return {
    announced: toHex(Encoder.encode(pa.announced)).toLowerCase(),
    expiration: pa.expirationPeriod,
    not_before: pa.validityPeriod?.notBefore ?? null,
    not_after: pa.validityPeriod?.notAfter ?? null,
    sig_type: data.sigInfo.type,
    key_digest: data.sigInfo.keyLocator?.digest ? toHex(data.sigInfo.keyLocator.digest).toLowerCase() : null,
  };
}

const out = mode === "make" ? await make(arg) : parse(arg);
process.stdout.write(`${JSON.stringify(out)}\n`);
