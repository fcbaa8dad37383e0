// scope-prof report: the page's script. Builds the tables itself and hands
// every chart to Apache ECharts (vendored, inline). When everything is drawn
// it sets <body data-report="ready">; any error sets data-report="error" and
// is logged with console.error (the browser test checks both).
(function () {
  'use strict';
  var body = document.body;
  function fail(e) {
    var text = String((e && e.stack) || e);
    body.setAttribute('data-report', 'error');
    body.setAttribute('data-report-error', text.slice(0, 500));
    console.error('report error: ' + text);
  }
  window.addEventListener('error', function (ev) { fail(ev.error || ev.message); });

  // ---------------------------------------------------------------- helpers
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'html') e.innerHTML = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function dur(ns) {
    if (ns == null || ns < 0 || !isFinite(ns)) return '-';
    var a = Math.abs(ns), v, u;
    if (a >= 1e9) { v = ns / 1e9; u = 's'; } else if (a >= 1e6) { v = ns / 1e6; u = 'ms'; }
    else if (a >= 1e3) { v = ns / 1e3; u = 'µs'; } else return Math.round(ns) + ' ns';
    return (Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(2)) + ' ' + u;
  }
  // An ISO 8601 timestamp to the second, in UTC when it says so.
  function shortDate(d) {
    if (!d) return '-';
    var m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(String(d));
    if (!m) return String(d);
    return m[1] + ' ' + m[2] + (m[3] === 'Z' || m[3] === '+00:00' ? ' UTC' : (m[3] || ''));
  }
  function num(n) { return n == null ? '-' : Number(n).toLocaleString('en-US'); }
  function pct(p) { return p == null || !isFinite(p) ? '-' : (p > 0 ? '+' : '') + p.toFixed(1) + '%'; }
  function decode(col) {
    var bin = atob(col.b), n = bin.length, bytes = new Uint8Array(n);
    for (var i = 0; i < n; i++) bytes[i] = bin.charCodeAt(i);
    switch (col.t) {
      case 'f64': return new Float64Array(bytes.buffer);
      case 'f32': return new Float32Array(bytes.buffer);
      case 'u32': return new Uint32Array(bytes.buffer);
      default: return bytes;
    }
  }
  function decodeCells(c) {
    return { offsets: decode(c.offsets), start: decode(c.start), dur: decode(c.dur),
      region: decode(c.region), count: decode(c.count), busy: decode(c.busy) };
  }
  // A stable color per region: golden-angle hues.
  function color(region) {
    var h = (region * 137.508) % 360;
    return 'hsl(' + h.toFixed(0) + ',62%,' + (52 + (region % 3) * 6) + '%)';
  }
  var charts = [];
  function chart(container) {
    var c = echarts.init(container, null, { renderer: 'canvas' });
    charts.push(c);
    return c;
  }
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.resize(); }); });
  function section(app, id, title) {
    var s = el('section', { id: id });
    s.appendChild(el('h2', { text: title }));
    app.appendChild(s);
    return s;
  }

  // ------------------------------------------------------------- call tree
  // `run.tree`: columns in pre-order, `parent` -1 at the top.
  function treeModel(run) {
    var t = run.tree, n = t.parent.length, kids = [], roots = [], depth = new Array(n);
    for (var i = 0; i < n; i++) kids.push([]);
    for (i = 0; i < n; i++) {
      var p = t.parent[i];
      if (p < 0) { roots.push(i); depth[i] = 0; } else { kids[p].push(i); depth[i] = depth[p] + 1; }
    }
    return { t: t, n: n, kids: kids, roots: roots, depth: depth, names: run.names };
  }
  var COLUMNS = [
    ['name', 'Region'], ['calls', 'Calls'], ['total', 'Total'], ['own', 'Own'], ['mean', 'Mean'],
    ['p50', 'p50'], ['p95', 'p95'], ['p99', 'p99'], ['pct', '% of session']];
  function treeTable(container, run) {
    // % of session: the share of the session's wall time the calls took on
    // the lanes (threads, tasks) they ran on, total / (session x lanes), as
    // `scope-prof inspect` prints it; at most 100.
    var m = treeModel(run), t = m.t, session = Math.max(run.session_ns, 1);
    function share(i) { return t.total[i] / (session * Math.max(1, t.lanes ? t.lanes[i] : 1)); }
    var open = new Uint8Array(m.n), sortKey = 'total', query = '', MAX_ROWS = 4000;
    function value(i, key) {
      switch (key) {
        case 'name': return m.names[t.region[i]] || '';
        case 'mean': return t.calls[i] ? t.total[i] / t.calls[i] : 0;
        case 'pct': return share(i);
        default: return t[key][i];
      }
    }
    m.roots.forEach(function (r) { open[r] = 1; });
    var toolbar = el('div', { class: 'toolbar' });
    var search = el('input', { type: 'search', placeholder: 'Search regions…', 'aria-label': 'search regions' });
    var expand = el('button', { text: 'Expand all' }), collapse = el('button', { text: 'Collapse all' });
    var hint = el('span', { class: 'hint' });
    toolbar.appendChild(search); toolbar.appendChild(expand); toolbar.appendChild(collapse); toolbar.appendChild(hint);
    container.appendChild(toolbar);
    var wrap = el('div', { class: 'tw' }), table = el('table', { class: 'grid tree', id: 'tree-table' });
    var thead = el('thead'), tr = el('tr');
    COLUMNS.forEach(function (c) {
      var th = el('th', { text: c[1], 'data-key': c[0] });
      th.addEventListener('click', function () { sortKey = c[0]; render(); });
      tr.appendChild(th);
    });
    thead.appendChild(tr); table.appendChild(thead);
    var tbody = el('tbody'); table.appendChild(tbody); wrap.appendChild(table); container.appendChild(wrap);
    function sorted(list) {
      var key = sortKey, out = list.slice();
      out.sort(function (a, b) {
        var x = value(a, key), y = value(b, key);
        if (key === 'name') return x < y ? -1 : x > y ? 1 : 0;
        return y - x;
      });
      return out;
    }
    // With a query: the nodes that match and their ancestors.
    function matches() {
      var keep = new Uint8Array(m.n), hit = new Uint8Array(m.n), q = query.toLowerCase();
      for (var i = m.n - 1; i >= 0; i--) {
        if ((m.names[t.region[i]] || '').toLowerCase().indexOf(q) >= 0) { hit[i] = 1; keep[i] = 1; }
        if (keep[i] && t.parent[i] >= 0) keep[t.parent[i]] = 1;
      }
      return { keep: keep, hit: hit };
    }
    function render() {
      Array.prototype.forEach.call(thead.querySelectorAll('th'), function (th) {
        th.className = th.getAttribute('data-key') === sortKey ? 'sorted' : '';
      });
      var filter = query ? matches() : null, rows = [], shown = 0;
      function walk(list) {
        sorted(list).forEach(function (i) {
          if (filter && !filter.keep[i]) return;
          if (shown >= MAX_ROWS) { shown++; return; }
          shown++;
          rows.push(row(i, filter && filter.hit[i]));
          if (filter ? true : open[i]) walk(m.kids[i]);
        });
      }
      walk(m.roots);
      tbody.textContent = '';
      var frag = document.createDocumentFragment();
      rows.forEach(function (r) { frag.appendChild(r); });
      tbody.appendChild(frag);
      hint.textContent = (shown > MAX_ROWS ? 'first ' + MAX_ROWS + ' of ' + shown + ' rows; ' : '') +
        m.n + ' call paths; click a header to sort, a triangle to expand; % of session: the share of the ' +
        dur(run.session_ns) + ' session the calls took on the lanes they ran on, total / (session × lanes)';
      table.setAttribute('data-rows', Math.min(shown, MAX_ROWS));
    }
    function row(i, hit) {
      var r = el('tr', { 'data-node': i });
      if (hit) r.className = 'match';
      var name = el('td', { class: 'name' });
      name.style.paddingLeft = (6 + m.depth[i] * 16) + 'px';
      var tog = el('span', { class: 'tog', text: m.kids[i].length ? (open[i] || query ? '▾' : '▸') : '' });
      tog.addEventListener('click', function () { open[i] = open[i] ? 0 : 1; render(); });
      var part = share(i);
      var bar = el('span', { class: 'bar' });
      bar.style.width = Math.max(1, Math.min(60, part * 60)) + 'px';
      name.appendChild(tog); name.appendChild(bar);
      name.appendChild(el('span', { class: 'n', text: m.names[t.region[i]] || '?', title: m.names[t.region[i]] || '' }));
      r.appendChild(name);
      r.appendChild(el('td', { text: num(t.calls[i]) }));
      r.appendChild(el('td', { text: dur(t.total[i]) }));
      r.appendChild(el('td', { text: dur(t.own[i]) }));
      r.appendChild(el('td', { text: dur(value(i, 'mean')) }));
      r.appendChild(el('td', { text: dur(t.p50[i]) }));
      r.appendChild(el('td', { text: dur(t.p95[i]) }));
      r.appendChild(el('td', { text: dur(t.p99[i]) }));
      r.appendChild(el('td', { class: 'pct', text: (part * 100).toFixed(1) }));
      return r;
    }
    var timer = null;
    search.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { query = search.value.trim(); render(); }, 120);
    });
    // `#search=TEXT` opens the page with the search box filled.
    var hs = /search=([^&]*)/.exec(location.hash);
    if (hs) { search.value = decodeURIComponent(hs[1]); query = search.value.trim(); }
    expand.addEventListener('click', function () { open.fill(1); render(); });
    collapse.addEventListener('click', function () { open.fill(0); m.roots.forEach(function (r) { open[r] = 1; }); render(); });
    render();
  }

  // ------------------------------------------------------------ flame graph
  // Icicle of the call tree: a node as wide as its total time, its children
  // under it. Click a frame to zoom to it; "Reset" or the top frame zooms out.
  function flameGraph(container, run) {
    var m = treeModel(run), t = m.t;
    if (!m.n) { container.appendChild(el('div', { class: 'empty', text: 'No calls.' })); return; }
    var x0 = new Float64Array(m.n), maxDepth = 0, total = 0;
    m.roots.forEach(function (r) { x0[r] = total; total += t.total[r]; });
    for (var i = 0; i < m.n; i++) {
      var x = x0[i];
      m.kids[i].forEach(function (c) { x0[c] = x; x += t.total[c]; });
      if (m.depth[i] > maxDepth) maxDepth = m.depth[i];
    }
    var toolbar = el('div', { class: 'toolbar' }), reset = el('button', { text: 'Reset zoom' });
    var hint = el('span', { class: 'hint', text: 'click a frame to zoom into it' +
      (run.aggregate ? '; an aggregate file: its regions side by side, their nesting is not recorded' : '') });
    toolbar.appendChild(reset); toolbar.appendChild(hint); container.appendChild(toolbar);
    var div = el('div', { class: 'chart', id: container.id + '-chart' });
    var height = Math.min(720, Math.max(160, (maxDepth + 1) * 22 + 40));
    div.style.height = height + 'px';
    container.appendChild(div);
    // Rows of about 22 px however shallow the tree.
    var rows = Math.max(maxDepth + 1, Math.floor((height - 32) / 22));
    var c = chart(div), view = [0, total], drawnFrames = 0;
    function items() {
      var data = [], min = (view[1] - view[0]) / 3000;
      drawnFrames = 0;
      for (var i = 0; i < m.n; i++) {
        var a = x0[i], b = a + t.total[i];
        if (b <= view[0] || a >= view[1] || t.total[i] < min) continue;
        data.push([a, b, m.depth[i], i]);
      }
      drawnFrames = data.length;
      div.setAttribute('data-drawn', drawnFrames);
      return data;
    }
    function draw() {
      c.setOption({
        animation: false,
        grid: { left: 8, right: 8, top: 8, bottom: 24 },
        tooltip: { formatter: function (p) {
          var i = p.value[3];
          return m.names[t.region[i]] + '<br>total ' + dur(t.total[i]) + ' (' +
            (100 * t.total[i] / Math.max(total, 1)).toFixed(1) + '% of all)<br>own ' + dur(t.own[i]) +
            '<br>' + num(t.calls[i]) + ' ' + (run.unit || 'calls');
        } },
        xAxis: { type: 'value', min: view[0], max: view[1], show: false },
        yAxis: { type: 'value', min: 0, max: rows, inverse: true, show: false },
        series: [{
          type: 'custom', data: items(), encode: { x: [0, 1], y: 2 },
          renderItem: function (params, api) {
            var a = api.coord([api.value(0), api.value(2)]), b = api.coord([api.value(1), api.value(2) + 1]);
            // Clipped to the plot, so a zoomed-out ancestor keeps its label in view.
            var left = Math.max(a[0], params.coordSys.x), right = Math.min(b[0], params.coordSys.x + params.coordSys.width);
            a = [left, a[1]]; b = [right, b[1]];
            var w = Math.max(b[0] - a[0] - 1, 0.5), h = b[1] - a[1] - 1, i = api.value(3);
            var name = m.names[t.region[i]] || '?';
            var frame = { type: 'rect', shape: { x: a[0], y: a[1], width: w, height: h },
              style: { fill: color(t.region[i]) } };
            // The label is cut to its frame (an ellipsis at the end; none
            // in a frame too narrow for a letter or two), 4 px in from
            // each side, so it never prints over a neighbour.
            if (w > 24) {
              frame.textContent = { type: 'text', style: { text: name, fill: '#111', fontSize: 11,
                width: w - 8, overflow: 'truncate', ellipsis: '…' } };
              frame.textConfig = { position: 'insideLeft', distance: 4 };
            }
            return frame;
          }
        }]
      }, { replaceMerge: ['series'] });
    }
    // A click zooms to the frame (its descendants fill the width); a click
    // on the frame zoomed to zooms out.
    function zoomTo(i) {
      view = (view[0] === x0[i] && view[1] === x0[i] + t.total[i]) ? [0, total] : [x0[i], x0[i] + t.total[i]];
      draw();
      div.setAttribute('data-zoom', view[0] === 0 && view[1] === total ? '' : m.names[t.region[i]]);
    }
    c.on('click', function (p) { zoomTo(p.value[3]); });
    reset.addEventListener('click', function () { view = [0, total]; draw(); div.setAttribute('data-zoom', ''); });
    draw();
    div.setAttribute('data-frames', m.n);
    // `#flame=NAME` opens the flame graph zoomed to the first frame of NAME.
    var fz = /flame=([^&]*)/.exec(location.hash);
    if (fz) {
      var want = decodeURIComponent(fz[1]);
      for (var k = 0; k < m.n; k++) if (m.names[t.region[k]] === want) { zoomTo(k); break; }
    }
  }

  // --------------------------------------------------------------- timeline
  // Tracks are (lane, depth). The cells come as a pyramid (see src/report/timeline/mod.rs):
  // a view of pixel size p is drawn at the finest level whose bucket width is
  // at least p: its buckets, and the individual calls of classes 0..L. So the
  // rectangles per track are bounded by about the plot's width in pixels.
  function timelineChart(container, run) {
    var tl = run.timeline;
    if (!tl || !tl.lanes.length) {
      container.appendChild(el('div', { class: 'empty', text: run.aggregate ?
        'An aggregate file: totals only, no calls to place on a timeline.' : 'No calls.' }));
      return;
    }
    var levels = tl.levels.map(decodeCells), classes = tl.classes.map(decodeCells), widths = tl.widths;
    var labels = [], nTracks = 0;
    tl.lanes.forEach(function (lane) {
      for (var d = 0; d < lane.depths; d++) labels.push(d === 0 ? lane.label : '');
      nTracks += lane.depths;
    });
    var hint = el('div', { class: 'toolbar' }, [el('span', { class: 'hint', text:
      'wheel or drag to zoom and pan; faded cells aggregate calls shorter than a pixel (hover for counts). ' +
      tl.calls_kept.toLocaleString('en-US') + ' of ' + tl.calls.toLocaleString('en-US') + ' calls kept individually.' })]);
    container.appendChild(hint);
    var div = el('div', { class: 'chart', id: 'timeline-chart' });
    // At most SHOWN tracks at once; more scroll with a slider on the right
    // (only the tracks in view are drawn).
    var SHOWN = 40, shown = Math.min(nTracks, SHOWN), rows = [0, shown - 1];
    div.style.height = Math.max(180, shown * 18 + 90) + 'px';
    container.appendChild(div);
    var c = chart(div), span = tl.span, drawn = 0;
    function lowerBound(arr, from, to, x) {
      while (from < to) { var mid = (from + to) >> 1; if (arr[mid] < x) from = mid + 1; else to = mid; }
      return from;
    }
    function collect(cells, track, a, b, kind, out) {
      var from = cells.offsets[track], to = cells.offsets[track + 1];
      var i = lowerBound(cells.start, from, to, a);
      if (i > from && cells.start[i - 1] + cells.dur[i - 1] > a) i--;
      for (; i < to && cells.start[i] < b; i++) {
        out.push([cells.start[i], cells.start[i] + cells.dur[i], track, cells.region[i], cells.count[i], cells.busy[i], kind]);
      }
    }
    function cellsIn(a, b) {
      var px = (b - a) / Math.max(200, div.clientWidth - 150), L = 0;
      for (var l = 0; l < widths.length; l++) if (widths[l] >= px) L = l;
      var out = [];
      for (var track = Math.max(0, rows[0]); track <= Math.min(nTracks - 1, rows[1]); track++) {
        if (L < levels.length) collect(levels[L], track, a, b, 1, out);
        for (var k = 0; k <= L && k < classes.length; k++) collect(classes[k], track, a, b, 0, out);
      }
      drawn = out.length;
      div.setAttribute('data-cells', drawn);
      div.setAttribute('data-level', L);
      div.setAttribute('data-shown', Math.max(0, rows[0]) + '-' + Math.min(nTracks - 1, rows[1]));
      return out;
    }
    var view = [0, span], t0 = performance.now();
    // An axis label: in the unit of the view's width, with the decimals that
    // tell its ticks apart (1.0615 ms, 1.0620 ms, ... when zoomed in).
    function tick(v) {
      var w = Math.max(view[1] - view[0], 1), unit = w >= 1e9 ? 1e9 : w >= 1e6 ? 1e6 : w >= 1e3 ? 1e3 : 1;
      var name = { 1: 'ns', 1e3: 'µs', 1e6: 'ms', 1e9: 's' }[unit];
      var digits = Math.max(0, Math.min(6, Math.ceil(-Math.log10(w / 8 / unit))));
      return (v / unit).toFixed(digits) + ' ' + name;
    }
    c.setOption({
      animation: false,
      grid: { left: 140, right: nTracks > SHOWN ? 30 : 24, top: 10, bottom: 60 },
      tooltip: { formatter: function (p) {
        var v = p.value, name = run.names[v[3]] || '?';
        if (v[6] === 0) return name + '<br>start +' + dur(v[0]) + '<br>duration ' + dur(v[1] - v[0]);
        return num(v[4]) + ' calls in ' + dur(v[1] - v[0]) + ' (mostly ' + name + ')<br>fill ' +
          Math.round(v[5] / 2.55) + '%, from +' + dur(v[0]);
      } },
      xAxis: { type: 'value', min: 0, max: span, axisLabel: { formatter: function (v) { return tick(v); } } },
      yAxis: { type: 'category', data: labels, inverse: true, axisTick: { show: false },
        axisLabel: { interval: 0, width: 130, overflow: 'truncate' } },
      dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'none' },
        { type: 'slider', xAxisIndex: 0, filterMode: 'none', height: 18, bottom: 12, labelFormatter: function (v) { return dur(v); } }]
        .concat(nTracks > SHOWN ? [{ type: 'slider', yAxisIndex: 0, filterMode: 'none', width: 14, right: 4,
          startValue: 0, endValue: SHOWN - 1, zoomLock: true, showDetail: false }] : []),
      series: [{
        type: 'custom', data: cellsIn(0, span), encode: { x: [0, 1], y: 2 }, progressive: 0,
        renderItem: function (params, api) {
          var y = api.value(2), a = api.coord([api.value(0), y]), b = api.coord([api.value(1), y]);
          var h = api.size([0, 1])[1] * 0.84, x = Math.max(a[0], params.coordSys.x);
          var right = Math.min(b[0], params.coordSys.x + params.coordSys.width);
          if (right < x) return null;
          var aggregate = api.value(6) === 1;
          return { type: 'rect', shape: { x: x, y: a[1] - h / 2, width: Math.max(right - x, 0.8), height: h },
            style: { fill: color(api.value(3)), opacity: aggregate ? 0.3 + 0.7 * api.value(5) / 255 : 1 } };
        }
      }]
    });
    div.setAttribute('data-draw-ms', Math.round(performance.now() - t0));
    var pending = false;
    c.on('datazoom', function () {
      var zooms = c.getOption().dataZoom, opt = zooms[0], a = opt.startValue, b = opt.endValue;
      if (a == null || b == null) { a = span * opt.start / 100; b = span * opt.end / 100; }
      view = [a, b];
      if (zooms[2]) rows = [zooms[2].startValue, zooms[2].endValue];
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () {
        pending = false;
        var t0 = performance.now();
        c.setOption({ series: [{ data: cellsIn(view[0], view[1]) }] });
        div.setAttribute('data-draw-ms', Math.round(performance.now() - t0));
        div.setAttribute('data-view', view[0].toFixed(0) + ',' + view[1].toFixed(0));
      });
    });
    div.setAttribute('data-tracks', nTracks);
    // `#zoom=A,B` (fractions of the session) opens the timeline zoomed there.
    var z = /zoom=([0-9.]+),([0-9.]+)/.exec(location.hash);
    if (z) c.dispatchAction({ type: 'dataZoom', start: 100 * +z[1], end: 100 * +z[2] });
  }

  // ------------------------------------------------------------ histograms
  function histograms(container, run) {
    if (!run.histograms.length) {
      container.appendChild(el('div', { class: 'empty', text: 'No per-call durations in this file.' }));
      return;
    }
    // Regions by total time, a recursive region's nested calls counted once.
    var totals = {}, t = run.tree;
    for (var i = 0; i < t.region.length; i++) {
      var nested = false;
      for (var p = t.parent[i]; p >= 0 && !nested; p = t.parent[p]) nested = t.region[p] === t.region[i];
      if (!nested) totals[t.region[i]] = (totals[t.region[i]] || 0) + t.total[i];
    }
    var hs = run.histograms.slice().sort(function (a, b) { return (totals[b[0]] || 0) - (totals[a[0]] || 0); });
    var select = el('select', { 'aria-label': 'region' });
    hs.forEach(function (h, k) { select.appendChild(el('option', { value: k, text: run.names[h[0]] })); });
    container.appendChild(el('div', { class: 'toolbar' }, [el('span', { text: 'Region ' }), select,
      el('span', { class: 'hint', text: 'calls per duration, ' + run.bins_per_octave + ' bins per doubling' })]));
    var div = el('div', { class: 'chart', id: 'histogram-chart' });
    div.style.height = '300px';
    container.appendChild(div);
    var c = chart(div), per = run.bins_per_octave;
    function draw() {
      var h = hs[+select.value], first = h[1], counts = h[2], cats = [];
      var log = Math.max.apply(null, counts) > 100;
      for (var k = 0; k < counts.length; k++) cats.push(dur(Math.pow(2, (first + k) / per)));
      c.setOption({
        animation: false, grid: { left: 60, right: 20, top: 20, bottom: 40 },
        tooltip: { trigger: 'axis' },
        xAxis: { type: 'category', data: cats, name: 'duration ≥', nameLocation: 'middle', nameGap: 26 },
        // A log scale once counts pass 100: a few slow calls among millions
        // stay visible (a log axis from 1 would draw a single call as nothing).
        yAxis: log ? { type: 'log', name: 'calls (log)', min: 1, logBase: 10 } : { type: 'value', name: 'calls', minInterval: 1 },
        series: [{ type: 'bar', data: Array.prototype.map.call(counts, function (n) { return n > 0 || !log ? n : '-'; }), itemStyle: { color: color(h[0]) }, barCategoryGap: '8%', barMaxWidth: 48 }]
      }, true);
    }
    select.addEventListener('change', draw);
    draw();
  }

  // ------------------------------------------------------------- header etc.
  function cards(items) {
    return el('div', { class: 'cards' }, items.map(function (kv) {
      return el('div', { class: 'card' }, [el('div', { class: 'k', text: kv[0] }), el('div', { class: 'v', text: String(kv[1]) })]);
    }));
  }
  function notes(list) {
    if (!list || !list.length) return null;
    return el('ul', { class: 'notes' }, list.map(function (n) { return el('li', { text: n }); }));
  }
  function metadataTable(meta) {
    var d = el('details'), tbl = el('table', { class: 'grid meta' });
    d.appendChild(el('summary', { text: Object.keys(meta).length + ' metadata entries' }));
    Object.keys(meta).sort().forEach(function (k) {
      tbl.appendChild(el('tr', null, [el('td', { text: k }), el('td', { text: String(meta[k]) })]));
    });
    d.appendChild(tbl);
    return d;
  }
  function sources(container, run) {
    run.sources.forEach(function (s) {
      var d = el('details');
      d.appendChild(el('summary', { text: s[0] + (s[1] ? '  (' + s[1] + (s[2] >= 0 ? ':' + s[2] : '') + ')' : '') }));
      d.appendChild(el('pre', { class: 'src', text: s[3] }));
      container.appendChild(d);
    });
  }
  // Region counters (allocations, perf events): a row per region (and
  // rank), per event its inclusive total with the own one in parentheses.
  function countersTable(container, run) {
    var events = [], ranks = run.counters.some(function (c) { return c.rank !== 0; });
    run.counters.forEach(function (c) {
      Object.keys(c.events).forEach(function (e) { if (events.indexOf(e) < 0) events.push(e); });
    });
    var hasOwn = run.counters.some(function (c) {
      return Object.keys(c.events).some(function (e) { return c.events[e].own; });
    });
    // task-clock and cpu-clock count nanoseconds.
    var fmt = function (e, v) { return /-clock$/.test(e) ? dur(v) : num(v); };
    var ipc = run.counters.some(function (c) { return c.ipc != null; });
    var perCall = run.counters.some(function (c) { return c.alloc_bytes_per_call != null; });
    var head = ['Region'].concat(ranks ? ['Rank'] : [], ['Calls'], events,
        ipc ? ['IPC'] : [], perCall ? ['Bytes allocated / call'] : []);
    var tbl = el('table', { class: 'grid counters', id: 'counters-table' });
    tbl.appendChild(el('tr', null, head.map(function (h) { return el('th', { text: h }); })));
    run.counters.forEach(function (c) {
      var cells = [el('td', { text: c.name })];
      if (ranks) cells.push(el('td', { class: 'n', text: String(c.rank) }));
      cells.push(el('td', { class: 'n', text: num(c.calls) }));
      events.forEach(function (e) {
        var v = c.events[e];
        var text = v ? fmt(e, v.inclusive) + (hasOwn && v.own != null ? ' (' + fmt(e, v.own) + ')' : '') : '-';
        cells.push(el('td', { class: 'n', text: text }));
      });
      if (ipc) cells.push(el('td', { class: 'n', text: c.ipc == null ? '-' : c.ipc.toFixed(2) }));
      if (perCall) {
        cells.push(el('td', { class: 'n', text: c.alloc_bytes_per_call == null ? '-' : num(Math.round(c.alloc_bytes_per_call)) }));
      }
      tbl.appendChild(el('tr', null, cells));
    });
    container.appendChild(el('div', { class: 'sub', text: 'Each event: the calls\' total, callees included' +
        (hasOwn ? '; in parentheses the calls\' own (callees excluded).' : ' (the file has no own totals).') }));
    container.appendChild(el('div', { class: 'tw' }, [tbl]));
  }
  // Samples inside regions (a sampled session's `.sps` files): per region,
  // its hottest functions and source lines, with their share of its samples.
  function samplesSection(container, run) {
    if (run.samples_flame) {
      container.appendChild(el('div', { class: 'sub', text: 'Flame graph of the samples: the regions, then ' +
        'below the innermost region the frames each sample was taken in (its call chain, with frame ' +
        'pointers), each sample weighing 1/rate s.' }));
      var fp = el('div', { class: 'panel', id: 'samples-flame' });
      container.appendChild(fp);
      flameGraph(fp, { tree: run.samples_flame.tree, names: run.samples_flame.names, aggregate: false, unit: 'samples' });
    }
    run.samples.forEach(function (f) {
      container.appendChild(el('div', { class: 'sub', text: f.file + ' · rank ' + f.rank + ' · ' + f.hz +
        ' Hz · ' + num(f.samples) + ' samples, symbolized when the page was made' }));
      f.regions.forEach(function (r, i) {
        var d = el('details', { class: 'samples' });
        if (i < 3) d.setAttribute('open', '');
        d.appendChild(el('summary', { text: r.region + ' · ' + num(r.samples) + ' samples (' +
          (100 * r.samples / Math.max(1, f.samples)).toFixed(1) + '% of all)' +
          (r.inclusive != null ? '; ' + num(r.inclusive) + ' with the regions inside it' : '') }));
        var share = function (n) { return (100 * n / Math.max(1, r.samples)).toFixed(1) + '%'; };
        var fns = el('table', { class: 'grid' }, [el('tr', null, ['Function', 'Samples', 'Share'].map(function (h) { return el('th', { text: h }); }))]);
        r.functions.slice(0, 10).forEach(function (x) {
          fns.appendChild(el('tr', null, [el('td', { text: x.function }), el('td', { class: 'n', text: num(x.count) }),
            el('td', { class: 'n', text: share(x.count) })]));
        });
        var lines = el('table', { class: 'grid' }, [el('tr', null, ['Line', 'Function', 'Samples', 'Share'].map(function (h) { return el('th', { text: h }); }))]);
        r.lines.slice(0, 10).forEach(function (x) {
          // The path's last two components; the whole path on hover.
          var short = x.file ? x.file.split('/').slice(-2).join('/') + ':' + x.line : '?';
          lines.appendChild(el('tr', null, [el('td', { text: short, title: x.file || '' }), el('td', { text: x.function }),
            el('td', { class: 'n', text: num(x.count) }), el('td', { class: 'n', text: share(x.count) })]));
        });
        if (r.functions.length) {
          d.appendChild(el('div', { class: 'tw' }, [fns]));
          d.appendChild(el('div', { class: 'tw' }, [lines]));
        } else {
          d.appendChild(el('div', { class: 'sub', text: 'No sample of its own: its time is in the regions inside it.' }));
        }
        container.appendChild(d);
      });
    });
  }
  function runHeader(app, run) {
    app.appendChild(cards([
      ['Label', run.label], ['Date', shortDate(run.date)], ['Duration', dur(run.session_ns)],
      ['Threads', run.threads], ['Tasks', run.tasks], ['Ranks', run.ranks], ['Events', num(run.events)],
      ['Regions', run.names.length], ['Schema', run.schema + (run.aggregate ? ' (aggregate)' : '')]]));
    var n = notes(run.notes);
    if (n) app.appendChild(n);
  }

  // ---------------------------------------------------------------- one run
  function renderRun(app, run, title) {
    app.appendChild(el('h1', { text: title }));
    app.appendChild(el('div', { class: 'sub', text: run.file + (run.host ? ' · ' + run.host : '') }));
    runHeader(app, run);
    var links = [['tree', 'Call tree'], ['flame', 'Flame graph'], ['timeline', 'Timeline'], ['histograms', 'Durations']];
    if (run.counters && run.counters.length) links.push(['counters', 'Counters']);
    if (run.samples && run.samples.length) links.push(['samples', 'Samples']);
    if (run.sources.length) links.push(['sources', 'Source']);
    links.push(['metadata', 'Metadata']);
    app.appendChild(el('nav', null, links.map(function (l) { return el('a', { href: '#' + l[0], text: l[1] }); })));
    treeTable(el2(section(app, 'tree', 'Call tree')), run);
    flameGraph(el2(section(app, 'flame', 'Flame graph'), 'flame-panel'), run);
    timelineChart(el2(section(app, 'timeline', 'Timeline')), run);
    histograms(el2(section(app, 'histograms', 'Durations per region')), run);
    if (run.counters && run.counters.length) countersTable(el2(section(app, 'counters', 'Region counters')), run);
    if (run.samples && run.samples.length) samplesSection(el2(section(app, 'samples', 'Samples inside regions')), run);
    if (run.sources.length) sources(el2(section(app, 'sources', 'Captured source')), run);
    section(app, 'metadata', 'Metadata').appendChild(metadataTable(run.metadata));
  }
  function el2(sec, id) {
    var p = el('div', { class: 'panel' });
    if (id) p.id = id;
    sec.appendChild(p);
    return p;
  }

  // ------------------------------------------------------------ comparison
  function renderCompare(app, cmp, title) {
    var runs = cmp.runs, key = cmp.scaling_key, values = cmp.scaling_values;
    app.appendChild(el('h1', { text: title }));
    app.appendChild(el('div', { class: 'sub', text: runs.length + ' runs; changes against run 1 (' + runs[0].label + ')' +
      (key ? '; scaling key ' + key : '; no metadata key varies between the runs: no scaling charts') }));
    // The runs.
    var tbl = el('table', { class: 'grid runs' }), head = el('tr');
    ['#', 'Label', 'File', key || 'key', 'Duration', 'Events', 'Threads', 'Ranks'].forEach(function (h) { head.appendChild(el('th', { text: h })); });
    tbl.appendChild(head);
    runs.forEach(function (r, i) {
      tbl.appendChild(el('tr', null, [el('td', { text: String(i + 1) }), el('td', { text: r.label }), el('td', { text: r.file }),
        el('td', { text: values ? String(values[i]) : '-' }), el('td', { text: dur(r.session_ns) }),
        el('td', { text: num(r.events) }), el('td', { text: String(r.threads) }), el('td', { text: String(r.ranks) })]));
    });
    el2(section(app, 'runs', 'Runs')).appendChild(tbl);
    runs.forEach(function (r, i) { var n = notes(r.notes.map(function (x) { return 'run ' + (i + 1) + ': ' + x; })); if (n) app.appendChild(n); });
    diffTable(el2(section(app, 'diff', 'What changed (total time per region, against run 1)')), cmp);
    if (key) scaling(el2(section(app, 'scaling', 'Scaling against ' + key)), cmp);
    // One run's tree and flame graph at a time.
    var sec = section(app, 'run-detail', 'Call tree and flame graph of a run'), panel = el2(sec);
    var select = el('select', { 'aria-label': 'run' });
    runs.forEach(function (r, i) { select.appendChild(el('option', { value: i, text: (i + 1) + ': ' + r.label })); });
    panel.appendChild(el('div', { class: 'toolbar' }, [el('span', { text: 'Run ' }), select]));
    var holder = el('div', { id: 'tree' }), flame = el('div', { id: 'flame-panel' });
    panel.appendChild(holder); panel.appendChild(flame);
    function show() {
      holder.textContent = ''; flame.textContent = '';
      treeTable(holder, runs[+select.value]);
      flameGraph(flame, runs[+select.value]);
    }
    select.addEventListener('change', show);
    show();
  }
  function diffTable(container, cmp) {
    var runs = cmp.runs, threshold = 5;
    var rows = cmp.regions.map(function (r) {
      var base = r.stats[0], changes = r.stats.map(function (s) { return base && s && base[1] ? (s[1] - base[1]) / base[1] * 100 : null; });
      var delta = 0;
      r.stats.forEach(function (s) { var d = Math.abs((s ? s[1] : 0) - (base ? base[1] : 0)); if (d > delta) delta = d; });
      return { r: r, changes: changes, delta: delta };
    });
    rows.sort(function (a, b) { return b.delta - a.delta; });
    var tbl = el('table', { class: 'grid diff', id: 'diff-table' }), head = el('tr', null, [el('th', { text: 'Region' })]);
    runs.forEach(function (r, i) {
      head.appendChild(el('th', { text: 'calls [' + (i + 1) + ']' }));
      head.appendChild(el('th', { text: 'total [' + (i + 1) + ']' }));
      if (i > 0) head.appendChild(el('th', { text: 'Δ [' + (i + 1) + ']' }));
    });
    tbl.appendChild(head);
    rows.forEach(function (x) {
      var tr = el('tr', null, [el('td', { text: x.r.name })]);
      x.r.stats.forEach(function (s, i) {
        tr.appendChild(el('td', { text: s ? num(s[0]) : '-' }));
        tr.appendChild(el('td', { text: s ? dur(s[1]) : '-' }));
        if (i > 0) {
          var p = x.changes[i], cls = p == null ? '' : p > threshold ? 'bad' : p < -threshold ? 'good' : '';
          tr.appendChild(el('td', { class: cls, text: !x.r.stats[0] ? 'new' : !s ? 'gone' : pct(p) }));
        }
      });
      tbl.appendChild(tr);
    });
    container.appendChild(el('div', { class: 'toolbar' }, [el('span', { class: 'hint', text:
      'largest absolute change first; red: more than +' + threshold + '%, green: more than -' + threshold + '%' })]));
    var w = el('div', { class: 'tw' }); w.appendChild(tbl); container.appendChild(w);
    tbl.setAttribute('data-rows', rows.length);
  }
  // Time per region, speedup T(first)/T(run) and efficiency speedup/(k/k0)
  // against the key, runs in the key's order; the 8 regions of most total
  // time in the first run, and the whole session.
  function scaling(container, cmp) {
    var runs = cmp.runs, values = cmp.scaling_values, numeric = values.every(function (v) { return typeof v === 'number'; });
    var order = runs.map(function (r, i) { return i; });
    if (numeric) order.sort(function (a, b) { return values[a] - values[b]; });
    var top = cmp.regions.filter(function (r) { return r.stats[order[0]]; })
      .sort(function (a, b) { return b.stats[order[0]][1] - a.stats[order[0]][1]; }).slice(0, 8);
    var series = [{ name: 'session', times: order.map(function (i) { return runs[i].session_ns; }) }];
    // A region's time per lane (total / the run's threads, or ranks): the
    // wall time it takes when its work is spread over them.
    top.forEach(function (r) { series.push({ name: r.name, times: order.map(function (i) { return r.stats[i] ? r.stats[i][1] / runs[i].lanes : null; }) }); });
    var xs = order.map(function (i) { return values[i]; });
    var grid = el('div', { class: 'charts3' });
    container.appendChild(grid);
    function lineChart(id, title, yName, pick, extra, yType) {
      var div = el('div', { class: 'chart', id: id }); grid.appendChild(div);
      var c = chart(div), ser = series.map(function (s) {
        return { name: s.name, type: 'line', symbolSize: 7, data: xs.map(function (x, k) { var y = pick(s, k); return [numeric ? x : String(x), y]; }) };
      });
      if (extra) ser.push(extra);
      c.setOption({
        animation: false, title: { text: title, left: 'center', textStyle: { fontSize: 13 } },
        legend: { type: 'scroll', bottom: 0 }, tooltip: { trigger: 'axis' },
        grid: { left: 64, right: 20, top: 56, bottom: 56 },
        xAxis: numeric ? { type: 'value', name: cmp.scaling_key, min: 'dataMin', max: 'dataMax' } : { type: 'category', data: xs.map(String) },
        yAxis: { type: yType || 'value', name: yName, axisLabel: yName === 'time' ? { formatter: function (v) { return dur(v); } } : {} },
        series: ser
      });
    }
    lineChart('scaling-time', 'Time per region (per thread or rank) and session', 'time', function (s, k) { return s.times[k]; }, null, 'log');
    lineChart('scaling-speedup', 'Speedup against ' + cmp.scaling_key + ' = ' + xs[0], 'speedup',
      function (s, k) { return s.times[0] && s.times[k] ? s.times[0] / s.times[k] : null; },
      numeric ? { name: 'ideal', type: 'line', lineStyle: { type: 'dashed', color: '#999' }, itemStyle: { color: '#999' }, symbol: 'none',
        data: xs.map(function (x) { return [x, x / xs[0]]; }) } : null);
    if (numeric && xs[0] > 0) {
      lineChart('scaling-efficiency', 'Parallel efficiency', 'efficiency %',
        function (s, k) { return s.times[0] && s.times[k] ? 100 * s.times[0] / s.times[k] / (xs[k] / xs[0]) : null; }, null);
    } else {
      grid.appendChild(el('div', { class: 'empty', text: 'No efficiency chart: the key ' + cmp.scaling_key + ' is not a number.' }));
    }
  }

  // ------------------------------------------------------------------ main
  function main() {
    var doc = JSON.parse(document.getElementById('report-data').textContent);
    var app = document.getElementById('app');
    app.textContent = '';
    if (typeof echarts === 'undefined') throw new Error('ECharts did not load');
    if (doc.data.kind === 'run') renderRun(app, doc.data.run, doc.title);
    else renderCompare(app, doc.data.compare, doc.title);
    app.appendChild(el('p', { class: 'sub', text: 'Generated by ' + doc.generator + ' · charts: Apache ECharts ' + echarts.version }));
    if (body.getAttribute('data-report') !== 'error') body.setAttribute('data-report', 'ready');
    body.setAttribute('data-charts', charts.length);
  }
  try { main(); } catch (e) { fail(e); }
})();
