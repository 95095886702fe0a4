// tprof report --flamegraph in a real headless Chromium (Debian's chromium, driven by
// playwright-core): the page loads without console errors, a click zooms, a regular-expression
// search highlights the right frames and shows the right share, the IPC legend and per-frame IPC
// are right. Expected values come from `perf script` on the same recordings, not from tprof.
//
//   node flamegraph.test.mjs TPROF DEMO_BINARY THROTTLE_PERF_DATA OUT_DIR OFF_CPU_BINARY
//
// THROTTLE_PERF_DATA is shared/testdata/perf/quipper-perf.data.throttle-3.8 (perf record -a -e
// cycles,instructions -c 10000). OFF_CPU_BINARY is test/workloads/off_cpu.c (sleeps of known
// lengths, then a spin). Screenshots are left in OUT_DIR.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { colouredShare, decodePng, rowsWhere } from './pixels.mjs';

const [tprof, demo, throttle, outDir, offCpu] = process.argv.slice(2);
if (!offCpu) {
  console.error('usage: flamegraph.test.mjs TPROF DEMO_BINARY THROTTLE_PERF_DATA OUT_DIR OFF_CPU_BINARY');
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tprof-flame-'));

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

function run(argv, options = {}) {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', maxBuffer: 1 << 28, ...options });
  if (r.error) throw r.error;
  return r;
}
function mustRun(argv, options = {}) {
  const r = run(argv, options);
  assert.equal(r.status, 0, `${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r;
}

// perf script -F period,ip,sym with callchains: a line with the period per sample, then one
// line per frame ("\taddr sym"), then a blank line.
function perfScriptStacks(file) {
  const text = mustRun(['perf', 'script', '-i', file, '-F', 'period,ip,sym', '--no-demangle'])
    .stdout;
  const stacks = [];
  let current = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '') { if (current) stacks.push(current); current = null; continue; }
    if (!/^\s/.test(line) || (current === null && /^\s*\d+\s*$/.test(line))) {
      if (current) stacks.push(current);
      current = { period: Number(line.trim().split(/\s+/)[0]), frames: [] };
      continue;
    }
    const m = line.trim().match(/^[0-9a-f]+\s+(.*)$/);
    if (current && m) current.frames.push(m[1]);
  }
  if (current) stacks.push(current);
  return stacks;
}

const browserArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];
const context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
  executablePath: '/usr/bin/chromium', headless: true, args: browserArgs,
  viewport: { width: 1280, height: 800 },
});

// Scrolls frame i into view (the chart scrolls when stacks are deep) and returns where to point.
async function pointAt(page, i) {
  return page.evaluate(i => {
    if (!__flame.frameBox(i)) return null;
    __flame.reveal(i);
    const v = __flame.frameBox(i);
    return { x: v.clientX + v.w / 2, y: v.clientY + v.h / 2, w: v.w };
  }, i);
}

// perf script text (what tprof report -i reads) of a profile like the Python one that opened
// blank: `shallow` task-clock samples of 1 ms with stacks 8 to 23 frames deep, and one sample
// whose stack is 127 frames deep (126 of them [unknown]).
function deepStackScript(shallow) {
  let text = '', seed = 7, address = 0x400000;
  const rand = n => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) % n; };
  const frame = name => `\t${(address++).toString(16)} ${name}+0x1 (/usr/bin/python3.11)\n`;
  for (let i = 0; i < shallow; i++) {
    const depth = 8 + rand(16);
    const names = ['main', 'Py_RunMain'];
    for (let d = 2; d < depth; d++) names.push(`eval_${d}_${rand(d < 5 ? 2 : 6)}`);
    text += `python3  4242  ${(100 + i / 1000).toFixed(6)}:    1000000 task-clock: \n`;
    text += names.reverse().map(frame).join('') + '\n';
  }
  text += `python3  4242  200.000000:    1000000 task-clock: \n`;
  for (let d = 0; d < 126; d++) text += `\t${(0x7f0000000000 + d * 64).toString(16)} [unknown] ([unknown])\n`;
  text += frame('main') + '\n';
  return text;
}

// A screenshot of the viewport as the page opened (no scrolling), decoded.
async function viewportShot(page, name) {
  const png = await page.screenshot({ path: path.join(outDir, name) });
  return decodePng(png);
}
const near = (a, b, tolerance = 3) => a.every((v, k) => Math.abs(v - b[k]) <= tolerance);
// The chart's horizontal extent on the screen, and the screen rows a frame of colour `rgb` as
// wide as the chart covers: the root frame when it is in view.
async function rootRows(page, img, rgb) {
  const c = await page.evaluate(() => {
    const r = document.getElementById('canvas').getBoundingClientRect();
    return { x0: Math.ceil(r.left) + 1, x1: Math.floor(r.right) - 2 };
  });
  return { ...c, rows: rowsWhere(img, c.x0, c.x1, p => near(p, rgb), 0.9) };
}

async function openPage(file) {
  const page = await context.newPage();
  const problems = [];
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
  page.on('pageerror', e => problems.push(e.message));
  page.on('request', r => { if (!r.url().startsWith('file:')) problems.push('network: ' + r.url()); });
  const started = Date.now();
  await page.goto('file://' + path.resolve(file));
  await page.waitForFunction(() => window.__flame !== undefined);
  return { page, problems, loadMs: Date.now() - started };
}

try {
  // ---- Name colours, on the demo recorded by perf (so that perf script is the reference). ----
  const perfData = path.join(work, 'demo.perf.data');
  mustRun(['perf', 'record', '-q', '-e', 'cpu-clock', '-c', '500000', '-g', '-o', perfData, '--',
    demo, '0.15']);
  const nameHtml = path.join(work, 'demo.html');
  const gen = mustRun([tprof, 'report', '-i', perfData, '--flamegraph', nameHtml]);
  assert.match(gen.stderr, /written to/);

  await check('name mode: page loads offline with no console errors', async () => {
    const { page, problems } = await openPage(nameHtml);
    const info = await page.evaluate(() => ({ n: __flame.nodeCount, drawn: __flame.drawnFrames,
      title: document.title }));
    assert.ok(info.n > 10, `only ${info.n} frames`);
    assert.ok(info.drawn > 5);
    assert.match(info.title, /cpu-clock/);
    assert.deepEqual(problems, []);
    // The same name always gets the same colour: two frames named "main" (one per process).
    const colours = await page.evaluate(() => __flame.find('^main$').map(i => __flame.colorOf(i)));
    assert.ok(colours.length >= 1);
    assert.equal(new Set(colours).size, 1);
    await page.close();
  });

  await check('name mode: a click zooms, Reset and Esc zoom out', async () => {
    const { page, problems } = await openPage(nameHtml);
    const target = await page.evaluate(() => {
      // The widest frame named like pointer_chase: its box is where to click.
      const hits = __flame.find('pointer_chase\\(').sort((a, b) =>
        __flame.data.total[b] - __flame.data.total[a]);
      return { index: hits[0], name: __flame.nameOf(hits[0]) };
    });
    const at = await pointAt(page, target.index);
    assert.ok(at && at.w > 20, 'pointer_chase is not drawn wide enough to click');
    await page.mouse.move(at.x, at.y);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await page.textContent('#tooltip');
    assert.ok(tip.includes(target.name) && /of total/.test(tip), tip);
    await page.mouse.click(at.x, at.y);
    assert.equal(await page.evaluate(() => __flame.zoomedFrame), target.name);
    // Zoomed: the frame fills the width, and its parent is still drawn (dimmed) under it.
    const after = await page.evaluate(i => ({ box: __flame.frameBox(i),
      parentBox: __flame.frameBox(__flame.parentOf(i)), width: document.getElementById('canvas').clientWidth }), target.index);
    assert.ok(Math.abs(after.box.w - after.width) < 1, JSON.stringify(after));
    assert.ok(after.parentBox !== null);
    await page.screenshot({ path: path.join(outDir, 'flamegraph-zoomed.png'), fullPage: true });
    await page.click('#reset');
    assert.equal(await page.evaluate(() => __flame.zoomedFrame), null);
    await page.evaluate(i => __flame.zoom(i), target.index);
    await page.keyboard.press('Escape');
    assert.equal(await page.evaluate(() => __flame.zoomedFrame), null);
    await page.click('#icicle');
    assert.equal(await page.evaluate(() => __flame.icicle), true);
    const rootBox = await page.evaluate(() => __flame.frameBox(0));
    const canvasTop = await page.evaluate(() => document.getElementById('canvas').getBoundingClientRect().top + scrollY);
    assert.ok(Math.abs(rootBox.y - canvasTop) < 1, 'icicle: the root is not at the top');
    assert.deepEqual(problems, []);
    await page.close();
  });

  await check('name mode: a regex search highlights the frames and shows perf\'s share', async () => {
    const pattern = 'pointer_chase|compute_kernel';
    const re = new RegExp(pattern);
    // Expected: the share of periods of samples whose stack has a matching function, from perf.
    const stacks = perfScriptStacks(perfData);
    assert.ok(stacks.length > 50, `perf script gave ${stacks.length} samples`);
    let all = 0, hit = 0;
    for (const s of stacks) {
      all += s.period;
      if (s.frames.some(f => re.test(f))) hit += s.period;
    }
    const expected = hit / all;
    assert.ok(expected > 0.1 && expected < 0.9, `expected share ${expected}`);
    const { page, problems } = await openPage(nameHtml);
    await page.fill('#search', pattern);
    await page.press('#search', 'Enter');
    const got = await page.evaluate(p => {
      const re = new RegExp(p);
      return { share: __flame.matchedShare, label: document.getElementById('matched').textContent,
        matched: __flame.matchedFrames, shouldMatch: __flame.find(p).filter(i => i > 0),
        colours: __flame.matchedFrames.map(i => __flame.colorOf(i)),
        allNamesMatch: __flame.matchedFrames.every(i => re.test(__flame.nameOf(i))) };
    }, pattern);
    assert.ok(Math.abs(got.share - expected) < 1e-9, `share ${got.share}, perf says ${expected}`);
    assert.ok(got.label.includes((100 * expected).toFixed(2) + '%'), got.label);
    assert.deepEqual(got.matched, got.shouldMatch);
    assert.ok(got.allNamesMatch);
    assert.ok(got.colours.every(c => c === 'rgb(230,0,230)'));
    await page.screenshot({ path: path.join(outDir, 'flamegraph-search.png'), fullPage: true });
    // A bad expression is reported on the page, not thrown.
    await page.fill('#search', 'foo(');
    await page.press('#search', 'Enter');
    assert.match(await page.textContent('#searchError'), /bad expression/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  await check('name mode: the sandwich of main gives perf\'s share and callers', async () => {
    // Expected from perf's own stacks (leaf first): the stacks through main, and the frame
    // after main's outermost occurrence, its caller.
    const stacks = perfScriptStacks(perfData);
    let all = 0, through = 0;
    const callers = new Map();
    for (const s of stacks) {
      all += s.period;
      const at = s.frames.lastIndexOf('main');
      if (at < 0) continue;
      through += s.period;
      const caller = s.frames[at + 1] || '(root)';
      callers.set(caller, (callers.get(caller) || 0) + s.period);
    }
    // How much of a run main holds depends on the machine (the demo's start-up is a memset in
    // libc): only that it holds a real share.
    assert.ok(through > 0.1 * all, `main on ${through} of ${all}`);
    const [topCaller, topPeriod] = [...callers.entries()].sort((a, b) => b[1] - a[1])[0];
    const { page, problems } = await openPage(nameHtml);
    const got = await page.evaluate(() => {
      const s = __flame.sandwich('main');
      const level1 = n => [...n.children.values()].map(c => [c.name, c.value / s.total]);
      return { share: s.total / __flame.data.total[0], callers: level1(s.callers),
        callees: level1(s.callees), text: __flame.sandwichText };
    });
    assert.ok(Math.abs(got.share - through / all) < 1e-9, `${got.share} vs perf ${through / all}`);
    const mine = got.callers.find(c => c[0] === topCaller);
    assert.ok(mine, `no caller ${topCaller} in ${JSON.stringify(got.callers)}`);
    assert.ok(Math.abs(mine[1] - topPeriod / through) < 1e-9, JSON.stringify([mine, topPeriod / through]));
    const callerSum = got.callers.reduce((a, c) => a + c[1], 0);
    assert.ok(Math.abs(callerSum - 1) < 1e-9, `callers add up to ${callerSum}`);
    assert.ok(got.callees.length >= 3, JSON.stringify(got.callees));
    assert.ok(got.callees.reduce((a, c) => a + c[1], 0) <= 1 + 1e-9);
    assert.match(got.text, /Sandwich of main/);
    await page.screenshot({ path: path.join(outDir, 'flamegraph-sandwich.png'), fullPage: true });
    await page.keyboard.press('Escape');
    assert.equal(await page.evaluate(() => __flame.sandwichText), '');
    assert.deepEqual(problems, []);
    await page.close();
  });

  // ---- The same demo recorded by tprof itself, with thread roots. ----
  await check('tprof record of the demo: thread roots, screenshot', async () => {
    const profile = path.join(work, 'demo.tprof');
    mustRun([tprof, 'record', '-e', 'cpu-clock', '-F', '2000', '-g', '-o', profile, '--', demo, '0.15']);
    // The default event: where it falls back (a VM) that is one line, and -q silences it and the
    // summary; the demo is built with frame pointers, so no short-stack note.
    const loud = mustRun([tprof, 'record', '-g', '-o', path.join(work, 'loud.tprof'), '--', demo, '0.05']);
    const ours = loud.stderr.split('\n').filter(l => /tprof record/.test(l));
    assert.ok(ours.some(l => l.startsWith('[ tprof record:')), loud.stderr);
    assert.ok(ours.filter(l => /instead/.test(l)).length <= 1, loud.stderr);
    assert.ok(!/frame pointers/.test(loud.stderr), loud.stderr);
    const quiet = mustRun([tprof, 'record', '-q', '-g', '-o', path.join(work, 'quiet.tprof'), '--', demo, '0.05']);
    assert.ok(!/tprof record/.test(quiet.stderr), quiet.stderr);
    const html = path.join(outDir, 'demo-threads.html');
    mustRun([tprof, 'report', '-i', profile, '--flamegraph', html, '--flame-roots', 'thread']);
    const { page, problems } = await openPage(html);
    const roots = await page.evaluate(() => __flame.find('.').filter(i => __flame.parentOf(i) === 0)
      .map(i => __flame.nameOf(i)));
    assert.ok(roots.some(r => /^demo-worker-\d+\/\d+$/.test(r)), roots.join(', '));
    // The demo's design: inline_mix_loop is 2 of 6 units of CPU time.
    await page.evaluate(() => __flame.search('inline_mix_loop'));
    const share = await page.evaluate(() => __flame.matchedShare);
    assert.ok(share > 0.2 && share < 0.5, `inline_mix_loop share ${share}`);
    await page.evaluate(() => __flame.search(''));
    await page.screenshot({ path: path.join(outDir, 'flamegraph-name.png'), fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  });

  await check('off-CPU recording: waits drawn blue, computing warm, tooltips in time units', async () => {
    const profile = path.join(work, 'off.tprof');
    // wait_long: 10 naps of 30 ms; wait_short: 10 of 10 ms; spin: about 0.1 s of computing.
    mustRun([tprof, 'record', '-q', '--off-cpu', '--call-graph', 'dwarf', '-e', 'task-clock',
      '-o', profile, '--', offCpu, '30', '10', '10', '100000000']);
    const html = path.join(outDir, 'flamegraph-off-cpu.html');
    const gen = mustRun([tprof, 'report', '-i', profile, '--flamegraph', html]);
    assert.match(gen.stderr, /wall time \(task-clock \+ off-cpu\)/);
    const { page, problems } = await openPage(html);
    const img = await viewportShot(page, 'flamegraph-off-cpu.png');
    // The middle pixel of a function's widest frame, as drawn.
    const pixelOf = async name => {
      const box = await page.evaluate(n => {
        const hits = __flame.find('^' + n + '$');
        hits.sort((a, b) => __flame.data.total[b] - __flame.data.total[a]);
        return __flame.frameBox(hits[0]);
      }, name);
      return { box, rgb: img.pixel(Math.round(box.clientX + box.w / 2), Math.round(box.clientY + box.h / 2)) };
    };
    const long = await pixelOf('wait_long'), spin = await pixelOf('spin');
    assert.ok(long.rgb[2] > long.rgb[0] + 60, `wait_long is not blue: ${long.rgb}`);
    // spin computes, but on a loaded host (a CI run beside a build) it waits for a CPU part of
    // the time, which the page counts off the CPU too (preempted): its colour follows its own
    // share, read from its tooltip. Mostly on the CPU: warm; either way warmer than the naps.
    await page.mouse.move(spin.box.clientX + spin.box.w / 2, spin.box.clientY + spin.box.h / 2);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const spinTip = await page.textContent('#tooltip');
    const spinOff = spinTip.match(/off-CPU %(\d+\.\d+)/);
    assert.ok(spinOff, spinTip);
    if (Number(spinOff[1]) < 20)
      assert.ok(spin.rgb[0] > spin.rgb[2] + 40, `spin (off-CPU ${spinOff[1]} %) is not warm: ${spin.rgb}`);
    assert.ok(spin.rgb[0] - spin.rgb[2] > long.rgb[0] - long.rgb[2] + 40,
      `spin (off-CPU ${spinOff[1]} %) is not warmer than wait_long: ${spin.rgb} against ${long.rgb}`);
    await page.mouse.move(0, 0);
    // The tooltip gives both times with units (300 ms of naps at least), not raw nanoseconds.
    await page.mouse.move(long.box.clientX + long.box.w / 2, long.box.clientY + long.box.h / 2);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await page.textContent('#tooltip');
    // At least 90 % off the CPU; 100 % when no clock sample happened to land in the few
    // microseconds of the waits' system calls (seen in a clean-clone run: on-CPU 0 ns).
    assert.match(tip, /off-CPU %(9\d\.\d+|100\.0+)/, tip);
    const offMs = tip.match(/off-CPU(\d+\.\d+) ms/);
    assert.ok(offMs && Number(offMs[1]) >= 300, tip);
    assert.match(tip, /on-CPU\d+(\.\d+)? (ns|\u00b5s|ms)/, tip);
    await page.screenshot({ path: path.join(outDir, 'flamegraph-off-cpu-tooltip.png') });
    assert.deepEqual(problems, []);
    await page.close();
  });

  // ---- IPC colours, on a real cycles + instructions recording. ----
  const ipcHtml = path.join(outDir, 'flamegraph-ipc.html');
  mustRun([tprof, 'report', '-i', throttle, '--flamegraph', ipcHtml, '--color', 'ipc',
    '--flame-roots', 'pid']);

  await check('ipc mode: legend, and each process frame\'s IPC equals perf\'s count ratio', async () => {
    // perf script: samples per pid per event; -c 10000 makes every period 10000.
    const text = mustRun(['perf', 'script', '-i', throttle, '-F', 'pid,event']).stdout;
    const counts = new Map();
    let cyclesAll = 0, instructionsAll = 0;
    for (const line of text.split('\n')) {
      const m = line.match(/^\s*(\d+)\s+(cycles|instructions):/);
      if (!m) continue;
      const c = counts.get(m[1]) || { cycles: 0, instructions: 0 };
      c[m[2]]++;
      counts.set(m[1], c);
      if (m[2] === 'cycles') cyclesAll++; else instructionsAll++;
    }
    assert.equal(cyclesAll, 9036);
    assert.equal(instructionsAll, 5944);
    const { page, problems } = await openPage(ipcHtml);
    const legend = await page.textContent('#legend');
    assert.ok(await page.isVisible('#legend'));
    assert.match(legend, /IPC = 1/);
    assert.match(legend, /fewer than 10 samples/);
    const root = await page.evaluate(() => ({ ipc: __flame.data.value[0], text: __flame.frameText(0) }));
    assert.ok(Math.abs(root.ipc - instructionsAll / cyclesAll) < 1e-5, `${root.ipc}`);
    const frames = await page.evaluate(() => __flame.find('-\\d+$').filter(i => __flame.parentOf(i) === 0)
      .map(i => ({ i, name: __flame.nameOf(i), ipc: __flame.data.value[i],
        cycles: __flame.data.columns[0][i], instructions: __flame.data.columns[1][i] })));
    // A process that changed its name (exec) has a root per name: sum them per pid.
    const byPid = new Map();
    for (const f of frames) {
      const pid = f.name.match(/-(\d+)$/)[1];
      if (!byPid.has(pid)) byPid.set(pid, []);
      byPid.get(pid).push(f);
    }
    let compared = 0, grey = 0;
    for (const [pid, list] of byPid) {
      const c = counts.get(pid);
      assert.ok(c, `no perf samples for pid ${pid}`);
      assert.equal(list.reduce((a, f) => a + f.cycles, 0), c.cycles * 10000, `pid ${pid}`);
      assert.equal(list.reduce((a, f) => a + f.instructions, 0), c.instructions * 10000, `pid ${pid}`);
      if (list.length !== 1) continue;
      const f = list[0];
      if (c.cycles < 10 || c.instructions < 10) {
        assert.equal(f.ipc, null, `${f.name} rests on too few samples but is coloured`);
        grey++;
      } else {
        assert.ok(Math.abs(f.ipc - c.instructions / c.cycles) < 1e-5, `${f.name}: ${f.ipc}`);
        compared++;
      }
    }
    // Every pid perf saw with cycles samples has a frame.
    for (const [pid, c] of counts) if (c.cycles) assert.ok(byPid.has(pid), `pid ${pid} has no frame`);
    // The tooltip of the busiest process shows its IPC, cycles and instructions.
    const [busiest, c] = [...counts.entries()].sort((a, b) => b[1].cycles - a[1].cycles)[0];
    const frame = byPid.get(busiest)[0];
    assert.equal(byPid.get(busiest).length, 1);
    const at = await pointAt(page, frame.i);
    await page.mouse.move(at.x, at.y);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await page.textContent('#tooltip');
    assert.ok(tip.includes('IPC' + (c.instructions / c.cycles).toFixed(3)), tip);
    assert.ok(tip.includes((c.cycles * 10000).toLocaleString('en-US')), tip);
    assert.ok(tip.includes('instructions samples' + c.instructions.toLocaleString('en-US')), tip);
    await page.screenshot({ path: path.join(outDir, 'flamegraph-ipc.png'), fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  });

  await check('ipc mode on a profile without cycles+instructions: one-line error', async () => {
    const r = run([tprof, 'report', '-i', perfData, '--flamegraph', path.join(work, 'x.html'),
      '--color', 'ipc']);
    assert.equal(r.status, 2);  // the command line asks for what the profile lacks
    assert.match(r.stderr, /^tprof report: .*no cycles and instructions samples/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    const s = run([tprof, 'report', '-i', throttle, '--flamegraph', path.join(work, 'y.html'),
      '--color', 'stall']);
    assert.equal(s.status, 2);
    assert.match(s.stderr, /no stall cycles/);
    const e = run([tprof, 'report', '-i', throttle, '--flamegraph', path.join(work, 'z.html'),
      '--event', 'nosuch']);
    assert.equal(e.status, 2);
    assert.match(e.stderr, /: no event 'nosuch' \(it has: cycles, instructions\)/);
  });

  await check('--event picks the event that sizes the frames', async () => {
    const html = path.join(work, 'instructions.html');
    mustRun([tprof, 'report', '-i', throttle, '--flamegraph', html, '--event', 'instructions']);
    const { page, problems } = await openPage(html);
    const got = await page.evaluate(() => ({ event: __flame.data.event, root: __flame.data.total[0],
      samples: __flame.data.samples[0], title: document.title }));
    assert.equal(got.event, 'instructions');
    assert.equal(got.root, 5944 * 10000);  // perf script: 5,944 instructions samples of 10,000
    assert.equal(got.samples, 5944);
    assert.match(got.title, /instructions/);
    assert.deepEqual(problems, []);
    await page.close();
  });
  // ---- What a user sees at 1400x900 on load, judged from screenshots. ----
  const deepScript = path.join(work, 'deep.perf-script.txt');
  fs.writeFileSync(deepScript, deepStackScript(3000));
  const deepHtml = path.join(outDir, 'flamegraph-deep.html');
  mustRun([tprof, 'report', '-i', deepScript, '--flamegraph', deepHtml]);

  await check('one 127-deep stack: the graph is in the first viewport, legend drawn, tooltip in ms/s', async () => {
    const { page, problems } = await openPage(deepHtml);
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.waitForTimeout(100);
    assert.equal(await page.evaluate(() => __flame.maxDepth), 127);  // all at 0, then 127 frames
    const img = await viewportShot(page, 'flamegraph-deep.png');
    // The root ("all", grey in name mode) spans the chart, on screen without scrolling.
    const root = await rootRows(page, img, [208, 208, 200]);
    assert.ok(root.rows.length >= 12, `the root frame is not in the first 1400x900 (rows ${root.rows})`);
    // Above it, the common frames: 8 levels every stack has at least, mostly coloured pixels.
    const top = root.rows[0];
    const band = colouredShare(img, { x: root.x0, y: top - 8 * 17, w: root.x1 - root.x0, h: 8 * 17 });
    assert.ok(band > 0.6, `only ${(100 * band).toFixed(1)}% of the 8 levels above the root are frames`);
    // The legend: in view, and its swatches drawn in the kinds' colours.
    assert.ok(await page.isVisible('#legend'));
    const legend = await page.locator('#legend').boundingBox();
    assert.ok(legend.y >= 0 && legend.y + legend.height <= 900, JSON.stringify(legend));
    assert.match(await page.textContent('#legend'), /user code.*kernel.*inlined.*root/);
    const swatch = async kind => {
      const b = await page.locator(`#legend .kind-${kind} .swatch`).boundingBox();
      return img.pixel(Math.round(b.x + b.width / 2), Math.round(b.y + b.height / 2));
    };
    const [user, kernel, inlined, rootSwatch] = await Promise.all(['u', 'k', 'i', 'r'].map(swatch));
    assert.ok(user[0] > user[2] + 80, `user swatch ${user}`);
    assert.ok(kernel[2] > kernel[0] + 40, `kernel swatch ${kernel}`);
    assert.ok(inlined[1] > inlined[0] + 40 && inlined[1] > inlined[2] + 40, `inlined swatch ${inlined}`);
    assert.ok(near(rootSwatch, [208, 208, 200]), `root swatch ${rootSwatch}`);
    // Hovering main (3,001 samples of 1 ms, counted here) without scrolling: a time, not 3001000000.
    const main = await page.evaluate(() => __flame.find('^main$')[0]);
    const box = await page.evaluate(i => __flame.frameBox(i), main);
    assert.ok(box.clientY > 0 && box.clientY + box.h < 900, `main is off screen: ${JSON.stringify(box)}`);
    await page.mouse.move(box.clientX + box.w / 2, box.clientY + box.h / 2);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    const tip = await page.textContent('#tooltip');
    assert.match(tip, /task-clock3\.001 s/, tip);
    assert.match(tip, /self0 ns \(0\.00%\)/, tip);  // every stack goes on below main
    assert.ok(!tip.includes('3,001,000,000'), tip);
    await page.screenshot({ path: path.join(outDir, 'flamegraph-deep-tooltip.png') });
    // The tall tower is reachable: revealing its top frame scrolls it into view.
    const deepest = await page.evaluate(() => {
      const d = __flame.data; let best = 0;
      for (let i = 0; i < d.depth.length; i++) if (d.depth[i] > d.depth[best]) best = i;
      let base = best;  // one sample of 3,001 is too narrow to draw: zoom to the tower first
      while (d.depth[base] > 2) base = __flame.parentOf(base);
      __flame.zoom(base);
      __flame.reveal(best);
      return __flame.frameBox(best);
    });
    assert.ok(deepest.clientY >= 0 && deepest.clientY + deepest.h <= 900, JSON.stringify(deepest));
    await page.screenshot({ path: path.join(outDir, 'flamegraph-deep-tower.png') });
    // Icicle: the root at the top of the chart, in view.
    await page.evaluate(() => __flame.reset());
    await page.click('#icicle');
    const icicle = await viewportShot(page, 'flamegraph-deep-icicle.png');
    const iroot = await rootRows(page, icicle, [208, 208, 200]);
    const chartTop = await page.evaluate(() => document.getElementById('chart').getBoundingClientRect().top);
    assert.ok(iroot.rows.length >= 12 && Math.abs(iroot.rows[0] - chartTop) <= 2,
      `icicle root rows ${iroot.rows.slice(0, 3)}, chart top ${chartTop}`);
    assert.deepEqual(problems, []);
    await page.close();
  });

  await check('ipc page at 1400x900: frames and legend in view, tooltip counts name their event', async () => {
    const { page, problems } = await openPage(ipcHtml);
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.waitForTimeout(100);
    const img = await viewportShot(page, 'flamegraph-ipc-viewport.png');
    const chart = await page.evaluate(() => {
      const r = document.getElementById('chart').getBoundingClientRect();
      return { x: r.left, y: r.top, w: r.width, h: Math.min(r.bottom, innerHeight) - r.top };
    });
    const levels = Math.min(10, 1 + await page.evaluate(() => __flame.maxDepth));
    assert.ok(chart.y >= 0 && chart.h >= levels * 17, JSON.stringify(chart));
    // The bottom levels of the chart (the roots and their callees) are drawn frames.
    const share = colouredShare(img, { x: chart.x, y: chart.y + chart.h - levels * 17, w: chart.w, h: levels * 17 });
    assert.ok(share > 0.3, `${(100 * share).toFixed(1)}% coloured`);
    const legend = await page.locator('#legend .bar').boundingBox();
    assert.ok(legend && legend.y + legend.height <= 900);
    const mid = img.pixel(Math.round(legend.x + legend.width / 8), Math.round(legend.y + legend.height / 2));
    assert.ok(mid[0] > mid[2] + 60, `the legend's low-IPC end is not red: ${mid}`);
    const busiest = await page.evaluate(() => __flame.find('-\\d+$').filter(i => __flame.parentOf(i) === 0)
      .sort((a, b) => __flame.data.total[b] - __flame.data.total[a])[0]);
    const at = await pointAt(page, busiest);
    await page.mouse.move(at.x, at.y);
    await page.waitForSelector('#tooltip', { state: 'visible' });
    assert.match(await page.textContent('#tooltip'), /cycles[\d,]+ cycles/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  await check('100,000 frames: loads, zooms and searches without freezing', async () => {
    // 6,000 distinct 20-frame stacks sharing only their first few frames: ~100,000 frames.
    let folded = '', seed = 1;
    const rand = n => {  // xorshift32
      seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    for (let i = 0; i < 6000; i++) {
      let stack = 'main';
      for (let d = 1; d < 20; d++) stack += `;fn_${d}_${rand(d < 4 ? 4 : 40)}`;
      folded += `${stack};leaf_${i} ${1 + rand(20)}\n`;
    }
    const file = path.join(work, 'wide.folded');
    fs.writeFileSync(file, folded);
    const html = path.join(work, 'wide.html');
    mustRun([tprof, 'report', '-i', file, '--flamegraph', html]);
    const size = fs.statSync(html).size;
    assert.ok(size < 4e6, `${size} bytes`);
    const { page, problems, loadMs } = await openPage(html);
    const r = await page.evaluate(() => {
      const time = f => { const t0 = performance.now(); f(); return performance.now() - t0; };
      return { frames: __flame.nodeCount, drawn: __flame.drawnFrames,
        zoom: time(() => __flame.zoom(__flame.find('^fn_1_')[0])),
        search: time(() => __flame.search('leaf_1')), reset: time(() => __flame.reset()),
        leaves: __flame.find('^leaf_').length };
    });
    assert.equal(r.leaves, 6000);
    assert.ok(r.frames > 90000, `${r.frames} frames`);
    assert.ok(r.drawn < r.frames / 10, `${r.drawn} of ${r.frames} frames drawn: narrow ones not skipped`);
    assert.ok(loadMs < 10000 && r.zoom < 1000 && r.search < 1000 && r.reset < 1000, JSON.stringify({ loadMs, ...r }));
    console.log(`     ${r.frames} frames, ${size} bytes: load ${loadMs} ms, zoom ${r.zoom.toFixed(0)} ms, ` +
      `search ${r.search.toFixed(0)} ms`);
    assert.deepEqual(problems, []);
    await page.close();
  });
} finally {
  await context.close();
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
