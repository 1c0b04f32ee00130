// The status page: polls /status/api/summary about once a second and redraws the tables. Plain DOM
// (textContent only: nothing the cloud reports is ever parsed as HTML); no framework, no other origin.
'use strict';
(function () {
  const POLL_MS = 1000;
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('data-')) e.setAttribute(k, String(v));
      else if (k in e) e[k] = v;
      else e.setAttribute(k, String(v));
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }

  const time = (ms) => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  const mib = (n) => (n >= 1024 ? (n / 1024).toFixed(1) + ' GiB' : n + ' MiB');
  const bytes = (n) => (n >= 1 << 30 ? (n / (1 << 30)).toFixed(2) + ' GiB' : n >= 1 << 20 ? (n / (1 << 20)).toFixed(1) + ' MiB' : n + ' B');

  /** A capacity bar: a native <meter> (announced as a gauge) and the figures beside it. */
  function gauge(g, label, show) {
    const total = Math.max(g.total, 0);
    return el('div', { class: 'gauge' },
      el('meter', { min: 0, max: total || 1, value: Math.min(g.used, total), high: total * 0.9, 'aria-label': label }),
      el('span', { class: 'figures' }, show(g.used) + ' / ' + show(g.total)));
  }

  function badge(text, kind) {
    return el('span', { class: 'badge ' + kind }, text);
  }

  function fill(tbody, rows) {
    tbody.replaceChildren(...rows);
  }

  function renderClusters(s) {
    fill($('clusters').tBodies[0], s.clusters.map((c) => el('tr', { 'data-cluster': c.name },
      el('th', { scope: 'row' }, c.name),
      el('td', {}, badge(c.state, 'state-' + c.state), c.detail ? el('div', { class: 'detail' }, c.detail) : ''),
      el('td', {}, c.enabledNodes + ' of ' + c.nodes),
      el('td', {}, gauge(c.cores, c.name + ' cores used', String)),
      el('td', {}, gauge(c.memoryMiB, c.name + ' memory used', mib)),
      el('td', {}, typesCell(c.vmTypes)))));
  }

  /** The VM types this cluster could hold at all (free / on an empty cluster); the others only counted. */
  function typesCell(types) {
    const fitting = types.filter((t) => t.max > 0);
    if (fitting.length === 0) return '—';
    const rest = types.length - fitting.length;
    return el('div', {}, el('ul', { class: 'types' }, ...fitting.map((t) => el('li', {}, t.name + ': ' + t.available + ' / ' + t.max))),
      rest > 0 ? el('div', { class: 'detail' }, rest + ' larger type' + (rest === 1 ? '' : 's') + ' fit nowhere') : '');
  }

  const FENCING_TEXT = {
    'none': '—', 'fencing': 'fencing', 'needs-operator': 'fence failed: needs an operator',
    'fenced-by-agent': 'fenced (by its BMC)', 'fenced-by-operator': 'fenced (confirmed by an operator)',
  };

  function renderNodes(s) {
    fill($('nodes').tBodies[0], s.nodes.map((n) => el('tr', { 'data-host': n.host, 'data-state': n.state },
      el('th', { scope: 'row' }, n.host),
      el('td', {}, n.partition),
      el('td', { class: 'maintenance' }, badge(n.state, 'state-' + n.state), n.stale ? badge('stale', 'warn') : '',
        n.details.length > 0 ? el('div', { class: 'detail' }, n.details.join('; ')) : ''),
      el('td', {}, n.ha ? badge(n.ha.state, 'ha-' + n.ha.state) : (s.haEnabled ? 'not configured' : 'HA off'),
        n.ha && n.ha.reason ? el('div', { class: 'detail' }, n.ha.reason) : ''),
      el('td', { 'data-fencing': n.fencing }, FENCING_TEXT[n.fencing] || n.fencing),
      el('td', {}, n.quarantine ? el('span', {}, badge('quarantined', 'warn'), el('div', { class: 'detail' }, 'since ' + time(n.quarantine.since) + (n.quarantine.reason ? ': ' + n.quarantine.reason : ''))) : '—'),
      el('td', {}, gauge(n.cores, n.host + ' cores used', String)),
      el('td', {}, gauge(n.memoryMiB, n.host + ' memory used', mib)),
      el('td', {}, n.instances + (n.migrating > 0 ? ' (' + n.migrating + ' migrating)' : '')))));
  }

  function migrationBlock(m) {
    const rows = m.items.map((i) => {
      const pct = i.percent === null ? 0 : i.percent;
      return el('tr', { 'data-instance': i.instanceId, 'data-state': i.state },
        el('th', { scope: 'row' }, i.instanceId),
        el('td', {}, i.destination || '—'),
        el('td', {}, i.state, i.error ? el('div', { class: 'detail error' }, i.error) : ''),
        el('td', { class: 'progress' },
          el('progress', { max: 100, value: pct, 'aria-label': 'Migration of ' + i.instanceId, 'data-percent': i.percent === null ? '' : i.percent }),
          el('span', { class: 'figures' }, (i.percent === null ? 'waiting' : i.percent + '%') + (i.bytesTransferred > 0 ? ' · ' + bytes(i.bytesTransferred) + ' sent · round ' + i.iteration : ''))));
    });
    return el('article', { class: 'migration', 'data-migration': m.migrationId, 'data-status': m.status },
      el('h3', {}, m.migrationId + ': ' + (m.kind === 'drain' ? 'drain of ' : 'move from ') + m.source),
      el('p', { class: 'meta' }, m.partition + ' · ' + m.status + ' · ' + m.done + ' of ' + m.items.length + ' done · started ' + time(m.createdAt)),
      el('div', { class: 'scroll' }, el('table', {},
        el('thead', {}, el('tr', {}, ...['Instance', 'Destination', 'State', 'Progress'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, ...rows))));
  }

  function renderMigrations(target, list) {
    target.replaceChildren(...(list.length === 0 ? [el('p', { class: 'none' }, 'None.')] : list.map(migrationBlock)));
  }

  function renderEvents(s) {
    $('events').replaceChildren(...(s.events.length === 0 ? [el('li', { class: 'none' }, 'No events yet.')]
      : s.events.map((e) => el('li', { class: 'level-' + e.level },
        el('time', { dateTime: new Date(e.at).toISOString() }, time(e.at)), ' ', badge(e.level, 'level-' + e.level), ' ', el('strong', {}, e.source), ' ', e.message))));
  }

  function render(s) {
    renderClusters(s);
    renderNodes(s);
    renderMigrations($('migrations'), s.inFlight);
    renderMigrations($('finished'), s.finished);
    renderEvents(s);
    $('updated').textContent = 'Updated ' + time(s.generatedAt);
    $('problem').hidden = true;
  }

  function problem(text) {
    const p = $('problem');
    p.textContent = text;
    p.hidden = false;
  }

  async function poll() {
    try {
      const res = await fetch('/status/api/summary', { credentials: 'same-origin', cache: 'no-store' });
      if (res.status === 401) {
        window.location.assign('/status');
        return;
      }
      const doc = await res.json();
      if (!res.ok) problem((doc.error ? doc.error.code + ': ' + doc.error.message : 'HTTP ' + res.status) + ' (retrying)');
      else render(doc);
    } catch (e) {
      problem('The cloud controller did not answer (' + e.message + '); retrying');
    }
    setTimeout(poll, POLL_MS);
  }

  $('logout').addEventListener('click', async () => {
    await fetch('/status/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => undefined);
    window.location.assign('/status');
  });
  void poll();
})();
