// fieldgate commissioning page: one script, no inline code (the CSP forbids it), text set with
// textContent only. Live data arrives on server-sent events; the browser never polls.
'use strict';
(function () {
  var app = document.getElementById('app');
  var session = { csrf: '', authenticated: false, passwordRequired: false };
  var WINDOW_MS = 15 * 60 * 1000;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { node.append(c instanceof Node ? c : document.createTextNode(String(c))); });
    return node;
  }
  function table(headers, rows, id) {
    return el('table', id ? { id: id } : {}, [el('thead', {}, [el('tr', {}, headers.map(function (h) { return el('th', {}, [h]); }))]), el('tbody', {}, rows)]);
  }
  function row(cells, attrs) {
    return el('tr', attrs || {}, cells.map(function (c) { return el('td', {}, [c]); }));
  }
  function age(ms) {
    if (ms === null || ms === undefined) return 'never';
    if (ms < 1000) return ms + ' ms';
    if (ms < 120000) return Math.round(ms / 1000) + ' s';
    if (ms < 7200000) return Math.round(ms / 60000) + ' min';
    return Math.round(ms / 3600000) + ' h';
  }
  function post(path, body) {
    return fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrf }, body: JSON.stringify(body || {}) });
  }
  function header(title) {
    var nav = el('nav', {}, [el('a', { href: '/' }, ['fieldgate']), el('a', { href: '/tools' }, ['Read / scan']), el('a', { href: '/add' }, ['Add a device']), el('a', { href: '/site' }, ['Site file']), el('a', { href: '/line' }, ['Line']), el('span', { id: 'title' }, [title])]);
    if (session.passwordRequired) {
      var out = el('button', { id: 'logout', type: 'button' }, ['Log out']);
      out.addEventListener('click', function () { post('/api/logout').then(function () { location.href = '/login'; }); });
      nav.append(out);
    }
    return nav;
  }

  function renderLogin(message) {
    var input = el('input', { id: 'password', type: 'password', autocomplete: 'current-password', required: '' });
    var form = el('form', { id: 'login' }, [el('label', { for: 'password' }, ['Password']), input, el('button', { type: 'submit' }, ['Log in']), el('p', { id: 'login-error', class: 'error' }, [message || ''])]);
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      post('/api/login', { password: input.value }).then(function (res) {
        if (res.ok) { location.href = location.pathname === '/login' ? '/' : location.pathname; return; }
        return res.json().then(function (b) { document.getElementById('login-error').textContent = b.error || ('refused: ' + res.status); });
      });
    });
    app.replaceChildren(el('h1', {}, ['fieldgate']), form);
  }

  var rates = {};
  function busRows(status) {
    return status.buses.map(function (b) {
      var prev = rates[b.name], now = Date.now(), txs = '';
      if (prev && now > prev.at) txs = ((b.transactions - prev.tx) * 1000 / (now - prev.at)).toFixed(1);
      rates[b.name] = { tx: b.transactions, at: now };
      var late = (b.lateUnits || []).map(function (u) { return 'unit ' + u.unit + ': ' + u.lateReplies + ' (slowest ' + u.slowestAnswerMs + ' ms)'; }).join(', ');
      return row([b.name, b.kind, b.up ? 'up' : 'DOWN', txs, String(b.failures !== undefined ? b.failures : b.timeouts + b.exceptions), String(b.timeouts), String(b.lateReplies || 0), late || '-', coolDowns(b), String(b.queueDepth), Math.round(b.utilisation * 100) + ' %', b.echoProblem || '-'], { class: b.up ? '' : 'bad', 'data-bus': b.name });
    });
  }
  // "1: unit 3 (timeouts, probe in 4 s)"; a unit probed in vain again shows how many periods in a row.
  function coolDowns(b) {
    var units = (b.coolingDownUnits || []).map(function (u) {
      var periods = u.cooldownLevel > 0 ? ', ' + (u.cooldownLevel + 1) + ' periods in a row' : '';
      return 'unit ' + u.unit + ' (' + u.lastFailure + ', probe ' + (u.nextProbeInMs > 0 ? 'in ' + age(u.nextProbeInMs) : 'due') + periods + ')';
    });
    var count = b.unitsCoolingDown || 0;
    return el('span', { class: 'cooling' }, [count ? count + ': ' + units.join(', ') : '-']);
  }
  // "voltage 230.1 V · energy 1234 kWh": the device's first few values, stale ones marked as such.
  function valuesText(values, online) {
    if (!values || !values.length) return '-';
    return values.map(function (v) { return v[0] + ' ' + String(v[1]) + (v[2] ? ' ' + v[2] : ''); }).join(' · ') + (online ? '' : ' (stale)');
  }
  function deviceRows(status, gatewayMode) {
    return status.devices.map(function (d) {
      var failing = (d.failingPoints || []).map(function (f) { return f.point; });
      var link = el('a', { href: '/device/' + encodeURIComponent(d.name) }, [d.name]);
      var cells = [link, d.bus, d.online ? 'online' : 'OFFLINE', age(d.lastPollAgeMs), el('span', { class: 'values' }, [valuesText((status.values || {})[d.name], d.online)]), failing.length ? failing.join(', ') : '-', String((d.learned || []).length)];
      if (gatewayMode) cells.push(d.subDevice ? d.subDevice.address + (d.subDevice.refused ? ' (refused)' : '') : '-');
      return row(cells, { class: d.online && !failing.length ? '' : 'bad', 'data-device': d.name });
    });
  }
  // A bus share's clients and what they asked (docs/share.md): requests, answered from the cache, refused.
  function shareRows(status) {
    return (status.shares || []).map(function (s) {
      var refused = s.refusedByPolicy + s.busy + s.refusedConnections;
      return row([s.bus, s.listen, s.state + (s.error ? ': ' + s.error : ''), s.access, String(s.clients), String(s.requests), String(s.fromCache), String(s.forwarded), String(s.refusedByPolicy), String(s.busy), String(s.refusedConnections), String(s.failed), s.queueWaitMs && s.queueWaitMs.p99 !== undefined ? s.queueWaitMs.p99 + ' ms' : '-'],
        { class: s.state === 'failed' ? 'bad' : '', 'data-share': s.bus, title: refused + ' refused in all' });
    });
  }
  function renderOverview(status) {
    var o = status.outbox, c = status.config;
    var outbox = o ? [o.depth + ' reports', Math.round(o.bytes / 1024) + ' / ' + Math.round(o.maxBytes / 1024) + ' KiB', o.mode || '', 'storage ' + (o.storage ? o.storage.state + (o.storage.cause ? ': ' + o.storage.cause : '') : 'ok'), o.dropped + ' dropped'].join(' · ') : 'no cloud devices';
    var config = c ? 'generation ' + c.generation + ', loaded ' + c.loadedAt + ', reloads ' + c.reloads.applied + ' applied / ' + c.reloads.refused + ' refused' + (c.lastError ? ', last refused: ' + c.lastError : '') : '-';
    var gatewayMode = status.devices.some(function (d) { return d.subDevice; });
    var parts = [header('Overview'),
      el('p', { id: 'about' }, ['version ' + status.version + ' · up ' + age(status.uptimeS * 1000) + ' · pid ' + (status.pid || '-')]),
      el('h2', {}, ['Buses']), table(['bus', 'kind', 'state', 'tx/s', 'errors', 'timeouts', 'late', 'late units', 'cool-downs', 'queue', 'busy', 'echo'], busRows(status), 'buses'),
      el('h2', {}, ['Devices']), table(['device', 'bus', 'state', 'last good poll', 'values', 'failing points', 'learned'].concat(gatewayMode ? ['sub-device'] : []), deviceRows(status, gatewayMode), 'devices')];
    if (status.shares && status.shares.length) {
      parts.push(el('h2', {}, ['Shares']), table(['bus', 'listen', 'state', 'access', 'clients', 'requests', 'cache hits', 'forwarded', 'refused (policy)', 'busy', 'refused connections', 'failed', 'wait p99'], shareRows(status), 'shares'));
    }
    // Cloud items only where there is a cloud: links and the outbox exist with cloud devices.
    if (status.links.length) {
      parts.push(el('h2', {}, ['Cloud links']), table(['device', 'state', 'reconnects', 'publishes'], status.links.map(function (l) { return row([l.device, l.state, String(l.reconnects), String(l.publishes)], { class: l.state === 'up' ? '' : 'bad' }); }), 'links'));
    }
    // The outbox only feeds cloud links: shown with them, or while it still holds reports.
    if (o && (status.links.length || o.depth > 0)) parts.push(el('h2', {}, ['Outbox']), el('p', { id: 'outbox' }, [outbox]));
    parts.push(el('h2', {}, ['Site file']), el('p', { id: 'config' }, [config]));
    app.replaceChildren.apply(app, parts);
  }
  function overview() {
    app.replaceChildren(header('Overview'), el('p', {}, ['connecting...']));
    var events = new EventSource('/api/events');
    events.addEventListener('status', function (e) { renderOverview(JSON.parse(e.data)); });
  }

  function sparkline(points) {
    var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', '0 0 160 32');
    svg.setAttribute('class', 'spark');
    var line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    svg.append(line);
    svg.points = points;
    drawSpark(svg);
    return svg;
  }
  function drawSpark(svg) {
    var now = Date.now();
    svg.points = svg.points.filter(function (p) { return now - p[0] <= WINDOW_MS; });
    var values = svg.points.map(function (p) { return p[1]; });
    var min = Math.min.apply(null, values), max = Math.max.apply(null, values), span = max - min || 1;
    // The time axis covers what is there (at least a minute, at most the 15-minute window).
    var width = svg.points.length ? Math.min(WINDOW_MS, Math.max(60000, now - svg.points[0][0])) : WINDOW_MS;
    svg.setAttribute('data-span-s', String(Math.round(width / 1000)));
    svg.firstChild.setAttribute('points', svg.points.map(function (p) { return (160 - (now - p[0]) * 160 / width).toFixed(1) + ',' + (30 - (p[1] - min) * 28 / span).toFixed(1); }).join(' '));
  }
  function writeForm(device, id) {
    var input = el('input', { class: 'write-value', size: '8', 'aria-label': 'new value of ' + id }, []);
    var button = el('button', { type: 'submit' }, ['Write']);
    var f = el('form', { class: 'write' }, [input, button]);
    f.addEventListener('submit', function (e) {
      e.preventDefault();
      var text = input.value.trim(), value = text === 'true' ? true : text === 'false' ? false : (text !== '' && !isNaN(Number(text)) ? Number(text) : text);
      var values = {};
      values[id] = value;
      var out = document.getElementById('write-result');
      out.textContent = 'writing ' + id + '...';
      post('/api/write', { device: device, values: values }).then(function (res) {
        return res.json().then(function (b) {
          if (!res.ok) { out.className = 'error'; out.textContent = b.error; return; }
          var problem = b.rejected[id] || b.failed[id];
          out.className = problem ? 'error' : '';
          out.textContent = problem ? id + ': ' + problem : id + ' written, read back: ' + b.applied[id];
        });
      });
    });
    return f;
  }
  // The cloud's stored values (interface B), on request: each read costs the cloud a call.
  function cloudButton(name) {
    var button = el('button', { id: 'cloud-read', type: 'button' }, ["Read the cloud's values"]);
    var out = el('span', { id: 'cloud-result' }, []);
    button.addEventListener('click', function () {
      out.textContent = 'reading...';
      fetch('/api/device/' + encodeURIComponent(name) + '/cloud').then(function (res) {
        return res.json().then(function (b) {
          if (!res.ok) { out.className = 'error'; out.textContent = b.error; return; }
          out.className = '';
          out.textContent = 'read ' + new Date().toLocaleTimeString();
          document.querySelectorAll('#points tr[data-point]').forEach(function (tr) {
            var v = b.attributes[tr.getAttribute('data-point')];
            tr.querySelector('td.cloud').textContent = v === undefined ? '-' : String(v);
          });
        });
      });
    });
    return el('p', {}, [button, ' ', out]);
  }
  function device(name) {
    var rows = {};
    fetch('/api/device/' + encodeURIComponent(name)).then(function (res) {
      if (res.status === 401) { renderLogin(); return; }
      if (!res.ok) { app.replaceChildren(header(name), el('p', { class: 'error' }, ['no such device'])); return; }
      return res.json().then(function (view) {
        var skew = Date.now() - view.now;
        var body = view.points.map(function (p) {
          var cells = { value: el('td', { class: 'value' }, []), age: el('td', { class: 'age' }, []), health: el('td', { class: 'health' }, []), spark: el('td', {}, []) };
          var tr = el('tr', { 'data-point': p.id }, [el('td', {}, [p.id]), cells.value, el('td', {}, [p.unit || '']), el('td', { class: 'quality' }, []), cells.age, cells.spark, cells.health, el('td', {}, [p.table + ' ' + p.address + ' ' + p.type + (p.writable ? ' rw' : '')])]);
          if (view.cloud) tr.append(el('td', { class: 'cloud' }, []));
          if (session.allowWrites) tr.append(el('td', {}, p.writable ? [writeForm(name, p.id)] : []));
          rows[p.id] = { tr: tr, cells: cells, at: p.ageMs !== undefined ? view.now - p.ageMs + skew : undefined, svg: undefined };
          if (view.history[p.id]) { rows[p.id].svg = sparkline(view.history[p.id].map(function (h) { return [h[0] + skew, h[1]]; })); cells.spark.append(rows[p.id].svg); }
          show(p.id, p.value, p.failing ? p.failing.error + ': ' + p.failing.message : '');
          return tr;
        });
        var state = view.online ? 'online' : 'OFFLINE (' + view.offline.reason + (view.offline.sinceMs !== undefined ? ', ' + age(view.offline.sinceMs) + ' ago' : '') + ')';
        var parts = [header(name), el('p', { id: 'device-state', class: view.online ? '' : 'error' }, [state + ' · bus ' + view.bus + ' · unit ' + view.unitId + ' · every ' + view.pollIntervalMs + ' ms']),
          table(['point', 'value', 'unit', 'quality', 'age', 'last 15 min', 'health', 'register'].concat(view.cloud ? ['in the cloud'] : [], session.allowWrites ? ['write'] : []), body, 'points')];
        if (view.cloud) parts.push(cloudButton(name));
        parts.push(el('p', { id: 'write-result' }, []));
        app.replaceChildren.apply(app, parts);
        // Opened while the device is down: every value shown is the last one read, not the device's now.
        if (!view.online) markOffline(view.offline.reason);
        ages();
        var events = new EventSource('/api/events?device=' + encodeURIComponent(name));
        events.addEventListener('device', function (e) { onEvent(JSON.parse(e.data)); });
        setInterval(ages, 1000);
      });
    });
    function show(id, value, problem) {
      var r = rows[id];
      if (!r) return;
      if (value !== undefined) r.cells.value.textContent = String(value);
      r.tr.querySelector('.quality').textContent = problem ? 'bad' : (value !== undefined || r.cells.value.textContent ? 'good' : '-');
      r.cells.health.textContent = problem || 'ok';
      r.tr.className = problem ? 'bad' : '';
    }
    function markOffline(reason) {
      Object.keys(rows).forEach(function (id) { var r = rows[id]; r.tr.className = 'bad'; r.tr.querySelector('.quality').textContent = 'stale'; r.cells.health.textContent = 'device offline: ' + reason; });
    }
    function ages() {
      Object.keys(rows).forEach(function (id) { var r = rows[id]; r.cells.age.textContent = r.at === undefined ? '-' : age(Math.max(0, Date.now() - r.at)); });
    }
    function onEvent(ev) {
      if (ev.state) {
        var line = document.getElementById('device-state');
        line.firstChild.textContent = (ev.state === 'online' ? 'online' : 'OFFLINE') + ' (' + ev.reason + ')';
        line.className = ev.state === 'online' ? '' : 'error';
        // Offline: every value shown is the last one read, no longer the device's.
        if (ev.state === 'offline') markOffline(ev.reason);
        return;
      }
      var failed = {};
      (ev.errors || []).forEach(function (e) { e.points.forEach(function (p) { failed[p] = e.kind + ': ' + e.message; }); });
      Object.keys(rows).forEach(function (id) {
        var value = ev.values ? ev.values[id] : undefined, r = rows[id];
        if (value === undefined && !failed[id]) return;
        if (value !== undefined) {
          r.at = Date.now();
          if (typeof value === 'number') {
            if (!r.svg) { r.svg = sparkline([]); r.cells.spark.append(r.svg); }
            r.svg.points.push([r.at, value]);
            drawSpark(r.svg);
          }
        }
        show(id, value, failed[id] || '');
      });
      ages();
    }
  }


  function field(label, input) { return el('label', {}, [label, input]); }
  function select(id, options) { return el('select', { id: id }, options.map(function (o) { return el('option', { value: o }, [o]); })); }
  // Results as tables: a read's registers (raw, hex, decoded with its type), a poll's values with
  // their units, a scan's units with their answer and time.
  function hex(n) { return '0x' + Number(n).toString(16).toUpperCase().padStart(4, '0'); }
  function readTable(b) {
    var decoded = {};
    (b.values || []).forEach(function (v) { decoded[v.address] = v.value; });
    var bits = b.table === 'coil' || b.table === 'discrete';
    var rows = b.raw.map(function (r, i) {
      var at = b.address + i, value = decoded[at];
      return row([b.table + ' ' + at, String(r), bits ? '' : hex(r), value === undefined ? '' : String(value)]);
    });
    return [el('p', {}, ['bus ' + b.bus + ' · unit ' + b.unit + (b.type ? ' · decoded as ' + b.type : '')]), table(['register', 'raw', 'hex', b.type ? 'value (' + b.type + ')' : 'value'], rows, 'read-table')];
  }
  function pollTable(b, units) {
    var rows = Object.keys(b.values).map(function (id) { return row([id, String(b.values[id]), units[id] || '']); });
    var errors = (b.errors || []).map(function (e) { return row([e.points.join(', '), e.table + ' ' + e.start + ' (' + e.count + ')', e.kind + ': ' + e.message], { class: 'bad' }); });
    var parts = [el('p', {}, [b.device + ' · ' + new Date(b.ts).toLocaleTimeString()]), table(['point', 'value', 'unit'], rows, 'poll-table')];
    if (errors.length) parts.push(table(['points', 'registers', 'error'], errors, 'poll-errors'));
    return parts;
  }
  function scanTable(b) {
    var rows = b.found.map(function (f) { return row([String(f.unit), f.answer, f.detail, f.answerMs + ' ms'], { class: f.answer === 'value' ? '' : 'exception' }); });
    return [el('p', {}, ['bus ' + b.bus + ' · units ' + b.from + '..' + b.to + ' · ' + b.found.length + ' answered (a silent unit is not listed)']), table(['unit', 'answer', 'detail', 'answer time'], rows, 'scan-table')];
  }
  function form(id, title, inputs, submit, render) {
    var out = el('div', { id: id + '-result', class: 'result' }, []);
    var f = el('form', { id: id, class: 'tool' }, [el('h2', {}, [title])].concat(inputs, [el('button', { type: 'submit' }, [title]), out]));
    f.addEventListener('submit', function (e) {
      e.preventDefault();
      out.textContent = 'working...';
      out.className = 'result';
      post('/api/' + id, submit()).then(function (res) {
        return res.json().then(function (b) {
          out.className = res.ok ? 'result' : 'result error';
          if (!res.ok) { out.textContent = b.error; return; }
          return Promise.resolve(render(b)).then(function (parts) { out.replaceChildren.apply(out, parts); });
        });
      });
    });
    return f;
  }
  function num(id) { var v = document.getElementById(id).value; return v === '' ? undefined : Number(v); }
  function tools() {
    fetch('/api/status').then(function (res) { return res.json(); }).then(function (status) {
      var buses = status.buses.map(function (b) { return b.name; }), devices = status.devices.map(function (d) { return d.name; });
      var read = form('read', 'Read', [field('bus', select('read-bus', buses)), field('unit', el('input', { id: 'read-unit', type: 'number', value: '1' })),
        field('table', select('read-table', ['holding', 'input', 'coil', 'discrete'])), field('address', el('input', { id: 'read-address', type: 'number', value: '0' })),
        field('count', el('input', { id: 'read-count', type: 'number', value: '1' })), field('type', select('read-type', ['', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'float64', 'bool', 'string']))],
        function () {
          var p = { bus: document.getElementById('read-bus').value, unit: num('read-unit'), table: document.getElementById('read-table').value, address: num('read-address'), count: num('read-count') };
          var type = document.getElementById('read-type').value;
          if (type) p.type = type;
          return p;
        }, readTable);
      var poll = form('poll', 'Poll', [field('device', select('poll-device', devices))], function () { return { device: document.getElementById('poll-device').value }; }, function (b) {
        // The units come with the device's page view.
        return fetch('/api/device/' + encodeURIComponent(b.device)).then(function (r) { return r.ok ? r.json() : { points: [] }; }).then(function (view) {
          var units = {};
          view.points.forEach(function (p) { units[p.id] = p.unit; });
          return pollTable(b, units);
        });
      });
      var scan = form('scan', 'Scan', [field('bus', select('scan-bus', buses)), field('from unit', el('input', { id: 'scan-from', type: 'number', value: '1' })), field('to unit', el('input', { id: 'scan-to', type: 'number', value: '10' }))],
        function () { return { bus: document.getElementById('scan-bus').value, from: num('scan-from'), to: num('scan-to') }; }, scanTable);
      app.replaceChildren(header('Read / scan'), el('p', {}, ['Through the running buses, between polls (the polls keep their share). Reads and polls: ' + 'the same limits as the cloud\'s commissioning reads.']), read, poll, scan);
    });
  }

  function siteFile() {
    fetch('/api/site').then(function (res) {
      return res.json().then(function (b) {
        if (!res.ok) { app.replaceChildren(header('Site file'), el('p', { class: 'error' }, [b.error])); return; }
        var text = el('textarea', { id: 'site-text', spellcheck: 'false', rows: '30' }, []);
        text.value = b.text;
        var outcome = el('p', { id: 'site-outcome' }, []), problems = el('ul', { id: 'site-problems' }, []);
        function send(action) {
          outcome.textContent = 'checking...';
          problems.replaceChildren();
          post('/api/site/' + action, { text: text.value }).then(function (r) {
            return r.json().then(function (a) {
              if (!r.ok) { outcome.textContent = a.error; outcome.className = 'error'; return; }
              var list = a.problems || [];
              problems.replaceChildren.apply(problems, list.map(function (p) { return el('li', {}, [p.path + ': ' + p.message]); }));
              outcome.className = list.length ? 'error' : '';
              if (action === 'check') outcome.textContent = list.length ? list.length + ' problem(s); nothing changed' : 'valid';
              else outcome.textContent = a.outcome + (a.generation !== undefined ? ', generation ' + a.generation : '') + (list.length ? ': ' + list.length + ' problem(s); nothing changed' : '');
            });
          });
        }
        var check = el('button', { id: 'site-check', type: 'button' }, ['Check']);
        check.addEventListener('click', function () { send('check'); });
        var buttons = [check];
        if (session.allowReload) {
          var apply = el('button', { id: 'site-apply', type: 'button' }, ['Apply (write and reload)']);
          apply.addEventListener('click', function () { send('apply'); });
          buttons.push(apply);
        }
        app.replaceChildren(header('Site file'), el('p', {}, [b.path + (b.hidden ? ' · ' + b.hidden + ' secret(s) shown as {{secret-N}}: leave them as they are' : '')]), text, el('div', { class: 'buttons' }, buttons), outcome, problems);
      });
    });
  }

  function line() {
    var shown = session.lineFramesKept;
    fetch('/api/status').then(function (res) { return res.json(); }).then(function (status) {
      var buses = status.buses.map(function (b) { return b.name; });
      var chosen = new URLSearchParams(location.search).get('bus') || buses[0];
      var pick = select('line-bus', buses);
      pick.value = chosen;
      pick.addEventListener('change', function () { location.search = '?bus=' + encodeURIComponent(pick.value); });
      var body = el('tbody', {}, []);
      var frames = el('table', { id: 'frames' }, [el('thead', {}, [el('tr', {}, ['time', 'direction', 'unit', 'function', 'PDU (hex)', 'answer', 'verdict'].map(function (h) { return el('th', {}, [h]); }))]), body]);
      function add(f) {
        var t = new Date(f.at);
        var tr = row([t.toLocaleTimeString() + '.' + String(t.getMilliseconds()).padStart(3, '0'), f.direction, f.direction === 'discarded' ? '' : String(f.unit), f.fn ? String(f.fn) : '', f.hex, f.answerMs !== undefined ? f.answerMs + ' ms' : '', f.verdict],
          { class: f.verdict === 'ok' || f.verdict === 'sent' ? '' : 'bad', 'data-direction': f.direction });
        body.prepend(tr);
        while (body.children.length > shown) body.lastChild.remove();
      }
      app.replaceChildren(header('Line'), el('p', {}, [field('bus', pick), ' The last ' + shown + ' transactions, newest first, captured only while this page is open. PDUs are rebuilt from each transaction (function code and data; no address, CRC or MBAP).']), frames);
      var events = new EventSource('/api/line?bus=' + encodeURIComponent(chosen));
      events.addEventListener('frames', function (e) { JSON.parse(e.data).forEach(add); });
      events.addEventListener('frame', function (e) { add(JSON.parse(e.data)); });
    });
  }

  // What add.js (the add-a-device page) builds with.
  var kit = { app: app, el: el, table: table, row: row, post: post, header: header, field: field, select: select, session: function () { return session; } };
  fetch('/api/session').then(function (res) { return res.json(); }).then(function (s) {
    session = s;
    if (!s.authenticated) { renderLogin(); return; }
    var m = /^\/device\/([^/]+)$/.exec(location.pathname);
    if (m) device(decodeURIComponent(m[1]));
    else if (location.pathname === '/login') location.href = '/';
    else if (location.pathname === '/tools') tools();
    else if (location.pathname === '/site') siteFile();
    else if (location.pathname === '/add' && window.fieldgateAdd) window.fieldgateAdd(kit);
    else if (location.pathname === '/line') line();
    else overview();
  });
})();
