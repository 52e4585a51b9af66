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
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

let uid = 0;
const nextId = (p) => `${p}-${++uid}`;

// el.replaceChildren(...), skipping null, undefined and false as h() does
const fillWith = (el, ...kids) => el.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false));

function debounce(fn, ms) {
  let t = null;
  const d = (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
  d.cancel = () => clearTimeout(t);
  return d;
}

// a banner; carry: it stays for the page the next route change shows (a flash
// said before go()), and any route change after that clears it
function flash(msg, kind = 'good', carry = false) {
  const f = $('#flash');
  f.className = kind;
  f.textContent = msg;
  flash.carry = carry;
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

// 4190208 -> "4.0 MiB" (binary units, as the quantities are)
function bytes(n) {
  let v = Number(n);
  if (!Number.isFinite(v)) return String(n);
  const u = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  for (; v >= 1024 && i < u.length - 1; i++) v /= 1024;
  return i ? `${v.toFixed(v < 10 ? 1 : 0)} ${u[i]}` : `${v} bytes`;
}

// seconds -> "4.2 s", "3m 12s", "2h 5m", "3d 4h"
function dur(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return '';
  if (s < 10) return `${Math.max(0, s).toFixed(1)} s`;
  s = Math.round(s);
  const d = Math.floor(s / 86400), hh = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${hh}h` : hh ? `${hh}h ${m}m` : m ? `${m}m ${s % 60}s` : `${s}s`;
}

// how long a run ran (or runs, or waits): {s, text}
function runTime(r, now = Date.now()) {
  const t = (x) => (x ? Date.parse(x) : 0);
  if (r.started) {
    const s = ((t(r.finished) || now) - t(r.started)) / 1000;
    return { s, text: r.finished ? dur(s) : `running ${dur(s)}` };
  }
  if (r.finished) return { s: 0, text: 'never started' };
  return { s: 0, text: `waiting ${dur((now - t(r.created)) / 1000)}` };
}

// "2026-11-22T13:08:57.039Z" -> "2026-11-22 14:08" in the browser's zone
function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

// a time, as a <time>: "2026-11-22 14:08 (3m ago)"
const stamp = (iso) => (iso ? h('time', { datetime: iso, title: iso }, `${when(iso)} (${age(iso)} ago)`) : null);

// who submitted a run, in words: "token abc", "alice (on the server)", "anonymous"
function owner(s) {
  if (!s) return '—';
  if (s.startsWith('token:')) return session.who && `token:${session.who.token}` === s ? `token ${s.slice(6)} (you)` : `token ${s.slice(6)}`;
  if (s.startsWith('user:')) return `${s.slice(5)} (on the server)`;
  return s;
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
  who: null, projects: [], project: '', profiles: null, choices: null, defaults: null,
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
  if (flash.carry) flash.carry = false;
  else if ($('#flash').textContent) flash('');
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
  const arg = parts[1] ? decodeURIComponent(parts[1]) : '';
  const view = {
    new: () => newRunView(main, params), queue: () => queueView(main), functions: () => (arg ? functionView(main, arg) : functionsView(main)),
    profiles: () => profilesView(main), quota: () => quotaView(main), secrets: () => secretsView(main),
    tokens: () => tokensView(main), projects: () => projectsView(main),
  }[parts[0]];
  if (view) view();
  else if (parts[0] === 'runs' && arg) runView(main, arg);
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
  Object.assign(session, { token, who, projects });
  const saved = localStorage.getItem('berth.project');
  session.project = projects.includes(saved) ? saved : projects[0];
  await loadProfiles(token);
  showChrome();
  return r;
}

// what the current project's runs may pick and get: its view of the policy (the
// overlay projects.NAME with the rest: its own profiles, defaults, limits)
async function loadProfiles(token) {
  const p = await api('GET', `/api/v1/profiles?project=${encodeURIComponent(session.project)}`, { token });
  Object.assign(session, {
    profiles: p.status === 200 ? p.data.profiles : [],
    choices: p.status === 200 && p.data.choices ? p.data.choices : {},
    defaults: p.status === 200 && p.data.defaults ? p.data.defaults : {},
  });
}

// the volumes the platform mounts on the project's runs unless they say manual or none
const autoVolumes = () => ((session.defaults && session.defaults.fields) || [])
  .filter((fl) => fl.path.startsWith('volumes.'))
  .map((fl) => { let o = {}; try { o = JSON.parse(fl.value); } catch { o = {}; } return `${fl.path.slice(8)} (${o.mount_path || '?'})`; });

function showChrome() {
  $('#nav').hidden = !session.who;
  $('#who').hidden = !session.who;
  if (!session.who) return;
  // what a role may not do is not offered: a viewer gets no "New run", only admins
  // the tokens and projects
  for (const a of $$('#nav a[data-role]')) a.hidden = !can(a.dataset.role);
  const sel = $('#project');
  sel.replaceChildren(...session.projects.map((p) => h('option', { value: p, selected: p === session.project }, p)));
  $('#role').textContent = `${session.who.role}${session.who.token ? ` · token ${session.who.token}` : ''}`;
}

function signOut(msg) {
  sessionStorage.removeItem('berth.token');
  localStorage.removeItem('berth.token');
  Object.assign(session, { token: '', who: null, projects: [], project: '' });
  showChrome();
  if (msg) flash(msg, 'bad', true);
  go('#/signin');
}

// a refusal at its field: the message under it, the field marked and focused
function refuse(input, err, msg) {
  err.textContent = msg;
  input.setAttribute('aria-invalid', 'true');
  input.focus();
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
    if (!token) { refuse(input, err, 'Paste your token.'); return; }
    const r = await loadSession(token);
    if (r.status !== 200) {
      refuse(input, err, r.status === 401 ? 'The server does not know this token (mistyped, or revoked).' : errorText(r));
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

// Calls fn every ms while the page is shown and the tab visible. The list and the
// queue re-read only a first page (100 runs at most: an index range scan), never
// every run loaded.
function every(ms, fn) {
  const t = setInterval(() => { if (!document.hidden) fn(); }, ms);
  onLeave(() => clearInterval(t));
}

// Follows the changes of a project's runs from version rv (the "rv" of a list): one
// long poll at a time (GET runs?watch=true&rv=N answers at the next change, or
// empty after 30 s), so that an open page costs the server nothing while nothing
// changes. fn(items, deleted) per change; fn(null) when rv is too old (410): it
// lists again and returns the list's rv.
function watchRuns(project, rv, fn) {
  const ctl = new AbortController();
  onLeave(() => ctl.abort());
  (async () => {
    while (!ctl.signal.aborted) {
      let r;
      try {
        r = await api('GET', `/api/v1/projects/${encodeURIComponent(project)}/runs?watch=true&rv=${encodeURIComponent(rv)}`, { signal: ctl.signal });
      } catch { return; } // left the page
      if (r.status === 200 && r.data && r.data.rv !== undefined) {
        rv = r.data.rv;
        if (r.data.items.length || (r.data.deleted || []).length) fn(r.data.items, r.data.deleted || []);
      } else if (r.status === 410) rv = await fn(null);
      else await new Promise((res) => { setTimeout(res, 5000); });
    }
  })();
}

const runPath = (id, rest = '') => `/api/v1/runs/${encodeURIComponent(id)}${rest}`;
const projPath = (rest) => `/api/v1/projects/${encodeURIComponent(session.project)}/${rest}`;

// Stops (or deletes) runs, each by its own request; says how many the server took
async function runsDo(what, list) {
  const rs = await Promise.all(list.map((r) => api(what === 'stop' ? 'POST' : 'DELETE', runPath(r.id, what === 'stop' ? '/stop' : ''))));
  const bad = rs.filter((x) => x.status >= 300);
  const done = list.length - bad.length;
  flash(`${what === 'stop' ? 'Stop requested for' : 'Deleted'} ${done} run${done === 1 ? '' : 's'}.${bad.length ? ` ${bad.length} refused: ${errorText(bad[0])}` : ''}`, bad.length ? 'bad' : 'good');
  return rs;
}

const SORTS = { new: 'Newest first', old: 'Oldest first', name: 'Name', state: 'State', long: 'Longest running', owner: 'Submitted by' };
const ORDER = {
  new: (a, b) => b.created.localeCompare(a.created), old: (a, b) => a.created.localeCompare(b.created),
  name: (a, b) => a.name.localeCompare(b.name), state: (a, b) => STATES.indexOf(a.state) - STATES.indexOf(b.state),
  long: (a, b) => runTime(b).s - runTime(a).s, owner: (a, b) => (a.submitted_by || '').localeCompare(b.submitted_by || ''),
};

function runsView(main) {
  const sel = (id, pairs) => h('select', { id }, ...pairs.map(([v, t]) => h('option', { value: v }, t)));
  const state = sel('f-state', [['', 'Any'], ...STATES.map((s) => [s, s])]);
  const text = h('input', { id: 'f-text', type: 'search', placeholder: 'name, id or profile' });
  const label = h('input', { id: 'f-label', type: 'search', placeholder: 'team=vision, tier!=dev', autocomplete: 'off', 'aria-describedby': 'runs-status' });
  const who = sel('f-owner', [['', 'Anyone']]);
  const from = h('input', { id: 'f-from', type: 'date' });
  const to = h('input', { id: 'f-to', type: 'date' });
  const sort = sel('f-sort', Object.entries(SORTS));
  const live = h('input', { type: 'checkbox', id: 'f-live', checked: true });
  const body = h('tbody');
  const status = h('p', { class: 'muted', role: 'status', 'aria-live': 'polite', id: 'runs-status' });
  const more = h('button', { type: 'button', hidden: true, id: 'more' }, 'Load more');
  const picked = new Set(); // the ids ticked, kept across refreshes
  const user = can('user');
  // the project's quota: used of quota per resource it limits, and the runs waiting for it
  const quota = h('p', { class: 'muted quota', 'data-quota': '' });
  const loadQuota = async () => {
    const r = await api('GET', projPath('quota'));
    if (r.status !== 200 || !r.data || !r.data.quota_of) { quota.hidden = true; return; }
    const parts = r.data.resources.filter((x) => x.quota !== null).map((x) => `${x.resource} ${x.used} of ${x.quota} (${x.free} free)`);
    quota.hidden = false;
    fillWith(quota, h('a', { href: '#/quota' }, 'Quota'), `: ${parts.join(', ')}`, r.data.waiting ? [', ', h('a', { href: '#/queue' }, `${r.data.waiting} waiting for quota`)] : '');
  };
  let items = [];
  let next = null;
  let shown = [];
  let ownersKey = '';

  // the label selector (kubectl's: key=value, key!=value, key, !key), which the server
  // reads (labelSelector); matched here too for the runs the watch says changed
  const selector = () => label.value.split(',').map((x) => x.trim()).filter(Boolean).join(',');
  const selects = (r) => selector().split(',').filter(Boolean).every((x) => {
    const l = r.labels || {};
    const m = /^(!?)([^!=]+)(?:(!?=?=)(.*))?$/.exec(x);
    if (!m) return true; // the server said what is wrong with it
    const [, not, k, op, v] = m;
    if (!op) return not ? !(k in l) : k in l;
    return op.startsWith('!') ? l[k] !== v : l[k] === v;
  });
  const day = (v, plus) => (v ? new Date(`${v}T00:00`).getTime() + (plus ? 86400000 : 0) : plus ? Infinity : -Infinity);
  const filtered = () => {
    const t = text.value.trim().toLowerCase();
    const lo = day(from.value, false), hi = day(to.value, true);
    return items.filter((r) => {
      const c = Date.parse(r.created);
      return (!t || [r.id, r.name, r.profile || ''].some((x) => x.toLowerCase().includes(t))) &&
        selects(r) &&
        (!who.value || r.submitted_by === who.value) && c >= lo && c < hi;
    }).sort(ORDER[sort.value] || ORDER.new);
  };
  // the owners to pick from: this token and whoever submitted a run loaded
  const owners = () => {
    const mine = session.who.token ? `token:${session.who.token}` : '';
    const all = [...new Set([mine, who.value, ...items.map((r) => r.submitted_by)].filter(Boolean))].sort();
    if (all.join() === ownersKey) return;
    ownersKey = all.join();
    const cur = who.value;
    fillWith(who, h('option', { value: '' }, 'Anyone'), all.map((o) => h('option', { value: o, selected: o === cur }, owner(o))));
  };

  const allBox = h('input', { type: 'checkbox', id: 'pick-all', 'aria-label': 'Select every run shown' });
  const count = h('span', { id: 'bulk-count' });
  const bulkStop = h('button', { type: 'button', class: 'danger', id: 'bulk-stop' }, 'Stop selected');
  const bulkDel = h('button', { type: 'button', id: 'bulk-delete' }, 'Delete selected');
  const bar = () => {
    const chosen = items.filter((r) => picked.has(r.id));
    count.textContent = chosen.length ? `${chosen.length} selected` : 'None selected';
    bulkStop.disabled = !chosen.some((r) => !FINAL.has(r.state));
    bulkDel.disabled = !chosen.some((r) => FINAL.has(r.state));
    if (bulkDel.disabled) { delete bulkDel.dataset.confirm; bulkDel.textContent = 'Delete selected'; }
    allBox.checked = shown.length > 0 && shown.every((r) => picked.has(r.id));
  };
  const bulk = async (what, btn) => {
    const list = items.filter((r) => picked.has(r.id) && (what === 'stop') !== FINAL.has(r.state));
    if (what === 'delete' && btn.dataset.confirm !== 'yes') {
      btn.dataset.confirm = 'yes';
      btn.textContent = `Delete ${list.length} run${list.length === 1 ? '' : 's'}: press again to confirm`;
      return;
    }
    btn.disabled = true;
    const rs = await runsDo(what, list);
    list.forEach((r, i) => { if (rs[i].status < 300) picked.delete(r.id); });
    load(false);
  };
  bulkStop.addEventListener('click', (e) => bulk('stop', e.target));
  bulkDel.addEventListener('click', (e) => bulk('delete', e.target));
  allBox.addEventListener('change', () => { for (const r of shown) if (allBox.checked) picked.add(r.id); else picked.delete(r.id); show(); });

  const row = (r) => h('tr', { 'data-run': r.id },
    user ? h('td', { class: 'pick' }, h('input', {
      type: 'checkbox', 'aria-label': `Select ${r.name}`, checked: picked.has(r.id),
      onchange: (e) => { if (e.target.checked) picked.add(r.id); else picked.delete(r.id); bar(); },
    })) : null,
    h('td', { 'data-label': 'Run' }, h('a', { href: `#/runs/${encodeURIComponent(r.id)}` }, r.name),
      r.workers > 1 ? [' ', h('span', { class: 'tag' }, `${r.workers} workers`)] : null,
      r.labels ? h('div', { class: 'chips' }, Object.entries(r.labels).map(([k, v]) => h('span', { class: 'chip' }, `${k}=${v}`))) : null),
    h('td', { 'data-label': 'State' }, stateBadge(r.state), r.reason ? h('div', { class: 'muted' }, r.reason) : null),
    h('td', { 'data-label': 'Resources' }, resourcesText(r), r.profile ? h('div', { class: 'muted' }, `profile ${r.profile}`) : null),
    h('td', { 'data-label': 'Submitted by' }, owner(r.submitted_by)),
    h('td', { 'data-label': 'Created', title: r.created }, when(r.created), h('div', { class: 'muted' }, `${age(r.created)} ago`)),
    h('td', { 'data-label': 'Duration' }, runTime(r).text),
    user ? h('td', { 'data-label': 'Actions', class: 'acts' },
      FINAL.has(r.state) ? null : h('button', { type: 'button', class: 'danger', 'aria-label': `Stop ${r.name}`, onclick: async (e) => { e.target.disabled = true; await runsDo('stop', [r]); load(false); } }, 'Stop'),
      h('a', { href: `#/new?from=${encodeURIComponent(r.id)}`, 'aria-label': `Re-run ${r.name} with changes` }, 'Re-run')) : null);

  const show = () => {
    shown = filtered();
    body.replaceChildren(...shown.map(row));
    status.textContent = !items.length && !state.value && !selector() ? 'No runs yet in this project.'
      : !shown.length ? 'No runs match these filters.'
        : `${shown.length} of ${items.length} runs shown${next ? '; older runs are not loaded (Load more)' : ''}.`;
    more.hidden = !next;
    bar();
  };
  // a refresh re-reads the first page (at most 100) and keeps the older runs loaded
  // by "Load more" as they were; "Load more" reads the next page; fresh (another
  // state or selector) replaces them. Returns the list's version (rv), from which a
  // watch follows it
  const load = async (append, fresh) => {
    const qs = new URLSearchParams({ limit: '100' });
    if (state.value) qs.set('state', state.value);
    if (selector()) qs.set('labelSelector', selector());
    if (append && next) qs.set('after', next);
    const r = await api('GET', `${projPath('runs')}?${qs}`);
    if (r.status === 400 && selector()) label.setAttribute('aria-invalid', 'true');
    else label.removeAttribute('aria-invalid');
    if (r.status !== 200) { status.textContent = errorText(r); return undefined; }
    const got = r.data.items;
    if (append) {
      items = items.concat(got);
      next = r.data.next || null;
    } else {
      const ids = new Set(got.map((x) => x.id));
      const last = got[got.length - 1];
      const older = r.data.next && last && !fresh ? items.filter((x) => !ids.has(x.id) && x.created < last.created) : [];
      items = got.concat(older);
      if (!older.length) next = r.data.next || null;
    }
    owners();
    show();
    loadQuota();
    return r.data.rv;
  };
  // a change the watch tells: each run as it is now, in place (or first when new and
  // of the state asked), the deleted ones gone
  let paused = false;
  const apply = (changed, deleted) => {
    if (!changed) return load(false);
    if (!live.checked) { paused = true; return undefined; }
    const gone = new Set(deleted);
    for (const r of changed) {
      const i = items.findIndex((x) => x.id === r.id);
      if ((state.value && r.state !== state.value) || !selects(r)) gone.add(r.id);
      else if (i >= 0) items[i] = r;
      else items.unshift(r);
    }
    items = items.filter((x) => !gone.has(x.id));
    owners();
    show();
    loadQuota();
    return undefined;
  };
  live.addEventListener('change', () => { if (live.checked && paused) { paused = false; load(false); } });
  state.addEventListener('change', () => load(false, true));
  text.addEventListener('input', show);
  label.addEventListener('input', debounce(() => load(false, true), 300));
  for (const el of [who, from, to, sort]) el.addEventListener('change', show);
  more.addEventListener('click', () => load(true));
  // the durations of unfinished runs go on without asking the server
  every(5000, () => {
    for (const td of $$('td[data-label="Duration"]', body)) {
      const r = items.find((x) => x.id === td.parentNode.dataset.run);
      if (r && !FINAL.has(r.state)) td.textContent = runTime(r).text;
    }
  });

  const fl = (lab, el) => h('div', { class: 'field' }, h('label', { for: el.id }, lab), el);
  main.append(
    h('h1', {}, `Runs of ${session.project}`),
    quota,
    h('div', { role: 'search', 'aria-label': 'Filter runs' },
      h('div', { class: 'filters' }, fl('State', state), fl('Filter', text), fl('Sort', sort),
        h('label', { class: 'check' }, live, 'Update live'),
        user ? h('a', { href: '#/new' }, 'New run') : null),
      // the others folded, so that a phone shows runs first
      h('details', { id: 'more-filters' }, h('summary', {}, 'Labels, owner, dates'),
        h('div', { class: 'filters' }, fl('Labels', label), fl('Submitted by', who), fl('Created from', from), fl('Created to', to)))),
    user ? h('div', { class: 'actions bulk', role: 'group', 'aria-label': 'Selected runs' }, count, bulkStop, bulkDel) : null,
    h('div', { class: 'table-wrap' }, h('table', { class: 'cards runs' },
      h('thead', {}, h('tr', {}, user ? h('th', { scope: 'col' }, allBox) : null,
        ...['Run', 'State', 'Resources', 'Submitted by', 'Created', 'Duration', user ? 'Actions' : null].filter(Boolean).map((c) => h('th', { scope: 'col' }, c)))),
      body)),
    status, more);
  // a server with the watch tells each change; without it, the first page is read
  // again every 5 s
  load(false).then((rv) => {
    if (rv !== undefined) watchRuns(session.project, rv, apply);
    else every(5000, () => { if (live.checked) load(false); });
  });
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
    const gpus = run.gpu_ids ? String(run.gpu_ids).split(',') : [];
    // how long it ran, runs, or has waited (none for a run stopped while it waited)
    const spent = run.started ? runTime(run).s : run.finished ? null : (Date.now() - Date.parse(run.created)) / 1000;
    const req = (run.resources && run.resources.requests) || {};
    const lim = (run.resources && run.resources.limits) || {};
    facts.replaceChildren(
      ...fact('Id', run.id), ...fact('State', run.state), ...fact('Reason', run.reason),
      ...fact('Project', run.project), ...fact('Action', run.action), ...fact('Profile', run.profile),
      ...fact('Image', run.image), ...fact('Priority class', run.priority_class),
      ...fact('Requests', Object.entries(req).map(([k, v]) => `${k} ${v}`).join(', ')),
      ...fact('Limits', Object.entries(lim).map(([k, v]) => `${k} ${v}`).join(', ')),
      ...fact(gpus.length > 1 ? 'GPU indexes' : 'GPU index', gpus.join(', ')), ...fact('Exit code', run.exit_code),
      ...fact('Signal', run.signal), ...fact('OOM killed', run.oom_killed ? 'yes' : null),
      ...fact('Usage', run.usage ? `CPU time ${Number(run.usage.cpu_seconds)} s, peak memory ${bytes(run.usage.mem_peak_bytes)}` : null),
      ...fact('Enforcement', run.enforcement), ...fact('Where', run.target),
      ...fact('Submitted by', run.submitted_by ? owner(run.submitted_by) : null),
      ...fact('Labels', run.labels ? h('span', { class: 'chips' }, Object.entries(run.labels).map(([k, v]) => h('span', { class: 'chip' }, `${k}=${v}`))) : null),
      ...fact('Created', stamp(run.created)), ...fact('Started', stamp(run.started)), ...fact('Finished', stamp(run.finished)),
      ...fact(run.started ? (run.finished ? 'Duration' : 'Elapsed') : 'Waiting', dur(spent)));
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
          h('thead', {}, h('tr', {}, ...['Rank', 'State', 'GPU indexes', 'Log'].map((c) => h('th', { scope: 'col' }, c)))),
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
      gpus.textContent = each ? ids.slice(i * each, (i + 1) * each).join(', ') : '—';
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
    if (r.status === 204) { flash(`Run ${id} deleted.`, 'good', true); go('#/runs'); } else flash(errorText(r), 'bad');
  };
  const loadEvents = async () => {
    const r = await api('GET', `/api/v1/runs/${encodeURIComponent(id)}/events`);
    if (r.status === 200) events.replaceChildren(...r.data.items.map((e) => h('li', {}, h('span', { class: 'muted' }, `${e.time} `), h('strong', {}, e.kind), e.message ? ` ${e.message}` : '')));
  };
  const update = (next) => {
    const was = run && run.state;
    run = next;
    showRun();
    if (was !== run.state) loadEvents();
    // its last samples, when it ends with its use shown
    if (was && !FINAL.has(was) && FINAL.has(run.state) && samples && !$('#panel-usage').hidden) loadUsage();
  };
  const get = async () => {
    const r = await api('GET', runPath(id));
    if (left) return false;
    if (r.status !== 200) {
      title.textContent = `Run ${id}`;
      facts.replaceChildren(h('p', { class: 'err' }, errorText(r)));
      return false;
    }
    update(r.data);
    return true;
  };
  // followed by the project's watch where the server has one (the elapsed time
  // ticks here, without a request), else read again every second until final
  let asked = false; // whether the server has a watch
  const version = async () => {
    const l = await api('GET', `/api/v1/projects/${encodeURIComponent(run.project)}/runs?limit=1`);
    return l.status === 200 ? l.data.rv : undefined;
  };
  const poll = async () => {
    if (!(await get()) || FINAL.has(run.state)) return;
    if (!asked) {
      asked = true;
      const rv = await version();
      if (rv !== undefined && !left) {
        if (!(await get())) return; // what changed before the version is read again
        watchRuns(run.project, rv, (items) => {
          const mine = items ? items.find((x) => x.id === id) : null;
          if (mine) update(mine);
          return items ? undefined : version().then(async (v) => { await get(); return v; });
        });
        const tick = setInterval(() => { if (run && !FINAL.has(run.state)) showRun(); }, 1000);
        onLeave(() => clearInterval(tick));
        return;
      }
    }
    if (!FINAL.has(run.state)) timer = setTimeout(poll, 1000);
  };
  // the log: what the stream read so far (logText), shown whole or as the lines
  // that hold the search text, or only the last N; kept at its end while Follow is on
  let logText = '';
  let drawn = 0; // rAF id of a pending redraw
  const search = h('input', { type: 'search', id: 'log-search', placeholder: 'text in a line', 'aria-controls': 'logs', autocomplete: 'off' });
  const tail = h('select', { id: 'log-tail', 'aria-controls': 'logs' }, h('option', { value: '' }, 'every line'),
    h('option', { value: '100' }, 'the last 100'), h('option', { value: '1000' }, 'the last 1000'));
  const stick = h('input', { type: 'checkbox', id: 'log-follow', checked: true });
  const lineCount = h('span', { class: 'muted', id: 'log-count' });
  const drawLog = () => {
    drawn = 0;
    const all = logText.split('\n');
    if (all[all.length - 1] === '') all.pop();
    const q = search.value.toLowerCase();
    const n = Number(tail.value);
    let ls = q ? all.filter((l) => l.toLowerCase().includes(q)) : all;
    if (n) ls = ls.slice(-n);
    if (q || n) logs.textContent = ls.join('\n');
    else if (logs.textContent !== logText) logs.textContent = logText;
    lineCount.textContent = q || n ? `${ls.length} of ${all.length} lines shown` : `${all.length} line${all.length === 1 ? '' : 's'}`;
    if (stick.checked) logs.scrollTop = logs.scrollHeight;
  };
  const redraw = () => { if (!drawn) drawn = requestAnimationFrame(drawLog); };
  onLeave(() => cancelAnimationFrame(drawn));
  search.addEventListener('input', redraw);
  tail.addEventListener('change', redraw);
  stick.addEventListener('change', redraw);
  // the whole log as a file: read again (not followed), so that it is whole
  const download = async (e) => {
    e.target.disabled = true;
    const res = await fetch(runPath(id, `/logs${rank < 0 ? '' : `?rank=${rank}`}`), { headers: { Authorization: `Bearer ${session.token}` } });
    e.target.disabled = false;
    if (!res.ok) { flash(`No log to download: status ${res.status}`, 'bad'); return; }
    const url = URL.createObjectURL(await res.blob());
    const a = h('a', { href: url, download: `${run ? run.name : id}${rank < 0 ? '' : `-rank${rank}`}.log`, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  const follow = async () => {
    if (abort) abort.abort();
    const my = abort = new AbortController();
    logText = '';
    logs.textContent = '';
    logs.dataset.rank = rank < 0 ? 'all' : rank;
    delete logs.dataset.ended;
    try {
      const res = await fetch(runPath(id, `/logs?follow=true${rank < 0 ? '' : `&rank=${rank}`}`), {
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
        const chunk = dec.decode(value, { stream: true });
        logText += chunk;
        // every line shown: appended as it comes; else drawn again once a frame
        if (!search.value && !tail.value) {
          logs.append(chunk);
          if (stick.checked) logs.scrollTop = logs.scrollHeight;
        }
        redraw();
      }
      drawLog();
      logs.dataset.ended = 'true';
      if (!logText) logs.textContent = `(${rank < 0 ? 'the run' : `worker ${rank}`} wrote nothing)`;
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
  // its use over time (GET .../usage: each worker's samples), read when its tab is
  // shown, then what is new every 5 s while it runs and the tab is open
  const usage = h('div', { id: 'usage' }, h('p', { class: 'muted' }, 'Loading…'));
  let samples = null;
  let usageTimer = null;
  onLeave(() => clearTimeout(usageTimer));
  const loadUsage = async () => {
    clearTimeout(usageTimer);
    const last = samples && samples.length ? samples[samples.length - 1].t : 0;
    const r = await api('GET', runPath(id, `/usage${last ? `?after=${last}` : ''}`));
    if (left) return;
    if (r.status !== 200) { fillWith(usage, h('p', { class: 'err' }, errorText(r))); return; }
    samples = (samples || []).concat(r.data.items);
    fillWith(usage, usageCharts(samples, run));
    if (run && !FINAL.has(run.state) && !$('#panel-usage').hidden) usageTimer = setTimeout(loadUsage, 5000);
  };
  const t = tabs('Run details', [
    { id: 'logs', title: 'Logs', el: h('div', {}, logOf,
      h('div', { class: 'filters logbar' },
        h('div', { class: 'field' }, h('label', { for: 'log-search' }, 'Search'), search),
        h('div', { class: 'field' }, h('label', { for: 'log-tail' }, 'Show'), tail),
        h('label', { class: 'check' }, stick, 'Follow the end'),
        h('button', { type: 'button', id: 'log-download', onclick: download }, 'Download'), lineCount),
      logs) },
    { id: 'usage', title: 'Usage', el: usage, onshow: loadUsage },
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

// ---- a run's use over time: charts drawn here as SVG (no library) -------------------------

const svg = (tag, attrs, ...kids) => {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...kids);
  return el;
};

// One measure of samples [{t, rank, [key]}] over time: a line per worker, from 0 up to
// its peak; the caption says now and the peak in words (the chart's name for a screen
// reader too). null when no sample has it.
function lineChart(id, title, samples, key, fmt) {
  const pts = samples.filter((x) => typeof x[key] === 'number');
  if (!pts.length) return null;
  const W = 600, H = 120;
  const t0 = pts[0].t, span = Math.max(1, pts[pts.length - 1].t - t0);
  const peak = Math.max(...pts.map((x) => x[key]));
  const ranks = [...new Set(pts.map((x) => x.rank || 0))];
  const of = (r) => pts.filter((x) => (x.rank || 0) === r);
  const now = ranks.reduce((sum, r) => sum + of(r)[of(r).length - 1][key], 0);
  const words = `${title}: ${fmt(now)} now, peak ${fmt(peak)}, over ${dur(span / 1000)}${ranks.length > 1 ? ` (${ranks.length} workers, a line each)` : ''}`;
  const xy = (x) => `${(((x.t - t0) / span) * W).toFixed(1)},${(H - 2 - (x[key] / (peak || 1)) * (H - 4)).toFixed(1)}`;
  return h('figure', { class: 'chart', id },
    svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': words },
      svg('line', { class: 'axis', x1: 0, y1: H - 1, x2: W, y2: H - 1 }),
      ...ranks.map((r, i) => svg('polyline', { class: `line l${i % 4}`, 'data-rank': r, points: of(r).map(xy).join(' ') }))),
    h('figcaption', {}, words));
}

function usageCharts(samples, run) {
  if (!samples.length) {
    return h('p', { class: 'muted', id: 'usage-none' }, run && run.backend === 'kubernetes'
      ? 'No sample: the server samples a run on a cluster from its metrics API, where the cluster serves one (metrics-server).'
      : run && FINAL.has(run.state) ? 'No sample of its use: it ran for less than the time between two, or without a cgroup.'
        : 'No sample yet: a run\'s use is sampled every few seconds while it runs, where it has a cgroup.');
  }
  const cores = (v) => `${v < 10 ? v.toFixed(2) : v.toFixed(0)} cores`;
  return [
    lineChart('usage-cpu', 'CPU', samples.map((x) => ({ ...x, cores: x.cpu_milli / 1000 })), 'cores', cores),
    lineChart('usage-mem', 'Memory', samples, 'mem_bytes', bytes),
    lineChart('usage-gpu', 'GPU utilization', samples, 'gpu_util', (v) => `${Math.round(v)}%`),
    lineChart('usage-gpu-mem', 'GPU memory', samples, 'gpu_mem_bytes', bytes),
  ];
}

// ---- a new run: the form, its YAML, validation by the server ---------------------------

const UNITS = ['Mi', 'Gi', 'Ti', 'M', 'G', 'T', 'Ki', 'k'];
const VOLUME_TYPES = ['persistent_volume_claim', 'empty_dir', 'config_map', 'secret', 'shared_volume'];
const VOLUME_REF = { config_map: 'name', secret: 'name', shared_volume: 'claim_name' };
const VOLUME_SIZE = new Set(['persistent_volume_claim', 'empty_dir']);
const PREEMPTION = ['allow', 'constrain', 'prevent', 'none'];
// MLRun's volume mount types: "Auto (using auto-mount), Manual or None" (seed 002)
const VOLUME_MODES = [['auto', 'Auto (using auto-mount)'], ['manual', 'Manual'], ['none', 'None']];
const ACTIONS = ['job', 'serve', 'deploy', 'cronjob'];
// the keys the form edits; any other key of a spec is kept as it is
const FORM_KEYS = new Set(['project', 'name', 'function', 'args', 'action', 'schedule', 'profile', 'resources', 'labels',
  'volumes', 'volume_mode', 'volumeMode', 'envs', 'secrets', 'node_selector', 'tolerations', 'affinity', 'fs_group', 'run_as_user',
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
// an input's value: as read while its text is unchanged; else a number or true/false
// when it reads as one, or the text
function typedValue(x) {
  if (x.raw !== undefined && String(x.raw) === x.v) return x.raw;
  const t = x.v.trim();
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t === 'true' ? true : t === 'false' ? false : x.v;
}
const reqLim = (v) => (isMap(v) ? { req: v.requests ?? '', lim: v.limits ?? '' } : { req: v ?? '', lim: '' });

function emptyForm() {
  return {
    name: '', fname: '', image: '', command: '', args: '', action: 'job', schedule: '', profile: '',
    cpu: { req: '', lim: '' }, mem: { req: { n: '', u: 'Gi' }, lim: { n: '', u: 'Gi' } },
    gpu: '', gpuType: '', disk: { n: '', u: 'Gi' },
    volumes: [], volumeMode: 'auto', envs: [], secrets: [], labels: [], inputs: [], fnRef: false,
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
  f.fnRef = typeof s.function === 'string'; // a registered function, by name
  f.fname = f.fnRef ? s.function : fn.name ?? '';
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
  f.volumeMode = String(s.volume_mode ?? s.volumeMode ?? 'auto').toLowerCase();
  f.envs = (Array.isArray(s.envs) ? s.envs : []).map((e) => ({ name: e.name ?? '', value: String(e.value ?? '') }));
  f.secrets = Array.isArray(s.secrets) ? s.secrets.map(String) : [];
  f.labels = Object.entries(isMap(s.labels) ? s.labels : {}).map(([k, v]) => ({ k, v: String(v ?? '') }));
  // inputs of plain values are rows (a value keeps its type while its text is not
  // edited); inputs with a list or a map in them stay as they are (the YAML tab)
  const inputs = isMap(s.inputs) ? Object.entries(s.inputs) : [];
  if (inputs.every(([, v]) => v === null || typeof v !== 'object')) f.inputs = inputs.map(([k, v]) => ({ k, v: String(v ?? ''), raw: v }));
  else f.extra.inputs = s.inputs;
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
  for (const [k, v] of Object.entries(s)) if (!FORM_KEYS.has(k) && k !== 'inputs') f.extra[k] = v;
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
  if (f.fnRef && f.fname) s.function = f.fname; // a registered function: its name alone
  else if (Object.keys(fn).length) s.function = fn;
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
  if (f.volumeMode !== 'auto') put('volume_mode', f.volumeMode); // auto: what a run gets unless it says
  put('envs', f.envs.filter((e) => e.name.trim() || e.value).map((e) => ({ name: e.name.trim(), value: e.value })));
  put('secrets', f.secrets);
  const kv = (rows, typed) => Object.fromEntries(rows.filter((x) => x.k.trim()).map((x) => [x.k.trim(), typed ? typedValue(x) : x.v]));
  if (f.labels.some((x) => x.k.trim())) s.labels = kv(f.labels, false);
  if (f.inputs.some((x) => x.k.trim())) s.inputs = kv(f.inputs, true);
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

// a command as a shell would read it: ["python", "train.py", "a b"] -> python train.py "a b"
const cmdText = (c) => (Array.isArray(c) ? c.map((x) => (/^[\w@%+=:,./-]+$/.test(String(x)) ? String(x) : JSON.stringify(String(x)))).join(' ') : c ? String(c) : '');

// A map or list in words: {key: "gpu", operator: "Exists"} -> "key gpu, operator Exists"
const words = (o) => (Array.isArray(o) ? o.map(words).join('; ')
  : isMap(o) ? Object.entries(o).map(([k, x]) => `${k} ${words(x)}`).join(', ') : String(o));

// A field of a profile or of the policy's defaults in words, never as JSON:
// "resources.cpu.requests" 8 -> "cpu 8", "resources.gpu.limits" 1 -> "GPUs 1",
// "tolerations[0]" {"key":"gpu","operator":"Exists",...} -> "tolerates gpu (Exists, NoSchedule)",
// "node_selector.K" V -> "node label K = V", "envs.N" V -> "env N=V"
function givesText(fl) {
  const p = fl.path;
  const v = String(fl.value);
  let o = null;
  if (/^[[{]/.test(v)) try { o = JSON.parse(v); } catch { o = null; }
  let m;
  if ((m = /^resources\.(cpu|mem|disk|gpu)\.(requests|limits)$/.exec(p))) {
    return m[1] === 'gpu' ? `GPUs ${v}` : `${m[1]}${m[2] === 'limits' ? ' limit' : ''} ${v}`;
  }
  if (p === 'resources.gpu_type') return `GPU type ${v}`;
  if ((m = /^node_selector\.(.+)$/.exec(p))) return `node label ${m[1]} = ${v}`;
  if (/^tolerations\[\d+\]$/.test(p) && isMap(o)) {
    return `tolerates ${o.key || 'every taint'}${o.value ? `=${o.value}` : ''} (${o.operator || 'Equal'}, ${o.effect || 'any effect'})`;
  }
  if ((m = /^envs\.(.+)$/.exec(p))) return `env ${m[1]}=${v}`;
  if ((m = /^volumes\.(.+)$/.exec(p)) && isMap(o)) return `volume ${m[1]} (${o.volume_type}) at ${o.mount_path}${o.size ? `, ${o.size}` : ''}`;
  return `${p.replace(/_/g, ' ')} ${o ? words(o) : v}`;
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
  let functions = {}; // the project's registered functions: name -> their spec as data
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
    u.setAttribute('aria-describedby', `${n.id}-err`); // the quantity's one error, under both

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
    // the function: one of the project's registered functions (its fields shown, as
    // the run gets them), or one written here
    const reg = f.fnRef ? functions[f.fname] : null;
    const regFn = reg && isMap(reg.function) ? reg.function : {};
    const picker = h('select', { id: 'f-function', 'data-path': 'function', 'aria-describedby': 'f-function-err' },
      h('option', { value: '' }, '(written here)'),
      Object.keys(functions).map((n) => h('option', { value: n, selected: f.fnRef && n === f.fname }, n)),
      f.fnRef && !reg ? h('option', { value: f.fname, selected: true }, `${f.fname} (not registered)`) : null);
    picker.addEventListener('change', () => {
      f.fnRef = !!picker.value;
      f.fname = picker.value;
      if (f.fnRef) { f.image = ''; f.command = ''; f.orig.command = []; }
      rebuild('');
      $('#f-function', formEl).focus();
    });
    fillWith(formEl,
      h('fieldset', {}, h('legend', {}, 'Function'),
        h('div', { class: 'grid' },
          field('Registered function', picker, Object.keys(functions).length ? 'One of the project\'s, or write one here.' : 'The project has no registered function: write one here.'),
          f.fnRef ? null : field('Function name', input('fname', 'function.name', { required: true, autocomplete: 'off' }), 'The name of this one.'),
          f.fnRef ? null : field('Image', input('image', 'function.image', { autocomplete: 'off', placeholder: 'python:3.11' })),
          field('Run name', input('name', 'name', { autocomplete: 'off' }), 'Optional; default: the function name.'),
          field('Action', select('action', 'action', opts(ACTIONS))),
          f.action === 'cronjob' ? field('Schedule', input('schedule', 'schedule', { placeholder: '0 3 * * *' }), 'Five cron fields.') : null),
        f.fnRef ? h('dl', { class: 'facts card', id: 'function-facts' },
          h('dt', {}, 'Image'), h('dd', {}, regFn.image || '—'),
          h('dt', {}, 'Command'), h('dd', { class: 'mono' }, cmdText(regFn.command) || '—'),
          reg ? Object.entries(reg).filter(([k]) => !['function', 'project', 'name'].includes(k)).map(([k, v]) => [h('dt', {}, k.replace(/_/g, ' ')), h('dd', {}, words(v))]) : null,
          h('dt', {}, 'Defined'), h('dd', {}, h('a', { href: `#/functions/${encodeURIComponent(f.fname)}` }, `function ${f.fname}`), reg ? '' : ' (not registered in this project)')) : null,
        h('div', { class: 'grid' },
          f.fnRef ? null : field('Command', input('command', 'function.command', { tag: 'textarea', class: 'code', spellcheck: 'false' }), 'One argument per line, e.g. python, train.py.'),
          field('Arguments', input('args', 'args', { tag: 'textarea', class: 'code', spellcheck: 'false' }), 'One per line.'))),
      h('fieldset', {}, h('legend', {}, 'Labels and inputs'),
        kvRows('labels', 'Label', 'Value', (k) => `labels.${k}`),
        kvRows('inputs', 'Input', 'Value', (k) => `inputs.${k}`,
          f.extra.inputs !== undefined ? 'These inputs hold lists or maps: edit them in the YAML tab.' : 'A value that reads as a number or true/false is sent as one.')),
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
          field('GPU type', select('gpuType', 'resources.gpu_type', opts(gpuTypes, `Default${session.choices && session.choices.default_gpu_type ? ` (${session.choices.default_gpu_type})` : ''}`)), 'The platform\'s default when none is picked.'),
          qty('disk', 'resources.disk', 'Disk (ephemeral)'))),
      h('fieldset', {}, h('legend', {}, 'Volumes'),
        field('Volume mount type', select('volumeMode', 'volume_mode', opts(VOLUME_MODES)),
          f.volumeMode === 'none' ? 'No volume is mounted.'
            : f.volumeMode === 'manual' ? 'Only the volumes listed here.'
              : autoVolumes().length ? `The platform mounts ${autoVolumes().join(', ')}, and the volumes listed here.` : 'The platform mounts none of its own here: the volumes listed here.'),
        f.volumeMode === 'none' ? null : h('div', { class: 'rows' }, ...f.volumes.map((v, i) => h('div', { class: 'row', 'data-row': `volumes.${i}` },
          field('Type', select(`volumes.${i}.type`, `volumes[${i}].volume_type`, opts(VOLUME_TYPES))),
          field('Name', input(`volumes.${i}.name`, `volumes[${i}].name`, { autocomplete: 'off' })),
          field('Mount path', input(`volumes.${i}.mount`, `volumes[${i}].mount_path`, { autocomplete: 'off', placeholder: '/data' })),
          VOLUME_SIZE.has(v.type) ? qty(`volumes.${i}.size`, `volumes[${i}].spec.size`, 'Size') : null,
          v.type === 'persistent_volume_claim' ? field('Storage class', input(`volumes.${i}.storageClass`, `volumes[${i}].spec.storage_class`, { autocomplete: 'off' })) : null,
          VOLUME_REF[v.type] ? field(v.type === 'shared_volume' ? 'Claim name' : v.type === 'secret' ? 'Secret' : 'ConfigMap', input(`volumes.${i}.ref`, `volumes[${i}].spec.${VOLUME_REF[v.type]}`, { autocomplete: 'off' })) : null,
          h('button', { type: 'button', onclick: () => { f.volumes.splice(i, 1); rebuild(); } }, `Remove volume ${i + 1}`)))),
        f.volumeMode === 'none' ? null : h('div', { class: 'actions' }, h('button', { type: 'button', id: 'add-volume', onclick: () => { f.volumes.push({ type: 'persistent_volume_claim', name: '', mount: '', size: { n: '', u: 'Gi' }, storageClass: '', ref: '' }); rebuild(`volumes.${f.volumes.length - 1}.name`); } }, 'Add volume'))),
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

  // rows of key = value (labels, inputs); a key's input names its spec path, so a
  // problem of labels.K is shown at it
  function kvRows(k, keyLabel, valueLabel, path, hint) {
    const rows = form[k];
    if (form.extra[k] !== undefined) return h('p', { class: 'hint muted' }, hint);
    const one = keyLabel.toLowerCase();
    return h('div', { class: 'kv' },
      h('div', { class: 'rows' }, ...rows.map((x, i) => {
        const key = input(`${k}.${i}.k`, path(x.k), { autocomplete: 'off' });
        key.addEventListener('input', () => { key.dataset.path = path(key.value.trim()); });
        return h('div', { class: 'row' },
          field(keyLabel, key),
          field(valueLabel, input(`${k}.${i}.v`, null, { autocomplete: 'off' })),
          h('button', { type: 'button', onclick: () => { rows.splice(i, 1); rebuild(); } }, `Remove ${one} ${i + 1}`));
      })),
      h('div', { class: 'actions' }, h('button', { type: 'button', id: `add-${one}`, onclick: () => { rows.push({ k: '', v: '' }); rebuild(`${k}.${rows.length - 1}.k`); } }, `Add ${one}`),
        hint ? h('span', { class: 'hint muted' }, hint) : null));
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
        const own = probs.find((x) => x.message && x.severity !== 'warning') || probs.find((x) => x.message) || {};
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
    if (bind === 'action' || bind === 'scale' || bind === 'volumeMode' || /^volumes\.\d+\.type$/.test(bind)) { rebuild(bind); return; }
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
      flash(`Run ${run.name} created${r.data.items ? ` (and ${r.data.items.length - 1} more)` : ''}.`, 'good', true);
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
    const [s, fl] = await Promise.all([api('GET', `/api/v1/projects/${encodeURIComponent(project)}/secrets`),
      api('GET', `/api/v1/projects/${encodeURIComponent(project)}/functions`)]);
    secretNames = s.status === 200 ? s.data.items.map((x) => x.name) : [];
    if (fl.status === 200) for (const x of fl.data.items) functions[x.name] = x.fields || {};
    // from a function's or a profile's page
    if (params.get('function')) Object.assign(form, { fnRef: true, fname: params.get('function') });
    if (params.get('profile')) form.profile = params.get('profile');
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
    if (from || params.get('function') || params.get('profile')) check();
  })();
}

// ---- secrets -----------------------------------------------------------------------

function secretsView(main) {
  const project = session.project;
  // the role the server's policy lets write secrets (security.secret_writers), the project's own
  const writers = (session.choices && session.choices.secret_writers) || session.who.secret_writers || 'admin';
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
      } else refuse(name, nameErr, errorText(r));
    });
    main.append(form);
  } else {
    main.append(h('p', { class: 'muted' }, `Setting and deleting secrets needs ${writers === 'user' ? 'a user' : 'an admin'} token; this one is a ${session.who.role}.`));
  }
  load();
}

// ---- the project's and the platform's pages ----------------------------------------------

// a table that becomes cards on a phone: heads, and rows {attrs, cells}
function grid(cls, heads, rows) {
  return h('div', { class: 'table-wrap' }, h('table', { class: `cards ${cls}` },
    h('thead', {}, h('tr', {}, heads.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((r) => h('tr', r.attrs || {}, r.cells.map((c, i) => h('td', { 'data-label': heads[i] }, c)))))));
}

// GET path into el: fn(data) when it answers 200, else its error; returns the
// answer's rv (a list of runs, on a server with the watch)
async function getInto(el, path, fn) {
  const r = await api('GET', path);
  fillWith(el, r.status === 200 ? fn(r.data) : h('p', { class: 'err' }, errorText(r)));
  return r.status === 200 ? r.data.rv : undefined;
}

// reload() again at each change of the project's runs (the watch, from the rv it
// returns), or every 5 s on a server without a watch
async function followRuns(reload) {
  const rv = await reload();
  if (rv !== undefined) watchRuns(session.project, rv, async (items) => { const v = await reload(); return items ? undefined : v; });
  else every(5000, reload);
}

const page = (main, title, intro) => {
  const box = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  main.append(h('h1', {}, title), ...(intro ? [h('p', { class: 'muted' }, intro)] : []), box);
  return box;
};
const plural = (n, one) => `${n} ${one}${n === 1 ? '' : 's'}`;

// what waits, for what, in the order it starts
function queueView(main) {
  const box = page(main, `Queue of ${session.project}`, 'The runs of this project that wait, in the order they start: the highest priority first, then the first submitted. Each says what it waits for: room on the machine, the project\'s quota, or a node its selector and tolerations match. Runs of projects this token does not see wait in the same queue.');
  const load = () => getInto(box, `${projPath('runs')}?state=Pending&limit=1000`, (d) => {
    const q = d.items.slice().sort((a, b) => b.priority - a.priority || a.created.localeCompare(b.created));
    if (!q.length) return h('p', { id: 'queue-empty' }, 'Nothing waits: every run of this project has started or ended.');
    const quota = q.filter((r) => /quota/.test(r.reason || '')).length;
    return [h('p', { id: 'queue-count' }, `${plural(q.length, 'run')} waiting${d.next ? ' (the first 1000)' : ''}`,
      quota ? [', ', h('a', { href: '#/quota' }, `${quota} for quota`)] : '', '.'),
    grid('queue', ['Place', 'Run', 'Priority', 'Waiting for', 'Needs', 'Why it waits'], q.map((r, i) => ({
      attrs: { 'data-run': r.id },
      cells: [String(i + 1), h('a', { href: `#/runs/${encodeURIComponent(r.id)}` }, r.name), `${r.priority_class || 'default'} (${r.priority})`,
        dur((Date.now() - Date.parse(r.created)) / 1000), resourcesText(r), r.reason || 'its turn'],
    })))];
  });
  followRuns(load);
}

function functionsView(main) {
  const box = page(main, `Functions of ${session.project}`, 'A registered function is a run spec template: a run that names it (function: NAME) starts from its fields. The Python SDK registers them (POST .../functions).');
  getInto(box, projPath('functions'), (d) => (d.items.length ? grid('functions', ['Function', 'Image', 'Command', 'Updated'], d.items.map((f) => {
    const fn = (f.fields && isMap(f.fields.function) && f.fields.function) || {};
    return { attrs: { 'data-function': f.name }, cells: [h('a', { href: `#/functions/${encodeURIComponent(f.name)}` }, f.name), fn.image || '—', h('code', {}, cmdText(fn.command) || '—'), stamp(f.updated)] };
  })) : h('p', { id: 'functions-empty' }, 'No function is registered in this project yet.')));
}

function functionView(main, name) {
  main.append(h('p', {}, h('a', { href: '#/functions' }, '← Functions')));
  const box = page(main, `Function ${name}`);
  const del = async (e) => {
    if (e.target.dataset.confirm !== 'yes') { e.target.dataset.confirm = 'yes'; e.target.textContent = 'Delete: press again to confirm'; return; }
    const r = await api('DELETE', projPath(`functions/${encodeURIComponent(name)}`));
    if (r.status === 204) { flash(`Function ${name} deleted.`, 'good', true); go('#/functions'); } else flash(errorText(r), 'bad');
  };
  getInto(box, projPath(`functions/${encodeURIComponent(name)}`), (f) => {
    const s = f.fields || {};
    const fn = isMap(s.function) ? s.function : {};
    const dd = (k, v) => (v === undefined || v === '' ? [] : [h('dt', {}, k), h('dd', {}, v)]);
    return [
      can('user') ? h('div', { class: 'actions' }, h('a', { href: `#/new?function=${encodeURIComponent(name)}`, id: 'run-function' }, 'Run it'),
        h('button', { type: 'button', id: 'delete-function', onclick: del }, 'Delete')) : null,
      h('div', { class: 'card' }, h('dl', { class: 'facts', id: 'function-facts' },
        dd('Image', fn.image), dd('Command', fn.command ? h('code', {}, cmdText(fn.command)) : undefined),
        Object.entries(s).filter(([k]) => k !== 'function' && k !== 'project').map(([k, v]) => dd(k.replace(/_/g, ' '), words(v))),
        dd('Created', stamp(f.created)), dd('Updated', stamp(f.updated)))),
      h('h2', {}, 'As registered'), h('pre', { id: 'function-spec' }, f.spec)];
  });
}

const LIMIT_NAMES = { cpu: 'CPU', mem: 'Memory', gpu: 'GPUs', disk: 'Disk (ephemeral)', volume_size: 'Each volume', pids: 'Processes (this machine)' };

function profilesView(main) {
  const box = page(main, 'Profiles and limits', `What the runs of project ${session.project} may pick and get.`);
  getInto(box, `/api/v1/profiles?project=${encodeURIComponent(session.project)}`, (d) => {
    const lim = d.limits || {};
    const def = d.defaults || {};
    const ch = d.choices || {};
    const list = (xs) => (xs && xs.length ? xs.join(', ') : 'none');
    return [
      h('p', { class: 'muted' }, 'A profile is a bundle of run fields the platform defines: a run that picks one gets every field it sets, over what it asked for (a resource it sets, whole).'),
      h('div', { class: 'profiles' }, d.profiles.map((p) => h('section', { class: 'profile', 'data-profile': p.id, 'aria-labelledby': `pf-${p.id}` },
        h('h2', { id: `pf-${p.id}` }, p.id), p.description ? h('p', {}, p.description) : null,
        p.from ? h('p', { class: 'muted', 'data-from': p.from }, `This project's own (${p.from}).`) : null,
        h('ul', { 'aria-label': `${p.id} gives` }, p.fields.map((fl) => h('li', {}, givesText(fl)))),
        can('user') ? h('a', { href: `#/new?profile=${encodeURIComponent(p.id)}` }, `New run with ${p.id}`) : null))),
      d.profiles.length ? null : h('p', {}, 'The policy defines no profile.'),
      h('h2', {}, 'Limits of every run'),
      h('p', { class: 'muted' }, 'A run that asks for more than one of these (after its profile and the defaults) is refused, with the limit named.'),
      h('dl', { class: 'facts card', id: 'limits' }, Object.entries(LIMIT_NAMES).map(([k, n]) => [h('dt', {}, n), h('dd', {}, lim[k] === undefined ? 'no limit' : String(lim[k]))])),
      h('h2', {}, 'Defaults'),
      h('p', { class: 'muted' }, 'What a run gets where neither it, its function nor its profile says.'),
      h('ul', { id: 'defaults' }, (def.fields || []).map((fl) => h('li', {}, givesText(fl))),
        def.mem_limit_ratio ? h('li', {}, `a memory request without a limit gets the limit request × ${def.mem_limit_ratio}`) : null),
      h('h2', {}, 'Choices'),
      h('dl', { class: 'facts card', id: 'choices' },
        h('dt', {}, 'GPU types'), h('dd', {}, `${list(ch.gpu_types)}${ch.default_gpu_type ? ` (default ${ch.default_gpu_type})` : ''}`),
        h('dt', {}, 'Priority classes'), h('dd', {}, list(ch.priority_classes)),
        h('dt', {}, 'Fields only a profile may set'), h('dd', {}, list(ch.locked_fields)))];
  });
}

// "300m" -> 0.3, "48Mi" -> 50331648 (for a meter of used against quota)
const SUFFIX = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };
const qtyNum = (s) => { const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(s)); return m ? Number(m[1]) * (SUFFIX[m[2]] || 1) : NaN; };
const RES_NAMES = { cpu: 'CPU', mem: 'Memory', gpu: 'GPUs', runs: 'Runs' };

function quotaView(main) {
  const box = page(main, `Quota of ${session.project}`);
  const load = () => getInto(box, projPath('quota'), (q) => [
    h('p', { id: 'quota-of' }, q.quota_of === null ? `Project ${q.project} has no quota: each run is bounded by the limits of every run (Profiles) and by what the machine has free.`
      : q.quota_of === q.project ? `The policy's quota for ${q.project}: what its admitted runs hold together.`
        : `The policy's "${q.quota_of}" quota (${q.project} has no entry of its own): what its admitted runs hold together.`),
    grid('quota', ['Resource', 'Used', 'Quota', 'Free', 'Use'], q.resources.map((x) => {
      const used = qtyNum(x.used), max = x.quota === null ? NaN : qtyNum(x.quota);
      const pct = max > 0 ? Math.round((used / max) * 100) : null;
      return { attrs: { 'data-resource': x.resource }, cells: [RES_NAMES[x.resource] || x.resource, x.used, x.quota ?? 'no limit', x.free ?? '—',
        pct === null ? '—' : h('span', { class: 'use' }, h('meter', { min: 0, max: 100, high: 90, value: Math.min(100, pct), 'aria-label': `${x.resource}: ${pct}% of the quota used` }), ` ${pct}%`)] };
    })),
    h('p', { id: 'quota-waiting' }, q.waiting ? h('a', { href: '#/queue' }, `${plural(q.waiting, 'run')} waiting for quota`) : 'No run waits for quota.')]);
  // read again when a run of the project changes (what it holds changes only then)
  followRuns(async () => {
    const [, l] = await Promise.all([load(), api('GET', `${projPath('runs')}?limit=1`)]);
    return l.status === 200 ? l.data.rv : undefined;
  });
}

function tokensView(main) {
  if (!can('admin')) { main.append(h('h1', {}, 'Tokens'), h('p', { class: 'err' }, `A ${session.who.role} may not list tokens.`)); return; }
  const every_ = session.who.projects.includes('*');
  const box = page(main, 'Tokens', `The tokens this token may see${every_ ? ': every one' : ': those of its own projects only'}. A token's secret is shown once, when it is made, and never again. A revoked or expired token is refused, and its holder is told why.`);
  const now = () => new Date().toISOString();
  const state = (t) => (t.revoked ? `revoked ${stamp(t.revoked)}` : t.expires && t.expires <= now() ? `expired ${stamp(t.expires)}` : 'active');
  const revoke = (t) => (t.revoked || t.id === session.who.token ? '—' : h('button', {
    type: 'button', class: 'link', 'aria-label': `Revoke token ${t.id}`,
    onclick: async (e) => {
      if (e.target.dataset.confirm !== 'yes') { e.target.dataset.confirm = 'yes'; e.target.textContent = 'press again to revoke'; return; }
      const d = await api('DELETE', `/api/v1/tokens/${encodeURIComponent(t.id)}`);
      if (d.status === 204) flash(`Token ${t.id} revoked.`); else flash(errorText(d), 'bad');
      load();
    },
  }, 'Revoke'));
  const load = () => getInto(box, '/api/v1/tokens', (d) => grid('tokens', ['Token', 'Role', 'Projects', 'Description', 'Created', 'Expires', 'Last used', 'State', 'Revoke'], d.items.map((t) => ({
    attrs: { 'data-token': t.id },
    cells: [t.id === session.who.token ? `${t.id} (this one)` : t.id, t.role || '—', t.projects === '*' ? 'every project' : t.projects.split(',').join(', '), t.description || '—', stamp(t.created),
      t.expires ? h('time', { datetime: t.expires, title: t.expires }, when(t.expires)) : 'never', t.last_used ? stamp(t.last_used) : '—', state(t), revoke(t)],
  }))));
  load();
  // a new token: of this admin's projects; admin and '*' tokens only by an admin of every project
  const role = h('select', { id: 't-role' }, ['viewer', 'user', ...(every_ ? ['admin'] : [])].map((r) => h('option', { value: r }, r)));
  const projects = h('input', { id: 't-projects', autocomplete: 'off', spellcheck: 'false', value: session.project || '', 'aria-describedby': 't-projects-hint t-err' });
  const desc = h('input', { id: 't-desc', autocomplete: 'off', maxlength: '256' });
  const expires = h('input', { id: 't-expires', autocomplete: 'off', spellcheck: 'false', value: '30d', 'aria-describedby': 't-expires-hint' });
  const err = h('span', { class: 'err', id: 't-err', role: 'alert' });
  const shown = h('div', { id: 't-new', 'aria-live': 'polite' });
  const form = h('form', { class: 'card', id: 'token-form', novalidate: true }, h('h2', {}, 'New token'),
    h('div', { class: 'grid' },
      h('div', { class: 'field' }, h('label', { for: 't-role' }, 'Role'), role),
      h('div', { class: 'field' }, h('label', { for: 't-projects' }, 'Projects'), projects,
        h('span', { class: 'hint', id: 't-projects-hint' }, `Comma-separated${every_ ? '; * for every project' : ', among this token\'s'}.`)),
      h('div', { class: 'field' }, h('label', { for: 't-desc' }, 'Description'), desc),
      h('div', { class: 'field' }, h('label', { for: 't-expires' }, 'Expires in'), expires,
        h('span', { class: 'hint', id: 't-expires-hint' }, '30d, 12h, 90m; empty: never.'))),
    err, h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create token')), shown);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    err.textContent = '';
    shown.replaceChildren();
    const ps = projects.value.split(',').map((x) => x.trim()).filter(Boolean);
    if (!ps.length) { refuse(projects, err, 'Name at least one project.'); return; }
    const body = { role: role.value, projects: ps };
    if (desc.value.trim()) body.description = desc.value.trim();
    if (expires.value.trim()) body.expires_in = expires.value.trim();
    const r = await api('POST', '/api/v1/tokens', { body });
    if (r.status !== 201) { refuse(projects, err, errorText(r)); return; }
    shown.replaceChildren(h('p', {}, `Token ${r.data.id}, shown this once: copy it now.`),
      h('input', { id: 't-secret', class: 'mono', readonly: true, value: r.data.token, 'aria-label': 'The new token', onfocus: (ev) => ev.target.select() }));
    desc.value = '';
    load();
  });
  main.append(form);
}

async function switchProject(name) {
  session.project = name;
  localStorage.setItem('berth.project', name);
  await loadProfiles();
  showChrome();
  go('#/runs');
}

function projectsView(main) {
  if (!can('admin')) { main.append(h('h1', {}, 'Projects'), h('p', { class: 'err' }, `A ${session.who.role} may not manage projects.`)); return; }
  const every_ = session.who.projects.includes('*');
  const box = page(main, 'Projects', every_ ? 'Every project of this server.' : 'The projects of this token.');
  const load = () => getInto(box, '/api/v1/projects', (d) => grid('projects', ['Project', 'Created', 'Open'], d.items.map((p) => ({
    attrs: { 'data-project': p.name },
    cells: [p.name, stamp(p.created), p.name === session.project ? 'open now' : h('button', { type: 'button', class: 'link', onclick: () => switchProject(p.name) }, `Open ${p.name}`)],
  }))));
  load();
  if (!every_) return;
  const name = h('input', { id: 'p-name', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'p-name-hint p-name-err' });
  const err = h('span', { class: 'err', id: 'p-name-err' });
  const form = h('form', { class: 'card', id: 'project-form', novalidate: true }, h('h2', {}, 'New project'),
    h('div', { class: 'field' }, h('label', { for: 'p-name' }, 'Name'), name,
      h('span', { class: 'hint', id: 'p-name-hint' }, 'Lowercase letters, digits and -: it names namespaces and directories.'), err),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create project')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    err.textContent = '';
    name.removeAttribute('aria-invalid');
    const n = name.value.trim();
    const r = await api('POST', '/api/v1/projects', { body: { name: n } });
    if (r.status === 201) {
      name.value = '';
      if (!session.projects.includes(n)) session.projects.push(n);
      showChrome();
      flash(`Project ${n} created.`);
      load();
    } else refuse(name, err, errorText(r));
  });
  main.append(form);
}

// ---- start -------------------------------------------------------------------------

$('#project').addEventListener('change', async (e) => {
  session.project = e.target.value;
  localStorage.setItem('berth.project', session.project);
  await loadProfiles();
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
