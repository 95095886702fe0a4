// tprof diff --flamegraph in a real headless Chromium (Debian's chromium, driven by
// playwright-core): the differential page loads without console errors, a click zooms, the
// search works, the legend is symmetric around white, a vanished stack is drawn (with its old
// width) and marked, the self/total switch recolours, and a frame's tooltip shows old, new and
// delta values that this test computes itself from the folded inputs it writes.
//
//   node diff_flamegraph.test.mjs TPROF OUT_DIR [DIFF_WORKLOAD]
//
// With DIFF_WORKLOAD (test/workloads/diff_workload.cpp), also two real recordings of it: old
// "100 60 40" and new "200 60 0" units of work_alpha, work_beta, work_gamma (alpha doubled,
// gamma gone).
// Screenshots are left in OUT_DIR.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [tprof, outDir, workload] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: diff_flamegraph.test.mjs TPROF OUT_DIR');
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tprof-diffflame-'));

let passed = 0, failed = 0;
async function check(name, body) {
  const started = Date.now();
  try {
    await body();
    passed++;
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n${e.stack || e}`);
  }
}
function mustRun(argv) {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8' });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, `${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r;
}

// The two sides. legacy_path vanishes, fresh_cache appears, compute grows, parse shrinks, io
// stays the same.
const OLD = [['main;work;compute', 400], ['main;work;parse', 200], ['main;legacy;legacy_path', 150],
  ['main;io', 250]];
const NEW = [['main;work;compute', 700], ['main;work;parse', 180], ['main;io', 250],
  ['main;fresh_cache', 50]];
const folded = stacks => stacks.map(([s, n]) => `${s} ${n}\n`).join('');
// A frame's total on one side: the counts of the stacks that pass through its path.
const through = (stacks, prefix) => stacks.filter(([s]) => s === prefix || s.startsWith(prefix + ';'))
  .reduce((a, [, n]) => a + n, 0);
const oldTotal = through(OLD, 'main'), newTotal = through(NEW, 'main');

const oldFile = path.join(work, 'old.folded'), newFile = path.join(work, 'new.folded');
fs.writeFileSync(oldFile, folded(OLD));
fs.writeFileSync(newFile, folded(NEW));
const html = path.join(outDir, 'diff-flamegraph.html');
const gen = mustRun([tprof, 'diff', oldFile, newFile, '--flamegraph', html]);
assert.match(gen.stderr, /written to/);

const browserArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];
const context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
  executablePath: '/usr/bin/chromium', headless: true, args: browserArgs,
  viewport: { width: 1280, height: 700 },
});
async function openPage(file) {
  const page = await context.newPage();
  const problems = [];
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
  page.on('pageerror', e => problems.push(e.message));
  page.on('request', r => { if (!r.url().startsWith('file:')) problems.push('network: ' + r.url()); });
  await page.goto('file://' + path.resolve(file));
  await page.waitForFunction(() => window.__flame !== undefined);
  return { page, problems };
}
async function pointAt(page, i) {
  return page.evaluate(i => {
    const b = __flame.frameBox(i);
    if (!b) return null;
    window.scrollTo(0, Math.max(0, b.y - innerHeight / 2));
    const v = __flame.frameBox(i);
    return { x: v.clientX + v.w / 2, y: v.clientY + v.h / 2, w: v.w };
  }, i);
}
const rgbOf = c => c.match(/\d+/g).map(Number);
const index = (page, name) => page.evaluate(n => __flame.find('^' + n + '$')[0], name);

try {
  const { page, problems } = await openPage(html);

  await check('diff page loads offline; legend is symmetric around white', async () => {
    assert.match(await page.title(), /differential/);
    assert.ok(await page.isVisible('#legend'));
    const legend = await page.textContent('#legend');
    assert.match(legend, /old total/);
    assert.match(legend, /-5 pt/);
    assert.match(legend, /\+5 pt/);
    assert.match(legend, /gone/);
    const scale = await page.evaluate(() => __flame.data.scale);
    assert.equal(scale.min, -scale.max);
    assert.ok(scale.max > 0);
    const zero = scale.stops.find(s => s[0] === 0);
    assert.ok(zero && zero[1].toLowerCase() === '#ffffff', JSON.stringify(scale.stops));
    // Stops mirror each other: the same |value| on both sides.
    const values = scale.stops.map(s => s[0]);
    assert.deepEqual(values.map(v => -v).sort((a, b) => a - b).map(v => v || 0),
      values.slice().sort((a, b) => a - b));
    assert.match(await page.textContent('#subtitle'), /not normalized/);
    // Unchanged io is white, grown compute red, shrunk parse blue.
    const [io, compute, parse] = await Promise.all(['io', 'compute', 'parse'].map(n => index(page, n)));
    const colours = await page.evaluate(ix => ix.map(i => __flame.colorOf(i)), [io, compute, parse]);
    assert.deepEqual(rgbOf(colours[0]), [255, 255, 255]);
    const [cr, , cb] = rgbOf(colours[1]);
    assert.ok(cr > 150 && cb < 80, colours[1]);
    const [pr, , pb] = rgbOf(colours[2]);
    assert.ok(pb > pr, colours[2]);
  });

  await check('the vanished stack is drawn with its old width and marked "gone"', async () => {
    const legacy = await index(page, 'legacy');
    const leaf = await index(page, 'legacy_path');
    assert.ok(legacy > 0 && leaf > 0, 'legacy frames missing');
    const got = await page.evaluate(([a, b]) => ({ marked: [__flame.isMarked(a), __flame.isMarked(b)],
      width: __flame.data.total[a], root: __flame.data.total[0],
      others: __flame.find('.').filter(i => __flame.isMarked(i)).length,
      box: __flame.frameBox(a), canvas: document.getElementById('canvas').clientWidth }), [legacy, leaf]);
    assert.deepEqual(got.marked, [true, true]);
    assert.equal(got.others, 2);  // only legacy and legacy_path
    assert.equal(got.width, through(OLD, 'main;legacy'));
    assert.equal(got.root, newTotal + through(OLD, 'main;legacy'));
    // Drawn, as wide as its share of the widened root.
    assert.ok(Math.abs(got.box.w - got.canvas * 150 / got.root) < 1, JSON.stringify(got));
    const at = await pointAt(page, legacy);
    await page.mouse.move(at.x, at.y);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await page.textContent('#tooltip');
    assert.match(tip, /status\s*gone/, tip);
    assert.ok(tip.includes('delta total % of frame-100'), tip);
  });

  await check('tooltip of compute: old, new, delta, % of frame, % of old total', async () => {
    const o = through(OLD, 'main;work;compute'), n = through(NEW, 'main;work;compute');
    const compute = await index(page, 'compute');
    const at = await pointAt(page, compute);
    await page.mouse.move(at.x, at.y);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await page.textContent('#tooltip');
    const fmt = v => v.toLocaleString('en-US', { maximumFractionDigits: 3 });
    assert.ok(tip.includes('old total' + fmt(o)), tip);
    assert.ok(tip.includes('new total' + fmt(n)), tip);
    assert.ok(tip.includes('delta total' + fmt(n - o)), tip);
    assert.ok(tip.includes('delta total % of frame' + fmt(100 * (n - o) / o)), tip);
    assert.ok(tip.includes('delta total % of old total' + fmt(100 * (n - o) / oldTotal)), tip);
    assert.ok(!/status/.test(tip), 'compute is not gone');
    await page.screenshot({ path: path.join(outDir, 'diff-flamegraph.png'), fullPage: true });
  });

  await check('the self/total switch recolours', async () => {
    const work = await index(page, 'work');
    const before = await page.evaluate(i => __flame.colorOf(i), work);
    assert.notDeepEqual(rgbOf(before), [255, 255, 255]);  // work's total grew by 280
    await page.click('#colorMode');
    const after = await page.evaluate(i => ({ mode: __flame.colorMode, colour: __flame.colorOf(i),
      legend: document.getElementById('legend').textContent }), work);
    assert.equal(after.mode, 'self delta');
    assert.deepEqual(rgbOf(after.colour), [255, 255, 255]);  // work has no self time on either side
    assert.match(after.legend, /^self delta/);
    await page.screenshot({ path: path.join(outDir, 'diff-flamegraph-self.png'), fullPage: true });
    await page.click('#colorMode');
    assert.equal(await page.evaluate(() => __flame.colorMode), 'total delta');
  });

  await check('a click zooms; the search shows the matched share', async () => {
    const workIndex = await index(page, 'work');
    const at = await pointAt(page, workIndex);
    await page.mouse.click(at.x, at.y);
    assert.equal(await page.evaluate(() => __flame.zoomedFrame), 'work');
    await page.click('#reset');
    await page.fill('#search', 'legacy|fresh');
    await page.press('#search', 'Enter');
    const share = await page.evaluate(() => __flame.matchedShare);
    const expected = (through(OLD, 'main;legacy') + through(NEW, 'main;fresh_cache')) /
      (newTotal + through(OLD, 'main;legacy'));
    assert.ok(Math.abs(share - expected) < 1e-9, `${share} vs ${expected}`);
    assert.deepEqual(problems, []);
  });
  await page.close();

  await check('--normalize total: the subtitle says uniform changes are hidden', async () => {
    const doubled = path.join(work, 'doubled.folded');
    fs.writeFileSync(doubled, folded(OLD.map(([s, n]) => [s, 2 * n])));
    const out = path.join(work, 'normalized.html');
    mustRun([tprof, 'diff', oldFile, doubled, '--flamegraph', out, '--normalize', 'total']);
    const { page: p, problems: pp } = await openPage(out);
    assert.match(await p.textContent('#subtitle'), /hides uniform changes/);
    // A uniform 2x slowdown, normalized: every frame white.
    const colours = await p.evaluate(() => __flame.find('.').map(i => __flame.colorOf(i)));
    assert.ok(colours.every(c => c === 'rgb(255,255,255)'), colours.join(' '));
    assert.deepEqual(pp, []);
    await p.close();
  });

  if (workload) await check('real recordings: work_gamma gone, work_alpha about doubled', async () => {
    const rec = (name, units) => {
      const file = path.join(work, name + '.tprof');
      mustRun([tprof, 'record', '-e', 'cpu-clock', '-c', '100000', '-g', '-o', file, '--', workload,
        ...units]);
      return file;
    };
    const oldRec = rec('old', ['100', '60', '40']), newRec = rec('new', ['200', '60', '0']);
    const out = path.join(outDir, 'diff-flamegraph-real.html');
    mustRun([tprof, 'diff', oldRec, newRec, '--flamegraph', out]);
    const { page: p, problems: pp } = await openPage(out);
    const frames = await p.evaluate(() => {
      const D = __flame.data, col = n => D.columns[D.columnNames.indexOf(n)];
      const widest = name => __flame.find('^' + name + '$').sort((a, b) => D.total[b] - D.total[a])[0];
      return ['work_alpha', 'work_beta', 'work_gamma'].map(name => {
        const i = widest(name);
        return { name, i, marked: __flame.isMarked(i), old: col('old total')[i],
          new: col('new total')[i], pctFrame: col('delta total % of frame')[i], colour: __flame.colorOf(i) };
      });
    });
    const [alpha, beta, gamma] = frames;
    assert.ok(gamma.i !== undefined && gamma.marked && gamma.new === 0 && gamma.old > 0, JSON.stringify(gamma));
    assert.ok(!alpha.marked && !beta.marked);
    // 2x the work units: about +100 % (one CPU-clock run each; generous bounds for a shared VM).
    assert.ok(alpha.pctFrame > 50 && alpha.pctFrame < 160, JSON.stringify(alpha));
    assert.ok(Math.abs(beta.pctFrame) < 40, JSON.stringify(beta));
    const [r, , b] = rgbOf(alpha.colour);
    assert.ok(r > b, alpha.colour);
    const at = await pointAt(p, gamma.i);
    assert.ok(at && at.w > 5, 'work_gamma not drawn');
    await p.mouse.move(at.x, at.y);
    await p.waitForSelector('#tooltip', { state: 'visible' });
    assert.match(await p.textContent('#tooltip'), /status\s*gone/);
    await p.screenshot({ path: path.join(outDir, 'diff-flamegraph-real.png'), fullPage: true });
    assert.deepEqual(pp, []);
    await p.close();
  });
} finally {
  await context.close();
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
