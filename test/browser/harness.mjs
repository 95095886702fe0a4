// What the browser tests share: named checks that count passes and failures, commands that must
// succeed, and a headless Chromium (Debian's chromium, driven by playwright-core) whose pages
// record console errors and page errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

export class Checks {
  passed = 0;
  failed = 0;
  async check(name, body) {
    const started = Date.now();
    try {
      await body();
      this.passed++;
      console.log(`ok   ${name} (${Date.now() - started} ms)`);
    } catch (e) {
      this.failed++;
      console.log(`FAIL ${name}\n${e.stack || e}`);
    }
  }
  // Prints the tally and ends the process: status 1 when any check failed.
  finish() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    process.exit(this.failed ? 1 : 0);
  }
}

export function mustRun(argv) {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, `${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r;
}

// A browser with its profile in `work`, and a way to open a page in it.
export async function launchBrowser(work, viewport) {
  const context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
    executablePath: '/usr/bin/chromium', headless: true, viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // A page of `file`, once its script has run; `problems` collects console errors and warnings,
  // page errors and any request off the file (the pages are offline).
  const openPage = async file => {
    const page = await context.newPage();
    const problems = [];
    page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
    page.on('pageerror', e => problems.push(e.message));
    page.on('request', r => { if (!r.url().startsWith('file:')) problems.push('network: ' + r.url()); });
    await page.goto('file://' + path.resolve(file));
    await page.waitForFunction(() => window.__flame !== undefined);
    return { page, problems };
  };
  const close = async () => {
    await context.close();
    fs.rmSync(work, { recursive: true, force: true });
  };
  return { context, openPage, close };
}
