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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Checks, launchBrowser, mustRun } from './harness.mjs';
import { colouredShare, decodePng, rowsWhere } from './pixels.mjs';

const [tprof, outDir, workload] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: diff_flamegraph.test.mjs TPROF OUT_DIR');
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tprof-diffflame-'));

const checks = new Checks();
const check = checks.check.bind(checks);

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

const browser = await launchBrowser(fs.mkdtempSync(path.join(os.tmpdir(), 'tprof-diffflame-browser-')),
  { width: 1280, height: 700 });
const openPage = browser.openPage;
async function pointAt(page, i) {
  return page.evaluate(i => {
    if (!__flame.frameBox(i)) return null;
    __flame.reveal(i);
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
    assert.ok(tip.includes('width150 samples = its old total'), tip);
    assert.ok(tip.includes('delta total-150 samples (-100% of old'), tip);
  });

  await check('tooltip of compute: old, new, delta, % of frame, % of old total', async () => {
    const o = through(OLD, 'main;work;compute'), n = through(NEW, 'main;work;compute');
    const compute = await index(page, 'compute');
    const at = await pointAt(page, compute);
    await page.mouse.move(at.x, at.y);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await page.textContent('#tooltip');
    const fmt = v => v.toLocaleString('en-US', { maximumFractionDigits: 3 });
    const share = (v, all) => (100 * v / all).toFixed(2) + '%';
    assert.ok(tip.includes(`width${fmt(n)} samples = new total`), tip);
    assert.ok(tip.includes(`old total${fmt(o)} samples (${share(o, oldTotal)} of old)`), tip);
    assert.ok(tip.includes(`new total${fmt(n)} samples (${share(n, newTotal)} of new)`), tip);
    assert.ok(tip.includes(`delta total+${fmt(n - o)} samples (+${fmt(100 * (n - o) / o)}% of old, ` +
      `+${fmt(100 * (n - o) / oldTotal)} pt of old total)`), tip);
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
    // Matches keep their delta colour (the answer) and are outlined, not painted magenta.
    const matches = await page.evaluate(() => __flame.matchedFrames.map(i =>
      ({ colour: __flame.colorOf(i), outlined: __flame.isOutlinedMatch(i) })));
    assert.ok(matches.length >= 2, JSON.stringify(matches));
    for (const m of matches) {
      assert.notEqual(m.colour, 'rgb(230,0,230)');
      assert.ok(m.outlined);
    }
    // The details line follows the pointer: empty once it leaves the graph.
    const cat = await pointAt(page, workIndex);
    await page.mouse.move(cat.x, cat.y);
    assert.ok((await page.evaluate(() => __flame.detailsLine)).startsWith('work'));
    await page.mouse.move(2, 2);
    assert.equal(await page.evaluate(() => __flame.detailsLine), '');
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

  // ---- What a user sees at 1400x900 on load, judged from screenshots: perf script text of
  // task-clock samples of 1 ms; the new side has one 127-deep stack, compute grew by 800 ms and
  // legacy_path (100 ms) is gone. ----
  await check('diff page with one 127-deep stack: graph in view, tooltip in ms/s that adds up', async () => {
    const OLD_MS = [['main;work;compute', 1000], ['main;work;parse', 600], ['main;legacy;legacy_path', 100],
      ['main;io', 300]];
    const NEW_MS = [['main;work;compute', 1800], ['main;work;parse', 600], ['main;io', 300],
      ['main' + ';[unknown]'.repeat(126), 1]];
    let time = 0;
    const script = stacks => stacks.map(([s, n]) => {
      const frames = s.split(';').reverse().map((f, k) => `\t${(0x400000 + 16 * k).toString(16)} ${f} (/usr/bin/app)\n`).join('');
      let out = '';
      for (let i = 0; i < n; i++) out += `app  77  ${(100 + (time++) / 1e4).toFixed(6)}:    1000000 task-clock: \n${frames}\n`;
      return out;
    }).join('');
    const oldScript = path.join(work, 'old.script.txt'), newScript = path.join(work, 'new.script.txt');
    fs.writeFileSync(oldScript, script(OLD_MS));
    fs.writeFileSync(newScript, script(NEW_MS));
    // The text diff of the same files: ms with the unit in the header, the glossary only pointed at.
    const text = mustRun([tprof, 'diff', oldScript, newScript]).stdout;
    assert.match(text, /Old \(ms\)\s+New \(ms\)\s+Delta \(ms\)/, text);
    assert.match(text, /^\s+1000\.000\s+1800\.000\s+\+800\.000\s+\+80\.00%.*compute/m, text);
    assert.match(text, /old total 2000\.000 ms, new total 2701\.000 ms/, text);
    assert.ok(!text.includes('the change relative to'), 'the column glossary is printed on a run');
    assert.equal(text.split('\n').filter(l => /columns/.test(l)).length, 1, text);
    const out = path.join(outDir, 'diff-flamegraph-deep.html');
    mustRun([tprof, 'diff', oldScript, newScript, '--flamegraph', out]);
    const { page: p, problems: pp } = await openPage(out);
    await p.setViewportSize({ width: 1400, height: 900 });
    await p.waitForTimeout(100);
    const png = await p.screenshot({ path: path.join(outDir, 'diff-flamegraph-deep.png') });
    const img = decodePng(png);
    // The root grew by +35 pt: the scale's full red (#b2182b), as wide as the chart, in view.
    const c = await p.evaluate(() => {
      const r = document.getElementById('canvas').getBoundingClientRect();
      return { x0: Math.ceil(r.left) + 1, x1: Math.floor(r.right) - 2 };
    });
    const red = rowsWhere(img, c.x0, c.x1, ([r, g, b]) => Math.abs(r - 178) < 4 && g < 30 && Math.abs(b - 43) < 4);
    assert.ok(red.length >= 12, `the root is not in the first 1400x900 (red rows ${red})`);
    const band = colouredShare(img, { x: c.x0, y: red[0] - 2 * 17, w: c.x1 - c.x0, h: 2 * 17 });
    assert.ok(band > 0.5, `the two levels above the root are ${(100 * band).toFixed(1)}% coloured`);
    const legend = await p.locator('#legend').boundingBox();
    assert.ok(legend.y + legend.height <= 900);
    // The root's tooltip, without scrolling: width = new total + what is gone, each with a unit.
    const box = await p.evaluate(() => __flame.frameBox(0));
    assert.ok(box.clientY > 0 && box.clientY + box.h < 900, JSON.stringify(box));
    await p.mouse.move(box.clientX + box.w / 2, box.clientY + box.h / 2);
    await p.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await p.textContent('#tooltip');
    await p.screenshot({ path: path.join(outDir, 'diff-flamegraph-deep-tooltip.png') });
    const sum = st => st.reduce((a, [, n]) => a + n, 0);
    const oldMs = sum(OLD_MS), newMs = sum(NEW_MS), goneMs = 100;  // 2000, 2701
    const secs = ms => (ms / 1000).toFixed(3) + ' s';
    assert.ok(tip.includes(`width${secs(newMs + goneMs)} (100.00% of the width)`), tip);
    assert.ok(tip.includes(`= new total ${secs(newMs)} + gone below ${goneMs.toFixed(2)} ms`), tip);
    assert.ok(tip.includes(`old total${secs(oldMs)} (100.00% of old)`), tip);
    assert.ok(tip.includes(`new total${secs(newMs)} (100.00% of new)`), tip);
    assert.ok(tip.includes(`delta total+${(newMs - oldMs).toFixed(2)} ms (+35.05% of old, +35.05 pt of old total)`), tip);
    // Every number adds up: parse them back.
    const ms = t => { const m = t.match(/([\d.]+) (s|ms)/); return m[2] === 's' ? 1000 * m[1] : Number(m[1]); };
    const width = ms(tip.match(/width([\d.]+ m?s)/)[1]);
    const parts = tip.match(/= new total ([\d.]+ m?s) \+ gone below ([\d.]+ m?s)/);
    assert.ok(Math.abs(width - ms(parts[1]) - ms(parts[2])) < 1e-6, tip);
    // compute: not widened by anything gone; its shares of each side's total.
    const compute = await p.evaluate(() => __flame.find('^compute$')[0]);
    const at = await pointAt(p, compute);
    await p.mouse.move(at.x, at.y);
    const ctip = await p.textContent('#tooltip');
    assert.ok(ctip.includes(`width${secs(1800)} = new total`), ctip);
    assert.ok(ctip.includes(`new total${secs(1800)} (${(100 * 1800 / newMs).toFixed(2)}% of new)`), ctip);
    assert.ok(ctip.includes(`old total${secs(1000)} (${(100 * 1000 / oldMs).toFixed(2)}% of old)`), ctip);
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
    // The frame's delta column is its own old and new totals, as the tooltip says.
    for (const f of [alpha, beta])
      assert.ok(Math.abs(f.pctFrame - 100 * (f.new - f.old) / f.old) < 0.01, JSON.stringify(f));
    // 2x work_alpha's units at the same work_beta: alpha's time against beta's doubles. Compared
    // within each recording, not across them: CI once measured alpha +45 % and every function
    // slower per unit in one run, as a VM's steal time and a busy sibling core charge CPU time
    // to whatever runs; the workload interleaves the functions, so load slows them alike.
    const growth = (alpha.new / beta.new) / (alpha.old / beta.old);
    assert.ok(growth > 1.5 && growth < 2.6, `alpha/beta grew x${growth.toFixed(2)}, not about x2: ` +
      JSON.stringify([alpha, beta]));
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
  await browser.close();
  fs.rmSync(work, { recursive: true, force: true });
}
checks.finish();
