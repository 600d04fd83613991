// Loads namewayd's status page in the system's headless Chromium (Debian's `chromium` package)
// through playwright-core, and reports what a person would see:
//
//   node status_page.mjs http://127.0.0.1:7380/ OUT_DIR [seconds]
//
// Prints one JSON line: console errors and page errors, the largest value each plot has shown,
// the tiles' text, and the screenshots written (desktop and phone sizes) into OUT_DIR.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";

const [url, outDir, seconds = "8"] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-gpu"] });
const errors = [];
const result = { errors, screenshots: [] };
try {
  for (const [label, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 390, height: 844 }]]) {
    const page = await browser.newPage({ viewport, deviceScaleFactor: label === "phone" ? 2 : 1 });
    page.on("console", (m) => { if (m.type() === "error") errors.push(`${label} console: ${m.text()}`); });
    page.on("pageerror", (e) => errors.push(`${label} page error: ${e.message}`));
    page.on("requestfailed", (r) => errors.push(`${label} request failed: ${r.url()}`));
    await page.goto(url, { waitUntil: "load" });
    await page.waitForTimeout(Number(seconds) * 1000);
    if (label === "desktop") {
      result.plots = await page.evaluate(() => {
        const out = {};
        for (const [id, u] of Object.entries(window.namewayPlots || {})) {
          out[id] = Math.max(0, ...u.data.slice(1).flat().filter((v) => v != null));
        }
        return out;
      });
      result.tiles = await page.evaluate(() =>
        Object.fromEntries([...document.querySelectorAll(".tile")].map((t) =>
          [t.querySelector(".label").textContent, t.querySelector(".value").textContent])));
      result.faces_rows = await page.locator("#faces tbody tr").count();
      result.state = await page.locator("#state").textContent();
    }
    // The page must not scroll sideways as a whole (tables scroll inside their own box).
    result[`${label}_overflow_x`] = await page.evaluate(() =>
      document.documentElement.scrollWidth - document.documentElement.clientWidth);
    const file = `${outDir}/status-page-${label}.png`;
    await page.screenshot({ path: file, fullPage: true });
    result.screenshots.push(file);
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
