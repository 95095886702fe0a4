// Times a flame graph page in headless Chromium: load (parse + first draw), a zoom, a search,
// a reset. Used by bench/flamegraph_bench.sh; needs test/browser's node_modules.
//   node bench/flamegraph_load.mjs PAGE.html
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(path.resolve(path.dirname(new URL(import.meta.url).pathname),
  '../test/browser/package.json'));
const { chromium } = require('playwright-core');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tprof-flame-bench-'));
const context = await chromium.launchPersistentContext(dir, {
  executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1600, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(e.message));
  let t = Date.now();
  await page.goto('file://' + path.resolve(process.argv[2]));
  await page.waitForFunction(() => window.__flame !== undefined, null, { timeout: 120000 });
  const load = Date.now() - t;
  const r = await page.evaluate(() => {
    const time = f => { const t0 = performance.now(); f(); return performance.now() - t0; };
    const d = __flame.data;
    // Zoom on the widest child of the root, then search for a common substring, then reset.
    let widest = 1;
    for (let i = 1; i < __flame.nodeCount; i++)
      if (__flame.parentOf(i) === 0 && d.total[i] > d.total[widest]) widest = i;
    return {
      frames: __flame.nodeCount, drawn: __flame.drawnFrames,
      zoom: time(() => __flame.zoom(widest)),
      search: time(() => __flame.search('1|a')),
      reset: time(() => __flame.reset()),
      share: __flame.matchedShare,
      // The timeline: a range of the middle fifth drawn, then compared with the first fifth.
      lanes: __flame.timeline ? __flame.timeline.lanes.length : 0,
      range: __flame.timeline ? time(() => __flame.selectRange(
        Math.floor(__flame.timeline.buckets * 0.4), Math.floor(__flame.timeline.buckets * 0.6))) : NaN,
      compare: __flame.timeline ? time(() => __flame.compareRanges(0, Math.floor(__flame.timeline.buckets * 0.2),
        Math.floor(__flame.timeline.buckets * 0.4), Math.floor(__flame.timeline.buckets * 0.6))) : NaN,
      whole: __flame.timeline ? time(() => __flame.wholeProfile()) : NaN,
    };
  });
  console.log(`browser: load ${load} ms, ${r.frames} frames (${r.drawn} drawn at full view), ` +
    `zoom ${r.zoom.toFixed(0)} ms, search ${r.search.toFixed(0)} ms, reset ${r.reset.toFixed(0)} ms` +
    (r.lanes ? `; timeline of ${r.lanes} threads: range ${r.range.toFixed(0)} ms, compare ` +
      `${r.compare.toFixed(0)} ms, whole again ${r.whole.toFixed(0)} ms` : '') +
    (errors.length ? `, ERRORS: ${errors.join('; ')}` : ''));
} finally {
  await context.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
