// Runtime shim, not a change to NDNts: the @ndn/* 0.0.20250307 packages declare
// `engines.node: ^22.11.0`, and the one newer-than-Node-20 API they call is
// Promise.withResolvers (ES2024; @ndn/util Closers.wait, @ndn/segmented-object serve). This
// installs the standard definition only when the runtime lacks it, so on Node >= 22 it does
// nothing. Imported first by app.mjs so it runs before any @ndn module is evaluated.
if (typeof Promise.withResolvers !== "function") {
  Object.defineProperty(Promise, "withResolvers", {
    configurable: true,
    writable: true,
    value: function withResolvers() {
      let resolve;
      let reject;
      const promise = new this((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
