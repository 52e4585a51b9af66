// The browser tests of the web UI, run in order by run.mjs (which says what `t`
// holds).  A case: {name, run: async (t) => {...}}, optionally viewport, timeout
// (ms) and expectExternal.
export const cases = [
	{
		// the runner itself: a page of the server loads and is screenshotted
		name: 'harness-smoke',
		run: async (t) => {
			await t.page.goto(`${t.url}/healthz`);
			await t.step('healthz');
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
			await t.step('external-image');
		},
	},
];
