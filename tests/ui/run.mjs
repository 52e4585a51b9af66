// A small runner of the browser tests of the web UI: playwright-core driving
// Debian's chromium against a `berth serve` on loopback (tests/ui.sh starts it).
// The cases are in cases.mjs: `export const cases = [{name, run: async (t) => {}}]`,
// each optionally with `viewport` {width, height}, `timeout` (ms, default 30000) and
// `expectExternal: true` (the case passes only if the page asked for something
// outside the server's origin: it tests the runner's own check).
//
// Each case gets a fresh browser context and `t`:
//   page, context, url, tokens {admin, user, viewer (of project demo), star (admin of *)}, home,
//   step(name)          a screenshot <case>-<NN>-<name>.png into BERTH_ARTIFACTS
//   expect(cond, msg)   throws msg when cond is false
//   api(method, path, {token, body})  a fetch from node to the server:
//                       {status, json, text} (json null when the body is not JSON)
// A case fails on a thrown error, on its timeout, on any request of the page that
// leaves the server's origin (data: and blob: are fine: the UI promises no external
// network requests), and on any page error or console error.  Each case ends with a
// screenshot <case>-final.png, failed or not.
// Prints "ok NAME" or "FAIL NAME: message" (the stack indented below); exits 0
// unless the runner itself breaks.
//
// Environment: BERTH_URL, BERTH_ADMIN_TOKEN, BERTH_USER_TOKEN, BERTH_VIEWER_TOKEN, BERTH_STAR_TOKEN,
// BERTH_HOME, BERTH_ARTIFACTS (default build/test/ui-artifacts), CHROMIUM
// (default /usr/bin/chromium), BERTH_UI_ONLY (a case name: run only that one).

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { cases } from './cases.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const url = (process.env.BERTH_URL || '').replace(/\/+$/, '');
if (!url) {
	console.error('run.mjs: BERTH_URL is not set (tests/ui.sh sets it)');
	process.exit(2);
}
const origin = new URL(url).origin;
const tokens = {
	admin: process.env.BERTH_ADMIN_TOKEN || '',
	user: process.env.BERTH_USER_TOKEN || '',
	viewer: process.env.BERTH_VIEWER_TOKEN || '',
	star: process.env.BERTH_STAR_TOKEN || '', // an admin of every project
};
const home = process.env.BERTH_HOME || '';
const artifacts = path.resolve(root, process.env.BERTH_ARTIFACTS || 'build/test/ui-artifacts');
mkdirSync(artifacts, { recursive: true });
const only = process.env.BERTH_UI_ONLY || '';

// no background traffic: this machine has no network, and chromium otherwise
// floods it with refused connections
const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// a failure the runner found (not thrown by the case): reported without a stack
const finding = (msg) => Object.assign(new Error(msg), { stack: '' });

// a file name of a step or case: letters, digits, - and _
const slug = (s) => String(s).replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'x';

async function api(method, p, { token, body } = {}) {
	const headers = {};
	if (token) headers.Authorization = `Bearer ${token}`;
	let payload;
	if (body !== undefined) {
		headers['Content-Type'] = 'application/json';
		payload = typeof body === 'string' ? body : JSON.stringify(body);
	}
	const res = await fetch(url + p, { method, headers, body: payload });
	const text = await res.text();
	let json = null;
	try {
		json = JSON.parse(text);
	} catch {
		json = null;
	}
	return { status: res.status, json, text };
}

function report(name, err) {
	if (!err) {
		console.log(`ok ${name}`);
		return;
	}
	const msg = (err && err.message) ? String(err.message) : String(err);
	const lines = msg.split('\n');
	console.log(`FAIL ${name}: ${lines[0]}`);
	const rest = lines.slice(1);
	if (err && err.stack) {
		// the stack repeats the message first; keep only its frames, and of those
		// the ones in the cases when there are any
		const frames = String(err.stack).split('\n').filter((l) => /^\s+at /.test(l));
		const own = frames.filter((l) => !l.includes('/tests/ui/run.mjs') && !l.includes('node:internal'));
		rest.push(...(own.length > 0 ? own : frames));
	}
	for (const l of rest) if (l.trim()) console.log(`    ${l.trim()}`);
}

for (const c of cases) {
	if (only && c.name !== only) continue;
	const name = slug(c.name);
	let context = null;
	let page = null;
	const external = []; // requests that left the server's origin
	const errors = []; // page errors and console errors
	let shot = 0;
	let err = null;
	let timer = null;
	try {
		context = await browser.newContext({ viewport: c.viewport || { width: 1280, height: 800 } });
		context.on('request', (req) => {
			const u = req.url();
			if (u.startsWith('data:') || u.startsWith('blob:') || u === 'about:blank') return;
			let o = '';
			try {
				o = new URL(u).origin;
			} catch {
				o = '';
			}
			if (o !== origin) external.push(u);
		});
		context.on('page', (p) => watch(p));
		page = await context.newPage();
		function watch(p) {
			if (p._berthWatched) return;
			p._berthWatched = true;
			p.on('pageerror', (e) => errors.push({ text: `page error: ${e.message}`, url: '' }));
			p.on('console', (m) => {
				if (m.type() === 'error') {
					const loc = m.location() || {};
					// the browser's own guess at a favicon of a page that names
					// none (a JSON or text response): not the page's error
					if (loc.url === `${origin}/favicon.ico`) return;
					// an API answer of 4xx is an answer the UI shows (a 422 is how
					// validation speaks), though chromium logs it as "Failed to load
					// resource"; a 5xx stays an error
					if (loc.url && loc.url.startsWith(`${origin}/api/`) &&
						/status of 4\d\d/.test(m.text())) return;
					const where = loc.url ? ` (${loc.url}:${loc.lineNumber})` : '';
					errors.push({ text: `console error: ${m.text()}${where}`, url: loc.url || '' });
				}
			});
		}
		watch(page);
		const t = {
			page,
			context,
			url,
			tokens,
			home,
			async step(stepName) {
				shot += 1;
				const file = `${name}-${String(shot).padStart(2, '0')}-${slug(stepName)}.png`;
				await page.screenshot({ path: path.join(artifacts, file), fullPage: true });
			},
			expect(cond, msg) {
				if (!cond) throw new Error(msg || 'expectation failed');
			},
			api,
		};
		const ms = c.timeout || 30000;
		const timeout = new Promise((_, reject) => {
			timer = setTimeout(() => reject(finding(`timed out after ${ms} ms`)), ms);
		});
		await Promise.race([c.run(t), timeout]);
	} catch (e) {
		err = e;
	} finally {
		if (timer) clearTimeout(timer);
	}
	if (page) {
		try {
			await page.screenshot({ path: path.join(artifacts, `${name}-final.png`), fullPage: true, timeout: 10000 });
		} catch (e) {
			if (!err) err = finding(`final screenshot: ${e.message}`);
		}
	}
	if (context) await context.close().catch(() => {});
	if (!err) {
		if (c.expectExternal) {
			if (external.length === 0) err = finding(`expected a request outside ${origin}; none seen`);
		} else if (external.length > 0) {
			err = finding(`requests outside ${origin}:\n${[...new Set(external)].join('\n')}`);
		}
	}
	// a case that expects an external request expects its failure too
	// ("Failed to load resource" of that URL, in the console)
	const seen = c.expectExternal ? errors.filter((e) => !external.includes(e.url)) : errors;
	if (!err && seen.length > 0) {
		err = finding(`${seen.length} error(s) in the page:\n${seen.map((e) => e.text).join('\n')}`);
	}
	report(c.name, err);
}

await browser.close();
process.exit(0);
