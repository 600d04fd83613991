// NDNts producers that announce their prefixes with Prefix Announcements (npm @ndn/* 0.0.20250307,
// public API only), for crates/daemon/tests/routing.rs. Fed to node on standard input with
// tests/interop/ndnts as the working directory (so @ndn/* resolve from its node_modules);
// NDNTS_UPLINK is the forwarder (unix:///path), NDNTS_ARGS the router's hash in hex.
//
// @ndn/nfdmgmt enableNfdPrefixReg(face, { PrefixAnn }) sends rib/announce (the announcement in
// ApplicationParameters) for every produce() whose `announcement` is a PrefixAnn:
//   - /example/ndnts, a plain announcement from PrefixAnn.build (ECDSA key, @ndn/keychain);
//   - /32=sc/<h>, an announcement built with @ndn/packet: Ed25519 key whose SubjectPublicKeyInfo
//     hashes to h, Nameway's NwDelegate (the router) and NwPublicKey, KeyLocator = KeyDigest(h).
// Prints {"h": hex} then {"ready": true} once both are ADVERTISED (status 200), then
// {"served": name} per Interest.

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
const { produce } = await import("@ndn/endpoint");
const { ReadvertiseDestination } = await import("@ndn/fw");
const { Ed25519, generateSigningKey } = await import("@ndn/keychain");
const { Keyword, Segment, Version } = await import("@ndn/naming-convention2");
const { PrefixAnn, enableNfdPrefixReg } = await import("@ndn/nfdmgmt");
const { UnixTransport } = await import("@ndn/node-transport");
const { AltUri, Component, Data, Name, ValidityPeriod, digestSigning } = await import("@ndn/packet");
const { Encoder, NNI } = await import("@ndn/tlv");
const { fromHex, toHex } = await import("@ndn/util");

const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const routerHex = JSON.parse(process.env.NDNTS_ARGS)[0];
const scName = (h) => new Name([Keyword.create("sc"), new Component(0x08, h)]);

const u = new URL(process.env.NDNTS_UPLINK);
const face = await UnixTransport.createFace({}, decodeURIComponent(u.pathname));
const reg = enableNfdPrefixReg(face, { PrefixAnn });

const now = Date.now();
const [appKey] = await generateSigningKey("/example/ndnts");
const plain = await PrefixAnn.build({
  announced: "/example/ndnts",
  version: now,
  expirationPeriod: 600_000,
  validityPeriod: new ValidityPeriod(now, now + 600_000),
  signer: appKey,
});

const [priv, pub] = await generateSigningKey("/owner", Ed25519);
const h = new Uint8Array(createHash("sha256").update(pub.spki).digest());
const data = new Data();
data.name = scName(h).append(Keyword.create("PA"), Version.create(now), Segment.create(0));
data.contentType = 5;
data.content = Encoder.encode([
  [0x6d, NNI(600_000)],
  new ValidityPeriod(now, now + 600_000),
  [0x8e00, scName(fromHex(routerHex))],
  [0x8e02, pub.spki],
]);
await priv.withKeyLocator(h).sign(data);
const sc = PrefixAnn.fromData(data);
emit({ h: toHex(h).toLowerCase() });

for (const [prefix, pa, text] of [[plain.announced, plain, "ndnts plain"], [scName(h), sc, `ndnts owner ${toHex(h).toLowerCase()}`]]) {
  produce(prefix, async (interest) => {
    emit({ served: AltUri.ofName(interest.name) });
    return new Data(interest.name, Data.FreshnessPeriod(0), new TextEncoder().encode(text));
  }, { announcement: pa, dataSigner: digestSigning });
}

const started = Date.now();
while (true) {
  const statuses = [plain.announced, scName(h)].map((n) => reg.table.get(n)?.status);
  if (statuses.every((s) => s === ReadvertiseDestination.Status.ADVERTISED)) {
    break;
  }
  if (Date.now() - started > 15000) {
    emit({ error: `not advertised: ${statuses}` });
    process.exit(1);
  }
  await new Promise((r) => setTimeout(r, 20));
}
emit({ ready: true });
