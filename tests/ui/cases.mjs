// The browser tests of the web UI, run in order by run.mjs (which says what `t`
// holds). A case: {name, run: async (t) => {...}}, optionally viewport, timeout
// (ms) and expectExternal. tests/ui.sh serves the example policy (profiles
// cpu-small, 1xa100, ...) to tokens of project demo: admin, user and viewer.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// ---- helpers -----------------------------------------------------------------------

async function signIn(t, token) {
	const { page } = t;
	await page.goto(`${t.url}/`);
	await page.fill('#token', token);
	await page.press('#token', 'Enter');
	await page.waitForSelector('#nav:not([hidden])');
}

const bound = (bind) => `#run-form [data-bind="${bind}"]`;

async function fill(t, bind, value) {
	await t.page.fill(bound(bind), value);
}

async function newRun(t) {
	await t.page.click('#nav a[data-nav="new"]');
	await t.page.waitForSelector(bound('fname'));
}

// signed in as token (default: the user), a new run's form with its function filled
async function draft(t, fname, command, { token = t.tokens.user, image } = {}) {
	await signIn(t, token);
	await newRun(t);
	await fill(t, 'fname', fname);
	if (image) await fill(t, 'image', image);
	await fill(t, 'command', command);
}

// Create, once the server accepts the spec; the new run's id, from its page
async function create(t) {
	await t.page.waitForSelector('#summary .ok-box');
	await t.page.click('#create');
	await t.page.waitForSelector('#logs');
	return decodeURIComponent(t.page.url().split('#/runs/')[1]);
}

// the run's page until it is in state, and its log holds text (when given)
async function until(t, state, text, ms = 15000) {
	await waitFor(t, state, async () => (await runState(t)) === state, ms);
	if (text) await waitFor(t, `"${text}" in the log`, async () => (await t.page.textContent('#logs')).includes(text), ms);
}

// the text of the error shown for the input at spec path `path`
async function fieldError(t, path) {
	return t.page.evaluate((p) => {
		const el = document.querySelector(`#run-form [data-path="${p}"]`);
		if (!el) return null;
		const err = document.getElementById(`${el.id}-err`);
		return { invalid: el.getAttribute('aria-invalid') === 'true', text: err ? err.textContent : '' };
	}, path);
}

async function waitFor(t, what, fn, ms = 15000) {
	const end = Date.now() + ms;
	let last;
	while (Date.now() < end) {
		last = await fn();
		if (last) return last;
		await t.page.waitForTimeout(100);
	}
	throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

// the run page's state, from its title badge
const runState = (t) => t.page.textContent('h1 .state');

async function runsOf(t, token) {
	const r = await t.api('GET', '/api/v1/projects/demo/runs?limit=1000', { token });
	return r.json.items;
}

// a run made through the API (as the user, unless token): its id
async function apiRun(t, spec, token = t.tokens.user) {
	const c = await t.api('POST', '/api/v1/projects/demo/runs', { token, body: spec });
	t.expect(c.status === 201, `create ${JSON.stringify(spec).slice(0, 120)}: ${c.status} ${c.text.slice(0, 300)}`);
	return c.json.id;
}

// the run's state through the API, once it is one of states
async function apiUntil(t, id, states, ms = 20000) {
	return waitFor(t, `run ${id} in ${states}`, async () => {
		const r = await t.api('GET', `/api/v1/runs/${id}`, { token: t.tokens.user });
		return states.includes(r.json && r.json.state) ? r.json : null;
	}, ms);
}

// every run of demo that is not final stopped (what a case started, gone before the next)
async function stopAll(t) {
	for (const r of await runsOf(t, t.tokens.admin)) {
		if (r.state === 'Pending' || r.state === 'Running') {
			await t.api('POST', `/api/v1/runs/${r.id}/stop?grace=0&wait=true`, { token: t.tokens.admin });
		}
	}
}

// the text of the run page's fact dt (its dd), or null
const factOf = (t, dt) => t.page.evaluate((k) => {
	const d = [...document.querySelectorAll('dl.facts dt')].find((x) => x.textContent === k);
	return d ? d.nextElementSibling.textContent : null;
}, dt);

// axe-core (npm, tests/ui/package.json) in the page, run on all of it: no serious or
// critical violation. Its source is evaluated by the browser's devtools protocol, which
// the page's Content-Security-Policy (script-src 'self') does not govern.
const require = createRequire(import.meta.url);
let axeSource = null;
async function accessible(t, where) {
	axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
	if (!(await t.page.evaluate(() => Boolean(window.axe)))) await t.page.evaluate(axeSource);
	const res = await t.page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
	const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
	t.expect(bad.length === 0, `${where}: ${bad.map((v) => `${v.id} (${v.impact}: ${v.help}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`).join('; ')}`);
	// and what it checked: a check that saw no page would pass anything
	t.expect(res.passes.length > 10, `${where}: axe checked almost nothing (${res.passes.length} rules passed)`);
}

// no wider than the window (a phone's, in the cases that set one)
async function fits(t, where) {
	const [sw, w] = await t.page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
	t.expect(sw <= w, `${where} is wider than the window: ${sw} > ${w}`);
}

// ---- cases -------------------------------------------------------------------------

export const cases = [
	{
		// the runner itself: a page of the server loads and is screenshotted
		name: 'harness-smoke',
		run: async (t) => {
			await t.page.goto(`${t.url}/healthz`);
			const body = await t.page.textContent('body');
			t.expect(body && body.includes('ok'), `/healthz says ${JSON.stringify(body)}, not "ok"`);
		},
	},
	{
		// the runner's check of "no external network requests" catches a page that
		// asks for something elsewhere (the runner inverts the check for this case)
		name: 'harness-offline',
		expectExternal: true,
		run: async (t) => {
			await t.page.setContent('<img src="http://example.invalid/x.png">');
			await t.page.waitForLoadState('load');
		},
	},
	{
		name: 'sign-in-and-projects',
		run: async (t) => {
			const { page } = t;
			await page.goto(`${t.url}/`);
			await t.step('sign-in');
			await page.click('button[type=submit]');
			await page.waitForSelector('#token[aria-invalid="true"]');
			t.expect((await page.textContent('#token-err')) === 'Paste your token.', 'an empty token is not refused at its field');
			await page.fill('#token', 'berth_not-a-token');
			await page.click('button[type=submit]');
			await page.waitForSelector('#token[aria-invalid="true"]');
			const err = await page.textContent('#token-err');
			t.expect(/does not know this token/.test(err), `a wrong token says "${err}"`);
			t.expect(await page.isHidden('#nav'), 'the navigation shows before signing in');
			await t.step('wrong-token');
			await page.fill('#token', t.tokens.admin);
			await page.click('button[type=submit]');
			await page.waitForSelector('#nav:not([hidden])');
			const projects = await page.$$eval('#project option', (os) => os.map((o) => o.value));
			t.expect(JSON.stringify(projects) === '["demo"]', `the picker offers ${JSON.stringify(projects)}`);
			t.expect((await page.textContent('#role')).startsWith('admin'), 'the role is not shown');
			await t.step('signed-in');
			// the token stays in this tab only, and signing out forgets it
			t.expect(await page.evaluate(() => sessionStorage.getItem('berth.token')) === t.tokens.admin, 'token not kept for the tab');
			t.expect(await page.evaluate(() => localStorage.getItem('berth.token')) === null, 'token kept beyond the tab unasked');
			await page.click('#signout');
			await page.waitForSelector('#token');
			t.expect(await page.evaluate(() => sessionStorage.getItem('berth.token')) === null, 'sign out left the token');
		},
	},
	{
		name: 'create-run-from-form-and-follow-it',
		timeout: 45000,
		run: async (t) => {
			const { page } = t;
			await draft(t, 'hello', 'sh\n-c\necho hello from the form; echo GREETING=$GREETING', { image: 'python:3.11-slim' });
			await fill(t, 'cpu.req', '100m');
			await fill(t, 'mem.req.n', '64');
			await page.selectOption(bound('mem.req.u'), 'Mi');
			await page.click('#add-env');
			await fill(t, 'envs.0.name', 'GREETING');
			await fill(t, 'envs.0.value', 'hi');
			await page.waitForSelector('#summary .ok-box');
			await t.step('form-filled');
			// the YAML tab says the same
			await page.click('#tab-yaml');
			const yaml = await page.inputValue('#yaml');
			for (const want of ['project: demo', 'name: hello', 'cpu: 100m', 'mem: 64Mi', '- name: GREETING', 'value: hi', '  - -c\n']) {
				t.expect(yaml.includes(want), `the YAML tab lacks "${want}":\n${yaml}`);
			}
			await t.step('yaml-tab');
			await page.click('#tab-form');
			await page.waitForSelector(bound('fname'));
			t.expect(await page.inputValue(bound('cpu.req')) === '100m', 'the form lost the cpu request');
			const id = await create(t);
			t.expect(/^[a-z0-9]+$/.test(id), `the page is not a run's: ${page.url()}`);
			await until(t, 'Succeeded', 'hello from the form');
			const logs = await page.textContent('#logs');
			t.expect(logs.includes('GREETING=hi'), `the env did not reach the run: ${logs}`);
			t.expect(await page.isHidden('#workers') && await page.isHidden('#log-of'), 'a run of one worker shows workers');
			await t.step('succeeded-with-logs');
			// the effective spec with each value's origin
			await page.click('#tab-spec');
			const row = await page.textContent('#panel-spec tr[data-field="resources.cpu.requests"]');
			t.expect(/100m/.test(row) && /run spec/.test(row), `cpu request row: ${row}`);
			const ratio = await page.textContent('#panel-spec tr[data-field="resources.mem.limits"]');
			t.expect(/policy rule/.test(ratio), `the memory limit does not say it is the policy's: ${ratio}`);
			// one spelling in every face (issue 23): the run's facts say what the spec says,
			// 100m and 71Mi (64Mi x 1.1, whole Mi), never "cpu 0.1" or "70.4Mi"
			t.expect(/71Mi/.test(ratio) && /mem_limit_ratio 1\.1,/.test(ratio), `the memory limit row: ${ratio}`);
			const facts = await page.textContent('dl.facts');
			t.expect(/cpu 100m\b/.test(facts) && /Limitsmem 71Mi/.test(facts) && !/cpu 0\.1\b/.test(facts), `the run's facts: ${facts}`);
			await t.step('effective-spec');
			await page.click('#tab-objects');
			const objs = await page.textContent('#manifests');
			t.expect(objs.includes('kind: Job') && objs.includes(`berth.dev/run: ${id}`), `the objects: ${objs.slice(0, 300)}`);
			await t.step('objects');
			await page.click('#tab-events');
			await waitFor(t, 'events', async () => (await page.textContent('#events')).includes('Succeeded'));
			// and the list shows it
			await page.click('#nav a[data-nav="runs"]');
			await page.waitForSelector(`tr[data-run="${id}"]`);
			const line = await page.textContent(`tr[data-run="${id}"]`);
			t.expect(/Succeeded/.test(line) && /cpu 100m\b/.test(line) && /mem 64Mi/.test(line), `the list's row: ${line}`);
			await t.step('in-the-list');
		},
	},
	{
		name: 'validation-error-on-the-right-field',
		run: async (t) => {
			const { page } = t;
			const before = (await runsOf(t, t.tokens.user)).length;
			await draft(t, 'bad', 'true');
			await fill(t, 'cpu.req', '4');
			await fill(t, 'cpu.lim', '2');
			await page.click('#add-volume');
			await fill(t, 'volumes.0.name', 'data');
			await fill(t, 'volumes.0.mount', 'data');
			const cpu = await waitFor(t, 'the cpu error', async () => {
				const e = await fieldError(t, 'resources.cpu.requests');
				return e && e.invalid ? e : null;
			});
			t.expect(/more than the limit 2/.test(cpu.text), `the cpu request's error: ${cpu.text}`);
			const mount = await fieldError(t, 'volumes[0].mount_path');
			t.expect(mount.invalid && /absolute path/.test(mount.text), `the mount path's error: ${JSON.stringify(mount)}`);
			for (const p of ['function.name', 'resources.mem.requests', 'volumes[0].name']) {
				const e = await fieldError(t, p);
				t.expect(!e.invalid && !e.text, `${p} is marked wrong: ${e.text}`);
			}
			// a claim the platform creates needs a size: at the volume's size field
			const size = await fieldError(t, 'volumes[0].spec.size');
			t.expect(size.invalid && /needs spec.size/.test(size.text), `the size's error: ${JSON.stringify(size)}`);
			const summary = await page.textContent('#summary');
			t.expect(/3 problems/.test(summary), `the summary: ${summary}`);
			await t.step('errors-at-fields');
			// a YAML field is parsed by the server, its syntax error shown at it
			await page.fill('#y-tolerations', '- {key: gpu, operator: Exists');
			await waitFor(t, 'the tolerations syntax error', async () => /line \d+, column \d+/.test(await page.textContent('#y-tolerations-err')));
			// submitting is refused, and nothing is created
			await page.fill('#y-tolerations', '- {key: gpu, operator: Exists, value: x}');
			const tol = await waitFor(t, 'the toleration error', async () => {
				const e = await fieldError(t, 'tolerations');
				return e && e.invalid && !/line \d/.test(e.text) ? e : null;
			});
			t.expect(/Exists/.test(tol.text), `the toleration's error: ${tol.text}`);
			await page.click('#create');
			await page.waitForTimeout(300);
			t.expect(page.url().includes('#/new'), 'a refused spec left the form');
			t.expect((await runsOf(t, t.tokens.user)).length === before, 'a refused spec created a run');
			// fixing the values clears the errors
			await fill(t, 'cpu.lim', '8');
			await fill(t, 'volumes.0.mount', '/data');
			await fill(t, 'volumes.0.size.n', '1');
			await page.fill('#y-tolerations', '- {key: gpu, operator: Exists}');
			await page.waitForSelector('#summary .ok-box');
			const e = await fieldError(t, 'resources.cpu.requests');
			t.expect(!e.invalid && !e.text, `the cpu error stays after the fix: ${e.text}`);
			await t.step('fixed');
		},
	},
	{
		name: 'profile-picker-shows-overrides',
		timeout: 40000,
		run: async (t) => {
			const { page } = t;
			await draft(t, 'sized', 'true');
			await fill(t, 'cpu.req', '1');
			await fill(t, 'mem.req.n', '1');
			await page.selectOption(bound('mem.req.u'), 'Gi');
			// every profile says what it gives
			const gives = await page.textContent('[data-profile="1xa100"] ul');
			t.expect(gives.includes('cpu 8') && gives.includes('mem 64Gi') && gives.includes('GPUs 1'), `1xa100 gives: ${gives}`);
			// in words, never as JSON (issue 25)
			t.expect(gives.includes('tolerates nvidia.com/gpu (Exists, NoSchedule)') && gives.includes('node label nvidia.com/gpu.product = NVIDIA-A100-SXM4-80GB') &&
				!/[{"]/.test(await page.textContent('#profiles')), `1xa100 gives: ${gives}`);
			// and what it would override of what was typed
			const small = await waitFor(t, 'the overrides of cpu-small', async () => {
				const el = await page.$('[data-overrides="cpu-small"]');
				return el ? el.textContent() : null;
			});
			t.expect(small.includes('cpu 1 → 2') && small.includes('mem 1Gi → 4Gi'), `cpu-small: ${small}`);
			await page.check('#profile-cpu-small');
			await t.step('profile-picked');
			await page.click('#tab-yaml');
			t.expect((await page.inputValue('#yaml')).includes('profile: cpu-small'), 'the YAML has no profile');
			await page.click('#tab-form');
			await create(t);
			await page.click('#tab-spec');
			const row = await waitFor(t, 'the effective cpu', async () => {
				const el = await page.$('#panel-spec tr[data-field="resources.cpu.requests"]');
				return el ? el.textContent() : null;
			});
			t.expect(/2/.test(row) && /profile/.test(row) && /overrides run spec 1/.test(row), `the effective cpu: ${row}`);
			await t.step('effective-overrides');
		},
	},
	{
		name: 'yaml-tab-keeps-what-the-form-cannot-show',
		run: async (t) => {
			const { page } = t;
			await draft(t, 'synced', 'true');
			await fill(t, 'cpu.req', '250m');
			await page.click('#tab-yaml');
			let yaml = await page.inputValue('#yaml');
			t.expect(yaml.includes('cpu: 250m'), `YAML: ${yaml}`);
			yaml = yaml.replace('cpu: 250m', 'cpu: 300m') + 'labels:\n  team: vision\ninputs:\n  epochs: 3\n';
			await page.fill('#yaml', yaml);
			await page.waitForSelector('#yaml-problems .ok-box');
			await page.click('#tab-form');
			await waitFor(t, 'the form to read the YAML', async () => (await page.inputValue(bound('cpu.req'))) === '300m');
			await page.click('#tab-yaml');
			yaml = await page.inputValue('#yaml');
			t.expect(yaml.includes('team: vision') && yaml.includes('epochs: 3'), `keys the form has no field for were lost:\n${yaml}`);
			// a problem in the YAML tab says its line
			await page.fill('#yaml', yaml.replace('cpu: 300m', 'cpu: 3 cores'));
			await page.waitForSelector('#yaml-problems .problems');
			const p = await page.textContent('#yaml-problems');
			t.expect(/line \d+:\d+ resources\.cpu/.test(p), `the YAML problem: ${p}`);
			// shown once (issue 23): under the YAML, not again above Create
			t.expect(await page.locator('.problems').count() === 1, `${await page.locator('.problems').count()} problem boxes`);
			t.expect(!(await page.textContent('#summary')).trim(), `the summary: ${await page.textContent('#summary')}`);
			await t.step('yaml-problem');
			// a position in the policy file is the policy's, never a line of this YAML
			await page.fill('#yaml', yaml.replace(/^labels:/m, 'profile: spot-a10\nlabels:'));
			await waitFor(t, 'the profile problems', async () => /policy file line/.test(await page.textContent('#yaml-problems')));
			const q = await page.textContent('#yaml-problems');
			t.expect(/node_selector: .*\(policy file line \d+:\d+\)/.test(q) && !/line \d+:\d+ node_selector/.test(q), `the policy's position: ${q}`);
			t.expect(await page.locator('.problems').count() === 1, 'the problems shown twice');
			await t.step('yaml-policy-position');
		},
	},
	{
		name: 'secret-is-write-only',
		timeout: 40000,
		run: async (t) => {
			const { page } = t;
			const value = 'v4lue-never-shown-0xC0FFEE';
			const seen = [];
			page.on('response', async (r) => {
				try { if ((await r.text()).includes(value)) seen.push(r.url()); } catch { /* a stream */ }
			});
			await signIn(t, t.tokens.admin);
			await page.click('#nav a[data-nav="secrets"]');
			// a name the server refuses: its message at the name, the value not kept
			await page.fill('#s-name', 'bad name');
			await page.fill('#s-value', value);
			await page.click('#secret-form button[type=submit]');
			await page.waitForSelector('#s-name[aria-invalid="true"]');
			t.expect(/may hold only letters/.test(await page.textContent('#s-name-err')), 'the refused name says nothing');
			t.expect(await page.inputValue('#s-value') === '', 'a refused value stays in the field');
			await page.fill('#s-name', 'API_TOKEN');
			await page.fill('#s-value', value);
			await page.fill('#s-value', value);
			await page.click('#secret-form button[type=submit]');
			await page.waitForSelector('[data-secret="API_TOKEN"]');
			t.expect(await page.inputValue('#s-value') === '', 'the value stays in the field');
			await t.step('secret-set');
			// a run that uses it gets it (its length only is printed)
			await newRun(t);
			await fill(t, 'fname', 'uses-secret');
			await fill(t, 'image', 'busybox');
			await fill(t, 'command', 'sh\n-c\necho token-length=${#API_TOKEN}');
			await page.check('#secrets-box input[value="API_TOKEN"]');
			await create(t);
			await until(t, 'Succeeded', `token-length=${value.length}`);
			await page.click('#tab-spec');
			await page.click('#tab-objects');
			await page.waitForFunction(() => document.querySelector('#manifests').textContent.includes('kind:'));
			await page.click('#nav a[data-nav="secrets"]');
			await page.waitForSelector('[data-secret="API_TOKEN"]');
			await t.step('secret-listed');
			const html = await page.content();
			t.expect(!html.includes(value), 'the page shows the secret value');
			t.expect(seen.length === 0, `the value came back from the server: ${seen.join(', ')}`);
			// a viewer sees the name, cannot set or delete
			await page.click('#signout');
			await signIn(t, t.tokens.viewer);
			await page.click('#nav a[data-nav="secrets"]');
			await page.waitForSelector('[data-secret="API_TOKEN"]');
			t.expect(!(await page.$('#secret-form')), 'a viewer is offered to set secrets');
			t.expect(seen.length === 0 && !(await page.content()).includes(value), 'the viewer saw the value');
			// an admin deletes it
			await page.click('#signout');
			await signIn(t, t.tokens.admin);
			await page.click('#nav a[data-nav="secrets"]');
			await page.click('[data-secret="API_TOKEN"] button');
			await page.click('[data-secret="API_TOKEN"] button');
			await page.waitForSelector('[data-secret="API_TOKEN"]', { state: 'detached' });
		},
	},
	{
		name: 'stop-and-rerun',
		timeout: 45000,
		run: async (t) => {
			const { page } = t;
			await draft(t, 'sleepy', 'sleep\n600');
			const first = await create(t);
			await until(t, 'Running');
			await page.click('#stop');
			await until(t, 'Stopped', null, 20000);
			t.expect(!(await page.$('#stop')), 'a stopped run still offers Stop');
			await t.step('stopped');
			await page.click('#rerun');
			await waitFor(t, 'the form of the run', async () => (await page.$(bound('fname'))) && (await page.inputValue(bound('fname'))) === 'sleepy');
			t.expect(await page.inputValue(bound('command')) === 'sleep\n600', 'the command was not carried over');
			await fill(t, 'command', 'echo\nagain');
			const second = await create(t);
			t.expect(second !== first, 'the re-run is the same run');
			await until(t, 'Succeeded', 'again');
		},
	},
	{
		// serve and deploy: fixed replicas, or autoscaling with min and max
		name: 'serve-with-autoscaling',
		run: async (t) => {
			const { page } = t;
			await draft(t, 'model', 'python\n-m\nhttp.server', { image: 'python:3.11-slim' });
			t.expect(!(await page.$(bound('replicas'))), 'a job is offered replicas');
			await page.selectOption(bound('action'), 'serve');
			await page.waitForSelector(bound('replicas'));
			await page.selectOption(bound('scale'), 'auto');
			await fill(t, 'minReplicas', '3');
			await fill(t, 'maxReplicas', '1');
			const e = await waitFor(t, 'the min_replicas error', async () => {
				const x = await fieldError(t, 'min_replicas');
				return x && x.invalid ? x : null;
			});
			t.expect(/more than max_replicas 1/.test(e.text), `min_replicas: ${e.text}`);
			await fill(t, 'maxReplicas', '4');
			await page.waitForSelector('#summary .ok-box');
			await page.click('#tab-yaml');
			const yaml = await page.inputValue('#yaml');
			t.expect(/action: serve/.test(yaml) && /min_replicas: 3/.test(yaml) && /max_replicas: 4/.test(yaml) && !/\breplicas: /.test(yaml.replace(/(min|max)_replicas/g, '')),
				`the YAML:\n${yaml}`);
			await t.step('autoscaling');
		},
	},
	{
		// keyboard only: Tab moves, keys type, Enter and Space press
		name: 'keyboard-only',
		timeout: 45000,
		run: async (t) => {
			const { page } = t;
			const kb = page.keyboard;
			const tabTo = async (selector, max = 80) => {
				for (let i = 0; i < max; i++) {
					if (await page.evaluate((s) => document.activeElement && document.activeElement.matches(s), selector)) return;
					await kb.press('Tab');
				}
				throw new Error(`Tab never reached ${selector}`);
			};
			await page.goto(`${t.url}/`);
			await tabTo('#token');
			await kb.type(t.tokens.user);
			await kb.press('Enter');
			await page.waitForSelector('#nav:not([hidden])');
			await tabTo('#nav a[data-nav="new"]');
			await kb.press('Enter');
			await page.waitForSelector(bound('fname'));
			await tabTo(bound('fname'));
			await kb.type('typed');
			await tabTo(bound('command'));
			await kb.type('echo');
			await kb.press('Enter');
			await kb.type('from the keyboard');
			await tabTo('#profile-none');
			await kb.press('ArrowDown'); // the next profile: cpu-small
			t.expect(await page.evaluate(() => document.activeElement.id) === 'profile-cpu-small', 'arrows do not move through the profiles');
			await page.waitForSelector('#summary .ok-box');
			await t.step('keyboard-filled');
			await tabTo('#create');
			await kb.press('Enter');
			await page.waitForSelector('#logs');
			await until(t, 'Succeeded', 'from the keyboard');
			// the tabs of the run page move with the arrow keys
			await tabTo('#tab-logs');
			await kb.press('ArrowRight');
			t.expect(await page.evaluate(() => document.activeElement.id) === 'tab-usage', 'ArrowRight does not move to the next tab');
			await kb.press('ArrowRight');
			t.expect(await page.evaluate(() => document.activeElement.id) === 'tab-spec', 'ArrowRight does not move to the tab after');
			t.expect(await page.isVisible('#panel-spec'), 'the tab did not show its panel');
			const row = await page.textContent('#panel-spec');
			t.expect(row.includes('cpu-small'), 'the profile picked with the keyboard is not in the effective spec');
		},
	},
	{
		// a distributed job on the local backend: two workers, each with its state, its
		// share of the GPUs and its own log; its worker count in the list
		name: 'distributed-run-workers',
		timeout: 45000,
		run: async (t) => {
			const { page } = t;
			const spec = {
				name: 'dist', action: 'job', replicas: 2, resources: { gpu: 2 },
				function: { command: ['sh', '-c', 'echo "I am $RANK of $WORLD_SIZE"; sleep 2; [ "$RANK" = 1 ] && exit 3; exit 0'] },
			};
			const c = await t.api('POST', '/api/v1/projects/demo/runs', { token: t.tokens.user, body: spec });
			t.expect(c.status === 201 && c.json && c.json.workers === 2, `create: ${c.status} ${c.text.slice(0, 300)}`);
			const id = c.json.id;
			await signIn(t, t.tokens.user);
			await page.waitForSelector(`tr[data-run="${id}"]`);
			const cell = await page.textContent(`tr[data-run="${id}"] td[data-label="Run"]`);
			t.expect(/\b2 workers$/.test(cell), `the list's row does not say "2 workers": ${cell}`);
			const ones = await page.$$eval('tr[data-run] td[data-label="Run"]', (tds) => tds.map((td) => td.textContent));
			t.expect(ones.filter((x) => /workers/.test(x)).length === 1, `runs of one worker say workers: ${ones.join(' | ')}`);
			await t.step('in-the-list');
			await page.click(`tr[data-run="${id}"] a`);
			await until(t, 'Failed', null, 20000);
			// each worker's row: rank, its state as the server has it, its GPUs
			const rows = await waitFor(t, 'two workers with states', async () => {
				const r = await page.$$eval('#workers tbody tr', (trs) => trs.map((tr) => [...tr.children].map((x) => x.textContent.trim())));
				return r.length === 2 && r.every((x) => x[1] !== 'unknown') ? r : null;
			});
			const heads = await page.$$eval('#workers thead th[scope="col"]', (ths) => ths.map((x) => x.textContent));
			t.expect(heads.join() === 'Rank,State,GPU indexes,Log', `the workers' headers: ${heads}`);
			const rec = (await t.api('GET', `/api/v1/runs/${id}`, { token: t.tokens.user })).json;
			t.expect(rec.worker_states[1] === 'Failed' && /^(Succeeded|Stopped)$/.test(rec.worker_states[0]), `worker_states: ${JSON.stringify(rec.worker_states)}`);
			t.expect(rows[0][0] === '0' && rows[0][1] === rec.worker_states[0] && rows[0][2] === '0, 1', `worker 0's row: ${rows[0]}`);
			t.expect(rows[1][0] === '1' && rows[1][1] === 'Failed' && rows[1][2] === '2, 3', `worker 1's row: ${rows[1]}`);
			// GPUs by index, said as such (issue 25: "GPUs 0" read as a count)
			t.expect(await factOf(t, 'GPU indexes') === '0, 1, 2, 3', `the run's GPU fact: ${await factOf(t, 'GPU indexes')}`);
			t.expect(await page.$('#workers tr[data-rank="1"] .state.Failed'), 'worker 1 has no Failed badge');
			// every worker's log first, then worker 1's alone, by its button's name
			const logOf = async (rank) => {
				await page.waitForSelector(`#logs[data-rank="${rank}"][data-ended="true"]`);
				return page.textContent('#logs');
			};
			const all = await logOf('all');
			t.expect(all.includes('[rank 0] I am 0 of 2') && all.includes('[rank 1] I am 1 of 2'), `every worker's log: ${all}`);
			await page.getByRole('button', { name: 'Show log of worker 1' }).click();
			const one = await logOf('1');
			t.expect(one.includes('I am 1 of 2') && !one.includes('[rank') && !/I am [^1]/.test(one), `worker 1's log: ${one}`);
			t.expect(await page.getAttribute('#workers tr[data-rank="1"] button', 'aria-pressed') === 'true', 'worker 1\'s button is not pressed');
			t.expect((await page.textContent('#log-of')).includes('Worker 1'), 'the log does not say whose it is');
			await t.step('worker-1-log');
			// the keyboard: worker 0's, then every worker's again
			await page.focus('#workers tr[data-rank="0"] button');
			await page.keyboard.press('Enter');
			const zero = await logOf('0');
			t.expect(zero.includes('I am 0 of 2') && !zero.includes('[rank') && !zero.includes('I am 1'), `worker 0's log: ${zero}`);
			await page.keyboard.press('Tab');
			await page.keyboard.press('Tab');
			t.expect(await page.evaluate(() => document.activeElement.textContent) === 'All workers', 'Tab does not reach "All workers"');
			await page.keyboard.press('Space');
			t.expect((await logOf('all')).includes('[rank 1] I am 1 of 2'), 'every worker\'s log is not back');
			// dark, on a phone: the same state colours, nothing wider than the screen
			await page.emulateMedia({ colorScheme: 'dark' });
			await page.setViewportSize({ width: 390, height: 844 });
			const color = await page.$eval('#workers tr[data-rank="1"] .state', (e) => getComputedStyle(e).color);
			t.expect(color === 'rgb(255, 138, 128)', `a failed worker's colour in dark mode: ${color}`);
			const [sw, w] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
			t.expect(sw <= w, `the run is wider than the phone: ${sw} > ${w}`);
			await t.step('dark-phone');
		},
	},
	{
		// a phone: one column, nothing wider than the screen
		name: 'phone-layout',
		viewport: { width: 390, height: 844 },
		run: async (t) => {
			const { page } = t;
			const fits = async (where) => {
				const [sw, w] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
				t.expect(sw <= w, `${where} is wider than the phone: ${sw} > ${w}`);
			};
			await page.goto(`${t.url}/`);
			await fits('sign-in');
			await signIn(t, t.tokens.user);
			await page.waitForSelector('tr[data-run]');
			await fits('the run list');
			await t.step('runs');
			await newRun(t);
			await page.click('#add-volume');
			await page.click('#add-env');
			await fits('the new run form');
			await t.step('new-run');
			await page.click('#nav a[data-nav="runs"]');
			await page.click('tr[data-run] a');
			await page.waitForSelector('#logs');
			await fits('a run');
			await t.step('run');
		},
	},
	{
		// a run that is not there: its page and a re-run of it say so
		name: 'missing-run',
		run: async (t) => {
			const { page } = t;
			await signIn(t, t.tokens.user);
			await page.goto(`${t.url}/#/runs/nosuch`);
			await page.waitForSelector('.facts .err');
			t.expect(/no run "nosuch"/.test(await page.textContent('.facts .err')), 'an unknown run has no message');
			t.expect(!(await page.$('#stop')) && !(await page.$('#rerun')), 'an unknown run is offered stop or re-run');
			await page.goto(`${t.url}/#/new?from=nosuch`);
			await page.waitForSelector(bound('fname'));
			t.expect(/Cannot read run nosuch: no run "nosuch"/.test(await page.textContent('#flash')), 'a re-run of an unknown run says nothing');
			t.expect(await page.inputValue(bound('fname')) === '', 'the form is not empty');
		},
	},
	{
		name: 'viewer-reads-only',
		run: async (t) => {
			const { page } = t;
			await signIn(t, t.tokens.viewer);
			await page.waitForSelector('tr[data-run]');
			// not offered (issue 25: it was, and then refused)
			t.expect(await page.isHidden('#nav a[data-nav="new"]') && await page.isHidden('#nav a[data-nav="tokens"]') &&
				!(await page.$('main a[href="#/new"]')) && !(await page.$('#bulk-stop')) && !(await page.$('tr[data-run] button')),
			'a viewer is offered New run, tokens, or a run\'s actions');
			// and a viewer who goes there anyway is told why
			await page.goto(`${t.url}/#/new`);
			/* the new view is drawn after the click returns: wait until the list is gone
			 * (at most 5 s), then judge what replaced it */
			await page.waitForFunction(() => !document.querySelector('main tr[data-run]'), null, { timeout: 5000 })
				.catch(() => {});
			const msg = await page.textContent('main');
			t.expect(/may not create runs/.test(msg), `a viewer is offered the form: ${msg.slice(0, 200)}`);
			await page.click('#nav a[data-nav="runs"]');
			await page.click('tr[data-run] a');
			await page.waitForSelector('#logs');
			t.expect(!(await page.$('#stop')) && !(await page.$('#rerun')), 'a viewer is offered stop or re-run');
		},
	},
	{
		// the list: who submitted each run, its labels, duration; filters by state, text,
		// label, owner and date; sorting; stop and re-run from a row; bulk stop and delete
		name: 'runs-list-filters-sort-bulk',
		timeout: 60000,
		run: async (t) => {
			const { page } = t;
			const sleeper = (name, labels, token) => apiRun(t, { name, labels, function: { command: ['sleep', '600'] } }, token);
			const a = await sleeper('zz-vision-a', { team: 'vision', stage: 'dev' });
			const b = await sleeper('zz-vision-b', { team: 'vision' });
			const c = await sleeper('zz-nlp-c', { team: 'nlp' }, t.tokens.admin);
			for (const id of [a, b, c]) await apiUntil(t, id, ['Running']);
			await signIn(t, t.tokens.user);
			await page.waitForSelector(`tr[data-run="${c}"]`);
			const heads = await page.$$eval('table.runs thead th', (ths) => ths.map((x) => x.textContent));
			t.expect(heads.slice(1).join() === 'Run,State,Resources,Submitted by,Created,Duration,Actions', `the list's headers: ${heads}`);
			const me = (await t.api('GET', '/api/v1/whoami', { token: t.tokens.user })).json.token;
			const cell = (id, l) => page.textContent(`tr[data-run="${id}"] td[data-label="${l}"]`);
			t.expect(await cell(a, 'Submitted by') === `token ${me} (you)` && (await cell(c, 'Submitted by')).startsWith('token ') &&
				!(await cell(c, 'Submitted by')).includes('(you)'), `submitted by: ${await cell(a, 'Submitted by')} / ${await cell(c, 'Submitted by')}`);
			t.expect(/^running \d/.test(await cell(a, 'Duration')), `a running run's duration: ${await cell(a, 'Duration')}`);
			t.expect((await cell(a, 'Run')).includes('team=vision') && (await cell(a, 'Run')).includes('stage=dev'), `labels: ${await cell(a, 'Run')}`);
			t.expect(/^\d{4}-\d\d-\d\d \d\d:\d\d/.test(await cell(a, 'Created')), `created: ${await cell(a, 'Created')}`);
			const shown = () => page.$$eval('tr[data-run]', (trs) => trs.map((x) => x.dataset.run));

			// a label, then a label and a value (the filters folded under the first ones)
			t.expect(await page.isHidden('#f-label'), 'the label filter is not folded');
			// the server's label selector (labelSelector): every run of it, not only those loaded
			await page.click('#more-filters summary');
			const selected = async (sel, want, why) => {
				await page.fill('#f-label', sel);
				const set = (x) => [...x].sort().join();
				const ids = await waitFor(t, why, async () => {
					const x = await shown();
					return set(x) === set(want) ? x : null;
				}, 5000).catch(async () => shown());
				t.expect(set(ids) === set(want), `${sel} shows ${ids}, not ${want}`);
			};
			await selected('team=vision', [b, a], 'the runs of team vision');
			await selected('team=vision, stage', [a], 'the run of team vision with a stage');
			await selected('team!=vision,team', [c], 'the run of another team');
			// a selector the server does not read: its reason, at the filter
			await page.fill('#f-label', 'a b');
			await page.waitForSelector('#f-label[aria-invalid="true"]');
			t.expect(/is not a term/.test(await page.textContent('#runs-status')), `a bad selector says: ${await page.textContent('#runs-status')}`);
			await page.fill('#f-label', '');
			await waitFor(t, 'every run again', async () => {
				const x = await shown();
				return [a, b, c].every((i) => x.includes(i)) && !(await page.$('#f-label[aria-invalid]'));
			}, 5000);
			let ids;
			// the owner: this token's runs only
			await page.selectOption('#f-owner', `token:${me}`);
			ids = await shown();
			t.expect(ids.includes(a) && !ids.includes(c), `my runs: ${ids}`);
			await page.selectOption('#f-owner', '');
			// sorted by name, then oldest first
			await page.selectOption('#f-sort', 'name');
			const names = await page.$$eval('tr[data-run] td[data-label="Run"] a', (x) => x.map((e) => e.textContent));
			t.expect(names.join('\n') === [...names].sort((x, y) => x.localeCompare(y)).join('\n'), `sorted by name: ${names.slice(0, 5)}`);
			await page.selectOption('#f-sort', 'old');
			ids = await shown();
			t.expect(ids.indexOf(a) < ids.indexOf(c), 'oldest first is not');
			await page.selectOption('#f-sort', 'new');
			// a date with no run: said so, not "No runs yet"
			await page.fill('#f-from', '2099-01-01');
			await page.waitForFunction(() => document.querySelectorAll('tr[data-run]').length === 0);
			t.expect(await page.textContent('#runs-status') === 'No runs match these filters.', `an empty filter says: ${await page.textContent('#runs-status')}`);
			await t.step('no-match');
			await page.fill('#f-from', '');
			await page.fill('#f-text', 'zz-');
			await page.waitForSelector(`tr[data-run="${a}"]`);
			await t.step('filtered');
			// stop from its row
			await page.click(`tr[data-run="${c}"] button[aria-label="Stop zz-nlp-c-${c}"]`);
			await apiUntil(t, c, ['Stopped']);
			await waitFor(t, 'the row to say Stopped', async () => /Stopped/.test(await cell(c, 'State')));
			// both others at once: stop, then delete (pressed twice)
			await page.check(`tr[data-run="${a}"] td.pick input`);
			await page.check(`tr[data-run="${b}"] td.pick input`);
			t.expect(await page.textContent('#bulk-count') === '2 selected' && await page.isDisabled('#bulk-delete'), 'two running runs selected');
			await t.step('selected');
			await page.click('#bulk-stop');
			await apiUntil(t, a, ['Stopped']);
			await apiUntil(t, b, ['Stopped']);
			await waitFor(t, 'the rows to say Stopped', async () => /Stopped/.test(await cell(a, 'State')) && /Stopped/.test(await cell(b, 'State')));
			t.expect(await page.textContent('#bulk-count') === 'None selected', 'the stopped runs are still selected');
			for (const id of [a, b, c]) await page.check(`tr[data-run="${id}"] td.pick input`);
			t.expect(await page.isDisabled('#bulk-stop') && !(await page.isDisabled('#bulk-delete')), 'three final runs selected: stop offered or delete not');
			await page.click('#bulk-delete');
			t.expect(/press again/.test(await page.textContent('#bulk-delete')), 'delete asks no confirmation');
			await page.click('#bulk-delete');
			await waitFor(t, 'the deleted rows gone', async () => (await shown()).every((x) => ![a, b, c].includes(x)));
			const left = (await runsOf(t, t.tokens.user)).filter((r) => [a, b, c].includes(r.id));
			t.expect(left.length === 0, `bulk delete left ${left.map((r) => r.id)}`);
			t.expect(/Deleted 3 runs/.test(await page.textContent('#flash')), `the flash: ${await page.textContent('#flash')}`);
			// re-run from a row: the form, filled from it
			const d = await apiRun(t, { name: 'zz-again', function: { command: ['echo', 'again'] } });
			await apiUntil(t, d, ['Succeeded']);
			await page.fill('#f-text', 'zz-again');
			await page.click(`tr[data-run="${d}"] a[aria-label^="Re-run"]`);
			await waitFor(t, 'the re-run form', async () => (await page.$(bound('name'))) && (await page.inputValue(bound('name'))) === 'zz-again');
			// a flash does not outlive the page it was said on (issue 25)
			t.expect(!(await page.textContent('#flash')), `a flash followed to the next page: ${await page.textContent('#flash')}`);
		},
	},
	{
		// the list follows changes without reading itself again: with the server's watch
		// (a list with "rv"), one long poll and no list read while idle; without one, its
		// first page (100) at most every 5 s. A new run, its end and its deletion show.
		name: 'runs-list-follows-changes',
		timeout: 45000,
		run: async (t) => {
			const { page } = t;
			const reads = [];
			page.on('request', (r) => {
				const u = new URL(r.url());
				if (u.pathname === '/api/v1/projects/demo/runs' && r.method() === 'GET') reads.push({ at: Date.now(), q: u.searchParams });
			});
			await signIn(t, t.tokens.user);
			await page.waitForSelector('#runs-status');
			const watched = Boolean((await t.api('GET', '/api/v1/projects/demo/runs?limit=1', { token: t.tokens.user })).json.rv);
			await page.waitForTimeout(500);
			const from = reads.length;
			await page.waitForTimeout(6000);
			const idle = reads.slice(from);
			const lists = idle.filter((x) => x.q.get('watch') !== 'true');
			if (watched) {
				t.expect(lists.length === 0, `the list read itself ${lists.length} times while idle, with a watch`);
				t.expect(reads.some((x) => x.q.get('watch') === 'true'), 'the list does not watch');
			} else {
				t.expect(lists.length <= 2 && lists.every((x) => x.q.get('limit') === '100' && !x.q.get('after')), `idle reads: ${lists.map((x) => x.q)}`);
			}
			const id = await apiRun(t, { name: 'followed', function: { command: ['sleep', '1'] } });
			await page.waitForSelector(`tr[data-run="${id}"]`, { timeout: 8000 });
			await apiUntil(t, id, ['Succeeded']);
			await waitFor(t, 'its end in the list', async () => /Succeeded/.test(await page.textContent(`tr[data-run="${id}"]`)), 8000);
			t.expect((await t.api('DELETE', `/api/v1/runs/${id}`, { token: t.tokens.user })).status === 204, 'delete');
			await page.waitForSelector(`tr[data-run="${id}"]`, { state: 'detached', timeout: 8000 });
		},
	},
	{
		// a run's page: its time, usage in human units, labels and owner; the log searched,
		// tailed and downloaded; a created run's flash on its page, gone on the next
		name: 'run-page-log-tools-and-units',
		timeout: 45000,
		run: async (t) => {
			const { page } = t;
			await draft(t, 'lines', 'sh\n-c\nfor i in $(seq 1 300); do echo "line $i"; done; head -c 3000000 /dev/zero | tail -c 1 >/dev/null');
			await page.click('#add-label');
			await fill(t, 'labels.0.k', 'team');
			await fill(t, 'labels.0.v', 'vision');
			await page.click('#add-input');
			await fill(t, 'inputs.0.k', 'epochs');
			await fill(t, 'inputs.0.v', '3');
			await page.click('#tab-yaml');
			const yaml = await page.inputValue('#yaml');
			t.expect(/labels:\n {2}team: vision/.test(yaml) && /inputs:\n {2}epochs: 3\n/.test(yaml), `labels and inputs as fields, in the YAML: ${yaml}`);
			await page.click('#tab-form');
			const id = await create(t);
			t.expect(/Run lines-.* created/.test(await page.textContent('#flash')), 'the created run has no flash on its page');
			await until(t, 'Succeeded');
			await page.waitForSelector('#logs[data-ended="true"]');
			const usage = await factOf(t, 'Usage');
			t.expect(/^CPU time [\d.]+ s, peak memory \d+(\.\d)? (bytes|KiB|MiB|GiB)$/.test(usage) && !/\d{5,}/.test(usage), `usage: ${usage}`);
			t.expect(/^\d+(\.\d)? s$|^\d+m \d+s$/.test(await factOf(t, 'Duration')), `duration: ${await factOf(t, 'Duration')}`);
			t.expect(await factOf(t, 'Labels') === 'team=vision' && /\(you\)$/.test(await factOf(t, 'Submitted by')), 'labels or owner missing');
			t.expect(await page.textContent('#log-count') === '300 lines', `the count: ${await page.textContent('#log-count')}`);
			// search: the lines that hold it
			await page.fill('#log-search', 'line 29');
			await waitFor(t, 'the search', async () => (await page.textContent('#log-count')) === '11 of 300 lines shown');
			t.expect((await page.textContent('#logs')).split('\n')[0] === 'line 29', 'the first line found');
			await t.step('log-search');
			await page.fill('#log-search', '');
			// the tail: the last 100
			await page.selectOption('#log-tail', '100');
			await waitFor(t, 'the tail', async () => (await page.textContent('#log-count')) === '100 of 300 lines shown');
			const tl = (await page.textContent('#logs')).split('\n');
			t.expect(tl[0] === 'line 201' && tl[tl.length - 1] === 'line 300', `the tail: ${tl[0]} .. ${tl[tl.length - 1]}`);
			// the whole log as a file
			const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#log-download')]);
			t.expect(dl.suggestedFilename() === `lines-${id}.log`, `the file's name: ${dl.suggestedFilename()}`);
			const file = readFileSync(await dl.path(), 'utf8').split('\n').filter(Boolean);
			t.expect(file.length === 300 && file[299] === 'line 300', `the downloaded log: ${file.length} lines`);
			// to the list: the flash is gone
			await page.click('#nav a[data-nav="runs"]');
			await page.waitForSelector(`tr[data-run="${id}"]`);
			t.expect(!(await page.textContent('#flash')), `the flash followed: ${await page.textContent('#flash')}`);
			t.expect(/^\d+(\.\d)? s$/.test(await page.textContent(`tr[data-run="${id}"] td[data-label="Duration"]`)), 'the duration in the list');
		},
	},
	{
		// a run's use over time: CPU and memory charts of its samples, growing while it
		// runs (tests/ui.sh samples every 200 ms), their last and peak values in words.
		// It runs 12 s after its work: the page reads new samples every 5 s, and on a
		// loaded machine the page may open seconds after the run started (3 s was short)
		name: 'run-usage-charts',
		timeout: 60000,
		run: async (t) => {
			const { page } = t;
			const id = await apiRun(t, { name: 'busy', function: { command: ['sh', '-c', 'head -c 30000000 /dev/zero | sort >/dev/null; i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; sleep 12'] } });
			await apiUntil(t, id, ['Running']);
			await signIn(t, t.tokens.viewer);
			await page.goto(`${t.url}/#/runs/${id}`);
			await page.waitForSelector('#logs');
			await page.click('#tab-usage');
			const points = () => page.evaluate(() => {
				const l = document.querySelector('#usage-cpu polyline');
				return l ? l.getAttribute('points').split(' ').length : 0;
			});
			const n1 = await waitFor(t, 'a CPU chart', points);
			await waitFor(t, 'the chart to grow while the run runs', async () => (await points()) > n1, 15000);
			await until(t, 'Succeeded');
			await page.click('#tab-logs');
			await page.click('#tab-usage');
			const cpu = await page.getAttribute('#usage-cpu svg', 'aria-label');
			const mem = await page.getAttribute('#usage-mem svg', 'aria-label');
			t.expect(/^CPU: [\d.]+ cores now, peak (0\.[1-9]\d|[1-9][\d.]*) cores, over /.test(cpu), `the CPU chart: ${cpu}`);
			t.expect(/^Memory: [\d.]+ (bytes|KiB|MiB) now, peak [\d.]+ (KiB|MiB|GiB), over /.test(mem), `the memory chart: ${mem}`);
			t.expect(await page.textContent('#usage-cpu figcaption') === cpu, 'the caption is not the chart\'s words');
			t.expect(!(await page.$('#usage-gpu')), 'a GPU chart for a run without GPUs');
			const rec = (await t.api('GET', `/api/v1/runs/${id}/usage`, { token: t.tokens.viewer })).json.items;
			t.expect(rec.length >= 3 && await points() === rec.length, `${await points()} points for ${rec.length} samples`);
			await accessible(t, 'a run\'s usage');
			await t.step('usage');
		},
	},
	{
		// functions: the list, a function's page, run it from there (the picker), and the
		// re-run of an SDK-style run (function: NAME) shows its image and command
		name: 'functions-pages-and-picker',
		timeout: 45000,
		run: async (t) => {
			const { page } = t;
			const reg = await t.api('POST', '/api/v1/projects/demo/functions', {
				token: t.tokens.user,
				body: 'function:\n  name: trainer\n  image: python:3.11-slim\n  command: [sh, -c, "echo trained $EPOCHS"]\nenvs: [{name: EPOCHS, value: "3"}]\n',
			});
			t.expect(reg.status === 201 || reg.status === 200, `register: ${reg.status} ${reg.text.slice(0, 200)}`);
			// a run as the SDK makes it: the function by name
			const sdk = await apiRun(t, { function: 'trainer', name: 'sdk-run' });
			await apiUntil(t, sdk, ['Succeeded']);
			await signIn(t, t.tokens.user);
			await page.click('#nav a[data-nav="functions"]');
			await page.waitForSelector('[data-function="trainer"]');
			const row = await page.textContent('[data-function="trainer"]');
			t.expect(row.includes('python:3.11-slim') && row.includes('sh -c "echo trained $EPOCHS"'), `the function's row: ${row}`);
			await t.step('functions');
			await page.click('[data-function="trainer"] a');
			await page.waitForSelector('#function-spec');
			const facts = await page.textContent('#function-facts');
			t.expect(facts.includes('python:3.11-slim') && facts.includes('name EPOCHS, value 3'), `the function's facts: ${facts}`);
			await t.step('function');
			await page.click('#run-function');
			await waitFor(t, 'the picker', async () => (await page.$('#f-function')) && (await page.inputValue('#f-function')) === 'trainer');
			const picked = await page.textContent('#function-facts');
			t.expect(picked.includes('python:3.11-slim') && picked.includes('echo trained'), `the picked function: ${picked}`);
			t.expect(!(await page.$(bound('image'))), 'a registered function offers an image to type');
			const id = await create(t);
			await until(t, 'Succeeded', 'trained 3');
			t.expect((await (await t.api('GET', `/api/v1/runs/${id}/source`, { token: t.tokens.user })).json.fields.function) === 'trainer', 'the run does not name the function');
			// the SDK's run, re-run: its function's image and command, not empty (issue 25)
			await page.goto(`${t.url}/#/runs/${sdk}`);
			await page.click('#rerun');
			await waitFor(t, 'the re-run form', async () => (await page.$('#f-function')) && (await page.inputValue('#f-function')) === 'trainer');
			const again = await page.textContent('#function-facts');
			t.expect(again.includes('python:3.11-slim') && again.includes('echo trained'), `the SDK run's re-run shows: ${again}`);
			await t.step('sdk-rerun');
			// written here instead: the inputs come back
			await page.selectOption('#f-function', '');
			await page.waitForSelector(bound('image'));
			// deleted from its page
			await page.goto(`${t.url}/#/functions/trainer`);
			await page.click('#delete-function');
			await page.click('#delete-function');
			await page.waitForSelector('#functions-empty, [data-function]');
			t.expect(!(await page.$('[data-function="trainer"]')), 'the deleted function is listed');
		},
	},
	{
		// profiles in words and the policy's limits and defaults; a profile picked from there
		name: 'profiles-and-limits',
		run: async (t) => {
			const { page } = t;
			await signIn(t, t.tokens.user);
			await page.click('#nav a[data-nav="profiles"]');
			await page.waitForSelector('#limits');
			const a100 = await page.textContent('[data-profile="1xa100"] ul');
			t.expect(a100.includes('tolerates nvidia.com/gpu (Exists, NoSchedule)') && a100.includes('env NCCL_DEBUG=WARN') && !/[{"]/.test(a100), `1xa100: ${a100}`);
			const lim = await page.textContent('#limits');
			t.expect(/CPU96/.test(lim) && /Memory1Ti/.test(lim) && /GPUs8/.test(lim) && /Each volume2Ti/.test(lim), `limits: ${lim}`);
			const def = await page.textContent('#defaults');
			t.expect(def.includes('cpu 100m') && def.includes('mem 256Mi') && def.includes('request × 1.1'), `defaults: ${def}`);
			await t.step('profiles');
			await page.click('[data-profile="cpu-small"] a');
			await page.waitForSelector('#profile-cpu-small:checked');
		},
	},
	{
		// issue 27: the profiles page and the form are the project's view of the policy (its
		// overlay projects.team: its own profile, a volume on its runs); the form offers the
		// volume mount type as MLRun's UI does, "Auto (using auto-mount), Manual or None"
		name: 'project-view-and-volume-mode',
		run: async (t) => {
			const { page } = t;
			const made = await t.api('POST', '/api/v1/projects', { token: t.tokens.star, body: { name: 'team' } });
			t.expect(made.status === 201 || made.status === 409, `project team: ${made.status} ${made.text}`);
			await signIn(t, t.tokens.star);
			await page.selectOption('#project', 'team');
			await page.click('#nav a[data-nav="profiles"]');
			await page.waitForSelector('[data-profile="team-gpu"]');
			const own = await page.textContent('[data-profile="team-gpu"]');
			t.expect(own.includes("This project's own (projects.team.profiles)"), `team-gpu: ${own}`);
			const def = await page.textContent('#defaults');
			t.expect(def.includes('team-scratch'), `team's defaults: ${def}`);
			await t.step('team-profiles');
			// the form: Auto names the volume the platform mounts; None hides the list
			await newRun(t);
			const modes = await page.$$eval(`${bound('volumeMode')} option`, (os) => os.map((o) => o.textContent));
			t.expect(modes.join('|') === 'Auto (using auto-mount)|Manual|None', `volume mount types: ${modes}`);
			const hint = await page.textContent('#run-form .field:has([data-bind="volumeMode"]) .hint');
			t.expect(hint.includes('team-scratch (/team-scratch)'), `the Auto hint: ${hint}`);
			await fill(t, 'fname', 'vols');
			await fill(t, 'image', 'python:3.11-slim');
			await fill(t, 'command', 'true');
			await page.selectOption(bound('volumeMode'), 'none');
			await page.waitForSelector('#add-volume', { state: 'detached' });
			await page.waitForSelector('#summary .ok-box');
			await page.click('#tab-yaml');
			const yaml = await page.inputValue('#yaml');
			t.expect(yaml.includes('volume_mode: none') && yaml.includes('project: team'), `the YAML tab: ${yaml}`);
			await t.step('volume-mode-none');
			// another project's view has neither
			await page.selectOption('#project', 'demo');
			await page.click('#nav a[data-nav="profiles"]');
			await page.waitForSelector('[data-profile="cpu-small"]');
			t.expect(await page.$('[data-profile="team-gpu"]') === null, 'demo shows team-gpu');
			t.expect(!(await page.textContent('#defaults')).includes('team-scratch'), "demo's defaults show team's volume");
		},
	},
	{
		// the queue: what waits, why, in which order (priority, then submission); the quota's use
		name: 'queue-and-quota',
		timeout: 60000,
		run: async (t) => {
			const { page } = t;
			const gpus = (name, n, prio) => apiRun(t, { name, priority_class: prio, resources: { gpu: n }, function: { command: ['sleep', '600'] } });
			const hold = await gpus('q-holds-all', 8, 'medium');
			await apiUntil(t, hold, ['Running']);
			const first = await gpus('q-medium', 4, 'medium');
			const second = await gpus('q-low', 4, 'low');
			const third = await gpus('q-high', 4, 'high');
			for (const id of [first, second, third]) await apiUntil(t, id, ['Pending']);
			await signIn(t, t.tokens.viewer);
			await page.click('#nav a[data-nav="queue"]');
			await page.waitForSelector('table.queue');
			const rows = await page.$$eval('table.queue tbody tr', (trs) => trs.map((tr) => [tr.dataset.run, ...[...tr.children].map((x) => x.textContent)]));
			const order = rows.map((r) => r[0]);
			t.expect(order.join() === [third, first, second].join(), `the queue's order: ${rows.map((r) => r[2])}`);
			t.expect(rows[0][1] === '1' && rows[0][3] === 'berth-high (1000)' && rows.every((r) => /gpu/.test(r[6])), `the first place: ${rows[0]}`);
			t.expect(/3 runs waiting/.test(await page.textContent('#queue-count')), `the count: ${await page.textContent('#queue-count')}`);
			await t.step('queue');
			await page.click('#nav a[data-nav="quota"]');
			await page.waitForSelector('[data-resource="gpu"] meter');
			const gpu = await page.$$eval('[data-resource="gpu"] td', (tds) => tds.map((x) => x.textContent.trim()));
			t.expect(gpu.join('|') === 'GPUs|8|8|0|100%', `the GPU quota row: ${gpu.join('|')}`);
			t.expect(/"default" quota/.test(await page.textContent('#quota-of')), 'the quota in force is not named');
			await t.step('quota');
			// the run that held the GPUs stops: the first two of the queue start (4 GPUs
			// each), the last waits, and the page follows
			await page.click('#nav a[data-nav="queue"]');
			await page.waitForSelector('table.queue');
			await t.api('POST', `/api/v1/runs/${hold}/stop?grace=0&wait=true`, { token: t.tokens.user });
			await apiUntil(t, third, ['Running']);
			await apiUntil(t, first, ['Running']);
			await waitFor(t, 'the queue of the last run alone', async () => {
				const ids = await page.$$eval('table.queue tbody tr', (trs) => trs.map((tr) => tr.dataset.run));
				return ids.length === 1 && ids[0] === second ? ids : null;
			}, 15000);
			await stopAll(t);
			await waitFor(t, 'an empty queue', async () => Boolean(await page.$('#queue-empty')), 15000);
		},
	},
	{
		// admins: the tokens they may see (never a secret), the projects; an admin of every
		// project creates one; a viewer is offered neither
		name: 'admin-tokens-and-projects',
		run: async (t) => {
			const { page } = t;
			await signIn(t, t.tokens.admin);
			await page.click('#nav a[data-nav="tokens"]');
			await page.waitForSelector('[data-token]');
			const toks = await page.$$eval('[data-token]', (trs) => trs.map((x) => x.textContent));
			t.expect(toks.length === 3 && toks.every((x) => /demo/.test(x)) && toks.some((x) => /\(this one\)/.test(x)), `the demo admin's tokens: ${toks}`);
			const html = await page.content();
			t.expect(![t.tokens.admin, t.tokens.user, t.tokens.viewer, t.tokens.star].some((x) => html.includes(x.slice(6))), 'a token\'s secret is in the page');
			t.expect(!(await page.$$eval('#t-role option', (os) => os.map((o) => o.value))).includes('admin'), 'an admin of demo alone is offered admin tokens');
			// a token made here: shown once, listed with its expiry, then revoked
			await page.fill('#t-desc', 'from the ui');
			await page.fill('#t-expires', '2h');
			await page.click('#token-form button[type=submit]');
			await page.waitForSelector('#t-secret');
			const secret = await page.inputValue('#t-secret');
			const who = await t.api('GET', '/api/v1/whoami', { token: secret });
			t.expect(who.status === 200 && who.json.role === 'viewer' && who.json.projects.join() === 'demo', `the new token: ${who.status}`);
			await waitFor(t, 'the new token listed', async () => (await page.$$('[data-token]')).length === 4 || null, 5000);
			const row = (await page.$$eval('[data-token]', (trs) => trs.map((x) => [x.dataset.token, x.textContent]))).find((x) => /from the ui/.test(x[1]));
			t.expect(row && /active/.test(row[1]) && !/never/.test(row[1]), `the new token's row: ${row}`);
			await t.step('tokens');
			await page.click(`[data-token="${row[0]}"] button`);
			await page.click(`[data-token="${row[0]}"] button`);
			await waitFor(t, 'the token revoked', async () => /revoked/.test(await page.textContent(`[data-token="${row[0]}"]`)) || null, 5000);
			const after = await t.api('GET', '/api/v1/whoami', { token: secret });
			t.expect(after.status === 401 && /revoked at/.test(after.text || JSON.stringify(after.json)), `the revoked token answered ${after.status}`);
			await page.click('#nav a[data-nav="projects"]');
			await page.waitForSelector('[data-project="demo"]');
			t.expect(!(await page.$('#project-form')), 'an admin of demo alone is offered to create projects');
			await page.click('#signout');
			await signIn(t, t.tokens.star);
			await page.click('#nav a[data-nav="tokens"]');
			await page.waitForSelector('[data-token]');
			t.expect((await page.$$('[data-token]')).length === 5 && /every project/.test(await page.textContent('table.tokens')), 'the * admin does not see every token');
			await page.click('#nav a[data-nav="projects"]');
			await page.fill('#p-name', 'Bad_Name');
			await page.click('#project-form button[type=submit]');
			await page.waitForSelector('#p-name[aria-invalid="true"]');
			t.expect(/Bad_Name/.test(await page.textContent('#p-name-err')), 'a bad name is not refused at its field');
			await page.fill('#p-name', 'ml-team');
			await page.click('#project-form button[type=submit]');
			await page.waitForSelector('[data-project="ml-team"]');
			t.expect((await page.$$eval('#project option', (os) => os.map((o) => o.value))).includes('ml-team'), 'the new project is not in the picker');
			await t.step('projects');
			await page.click('[data-project="ml-team"] button');
			await page.waitForSelector('#runs-status');
			t.expect(await page.textContent('h1') === 'Runs of ml-team' && await page.textContent('#runs-status') === 'No runs yet in this project.', 'the new project\'s list');
		},
	},
	{
		// every page, at a desktop's and a phone's width, light and dark: a screenshot each
		// (build/test/ui-artifacts, docs/ui.md), axe-core finds no serious or critical
		// violation, and nothing is wider than the phone
		name: 'every-page-accessible',
		timeout: 240000,
		run: async (t) => {
			const { page } = t;
			const fn = await t.api('POST', '/api/v1/projects/demo/functions', {
				token: t.tokens.user, body: 'function:\n  name: shown\n  image: python:3.11-slim\n  command: [python, -c, "print(1)"]\nresources: {cpu: 500m}\n',
			});
			t.expect(fn.status === 201 || fn.status === 200, `register: ${fn.status}`);
			const run = await apiRun(t, { name: 'shown', labels: { team: 'vision' }, function: { command: ['sh', '-c', 'echo one; sleep 1; echo two'] } });
			const waiting = await apiRun(t, { name: 'waits', resources: { gpu: 8 }, function: { command: ['sleep', '600'] } });
			const queued = await apiRun(t, { name: 'queued', resources: { gpu: 8 }, function: { command: ['sleep', '600'] } });
			await apiUntil(t, run, ['Succeeded']);
			await apiUntil(t, queued, ['Pending']);
			const pages = [
				['runs', '#/runs', 'tr[data-run]'], ['run', `#/runs/${run}`, '#logs[data-ended="true"]'],
				['run-usage', `#/runs/${run}`, '#usage figure, #usage-none', '#tab-usage'],
				['new-run', '#/new', '#profiles [data-profile="1xa100"]'], ['queue', '#/queue', 'table.queue'],
				['functions', '#/functions', '[data-function="shown"]'], ['function', '#/functions/shown', '#function-spec'],
				['profiles', '#/profiles', '#limits'], ['quota', '#/quota', '#quota-of'], ['secrets', '#/secrets', '#secret-list li'],
				['tokens', '#/tokens', '[data-token]'], ['projects', '#/projects', '[data-project]'],
			];
			for (const [w, dark] of [[1280, false], [1280, true], [390, false], [390, true]]) {
				const v = `${w < 720 ? 'phone' : 'desktop'}-${dark ? 'dark' : 'light'}`;
				await page.setViewportSize({ width: w, height: w < 720 ? 844 : 800 });
				await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
				await page.goto(`${t.url}/`);
				await page.evaluate(() => { sessionStorage.clear(); localStorage.clear(); });
				await page.goto(`${t.url}/#/signin`);
				await page.reload();
				await page.waitForSelector('#token');
				await accessible(t, `sign-in (${v})`);
				await fits(t, `sign-in (${v})`);
				await t.step(`sign-in-${v}`);
				await page.fill('#token', t.tokens.admin);
				await page.press('#token', 'Enter');
				await page.waitForSelector('#nav:not([hidden])');
				for (const [name, hash, ready, tab] of pages) {
					await page.goto(`${t.url}/${hash}`);
					if (tab) {
						await page.waitForSelector(tab);
						await page.click(tab);
					}
					await page.waitForSelector(ready);
					await page.waitForTimeout(300); // what loads after the first answer (the profiles' overrides)
					await accessible(t, `${name} (${v})`);
					await fits(t, `${name} (${v})`);
					await t.step(`${name}-${v}`);
				}
			}
			await t.api('POST', `/api/v1/runs/${waiting}/stop?grace=0&wait=true`, { token: t.tokens.user });
			await stopAll(t);
		},
	},
];
