// berth web UI: a thin face over berth serve's REST API (docs/api.md). Plain
// JavaScript, no build step, nothing loaded from anywhere but the server. Every
// rule stays in libberth: the UI asks the server to parse (/api/v1/parse), to
// check (/validate, whose problems carry the path of the field they concern) and
// to explain (each value's origin, and what a profile overrides).

// ---- small helpers ----------------------------------------------------------------

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

// h('div', {class: 'x', onclick: fn, 'aria-label': 'y'}, child, 'text', ...): an element;
// children that are null, undefined or false are skipped; text is never parsed as HTML
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked' || k === 'selected' || k === 'disabled' || k === 'hidden') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

let uid = 0;
const nextId = (p) => `${p}-${++uid}`;

// el.replaceChildren(...), skipping null, undefined and false as h() does
const fillWith = (el, ...kids) => el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));

function debounce(fn, ms) {
  let t = null;
  const d = (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
  d.cancel = () => clearTimeout(t);
  return d;
}

function flash(msg, kind = 'good') {
  const f = $('#flash');
  f.className = kind;
  f.textContent = msg;
  clearTimeout(flash.t);
  if (msg && kind === 'good') flash.t = setTimeout(() => { f.textContent = ''; }, 6000);
}

function age(iso) {
  if (!iso) return '';
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.floor(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const FINAL = new Set(['Succeeded', 'Failed', 'Stopped']);
const STATES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Stopped'];
const ROLES = { viewer: 0, user: 1, admin: 2 };

// ---- YAML out (the server reads it back with its own parser) ------------------------

const PLAIN_WORDS = /^(true|false|yes|no|on|off|y|n|null|~)$/i;
const NUMBERISH = /^[-+]?(\.?\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?$|^0[xob]|^[-+]?\.(inf|nan)$/i;

function plain(s) {
  return s !== '' && !/^\s|\s$/.test(s) && !PLAIN_WORDS.test(s) && !NUMBERISH.test(s) &&
    !/[\n\r\t]|: |:$| #|[{}[\],&*!|>'"%@`]/.test(s) && !/^([?:#]|-(\s|$))/.test(s);
}

function scalar(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return plain(String(v)) ? String(v) : JSON.stringify(String(v));
}

// A multi-line string as a literal block (|, or |- without the final newline).
function literal(s, pad) {
  if (!s.includes('\n') || /\r|\n\n+$|^[ \t]|[ \t]\n/.test(s)) return null;
  const body = s.endsWith('\n') ? s.slice(0, -1) : s;
  return [s.endsWith('\n') ? '|' : '|-', ...body.split('\n').map((l) => (l ? pad + l : ''))];
}

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function yamlLines(v, ind) {
  const pad = ' '.repeat(ind);
  const out = [];
  const value = (prefix, x) => { // prefix: "key:" or "-"
    if (Array.isArray(x) && x.length === 0) out.push(`${prefix} []`);
    else if (isMap(x) && Object.keys(x).length === 0) out.push(`${prefix} {}`);
    else if (Array.isArray(x) || isMap(x)) {
      const inner = yamlLines(x, ind + 2);
      if (prefix.endsWith('-') && isMap(x)) { // "- key: v" on one line
        out.push(`${prefix} ${inner[0].trimStart()}`, ...inner.slice(1));
      } else out.push(prefix, ...inner);
    } else {
      const lit = typeof x === 'string' ? literal(x, `${pad}  `) : null;
      if (lit) out.push(`${prefix} ${lit[0]}`, ...lit.slice(1));
      else out.push(`${prefix} ${scalar(x)}`);
    }
  };
  if (Array.isArray(v)) for (const x of v) value(`${pad}-`, x);
  else for (const [k, x] of Object.entries(v)) value(`${pad}${scalar(k)}:`, x);
  return out;
}

const toYAML = (v) => (v === undefined || v === null ? '' : `${yamlLines(v, 0).join('\n')}\n`);

// ---- the server ------------------------------------------------------------------

const session = {
  token: sessionStorage.getItem('berth.token') || localStorage.getItem('berth.token') || '',
  who: null, projects: [], project: '', profiles: null, choices: null,
};
const can = (role) => session.who && ROLES[session.who.role] >= ROLES[role];

// api('GET', '/api/v1/runs') -> {status, data (JSON or null), text}
async function api(method, path, { body, token, signal } = {}) {
  const headers = { Authorization: `Bearer ${token || session.token}` };
  if (body !== undefined && typeof body !== 'string') {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(body);
  } else if (body !== undefined) headers['Content-Type'] = 'application/yaml';
  let res;
  try {
    res = await fetch(path, { method, headers, body, signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    return { status: 0, data: null, text: `the server did not answer: ${e.message}` };
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (res.status === 401 && !token) {
    signOut('Your token is no longer accepted (revoked or unknown): sign in again.');
  }
  return { status: res.status, data, text, headers: res.headers };
}

const errorText = (r) => (r.data && r.data.error ? r.data.error.message : r.text || `status ${r.status}`);

// ---- routing ---------------------------------------------------------------------

let teardown = [];
const onLeave = (fn) => teardown.push(fn);

function route() {
  for (const fn of teardown) fn();
  teardown = [];
  const hash = location.hash.replace(/^#/, '') || '/runs';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  const main = $('#main');
  main.replaceChildren();
  if (!session.who) {
    signInView(main);
    return;
  }
  const parts = path.split('/').filter(Boolean);
  for (const a of $$('#nav a')) {
    if (a.dataset.nav === parts[0] && parts.length === 1) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (parts[0] === 'new') newRunView(main, params);
  else if (parts[0] === 'runs' && parts[1]) runView(main, decodeURIComponent(parts[1]));
  else if (parts[0] === 'secrets') secretsView(main);
  else runsView(main);
  const h1 = $('h1', main);
  if (h1 && route.moved) { h1.tabIndex = -1; h1.focus(); }
  route.moved = true;
}

const go = (hash) => { if (location.hash === hash) route(); else location.hash = hash; };

// ---- sign-in, projects -------------------------------------------------------------

async function loadSession(token) {
  const r = await api('GET', '/api/v1/whoami', { token });
  if (r.status !== 200) return r;
  const who = r.data;
  let projects = who.projects.filter((p) => p !== '*');
  if (who.projects.includes('*')) {
    const l = await api('GET', '/api/v1/projects', { token });
    if (l.status === 200) projects = l.data.items.map((p) => p.name);
    if (projects.length === 0) projects = ['default'];
  }
  const p = await api('GET', '/api/v1/profiles', { token });
  Object.assign(session, {
    token, who, projects,
    profiles: p.status === 200 ? p.data.profiles : [],
    choices: p.status === 200 && p.data.choices ? p.data.choices : {},
  });
  const saved = localStorage.getItem('berth.project');
  session.project = projects.includes(saved) ? saved : projects[0];
  showChrome();
  return r;
}

function showChrome() {
  $('#nav').hidden = !session.who;
  $('#who').hidden = !session.who;
  if (!session.who) return;
  const sel = $('#project');
  sel.replaceChildren(...session.projects.map((p) => h('option', { value: p, selected: p === session.project }, p)));
  $('#role').textContent = `${session.who.role}${session.who.token ? ` · token ${session.who.token}` : ''}`;
}

function signOut(msg) {
  sessionStorage.removeItem('berth.token');
  localStorage.removeItem('berth.token');
  Object.assign(session, { token: '', who: null, projects: [], project: '' });
  showChrome();
  if (msg) flash(msg, 'bad');
  go('#/signin');
}

function signInView(main) {
  const err = h('p', { class: 'err', id: 'token-err', role: 'alert' });
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false',
    required: true, 'aria-describedby': 'token-hint token-err',
  });
  const remember = h('input', { type: 'checkbox', id: 'remember' });
  const form = h('form', { class: 'card', novalidate: true },
    h('div', { class: 'field' },
      h('label', { for: 'token' }, 'Token'),
      input,
      h('span', { class: 'hint', id: 'token-hint' },
        'A token from your admin (berth token create). It is kept in this browser tab only, unless you tick the box.'),
      err),
    h('label', { class: 'check' }, remember, 'Keep me signed in on this browser'),
    h('div', { class: 'actions' }, h('button', { class: 'primary', type: 'submit' }, 'Sign in')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = input.value.trim();
    err.textContent = '';
    input.removeAttribute('aria-invalid');
    if (!token) {
      err.textContent = 'Paste your token.';
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    const r = await loadSession(token);
    if (r.status !== 200) {
      err.textContent = r.status === 401 ? 'The server does not know this token (mistyped, or revoked).' : errorText(r);
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    (remember.checked ? localStorage : sessionStorage).setItem('berth.token', token);
    flash('');
    go('#/runs');
  });
  main.append(h('h1', {}, 'Sign in to berth'), form);
  input.focus();
}

// ---- the run list ------------------------------------------------------------------

function stateBadge(s) {
  return h('span', { class: `state ${s}` }, s);
}

function resourcesText(run) {
  const q = (run.resources && run.resources.requests) || {};
  const parts = [];
  if (q.cpu && q.cpu !== '0') parts.push(`cpu ${q.cpu}`);
  if (q.mem && q.mem !== '0') parts.push(`mem ${q.mem}`);
  if (q.gpu) parts.push(`gpu ${q.gpu}`);
  return parts.join(', ');
}

function runsView(main) {
  const state = h('select', { id: 'f-state' }, h('option', { value: '' }, 'Any'),
    ...STATES.map((s) => h('option', { value: s }, s)));
  const text = h('input', { id: 'f-text', type: 'search', placeholder: 'name, id or profile' });
  const live = h('input', { type: 'checkbox', id: 'f-live', checked: true });
  const body = h('tbody');
  const status = h('p', { class: 'muted', role: 'status', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  // the project's quota: used of quota per resource it limits, and the runs waiting for it
  const quota = h('p', { class: 'muted quota', 'data-quota': '' });
  const loadQuota = async () => {
    const r = await api('GET', `/api/v1/projects/${encodeURIComponent(session.project)}/quota`);
    if (r.status !== 200 || !r.data || !r.data.quota_of) { quota.hidden = true; return; }
    const parts = r.data.resources.filter((x) => x.quota !== null).map((x) => `${x.resource} ${x.used} of ${x.quota} (${x.free} free)`);
    quota.hidden = false;
    quota.textContent = `Quota: ${parts.join(', ')}` + (r.data.waiting ? `; ${r.data.waiting} waiting for quota` : '');
  };
  let items = [];
  let next = null;

  const show = () => {
    const t = text.value.trim().toLowerCase();
    const shown = items.filter((r) => !t || [r.id, r.name, r.profile || ''].some((x) => x.toLowerCase().includes(t)));
    body.replaceChildren(...shown.map((r) => h('tr', { 'data-run': r.id },
      h('td', { 'data-label': 'Run' }, h('a', { href: `#/runs/${encodeURIComponent(r.id)}` }, r.name),
        r.workers > 1 ? [' ', h('span', { class: 'tag' }, `${r.workers} workers`)] : null),
      h('td', { 'data-label': 'State' }, stateBadge(r.state), r.reason ? h('div', { class: 'muted' }, r.reason) : null),
      h('td', { 'data-label': 'Profile' }, r.profile || '—'),
      h('td', { 'data-label': 'Resources' }, resourcesText(r)),
      h('td', { 'data-label': 'Age', title: r.created }, age(r.created)))));
    status.textContent = items.length ? `${shown.length} of ${items.length} runs shown` : 'No runs yet in this project.';
    more.hidden = !next;
  };
  // a refresh reads as many runs as are shown; "Load more" the next page
  const load = async (append) => {
    const qs = new URLSearchParams({ limit: String(append ? 50 : Math.min(1000, Math.max(50, items.length))) });
    if (state.value) qs.set('state', state.value);
    if (append && next) qs.set('after', next);
    const r = await api('GET', `/api/v1/projects/${encodeURIComponent(session.project)}/runs?${qs}`);
    if (r.status !== 200) { status.textContent = errorText(r); return; }
    items = append ? items.concat(r.data.items) : r.data.items;
    next = r.data.next || null;
    show();
    loadQuota();
  };
  state.addEventListener('change', () => { items = []; load(false); });
  text.addEventListener('input', show);
  more.addEventListener('click', () => load(true));
  const timer = setInterval(() => { if (live.checked && !document.hidden) load(false); }, 2000);
  onLeave(() => clearInterval(timer));

  main.append(
    h('h1', {}, `Runs of ${session.project}`),
    quota,
    h('div', { class: 'filters' },
      h('div', { class: 'field' }, h('label', { for: 'f-state' }, 'State'), state),
      h('div', { class: 'field' }, h('label', { for: 'f-text' }, 'Filter'), text),
      h('label', { class: 'check' }, live, 'Refresh live'),
      can('user') ? h('a', { href: '#/new' }, 'New run') : null),
    h('div', { class: 'table-wrap' }, h('table', { class: 'runs' },
      h('thead', {}, h('tr', {}, ...['Run', 'State', 'Profile', 'Resources', 'Age'].map((c) => h('th', { scope: 'col' }, c)))),
      body)),
    status, more);
  load(false);
}

// ---- a run -------------------------------------------------------------------------

function tabs(label, panels) { // panels: [{id, title, el}]
  const list = h('div', { class: 'tabs', role: 'tablist', 'aria-label': label });
  const buttons = panels.map((p, i) => h('button', {
    type: 'button', role: 'tab', id: `tab-${p.id}`, 'aria-controls': `panel-${p.id}`,
    'aria-selected': i === 0 ? 'true' : 'false', tabindex: i === 0 ? '0' : '-1',
  }, p.title));
  const bodies = panels.map((p, i) => h('section', {
    role: 'tabpanel', id: `panel-${p.id}`, 'aria-labelledby': `tab-${p.id}`, hidden: i !== 0, tabindex: '0',
  }, p.el));
  const select = (i, focus) => {
    buttons.forEach((b, j) => { b.setAttribute('aria-selected', String(i === j)); b.tabIndex = i === j ? 0 : -1; });
    bodies.forEach((b, j) => { b.hidden = i !== j; });
    if (focus) buttons[i].focus();
    if (panels[i].onshow) panels[i].onshow();
  };
  buttons.forEach((b, i) => {
    b.addEventListener('click', () => select(i, false));
    b.addEventListener('keydown', (e) => {
      const n = buttons.length;
      if (e.key === 'ArrowRight') select((i + 1) % n, true);
      else if (e.key === 'ArrowLeft') select((i + n - 1) % n, true);
      else if (e.key === 'Home') select(0, true);
      else if (e.key === 'End') select(n - 1, true);
      else return;
      e.preventDefault();
    });
  });
  list.append(...buttons);
  return { el: h('div', {}, list, ...bodies), select };
}

function originsTable(spec) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'origins' },
    h('thead', {}, h('tr', {}, ...['Field', 'Value', 'Origin'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...(spec.fields || []).map((f) => h('tr', { 'data-field': f.path },
      h('td', { class: 'mono' }, f.path),
      h('td', { class: 'value mono' }, f.value),
      h('td', { class: 'origin' }, f.origin || '',
        f.at ? h('div', { class: 'muted' }, f.at) : null,
        f.note ? h('div', { class: 'muted' }, f.note) : null,
        f.overrides ? h('div', { class: 'warn' }, `overrides ${f.overrides.origin} ${f.overrides.value}${f.overrides.at ? ` (${f.overrides.at})` : ''}`) : null))))));
}

function runView(main, id) {
  const title = h('h1', {}, id);
  const facts = h('dl', { class: 'facts' });
  const buttons = h('div', { class: 'actions' });
  const logs = h('pre', { class: 'logs', id: 'logs', 'aria-live': 'off', 'aria-label': 'Log' });
  const effective = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const objects = h('pre', { id: 'manifests' }, 'Loading…');
  const events = h('ol', { id: 'events' });
  const logOf = h('p', { class: 'muted', id: 'log-of', hidden: true });
  const workers = h('section', { id: 'workers', 'aria-labelledby': 'workers-h', hidden: true });
  let abort = null; // the log's stream
  onLeave(() => abort && abort.abort());
  let rank = -1; // whose log: a worker's, or -1 the run's (every worker's)
  let wrows = null; // a distributed run's workers: [{tr, b: its log's button}]
  let allB = null; // the button of every worker's log
  let run = null;
  let timer = null;
  let left = false;
  onLeave(() => { left = true; clearTimeout(timer); });

  const fact = (k, v) => (v === undefined || v === null || v === '' ? [] : [h('dt', {}, k), h('dd', {}, v)]);
  const showRun = () => {
    title.replaceChildren(run.name, ' ', stateBadge(run.state));
    const req = (run.resources && run.resources.requests) || {};
    const lim = (run.resources && run.resources.limits) || {};
    facts.replaceChildren(
      ...fact('Id', run.id), ...fact('State', run.state), ...fact('Reason', run.reason),
      ...fact('Project', run.project), ...fact('Action', run.action), ...fact('Profile', run.profile),
      ...fact('Image', run.image), ...fact('Priority class', run.priority_class),
      ...fact('Requests', Object.entries(req).map(([k, v]) => `${k} ${v}`).join(', ')),
      ...fact('Limits', Object.entries(lim).map(([k, v]) => `${k} ${v}`).join(', ')),
      ...fact('GPUs', run.gpu_ids), ...fact('Exit code', run.exit_code),
      ...fact('OOM killed', run.oom_killed ? 'yes' : null),
      ...fact('Usage', run.usage ? `cpu ${run.usage.cpu_seconds}s, peak memory ${run.usage.mem_peak_bytes} bytes` : null),
      ...fact('Enforcement', run.enforcement), ...fact('Where', run.target),
      ...fact('Created', run.created), ...fact('Started', run.started), ...fact('Finished', run.finished));
    const final = FINAL.has(run.state);
    fillWith(buttons, 
      can('user') && !final ? h('button', { type: 'button', class: 'danger', id: 'stop', onclick: stop }, 'Stop') : null,
      can('user') ? h('a', { href: `#/new?from=${encodeURIComponent(run.id)}`, id: 'rerun' }, 'Re-run with changes') : null,
      can('user') && final ? h('button', { type: 'button', id: 'delete', onclick: del }, 'Delete') : null);
    if (run.workers > 1) showWorkers();
  };
  // a distributed run: a row per worker with its state, its share of the run's GPUs
  // (an equal count each, by index, as the backend splits them) and its log
  const showWorkers = () => {
    const n = run.workers;
    if (!wrows) { // drawn once, then updated in place: a focused button stays
      const toggle = (i, label, text) => h('button', { type: 'button', 'aria-pressed': String(i === rank), 'aria-label': label, onclick: () => showLog(i) }, text);
      wrows = Array.from({ length: n }, (_, i) => {
        const b = toggle(i, `Show log of worker ${i}`, 'Show log');
        return { b, tr: h('tr', { 'data-rank': i }, h('th', { scope: 'row' }, String(i)), h('td'), h('td', { class: 'mono value' }), h('td', {}, b)) };
      });
      allB = toggle(-1, null, 'All workers');
      fillWith(workers, h('h2', { id: 'workers-h' }, `Workers (${n})`),
        h('div', { class: 'table-wrap' }, h('table', { class: 'workers' },
          h('thead', {}, h('tr', {}, ...['Rank', 'State', 'GPUs', 'Log'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, wrows.map((w) => w.tr)))),
        h('p', {}, allB));
      workers.hidden = logOf.hidden = false;
      showLog(rank, true);
    }
    const ids = run.gpu_ids ? String(run.gpu_ids).split(',') : [];
    const each = Math.floor(ids.length / n);
    wrows.forEach((w, i) => {
      const s = (run.worker_states || [])[i] || (run.state === 'Pending' ? 'Pending' : ''); // gang: all wait
      const [, st, gpus] = w.tr.children;
      if (st.dataset.s !== s) { st.dataset.s = s; fillWith(st, s ? stateBadge(s) : h('span', { class: 'muted' }, 'unknown')); }
      gpus.textContent = each ? ids.slice(i * each, (i + 1) * each).join(',') : '—';
    });
  };
  const showLog = (i, quiet) => {
    rank = i;
    wrows.forEach((w, j) => w.b.setAttribute('aria-pressed', String(i === j)));
    allB.setAttribute('aria-pressed', String(i < 0));
    logOf.textContent = i < 0 ? 'Every worker\'s log, each line after its [rank N].' : `Worker ${i}'s log.`;
    if (quiet) return;
    t.select(0, false);
    follow();
  };
  const stop = async (e) => {
    e.target.disabled = true;
    const r = await api('POST', `/api/v1/runs/${encodeURIComponent(id)}/stop`);
    if (r.status === 200 || r.status === 202) { run = r.data; showRun(); flash(`Stop requested for ${run.name}.`); } else flash(errorText(r), 'bad');
  };
  const del = async (e) => {
    if (e.target.dataset.confirm !== 'yes') {
      e.target.dataset.confirm = 'yes';
      e.target.textContent = 'Delete: press again to confirm';
      return;
    }
    const r = await api('DELETE', `/api/v1/runs/${encodeURIComponent(id)}`);
    if (r.status === 204) { flash(`Run ${id} deleted.`); go('#/runs'); } else flash(errorText(r), 'bad');
  };
  const loadEvents = async () => {
    const r = await api('GET', `/api/v1/runs/${encodeURIComponent(id)}/events`);
    if (r.status === 200) events.replaceChildren(...r.data.items.map((e) => h('li', {}, h('span', { class: 'muted' }, `${e.time} `), h('strong', {}, e.kind), e.message ? ` ${e.message}` : '')));
  };
  const poll = async () => {
    const r = await api('GET', `/api/v1/runs/${encodeURIComponent(id)}`);
    if (left) return;
    if (r.status !== 200) {
      title.textContent = `Run ${id}`;
      facts.replaceChildren(h('p', { class: 'err' }, errorText(r)));
      return;
    }
    const was = run && run.state;
    run = r.data;
    showRun();
    if (was !== run.state) loadEvents();
    if (!FINAL.has(run.state)) timer = setTimeout(poll, 1000);
  };
  const follow = async () => {
    if (abort) abort.abort();
    const my = abort = new AbortController();
    logs.textContent = '';
    logs.dataset.rank = rank < 0 ? 'all' : rank;
    delete logs.dataset.ended;
    try {
      const res = await fetch(`/api/v1/runs/${encodeURIComponent(id)}/logs?follow=true${rank < 0 ? '' : `&rank=${rank}`}`, {
        headers: { Authorization: `Bearer ${session.token}` }, signal: my.signal,
      });
      if (my.signal.aborted) return;
      if (!res.ok) { logs.textContent = `(no log: status ${res.status})`; return; }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (my.signal.aborted) return;
        if (done) break;
        const atEnd = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
        logs.append(dec.decode(value, { stream: true }));
        if (atEnd) logs.scrollTop = logs.scrollHeight;
      }
      logs.dataset.ended = 'true';
      if (!logs.textContent) logs.textContent = `(${rank < 0 ? 'the run' : `worker ${rank}`} wrote nothing)`;
    } catch (e) {
      if (e.name !== 'AbortError') logs.textContent += `\n(log stream broken: ${e.message})`;
    }
  };
  const loadSpec = async () => {
    const r = await api('GET', `/api/v1/runs/${encodeURIComponent(id)}/spec`);
    effective.replaceChildren(r.status === 200 ? originsTable(r.data) : h('p', { class: 'err' }, errorText(r)));
  };
  const loadObjects = async () => {
    const r = await fetch(`/api/v1/runs/${encodeURIComponent(id)}/manifests?format=yaml`, { headers: { Authorization: `Bearer ${session.token}` } });
    const text = await r.text();
    if (r.ok) { objects.textContent = text; return; }
    let msg = text;
    try { msg = JSON.parse(text).error.message; } catch { /* not JSON */ }
    objects.replaceWith(h('p', { class: 'err', id: 'manifests' }, `No Kubernetes objects: ${msg}`));
  };
  const t = tabs('Run details', [
    { id: 'logs', title: 'Logs', el: h('div', {}, logOf, logs) },
    { id: 'spec', title: 'Effective spec', el: effective },
    { id: 'objects', title: 'Kubernetes objects', el: objects },
    { id: 'events', title: 'Events', el: events },
  ]);
  main.append(h('p', {}, h('a', { href: '#/runs' }, '← Runs')), title, buttons, h('div', { class: 'card' }, facts), workers, t.el);
  poll();
  follow();
  loadSpec();
  loadObjects();
}

// ---- a new run: the form, its YAML, validation by the server ---------------------------

const UNITS = ['Mi', 'Gi', 'Ti', 'M', 'G', 'T', 'Ki', 'k'];
const VOLUME_TYPES = ['persistent_volume_claim', 'empty_dir', 'config_map', 'secret', 'shared_volume'];
const VOLUME_REF = { config_map: 'name', secret: 'name', shared_volume: 'claim_name' };
const VOLUME_SIZE = new Set(['persistent_volume_claim', 'empty_dir']);
const PREEMPTION = ['allow', 'constrain', 'prevent', 'none'];
const ACTIONS = ['job', 'serve', 'deploy', 'cronjob'];
// the keys the form edits; any other key of a spec is kept as it is
const FORM_KEYS = new Set(['project', 'name', 'function', 'args', 'action', 'schedule', 'profile', 'resources',
  'volumes', 'envs', 'secrets', 'node_selector', 'tolerations', 'affinity', 'fs_group', 'run_as_user',
  'run_as_group', 'priority_class', 'preemption_mode', 'replicas', 'min_replicas', 'max_replicas', 'timeout', 'retries']);
const YAML_FIELDS = ['node_selector', 'tolerations', 'affinity'];

// "64Gi" -> {n: "64", u: "Gi"}; anything else stays as typed, with no unit
function splitQty(v) {
  if (v === undefined || v === null || v === '') return { n: '', u: 'Gi' };
  const s = String(v);
  const m = /^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|M|G|T|k)$/.exec(s);
  return m ? { n: m[1], u: m[2] } : { n: s, u: '' };
}
const joinQty = (q) => (q.n === '' ? '' : `${q.n}${q.u}`);
const lines = (t) => t.split('\n').map((l) => l.trim()).filter((l) => l !== '');
const intOr = (t) => (/^-?\d+$/.test(t.trim()) ? Number(t.trim()) : t.trim());
const reqLim = (v) => (isMap(v) ? { req: v.requests ?? '', lim: v.limits ?? '' } : { req: v ?? '', lim: '' });

function emptyForm() {
  return {
    name: '', fname: '', image: '', command: '', args: '', action: 'job', schedule: '', profile: '',
    cpu: { req: '', lim: '' }, mem: { req: { n: '', u: 'Gi' }, lim: { n: '', u: 'Gi' } },
    gpu: '', gpuType: '', disk: { n: '', u: 'Gi' },
    volumes: [], envs: [], secrets: [],
    yaml: { node_selector: '', tolerations: '', affinity: '' }, parsed: {}, yamlErr: {},
    fsGroup: '', runAsUser: '', runAsGroup: '', priorityClass: '', preemption: '',
    scale: 'fixed', replicas: '', minReplicas: '', maxReplicas: '', timeout: '', retries: '', extra: {},
    orig: { command: [], args: [] }, // a list as read: kept while its text is not edited
  };
}

function formFromSpec(s) {
  const f = emptyForm();
  s = isMap(s) ? s : {};
  const fn = isMap(s.function) ? s.function : {};
  f.name = s.name ?? '';
  f.fname = typeof s.function === 'string' ? s.function : fn.name ?? '';
  f.image = fn.image ?? '';
  f.orig.command = Array.isArray(fn.command) ? fn.command : fn.command ? [fn.command] : [];
  f.orig.args = Array.isArray(s.args) ? s.args : s.args ? [s.args] : [];
  f.command = f.orig.command.join('\n');
  f.args = f.orig.args.join('\n');
  f.action = s.action || 'job';
  f.schedule = s.schedule ?? '';
  f.profile = s.profile ?? '';
  const r = isMap(s.resources) ? s.resources : {};
  f.cpu = reqLim(r.cpu);
  const mem = reqLim(r.mem);
  f.mem = { req: splitQty(mem.req), lim: splitQty(mem.lim) };
  f.gpu = isMap(r.gpu) ? String(r.gpu.limits ?? r.gpu.requests ?? '') : String(r.gpu ?? '');
  f.gpuType = r.gpu_type ?? '';
  f.disk = splitQty(reqLim(r.disk).req);
  f.volumes = (Array.isArray(s.volumes) ? s.volumes : []).map((v) => {
    const spec = isMap(v.spec) ? v.spec : {};
    return {
      type: v.volume_type || 'persistent_volume_claim', name: v.name ?? '', mount: v.mount_path ?? '',
      size: splitQty(spec.size), storageClass: spec.storage_class ?? '',
      ref: spec.name ?? spec.claim_name ?? '',
    };
  });
  f.envs = (Array.isArray(s.envs) ? s.envs : []).map((e) => ({ name: e.name ?? '', value: String(e.value ?? '') }));
  f.secrets = Array.isArray(s.secrets) ? s.secrets.map(String) : [];
  for (const k of YAML_FIELDS) {
    if (s[k] !== undefined) { f.yaml[k] = toYAML(s[k]); f.parsed[k] = s[k]; }
  }
  f.fsGroup = String(s.fs_group ?? '');
  f.runAsUser = String(s.run_as_user ?? '');
  f.runAsGroup = String(s.run_as_group ?? '');
  f.priorityClass = s.priority_class ?? '';
  f.preemption = s.preemption_mode ?? '';
  if (s.min_replicas !== undefined || s.max_replicas !== undefined) f.scale = 'auto';
  f.replicas = String(s.replicas ?? '');
  f.minReplicas = String(s.min_replicas ?? '');
  f.maxReplicas = String(s.max_replicas ?? '');
  f.timeout = String(s.timeout ?? '');
  f.retries = String(s.retries ?? '');
  for (const [k, v] of Object.entries(s)) if (!FORM_KEYS.has(k)) f.extra[k] = v;
  return f;
}

function specFromForm(f, project) {
  const s = { project };
  const put = (k, v) => { if (v !== '' && v !== undefined && v !== null && !(Array.isArray(v) && !v.length)) s[k] = v; };
  put('name', f.name.trim());
  const fn = {};
  if (f.fname.trim()) fn.name = f.fname.trim();
  if (f.image.trim()) fn.image = f.image.trim();
  const list = (k) => (f[k] === f.orig[k].join('\n') ? f.orig[k] : lines(f[k]));
  if (list('command').length) fn.command = list('command');
  if (Object.keys(fn).length) s.function = fn;
  put('args', list('args'));
  s.action = f.action;
  if (f.action === 'cronjob') put('schedule', f.schedule.trim());
  put('profile', f.profile);
  const res = {};
  const rl = (req, lim) => (lim === '' ? req : req === '' ? { limits: lim } : { requests: req, limits: lim });
  const cpu = rl(String(f.cpu.req).trim(), String(f.cpu.lim).trim());
  if (cpu !== '') res.cpu = cpu;
  const mem = rl(joinQty(f.mem.req), joinQty(f.mem.lim));
  if (mem !== '') res.mem = mem;
  if (f.gpu.trim()) res.gpu = f.gpu.trim();
  if (f.gpuType) res.gpu_type = f.gpuType;
  if (joinQty(f.disk)) res.disk = joinQty(f.disk);
  if (Object.keys(res).length) s.resources = res;
  put('volumes', f.volumes.map((v) => {
    const out = { volume_type: v.type, name: v.name.trim(), mount_path: v.mount.trim() };
    const spec = {};
    if (VOLUME_SIZE.has(v.type) && joinQty(v.size)) spec.size = joinQty(v.size);
    if (v.type === 'persistent_volume_claim' && v.storageClass.trim()) spec.storage_class = v.storageClass.trim();
    if (VOLUME_REF[v.type] && v.ref.trim()) spec[VOLUME_REF[v.type]] = v.ref.trim();
    if (Object.keys(spec).length) out.spec = spec;
    return out;
  }));
  put('envs', f.envs.filter((e) => e.name.trim() || e.value).map((e) => ({ name: e.name.trim(), value: e.value })));
  put('secrets', f.secrets);
  for (const k of YAML_FIELDS) if (f.yaml[k].trim() && f.parsed[k] !== undefined && f.parsed[k] !== null) s[k] = f.parsed[k];
  put('fs_group', intOr(f.fsGroup));
  put('run_as_user', intOr(f.runAsUser));
  put('run_as_group', intOr(f.runAsGroup));
  put('priority_class', f.priorityClass);
  put('preemption_mode', f.preemption);
  if (f.action === 'serve' || f.action === 'deploy') {
    if (f.scale === 'auto') { put('min_replicas', intOr(f.minReplicas)); put('max_replicas', intOr(f.maxReplicas)); } else put('replicas', intOr(f.replicas));
  }
  put('timeout', intOr(f.timeout));
  put('retries', intOr(f.retries));
  return Object.assign(s, f.extra);
}

// A profile's field as a short phrase: "resources.cpu.requests" 8 -> "cpu 8".
function givesText(fl) {
  const p = fl.path.replace(/^resources\./, '').replace(/\.requests$/, '').replace(/\.limits$/, ' (limit)');
  return `${p} ${fl.value}`;
}

function newRunView(main, params) {
  if (!can('user')) {
    main.append(h('h1', {}, 'New run'), h('p', { class: 'err' }, `A ${session.who.role} may not create runs; ask for a user token.`));
    return;
  }
  let form = emptyForm();
  let yamlText = '';
  let mode = 'form';
  let secretNames = [];
  let gen = 0; // the newest check: older answers are dropped
  const project = session.project;
  const locked = new Set((session.choices && session.choices.locked_fields) || []);

  const formEl = h('form', { id: 'run-form', novalidate: true });
  const yamlEl = h('textarea', { id: 'yaml', class: 'code', spellcheck: 'false', 'aria-describedby': 'yaml-problems', 'aria-label': 'Run spec (YAML)' });
  const yamlProblems = h('div', { id: 'yaml-problems', 'aria-live': 'polite' });
  const summary = h('div', { id: 'summary', 'aria-live': 'polite' });
  const profileBox = h('div', { class: 'profiles', id: 'profiles', role: 'radiogroup', 'aria-label': 'Hardware profile' });

  // ---- binding: data-bind="cpu.req" is the form's value, data-path the spec's field
  const getAt = (o, p) => p.split('.').reduce((x, k) => (x === undefined ? x : x[k]), o);
  const setAt = (o, p, v) => { const ks = p.split('.'); const last = ks.pop(); ks.reduce((x, k) => x[k], o)[last] = v; };
  const input = (bind, path, attrs = {}) => {
    const id = attrs.id || nextId('f');
    const el = h(attrs.tag || 'input', { ...attrs, tag: null, id, 'data-bind': bind, 'data-path': path || null, 'aria-describedby': `${id}-err` });
    const v = getAt(form, bind);
    if (el.tagName === 'SELECT') queueMicrotask(() => { el.value = v ?? ''; });
    else el.value = v ?? '';
    el.addEventListener(el.tagName === 'SELECT' ? 'change' : 'input', () => { setAt(form, bind, el.value); changed(bind); });
    return el;
  };
  const field = (label, el, hint) => h('div', { class: 'field' },
    h('label', { for: el.id || $('[id]', el).id }, label), el,
    hint ? h('span', { class: 'hint' }, hint) : null,
    h('span', { class: 'err', id: `${(el.id || $('[id]', el).id)}-err` }));
  const select = (bind, path, options) => { const el = input(bind, path, { tag: 'select' }); el.append(...options); return el; };
  const opts = (list, blank) => (blank !== undefined ? [h('option', { value: '' }, blank)] : [])
    .concat(list.map((o) => (Array.isArray(o) ? h('option', { value: o[0] }, o[1]) : h('option', { value: o }, o))));
  const qty = (bind, path, label, hint) => {
    const n = input(`${bind}.n`, path, { inputmode: 'decimal', autocomplete: 'off' });
    const u = input(`${bind}.u`, path, { tag: 'select', 'aria-label': `${label} unit` });
    u.append(...opts(UNITS.map((x) => [x, x]).concat([['', '(as typed)']])));
    return field(label, h('div', { class: 'qty' }, n, u), hint);
  };

  function build() {
    const f = form;
    const gpuTypes = (session.choices && session.choices.gpu_types) || [];
    const prio = (session.choices && session.choices.priority_classes) || [];
    const lockedNote = (k) => (locked.has(k) ? 'Reserved to profiles by the platform (security.user_fields): pick a profile that sets it.' : null);
    const yamlArea = (k, label, hint) => {
      const el = h('textarea', { id: `y-${k}`, class: 'code', spellcheck: 'false', 'data-path': k, 'aria-describedby': `y-${k}-err`, disabled: locked.has(k) });
      el.value = f.yaml[k];
      el.addEventListener('input', () => {
        f.yaml[k] = el.value;
        el.removeAttribute('aria-invalid'); // until the server has read it again
        $(`#y-${k}-err`).textContent = '';
        parseYamlField(k);
      });
      return field(label, el, lockedNote(k) || hint);
    };
    const serving = f.action === 'serve' || f.action === 'deploy';
    fillWith(formEl, 
      h('fieldset', {}, h('legend', {}, 'Function'),
        h('div', { class: 'grid' },
          field('Function name', input('fname', 'function.name', { required: true, autocomplete: 'off' }), 'A registered function of the project, or the name of this one.'),
          field('Image', input('image', 'function.image', { autocomplete: 'off', placeholder: 'python:3.11' })),
          field('Run name', input('name', 'name', { autocomplete: 'off' }), 'Optional; default: the function name.'),
          field('Action', select('action', 'action', opts(ACTIONS))),
          f.action === 'cronjob' ? field('Schedule', input('schedule', 'schedule', { placeholder: '0 3 * * *' }), 'Five cron fields.') : null),
        h('div', { class: 'grid' },
          field('Command', input('command', 'function.command', { tag: 'textarea', class: 'code', spellcheck: 'false' }), 'One argument per line, e.g. python, train.py.'),
          field('Arguments', input('args', 'args', { tag: 'textarea', class: 'code', spellcheck: 'false' }), 'One per line.'))),
      h('fieldset', {}, h('legend', {}, 'Hardware profile'),
        h('p', { class: 'hint muted' }, 'A profile wins every field it sets, and a resource it sets whole; what it would override of yours is shown on it.'),
        profileBox),
      h('fieldset', {}, h('legend', {}, 'Resources'),
        h('div', { class: 'grid' },
          field('CPU request', input('cpu.req', 'resources.cpu.requests', { inputmode: 'decimal', placeholder: 'e.g. 500m or 2', autocomplete: 'off' })),
          field('CPU limit', input('cpu.lim', 'resources.cpu.limits', { inputmode: 'decimal', autocomplete: 'off' })),
          qty('mem.req', 'resources.mem.requests', 'Memory request'),
          qty('mem.lim', 'resources.mem.limits', 'Memory limit'),
          field('GPUs', input('gpu', 'resources.gpu', { inputmode: 'numeric', autocomplete: 'off', placeholder: '0' }), 'Whole GPUs; a GPU is a limit.'),
          field('GPU type', select('gpuType', 'resources.gpu_type', opts(gpuTypes, `(platform default${session.choices && session.choices.default_gpu_type ? `: ${session.choices.default_gpu_type}` : ''})`))),
          qty('disk', 'resources.disk', 'Disk (ephemeral)'))),
      h('fieldset', {}, h('legend', {}, 'Volumes'),
        h('div', { class: 'rows' }, ...f.volumes.map((v, i) => h('div', { class: 'row', 'data-row': `volumes.${i}` },
          field('Type', select(`volumes.${i}.type`, `volumes[${i}].volume_type`, opts(VOLUME_TYPES))),
          field('Name', input(`volumes.${i}.name`, `volumes[${i}].name`, { autocomplete: 'off' })),
          field('Mount path', input(`volumes.${i}.mount`, `volumes[${i}].mount_path`, { autocomplete: 'off', placeholder: '/data' })),
          VOLUME_SIZE.has(v.type) ? qty(`volumes.${i}.size`, `volumes[${i}].spec.size`, 'Size') : null,
          v.type === 'persistent_volume_claim' ? field('Storage class', input(`volumes.${i}.storageClass`, `volumes[${i}].spec.storage_class`, { autocomplete: 'off' })) : null,
          VOLUME_REF[v.type] ? field(v.type === 'shared_volume' ? 'Claim name' : v.type === 'secret' ? 'Secret' : 'ConfigMap', input(`volumes.${i}.ref`, `volumes[${i}].spec.${VOLUME_REF[v.type]}`, { autocomplete: 'off' })) : null,
          h('button', { type: 'button', onclick: () => { f.volumes.splice(i, 1); rebuild(); } }, `Remove volume ${i + 1}`)))),
        h('div', { class: 'actions' }, h('button', { type: 'button', id: 'add-volume', onclick: () => { f.volumes.push({ type: 'persistent_volume_claim', name: '', mount: '', size: { n: '', u: 'Gi' }, storageClass: '', ref: '' }); rebuild(`volumes.${f.volumes.length - 1}.name`); } }, 'Add volume'))),
      h('fieldset', {}, h('legend', {}, 'Environment and secrets'),
        h('div', { class: 'rows' }, ...f.envs.map((e, i) => h('div', { class: 'row' },
          field('Variable', input(`envs.${i}.name`, `envs[${i}].name`, { autocomplete: 'off' })),
          field('Value', input(`envs.${i}.value`, `envs[${i}].value`, { autocomplete: 'off' })),
          h('button', { type: 'button', onclick: () => { f.envs.splice(i, 1); rebuild(); } }, `Remove variable ${i + 1}`)))),
        h('div', { class: 'actions' }, h('button', { type: 'button', id: 'add-env', onclick: () => { f.envs.push({ name: '', value: '' }); rebuild(`envs.${f.envs.length - 1}.name`); } }, 'Add variable')),
        h('div', { class: 'field', role: 'group', 'aria-labelledby': 'secrets-label' },
          h('span', { id: 'secrets-label', class: 'label' }, h('strong', {}, 'Secrets'), ' (their values reach the run as environment variables)'),
          h('div', { class: 'checks', 'data-path': 'secrets', id: 'secrets-box', tabindex: '-1' },
            secretNames.length ? secretNames.map((n) => {
              const c = h('input', { type: 'checkbox', value: n, checked: f.secrets.includes(n) });
              c.addEventListener('change', () => { f.secrets = c.checked ? [...new Set(f.secrets.concat(n))] : f.secrets.filter((x) => x !== n); changed('secrets'); });
              return h('label', { class: 'check' }, c, n);
            }) : h('span', { class: 'muted' }, 'This project has no secrets.')),
          h('span', { class: 'err', id: 'secrets-box-err' }))),
      h('fieldset', {}, h('legend', {}, 'Placement'),
        h('div', { class: 'grid' },
          yamlArea('node_selector', 'Node selector (YAML)', 'A map, or a list of {key, value}.'),
          yamlArea('tolerations', 'Tolerations (YAML)', 'A list of {key, operator, value, effect}.'),
          yamlArea('affinity', 'Affinity (YAML)', 'A Kubernetes Affinity.'))),
      h('fieldset', {}, h('legend', {}, 'Security'),
        h('div', { class: 'grid' },
          field('fs_group', input('fsGroup', 'fs_group', { inputmode: 'numeric', autocomplete: 'off' })),
          field('run_as_user', input('runAsUser', 'run_as_user', { inputmode: 'numeric', autocomplete: 'off' })),
          field('run_as_group', input('runAsGroup', 'run_as_group', { inputmode: 'numeric', autocomplete: 'off' })))),
      h('fieldset', {}, h('legend', {}, 'Scheduling'),
        h('div', { class: 'grid' },
          field('Priority class', select('priorityClass', 'priority_class', opts(prio, '(platform default)'))),
          field('Preemption mode', select('preemption', 'preemption_mode', opts(PREEMPTION, '(platform default)')), 'Whether it may run on spot nodes.'),
          serving ? field('Scaling', select('scale', '', opts([['fixed', 'Fixed replicas'], ['auto', 'Autoscale (min/max)']]))) : null,
          serving && f.scale === 'fixed' ? field('Replicas', input('replicas', 'replicas', { inputmode: 'numeric' })) : null,
          serving && f.scale === 'auto' ? field('Min replicas', input('minReplicas', 'min_replicas', { inputmode: 'numeric' })) : null,
          serving && f.scale === 'auto' ? field('Max replicas', input('maxReplicas', 'max_replicas', { inputmode: 'numeric' })) : null,
          field('Timeout (seconds)', input('timeout', 'timeout', { inputmode: 'numeric' })),
          f.action === 'job' ? field('Retries', input('retries', 'retries', { inputmode: 'numeric' })) : null)));
    for (const k of YAML_FIELDS) if (f.yamlErr[k]) fieldError($(`#y-${k}`), f.yamlErr[k]);
    renderProfiles();
  }

  function rebuild(focusBind) {
    build();
    changed('');
    if (focusBind) { const el = $(`[data-bind="${focusBind}"]`, formEl); if (el) el.focus(); }
  }

  // ---- the profile picker ----
  const overrides = {}; // profile id -> [{path, value, was}] or {problem}
  function renderProfiles() {
    const pick = (id, title, children) => {
      const r = h('input', { type: 'radio', name: 'profile', value: id, checked: form.profile === id, 'data-path': 'profile', id: `profile-${id || 'none'}` });
      r.addEventListener('change', () => { form.profile = id; changed('profile'); renderProfiles(); });
      return h('label', { class: 'profile', 'data-profile': id || '-' }, h('span', { class: 'check' }, r, h('strong', {}, title)), ...children);
    };
    const cards = [pick('', 'No profile', [h('span', { class: 'muted' }, 'Only what you ask for.')])];
    for (const p of session.profiles || []) {
      const o = overrides[p.id];
      cards.push(pick(p.id, p.id, [
        p.description ? h('span', {}, p.description) : null,
        h('ul', { 'aria-label': `${p.id} gives` }, ...p.fields.map((fl) => h('li', {}, givesText(fl)))),
        o && o.problem ? h('div', { class: 'overrides' }, `Refused with this profile: ${o.problem}`) : null,
        o && o.list && o.list.length ? h('div', { class: 'overrides', 'data-overrides': p.id },
          'Overrides yours: ', o.list.map((x) => `${givesText({ path: x.path, value: `${x.was} → ${x.value}` })}`).join('; ')) : null,
        o && o.list && !o.list.length ? h('div', { class: 'muted' }, 'Overrides nothing you set.') : null]));
    }
    const focused = document.activeElement && document.activeElement.name === 'profile' ? document.activeElement.value : null;
    profileBox.replaceChildren(...cards);
    if (focused !== null) { const r = $(`input[name=profile][value="${CSS.escape(focused)}"]`, profileBox); if (r) r.focus(); }
  }
  // what each profile would override of this spec: the server's explain, per profile
  const checkProfiles = debounce(async (my) => {
    const base = specFromForm(form, project);
    await Promise.all((session.profiles || []).map(async (p) => {
      const r = await api('POST', `/api/v1/projects/${encodeURIComponent(project)}/validate?file=ui.yaml`, { body: toYAML({ ...base, profile: p.id }) });
      if (my !== gen) return;
      if (r.status === 200) {
        const fields = (r.data.runs[0] && r.data.runs[0].fields) || [];
        overrides[p.id] = { list: fields.filter((x) => x.overrides).map((x) => ({ path: x.path, value: x.value, was: x.overrides.value })) };
      } else {
        const probs = (r.data && r.data.error && r.data.error.problems) || [];
        const own = probs.find((x) => x.message) || {};
        overrides[p.id] = { problem: own.message || errorText(r) };
      }
    }));
    if (my === gen) renderProfiles();
  }, 500);

  // ---- validation by the server, shown at the fields ----
  function fieldError(el, msg) {
    if (!el) return;
    const err = $(`#${CSS.escape(el.id)}-err`) || (el.closest('.field') && $('.err', el.closest('.field')));
    if (err) err.textContent = err.textContent ? `${err.textContent} ${msg}` : msg;
    el.setAttribute('aria-invalid', 'true');
  }
  function clearErrors() {
    for (const e of $$('.err', formEl)) e.textContent = '';
    for (const e of $$('[aria-invalid]', formEl)) e.removeAttribute('aria-invalid');
  }
  // the input for a problem's path: the same path, else the nearest one that holds it,
  // else the first one under it
  function target(path) {
    if (!path) return null;
    const els = $$('[data-path]', formEl).filter((e) => !e.closest('[hidden]'));
    const norm = (p) => p.replace(/\[(\d+)\]/g, '.$1');
    const p = norm(path);
    let best = null;
    let bestLen = -1;
    for (const e of els) {
      const q = norm(e.dataset.path);
      if (q === p) return e.type === 'radio' ? $('input[name=profile]:checked', formEl) || e : e;
      if ((p.startsWith(`${q}.`)) && q.length > bestLen) { best = e; bestLen = q.length; }
    }
    return best || els.find((e) => norm(e.dataset.path).startsWith(`${p}.`)) || null;
  }
  function showProblems(problems, warnings) {
    clearErrors();
    const items = [];
    for (const p of problems) {
      const el = mode === 'form' ? target(p.path) : null;
      if (el) fieldError(el, p.message);
      // a position is the user's YAML only when it is in the text the UI sent (ui.yaml);
      // else it is the policy file's, said as such and never a line of the YAML tab
      const mine = p.line && (!p.file || p.file === 'ui.yaml');
      const where = mode === 'yaml' && mine ? `line ${p.line}:${p.column} ` : '';
      const policy = p.line && !mine ? ` (policy file line ${p.line}:${p.column})` : '';
      const text = `${where}${p.path ? `${p.path}: ` : ''}${p.message}${policy}`;
      items.push(h('li', {}, el ? h('button', { type: 'button', class: 'link', onclick: () => el.focus() }, text)
        : mode === 'yaml' && mine ? h('button', { type: 'button', class: 'link', onclick: () => goLine(p.line, p.column) }, text) : text));
    }
    const box = problems.length
      ? h('div', { class: 'problems', role: 'alert' }, h('strong', {}, problems.length === 1 ? '1 problem' : `${problems.length} problems`), h('ul', {}, items))
      : h('div', { class: 'ok-box' }, 'The server accepts this spec.');
    const warn = (warnings || []).length ? h('ul', { class: 'warn' }, ...warnings.map((w) => h('li', {}, `warning: ${w.path ? `${w.path}: ` : ''}${w.message}`))) : null;
    // one box: under the YAML in its tab, else above Create
    if (mode === 'yaml') {
      summary.replaceChildren();
      yamlProblems.replaceChildren(box, warn || '');
    } else {
      yamlProblems.replaceChildren();
      summary.replaceChildren(box, warn || '');
    }
  }
  function goLine(line, col) {
    const ls = yamlEl.value.split('\n');
    let pos = 0;
    for (let i = 0; i < line - 1 && i < ls.length; i++) pos += ls[i].length + 1;
    pos += Math.max(0, (col || 1) - 1);
    yamlEl.focus();
    yamlEl.setSelectionRange(pos, pos);
  }
  const syntaxProblems = () => YAML_FIELDS.filter((k) => form.yamlErr[k]).map((k) => ({ path: k, message: form.yamlErr[k] }));
  const check = debounce(async () => {
    const my = ++gen;
    const text = currentText();
    if (!text.trim()) { summary.replaceChildren(); return; }
    const r = await api('POST', `/api/v1/projects/${encodeURIComponent(project)}/validate?file=ui.yaml`, { body: text });
    if (my !== gen) return;
    if (r.status === 200) showProblems(syntaxProblems(), r.data.problems);
    else if (r.status === 422) showProblems(syntaxProblems().concat(r.data.error.problems || []), []);
    else showProblems([{ message: errorText(r) }], []);
    checkProfiles(my);
  }, 300);

  // a YAML field of the form, read by the server's parser
  const parseYamlField = debounce(async (k) => {
    const text = form.yaml[k];
    if (!text.trim()) { delete form.parsed[k]; form.yamlErr[k] = ''; changed(k); return; }
    const r = await api('POST', `/api/v1/parse?file=${k}`, { body: text });
    if (r.status === 200) {
      form.parsed[k] = r.data[0];
      form.yamlErr[k] = r.data.length > 1 ? 'one YAML document only' : '';
    } else {
      const p = r.data && r.data.error && r.data.error.problems && r.data.error.problems[0];
      form.yamlErr[k] = p ? `line ${p.line}, column ${p.column}: ${p.message}` : errorText(r);
    }
    changed(k);
  }, 250);

  function currentText() {
    return mode === 'yaml' ? yamlEl.value : toYAML(specFromForm(form, project));
  }
  function changed(bind) {
    if (bind === 'action' || bind === 'scale' || /^volumes\.\d+\.type$/.test(bind)) { rebuild(bind); return; }
    if (mode === 'form') yamlText = toYAML(specFromForm(form, project));
    check();
  }

  // the YAML tab: its text is read back by the server and becomes the form
  let docs = 1;
  const yamlInput = debounce(async () => {
    yamlText = yamlEl.value;
    check();
    const r = await api('POST', '/api/v1/parse?file=ui.yaml', { body: yamlText });
    if (r.status === 200 && r.data.length) {
      docs = r.data.length;
      form = formFromSpec(r.data[0]);
      note.textContent = docs > 1 ? `This spec has ${docs} documents: the form shows the first, and Create submits all.` : '';
    }
  }, 300);
  yamlEl.addEventListener('input', yamlInput);
  const note = h('p', { class: 'muted', 'aria-live': 'polite' });

  const t = tabs('How to write the run', [
    { id: 'form', title: 'Form', el: formEl, onshow: () => { if (mode !== 'form') { yamlInput.cancel(); mode = 'form'; toForm(); } } },
    { id: 'yaml', title: 'YAML', el: h('div', {}, yamlEl, note, yamlProblems), onshow: () => { mode = 'yaml'; yamlEl.value = yamlText; check(); } },
  ]);
  async function toForm() {
    const r = await api('POST', '/api/v1/parse?file=ui.yaml', { body: yamlEl.value });
    if (r.status === 200 && r.data.length) form = formFromSpec(r.data[0]);
    else if (r.status === 422) flash('The YAML does not parse; the form shows the last spec that did.', 'bad');
    rebuild();
  }

  const create = h('button', { type: 'submit', class: 'primary', id: 'create', form: 'run-form' }, 'Create run');
  const submit = async (e) => {
    e.preventDefault();
    if (mode === 'form' && syntaxProblems().length) { showProblems(syntaxProblems(), []); return; }
    create.disabled = true;
    const r = await api('POST', `/api/v1/projects/${encodeURIComponent(project)}/runs?file=ui.yaml`, { body: currentText() });
    create.disabled = false;
    if (r.status === 201) {
      const run = r.data.items ? r.data.items[0] : r.data;
      flash(`Run ${run.name} created${r.data.items ? ` (and ${r.data.items.length - 1} more)` : ''}.`);
      go(`#/runs/${encodeURIComponent(run.id)}`);
    } else {
      // the problems at their fields and lines (422, a 404 function the spec names, ...)
      const problems = r.data && r.data.error && r.data.error.problems;
      showProblems(problems && problems.length ? problems : [{ message: errorText(r) }], []);
      const first = $('[aria-invalid="true"]', mode === 'form' ? formEl : yamlProblems) || $('#summary button') || $('button', yamlProblems);
      if (first) first.focus();
    }
  };
  formEl.addEventListener('submit', submit);

  main.append(h('h1', {}, `New run in ${project}`), t.el, summary, h('div', { class: 'actions' }, create, h('a', { href: '#/runs' }, 'Cancel')));

  (async () => {
    const s = await api('GET', `/api/v1/projects/${encodeURIComponent(project)}/secrets`);
    secretNames = s.status === 200 ? s.data.items.map((x) => x.name) : [];
    const from = params.get('from');
    if (from) {
      const r = await api('GET', `/api/v1/runs/${encodeURIComponent(from)}/source`);
      if (r.status === 200) {
        form = formFromSpec(r.data.fields);
        note.textContent = `From run ${from}.`;
      } else flash(`Cannot read run ${from}: ${errorText(r)}`, 'bad');
    }
    build();
    yamlText = toYAML(specFromForm(form, project));
    if (from) check();
  })();
}

// ---- secrets -----------------------------------------------------------------------

function secretsView(main) {
  const project = session.project;
  // the role the server's policy lets write secrets (security.secret_writers)
  const writers = session.who.secret_writers || 'admin';
  const list = h('ul', { id: 'secret-list' });
  const load = async () => {
    const r = await api('GET', `/api/v1/projects/${encodeURIComponent(project)}/secrets`);
    if (r.status !== 200) { list.replaceChildren(h('li', { class: 'err' }, errorText(r))); return; }
    list.replaceChildren(...(r.data.items.length ? r.data.items.map((s) => h('li', { 'data-secret': s.name },
      h('span', { class: 'mono' }, s.name), ' ',
      can(writers) ? h('button', {
        type: 'button', class: 'link', 'aria-label': `Delete secret ${s.name}`,
        onclick: async (e) => {
          if (e.target.dataset.confirm !== 'yes') { e.target.dataset.confirm = 'yes'; e.target.textContent = 'press again to delete'; return; }
          const d = await api('DELETE', `/api/v1/projects/${encodeURIComponent(project)}/secrets/${encodeURIComponent(s.name)}`);
          if (d.status === 204) flash(`Secret ${s.name} deleted.`); else flash(errorText(d), 'bad');
          load();
        },
      }, 'Delete') : null)) : [h('li', { class: 'muted' }, 'No secrets yet.')]));
  };
  main.append(h('h1', {}, `Secrets of ${project}`),
    h('p', { class: 'muted' }, 'Names only: a value is written once and never shown again, here or anywhere else.'), list);
  if (can(writers)) {
    const name = h('input', { id: 's-name', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 's-name-err' });
    const value = h('input', { id: 's-value', type: 'password', autocomplete: 'new-password', required: true, 'aria-describedby': 's-value-hint s-value-err' });
    const nameErr = h('span', { class: 'err', id: 's-name-err' });
    const valueErr = h('span', { class: 'err', id: 's-value-err' });
    const form = h('form', { class: 'card', id: 'secret-form', novalidate: true },
      h('h2', {}, 'Set a secret'),
      h('div', { class: 'grid' },
        h('div', { class: 'field' }, h('label', { for: 's-name' }, 'Name'), name, nameErr),
        h('div', { class: 'field' }, h('label', { for: 's-value' }, 'Value'), value,
          h('span', { class: 'hint', id: 's-value-hint' }, 'Write-only: it is sealed on the server and cannot be read back.'), valueErr)),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Set secret')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      nameErr.textContent = '';
      valueErr.textContent = '';
      if (!name.value.trim()) { nameErr.textContent = 'A name is needed.'; name.focus(); return; }
      if (!value.value) { valueErr.textContent = 'A value is needed.'; value.focus(); return; }
      const n = name.value.trim();
      const r = await api('PUT', `/api/v1/projects/${encodeURIComponent(project)}/secrets/${encodeURIComponent(n)}`, { body: { value: value.value } });
      value.value = ''; // never kept in the page
      if (r.status === 204) {
        name.value = '';
        flash(`Secret ${n} set. Its value cannot be read back.`);
        load();
      } else {
        nameErr.textContent = errorText(r);
        name.setAttribute('aria-invalid', 'true');
        name.focus();
      }
    });
    main.append(form);
  } else {
    main.append(h('p', { class: 'muted' }, `Setting and deleting secrets needs ${writers === 'user' ? 'a user' : 'an admin'} token; this one is a ${session.who.role}.`));
  }
  load();
}

// ---- start -------------------------------------------------------------------------

$('#project').addEventListener('change', (e) => {
  session.project = e.target.value;
  localStorage.setItem('berth.project', session.project);
  route();
});
$('#signout').addEventListener('click', () => signOut(''));
window.addEventListener('hashchange', route);
(async () => {
  if (session.token) {
    const r = await loadSession(session.token);
    if (r.status !== 200) signOut(r.status === 401 ? 'Your token is no longer accepted: sign in again.' : errorText(r));
  }
  route();
})();
