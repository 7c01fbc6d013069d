// fieldgate commissioning page: adding a device without writing YAML. Scan the line, pick a unit
// found, a profile and a name; the daemon computes the site file's change, Check shows it and
// its verdict, Apply writes it and reloads, then the device's live page opens.
'use strict';
window.fieldgateAdd = function (kit) {
  var el = kit.el, app = kit.app;
  Promise.all([fetch('/api/status').then(function (r) { return r.json(); }), fetch('/api/site/device').then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); })]).then(function (got) {
    var status = got[0], form = got[1];
    if (!form.ok) { app.replaceChildren(kit.header('Add a device'), el('p', { class: 'error' }, [form.body.error])); return; }
    var buses = status.buses.map(function (b) { return b.name; });
    if (!buses.length) { app.replaceChildren(kit.header('Add a device'), el('p', { class: 'error' }, ['the site declares no bus: add one on the site-file page first'])); return; }
    var busOf = {};
    status.buses.forEach(function (b) { busOf[b.name] = b; });
    var scanOut = el('div', { id: 'add-scan-result', class: 'result' }, ['Scan the line to list the units that answer, or type a unit below.']);
    var scanBus = kit.select('add-scan-bus', buses);
    var from = el('input', { id: 'add-scan-from', type: 'number', value: '1' }), to = el('input', { id: 'add-scan-to', type: 'number', value: '10' });
    var scan = el('form', { id: 'add-scan', class: 'tool' }, [el('h2', {}, ['1. Scan the line']), kit.field('bus', scanBus), kit.field('from unit', from), kit.field('to unit', to), el('button', { type: 'submit' }, ['Scan']), scanOut]);
    scan.addEventListener('submit', function (e) {
      e.preventDefault();
      scanOut.className = 'result';
      scanOut.textContent = 'scanning (a silent unit costs the bus timeout)...';
      kit.post('/api/scan', { bus: scanBus.value, from: Number(from.value), to: Number(to.value) }).then(function (res) {
        return res.json().then(function (b) {
          if (!res.ok) { scanOut.className = 'result error'; scanOut.textContent = b.error; return; }
          var rows = b.found.map(function (f) {
            var pick = el('button', { type: 'button', class: 'pick', 'data-unit': String(f.unit) }, ['Use unit ' + f.unit]);
            var identity = el('td', { class: 'identity' }, ['asking...']);
            var tr = kit.row([String(f.unit), f.answer, f.detail, f.answerMs + ' ms'], { 'data-unit': String(f.unit) });
            tr.append(identity, el('td', {}, [pick]));
            pick.addEventListener('click', function () { choose(b.bus, f.unit, tr.getAttribute('data-profile')); });
            return { tr: tr, unit: f.unit, identity: identity };
          });
          scanOut.replaceChildren(el('p', {}, ['bus ' + b.bus + ' · units ' + b.from + '..' + b.to + ' · ' + b.found.length + ' answered · each unit found is asked for the identification registers of the library\'s profiles']),
            kit.table(['unit', 'answer', 'detail', 'answer time', 'identifies as', ''], rows.map(function (r) { return r.tr; }), 'add-scan-table'));
          // One unit at a time, as the scan: the line keeps its polls.
          return rows.reduce(function (done, r) { return done.then(function () { return identify(b.bus, r); }); }, Promise.resolve());
        });
      });
    });
    function identify(busName, r) {
      return kit.post('/api/site/device/identify', { bus: busName, unit: r.unit }).then(function (res) {
        return res.json().then(function (a) {
          if (!res.ok) { r.identity.className = 'identity error'; r.identity.textContent = a.error; return; }
          var read = a.readings.length ? ' (' + a.readings.join(', ') + ')' : '';
          r.identity.textContent = a.matches.length ? a.matches.join(' or ') + read : 'the library cannot tell' + read;
          if (a.matches.length === 1) r.tr.setAttribute('data-profile', a.matches[0]);
        });
      });
    }

    var bus = kit.select('add-bus', buses), unit = el('input', { id: 'add-unit', type: 'number', value: '1' });
    var profile = el('select', { id: 'add-profile' }, form.body.profiles.map(function (p) {
      return el('option', { value: p.name }, [p.name + ' (' + p.vendor + ' ' + p.model + ')' + (p.identifies ? ' · identifies itself' : '')]);
    }));
    var name = el('input', { id: 'add-name', value: '', placeholder: 'meter-1', autocomplete: 'off' });
    var period = el('input', { id: 'add-period', type: 'number', value: '1000' });
    var token = el('input', { id: 'add-token', type: 'password', autocomplete: 'off', placeholder: 'leave empty: not on the cloud' });
    var inputs = [el('h2', {}, ['2. The device']), kit.field('bus', bus), kit.field('unit', unit), kit.field('profile', profile), kit.field('name', name), kit.field('poll every (ms)', period)];
    if (form.body.cloud) inputs.push(kit.field('cloud access token', token));
    var check = el('button', { id: 'add-check', type: 'button' }, ['Check']);
    var buttons = [check];
    if (kit.session().allowReload) buttons.push(el('button', { id: 'add-apply', type: 'button' }, ['Apply (write and reload)']));
    var outcome = el('p', { id: 'add-outcome' }, []), problems = el('ul', { id: 'add-problems' }, []), change = el('pre', { id: 'add-change' }, []);
    var device = el('form', { id: 'add-device', class: 'tool' }, inputs.concat([el('div', { class: 'buttons' }, buttons)]));
    device.addEventListener('submit', function (e) { e.preventDefault(); send('check'); });
    check.addEventListener('click', function () { send('check'); });
    if (buttons[1]) buttons[1].addEventListener('click', function () { send('apply'); });
    function choose(busName, unitId, suggested) {
      bus.value = busName;
      unit.value = String(unitId);
      if (suggested) profile.value = suggested;
      if (!name.value) name.value = busName + '-unit-' + unitId;
      name.focus();
    }
    function body() {
      var b = { bus: bus.value, unitId: Number(unit.value), profile: profile.value, name: name.value.trim() };
      if (period.value !== '') b.pollIntervalMs = Number(period.value);
      if (form.body.cloud && token.value !== '') b.accessToken = token.value;
      return b;
    }
    function send(action) {
      outcome.className = '';
      outcome.textContent = action === 'check' ? 'checking...' : 'applying...';
      problems.replaceChildren();
      change.replaceChildren();
      kit.post('/api/site/device/' + action, body()).then(function (r) {
        return r.json().then(function (a) {
          if (!r.ok) { outcome.className = 'error'; outcome.textContent = a.error; return; }
          var list = a.problems || [];
          problems.replaceChildren.apply(problems, list.map(function (p) { return el('li', {}, [p.path + ': ' + p.message]); }));
          change.replaceChildren.apply(change, [el('span', { class: 'at' }, ['at line ' + a.change.at + ' of the site file:\n'])].concat(a.change.removed.map(function (l) { return el('del', {}, ['- ' + l + '\n']); }), a.change.added.map(function (l) { return el('ins', {}, ['+ ' + l + '\n']); })));
          outcome.className = list.length ? 'error' : '';
          if (action === 'check') { outcome.textContent = list.length ? list.length + ' problem(s); nothing changed' : 'valid: Apply writes this change and reloads'; return; }
          outcome.textContent = a.outcome + (a.generation !== undefined ? ', generation ' + a.generation : '') + (list.length ? ': ' + list.length + ' problem(s); nothing changed' : '');
          // Applied: the device's own page, with its values as the polls land.
          if (a.outcome === 'applied') location.href = '/device/' + encodeURIComponent(a.device);
        });
      });
    }
    var note = kit.session().allowReload ? 'Check shows the change of the site file and what the reload would say; Apply writes it and reloads.' : 'Applying from the page is off (gateway.web.allowReload): Check shows the change to copy into the site file.';
    app.replaceChildren(kit.header('Add a device'), el('p', {}, [note]), scan, device, outcome, problems, change);
  });
};
