// The charts of Ladder's HTML rehearsal report, drawn by Apache ECharts
// (inlined before this script) from the run's JSON in the
// <script id="ladder-data"> element: the report's summary and its timeline
// (docs/report-html.md). Times are virtual seconds since the start, shown
// as HH:MM:SS like the text report. Nothing is fetched: the page works
// offline. Colour is never the only cue: versions are written on the bars,
// states have patterns, lines have dash styles.
(function () {
  'use strict';

  // When the page's script began, the library and the data parsed (in
  // milliseconds since the navigation began, as data-ready-ms below).
  document.body.setAttribute('data-script-ms', String(Math.round(performance.now())));
  var data = JSON.parse(document.getElementById('ladder-data').textContent);
  var rep = data.report;
  var tl = data.timeline;
  var end = Math.max(tl.endSeconds, 1);
  var charts = [];

  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function clock(t) {
    t = Math.round(t);
    return pad(Math.floor(t / 3600)) + ':' + pad(Math.floor(t % 3600 / 60)) + ':' + pad(t % 60);
  }
  // Text for a tooltip, which ECharts renders as HTML: names stay inert.
  function esc(v) {
    return String(v === undefined || v === null ? '' : v).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function minor(v) {
    var m = /^v?(\d+\.\d+)/.exec(v || '');
    return m ? m[1] : (v || '?');
  }

  // Okabe and Ito's palette, told apart with the common colour-vision
  // deficiencies; one colour per kubelet version, oldest first.
  var palette = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];
  function versionColor(v) {
    var i = tl.versions.indexOf(v);
    return palette[(i < 0 ? 0 : i) % palette.length];
  }

  // A state's pattern in a colour: Ready is solid; launching dotted,
  // not-ready cross-hatched, cordoned striped across, draining striped
  // diagonally.
  var patterns = {};
  function patternCanvas(color, state) {
    var c = document.createElement('canvas');
    c.width = 8;
    c.height = 8;
    var g = c.getContext('2d');
    g.fillStyle = state === 'cordoned' ? color : '#ffffff';
    g.fillRect(0, 0, 8, 8);
    g.fillStyle = color;
    g.strokeStyle = color;
    g.lineWidth = 2;
    switch (state) {
      case 'launching':
        g.fillRect(1, 1, 3, 3);
        g.fillRect(5, 5, 3, 3);
        break;
      case 'not-ready':
        g.beginPath(); g.moveTo(0, 0); g.lineTo(8, 8); g.moveTo(8, 0); g.lineTo(0, 8); g.stroke();
        break;
      case 'cordoned':
        g.fillStyle = '#ffffff';
        g.fillRect(0, 3, 8, 2);
        break;
      case 'draining':
        g.beginPath(); g.moveTo(-2, 10); g.lineTo(10, -2); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6); g.stroke();
        break;
      default:
        g.fillRect(0, 0, 8, 8);
    }
    return c;
  }
  function fill(color, state) {
    if (state === 'ready' || !state) {
      return color;
    }
    var key = color + state;
    if (!patterns[key]) {
      patterns[key] = { image: patternCanvas(color, state), repeat: 'repeat' };
    }
    return patterns[key];
  }

  // Ticks every round number of seconds, minutes or hours: about eight
  // over the run.
  var niceSteps = [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
  var tick = niceSteps.filter(function (s) { return s >= end / 8; })[0] || 86400;

  function timeAxis() {
    return {
      type: 'value', min: 0, max: end, interval: tick, name: data.clock || 'virtual time', nameLocation: 'middle', nameGap: 26,
      axisLabel: { formatter: clock, hideOverlap: true }, splitLine: { lineStyle: { color: '#eee' } }
    };
  }

  function init(el, option) {
    var chart = echarts.init(el, null, { renderer: 'canvas' });
    // The grid's margins hold the axis labels (ECharts 6's outer bounds),
    // unless the chart sets its own.
    if (!option.grid.outerBoundsMode) {
      option.grid.outerBoundsMode = 'same';
      option.grid.outerBoundsContain = 'axisLabel';
    }
    option.animation = false;
    option.aria = { enabled: true };
    option.textStyle = { fontFamily: 'system-ui, sans-serif' };
    chart.setOption(option);
    charts.push(chart);
    return chart;
  }

  // A step series [t, v] that holds its last value until the end.
  function steps(t, values) {
    var out = [];
    for (var i = 0; i < t.length; i++) {
      out.push([t[i], values[i]]);
    }
    if (t.length && t[t.length - 1] < end) {
      out.push([end, values[values.length - 1]]);
    }
    return out;
  }

  // Bars from value[1] to value[2] on row value[0], with an optional label
  // (value[3]) inside when it fits, else after the bar.
  function renderRange(params, api) {
    var row = api.value(0);
    var from = api.coord([api.value(1), row]);
    var to = api.coord([api.value(2), row]);
    var h = api.size([0, 1])[1] * 0.62;
    var cs = params.coordSys;
    var rect = echarts.graphic.clipRectByRect(
      { x: from[0], y: from[1] - h / 2, width: Math.max(to[0] - from[0], 2), height: h },
      { x: cs.x, y: cs.y, width: cs.width, height: cs.height });
    if (!rect) {
      return null;
    }
    var children = [{ type: 'rect', shape: rect, style: { fill: api.visual('color'), stroke: '#333', lineWidth: 0.5 } }];
    var label = api.value(3);
    if (label) {
      // Inside the bar when it fits, else after it, else before it.
      var width = label.length * 6.5 + 8;
      var x = rect.x + 4;
      var align = 'left';
      if (rect.width < width) {
        if (rect.x + rect.width + width <= cs.x + cs.width) {
          x = rect.x + rect.width + 4;
        } else {
          x = rect.x - 4;
          align = 'right';
        }
      }
      children.push({
        type: 'text', silent: true,
        style: {
          text: label, x: x, y: from[1], align: align, verticalAlign: 'middle',
          fill: '#111', stroke: '#fff', lineWidth: 3, font: '11px system-ui, sans-serif'
        }
      });
    }
    return { type: 'group', children: children };
  }

  // A range chart's place is as tall as its rows (RangeHeight in Go). Every
  // range chart keeps the same margin for its row names, so that the time
  // axes of the steps and of each group line up.
  var rowNames = 230;
  function rangeChart(el, rows, items, tooltip) {
    return init(el, {
      grid: { left: rowNames, right: 24, top: 10, bottom: 40, outerBoundsMode: 'none' },
      tooltip: { trigger: 'item', confine: true, formatter: tooltip },
      xAxis: timeAxis(),
      yAxis: { type: 'category', data: rows, inverse: true, axisLabel: { fontSize: 11, width: rowNames - 12, overflow: 'truncate' } },
      series: [{ type: 'custom', renderItem: renderRange, encode: { x: [1, 2], y: 0 }, data: items, clip: true }]
    });
  }

  // The upgrade's steps, and the probe's outages on a row of their own.
  var stepStyle = {
    succeeded: '#0072B2', violated: fill('#E69F00', 'draining'), failed: fill('#D55E00', 'not-ready'),
    stuck: fill('#777777', 'launching')
  };
  function drawSteps(el) {
    var rows = [];
    var items = [];
    (rep.phases || []).forEach(function (ph) {
      var hop = ph.hop < rep.hops.length ? rep.hops[ph.hop].to : '-';
      var row = rows.length;
      rows.push(hop + ' ' + ph.kind + (ph.name ? ' ' + ph.name : ''));
      items.push({
        value: [row, ph.startSeconds, ph.endSeconds, ph.status + ' ' + clock(ph.endSeconds - ph.startSeconds)],
        itemStyle: { color: stepStyle[ph.status] || '#0072B2' }, phase: ph
      });
    });
    if (rep.probe) {
      var row = rows.length;
      rows.push('probe ' + rep.probe.name);
      rep.probe.outages.forEach(function (o) {
        items.push({ value: [row, o.startSeconds, o.endSeconds, ''], itemStyle: { color: fill('#D55E00', 'draining') }, outage: o });
      });
    }
    if (!rows.length) {
      el.textContent = 'No playbook steps: the scenario ran its script of actions.';
      el.style.height = 'auto';
      return;
    }
    rangeChart(el, rows, items, function (p) {
      var d = p.data;
      if (d.outage) {
        return 'probe failed ' + clock(d.outage.startSeconds) + '–' + clock(d.outage.endSeconds) + '<br>no Ready pod in ' + esc(d.outage.missing.join(', '));
      }
      var ph = d.phase;
      return esc(ph.kind + ' ' + (ph.name || '') + ' ' + (ph.from || '') + ' → ' + (ph.to || '')) + '<br>' + clock(ph.startSeconds) + '–' + clock(ph.endSeconds) + ' ' + esc(ph.status) +
        (ph.probeFailedSeconds ? '<br>probe failed ' + ph.probeFailedSeconds + ' s' : '');
    });
  }

  // One node's life as segments [state, from, to].
  function segments(n) {
    var marks = [['launching', n.launched], ['ready', n.ready], ['cordoned', n.cordoned], ['draining', n.draining]];
    var stop = n.gone === undefined ? end : n.gone;
    var out = [];
    for (var i = 0; i < marks.length; i++) {
      if (marks[i][1] === undefined) {
        continue;
      }
      var next = stop;
      for (var j = i + 1; j < marks.length; j++) {
        if (marks[j][1] !== undefined) {
          next = marks[j][1];
          break;
        }
      }
      out.push([marks[i][0], marks[i][1], Math.max(next, marks[i][1])]);
    }
    return out;
  }

  function drawGroup(el) {
    var name = el.getAttribute('data-group');
    var lives = tl.nodes.filter(function (n) { return n.group === name; });
    if (lives.length) {
      var rows = [];
      var items = [];
      lives.forEach(function (n) {
        var row = rows.length;
        rows.push(n.name.split('.')[0]);
        segments(n).forEach(function (s) {
          items.push({
            value: [row, s[1], s[2], s[0] === 'ready' || s[0] === 'draining' ? minor(n.version) + (s[0] === 'draining' ? ' draining' : '') : ''],
            itemStyle: { color: fill(versionColor(n.version), s[0]) }, node: n, state: s[0]
          });
        });
      });
      rangeChart(el, rows, items, function (p) {
        var d = p.data;
        return esc(d.node.name) + '<br>kubelet ' + esc(d.node.version) + '<br>' + d.state + ' ' + clock(d.value[1]) + '–' + clock(d.value[2]);
      });
      return;
    }
    var g = tl.groups.filter(function (x) { return x.name === name; })[0];
    init(el, {
      grid: { left: 8, right: 20, top: 40, bottom: 40 },
      legend: { type: 'scroll', top: 0 },
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return v + ' nodes'; } },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: 'nodes', nameTextStyle: { align: 'left' }, minInterval: 1 },
      series: g.series.map(function (s) {
        var color = versionColor(s.version);
        return {
          name: minor(s.version) + ' ' + s.state, type: 'line', step: 'end', stack: 'nodes', symbol: 'none',
          lineStyle: { width: 0.5, color: '#333' }, itemStyle: { color: color },
          areaStyle: { color: fill(color, s.state), opacity: 1 }, data: steps(g.t, s.counts)
        };
      })
    });
  }

  function legend() {
    var el = document.getElementById('legend');
    if (!el) {
      return;
    }
    function swatch(text, color, state) {
      var span = document.createElement('span');
      var c = document.createElement('canvas');
      c.width = 28;
      c.height = 14;
      var g = c.getContext('2d');
      var f = fill(color, state);
      g.fillStyle = typeof f === 'string' ? f : g.createPattern(f.image, 'repeat');
      g.fillRect(0, 0, 28, 14);
      span.appendChild(c);
      span.appendChild(document.createTextNode(text));
      el.appendChild(span);
    }
    tl.versions.forEach(function (v) { swatch('kubelet ' + v, versionColor(v), 'ready'); });
    ['launching', 'ready', 'not-ready', 'cordoned', 'draining'].forEach(function (s) { swatch(s, '#555555', s); });
  }

  // Seconds with no Ready pod, as marked areas.
  function zeroAreas(w) {
    var areas = [];
    for (var i = 0; i < w.t.length; i++) {
      if (w.ready[i] === 0 && w.desired[i] > 0) {
        var to = i + 1 < w.t.length ? w.t[i + 1] : end;
        areas.push([{ xAxis: w.t[i] }, { xAxis: to }]);
      }
    }
    return areas;
  }

  function lineSeries(name, t, values, type, extra) {
    var s = { name: name, type: 'line', step: 'end', symbol: 'none', data: steps(t, values), lineStyle: { type: type, width: type === 'solid' ? 2 : 1.5 } };
    for (var k in extra) {
      s[k] = extra[k];
    }
    return s;
  }

  // Step lines over virtual time, with a legend naming each line.
  function lineChart(el, yName, series, grid) {
    grid = grid || { left: 8, right: 20, top: 36, bottom: 40 };
    init(el, {
      grid: grid,
      legend: { top: 0, itemWidth: 22 },
      tooltip: { trigger: 'axis' },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: yName, nameTextStyle: { align: 'left' }, minInterval: 1, min: 0 },
      series: series
    });
  }

  function drawWorkload(el) {
    var w = tl.workloads[+el.getAttribute('data-index')];
    var series = [
      lineSeries('ready', w.t, w.ready, 'solid', {
        color: '#0072B2', areaStyle: { opacity: 0.15 },
        markArea: { silent: true, itemStyle: { color: fill('#D55E00', 'draining'), opacity: 0.35 }, data: zeroAreas(w) }
      }),
      lineSeries('desired', w.t, w.desired, 'dashed', { color: '#333333' })
    ];
    if (w.floor) {
      // -1: before a budget over its pods alone existed.
      var floor = w.floor.map(function (v) { return v < 0 ? null : v; });
      series.push(lineSeries('PDB floor', w.t, floor, 'dotted', { color: '#D55E00' }));
    }
    lineChart(el, '', series, { left: 4, right: 12, top: 28, bottom: 24 });
  }

  function drawAvailability(el) {
    var a = tl.availability;
    lineChart(el, 'count', [
      lineSeries('workloads with no Ready pod', a.t, a.zero, 'solid', { color: '#D55E00', areaStyle: { opacity: 0.15 } }),
      lineSeries('PDBs below their floor', a.t, a.belowFloor, 'dashed', { color: '#CC79A7' }),
      lineSeries('workloads below desired', a.t, a.belowDesired, 'dotted', { color: '#0072B2' })
    ]);
  }

  // How each cause of a drop below a floor is marked: a shape of its own
  // (colour is not the only cue), in the hint's order.
  var causes = [
    { cause: 'node-removed', label: 'node removed', symbol: 'triangle', color: '#D55E00' },
    { cause: 'deleted', label: 'deleted', symbol: 'diamond', color: '#CC79A7' },
    { cause: 'rollout', label: 'rollout', symbol: 'circle', color: '#E69F00' },
    { cause: 'scale-down', label: 'scale-down', symbol: 'rect', color: '#56B4E9' },
    { cause: 'unready', label: 'unready', symbol: 'path://M0,2L2,0L5,3L8,0L10,2L7,5L10,8L8,10L5,7L2,10L0,8L3,5Z', color: '#000000' }
  ];

  // The index of the sample that holds at t: the last at or before it.
  function at(ts, t) {
    var i = 0;
    while (i + 1 < ts.length && ts[i + 1] <= t) {
      i++;
    }
    return i;
  }

  // The spans a budget had fewer healthy pods than its floor, as marked
  // areas: the series keeps every crossing of the floor, so they are exact.
  function belowAreas(p) {
    var areas = [];
    for (var i = 0; i < p.t.length; i++) {
      if (p.healthy[i] < p.desired[i] && (i === 0 || p.healthy[i - 1] >= p.desired[i - 1])) {
        var j = i + 1;
        while (j < p.t.length && p.healthy[j] < p.desired[j]) {
          j++;
        }
        areas.push([{ xAxis: p.t[i] }, { xAxis: j < p.t.length ? p.t[j] : end }]);
      }
    }
    return areas;
  }

  // A budget's drops grouped by cause and instant: one mark each, at the
  // fewest healthy pods it had at that instant.
  function dropMarks(p) {
    var groups = {};
    var order = [];
    (p.drops || []).forEach(function (d) {
      var key = d.cause + '@' + d.t;
      if (!groups[key]) {
        var y = null;
        for (var i = 0; i < p.t.length; i++) {
          if (p.t[i] === d.t && (y === null || p.healthy[i] < y)) {
            y = p.healthy[i];
          }
        }
        if (y === null) {
          y = p.healthy[at(p.t, d.t)];
        }
        groups[key] = { t: d.t, y: y, cause: d.cause, drops: [] };
        order.push(key);
      }
      groups[key].drops.push(d);
    });
    return order.map(function (k) { return groups[k]; });
  }

  function describeDrop(d) {
    var line = esc(d.pod) + ' (' + esc(d.cause) + ')';
    if (d.node) {
      line += ' on ' + esc(d.node);
    }
    line += '<br>&nbsp;&nbsp;by ' + esc(d.by);
    if (d.step) {
      line += '; step ' + esc(d.step);
    }
    return line;
  }

  function drawPDB(el) {
    var p = tl.pdbs[+el.getAttribute('data-index')];
    var marks = dropMarks(p);
    var series = [
      lineSeries('healthy', p.t, p.healthy, 'solid', {
        color: '#0072B2',
        markArea: { silent: true, itemStyle: { color: fill('#D55E00', 'draining'), opacity: 0.35 }, data: belowAreas(p) }
      }),
      lineSeries('floor', p.t, p.desired, 'dashed', { color: '#333333' }),
      // The disruptions allowed, a band from 0: none where it is flat.
      lineSeries('allowed', p.t, p.allowed, 'dotted', { color: '#009E73', areaStyle: { color: '#009E73', opacity: 0.25 } })
    ];
    causes.forEach(function (c) {
      var data = marks.filter(function (m) { return m.cause === c.cause; }).map(function (m) {
        return { value: [m.t, m.y], mark: m, label: { show: m.drops.length > 1, formatter: String(m.drops.length) } };
      });
      if (data.length) {
        series.push({
          name: c.label, type: 'scatter', symbol: c.symbol, symbolSize: 12, z: 5, data: data,
          itemStyle: { color: c.color, borderColor: '#111', borderWidth: 0.8, opacity: 1 },
          label: { position: 'right', fontSize: 10 }
        });
      }
    });
    // Near a mark, its pods: within a hundredth of the run.
    var near = end / 100;
    init(el, {
      grid: { left: 4, right: 12, top: 28, bottom: 24 },
      legend: { top: 0, itemWidth: 18, textStyle: { fontSize: 11 } },
      tooltip: {
        trigger: 'axis', confine: true, formatter: function (params) {
          var x = params.length ? params[0].axisValue : 0;
          var i = at(p.t, x);
          var out = [clock(x) + ': ' + p.healthy[i] + ' healthy, floor ' + p.desired[i] + ', ' + p.allowed[i] + ' allowed'];
          var shown = 0;
          var more = 0;
          marks.forEach(function (m) {
            if (Math.abs(m.t - x) > near) {
              return;
            }
            m.drops.forEach(function (d) {
              if (shown < 8) {
                out.push(clock(d.t) + ' ' + describeDrop(d));
                shown++;
              } else {
                more++;
              }
            });
          });
          if (more) {
            out.push('… and ' + more + ' more (the table lists each)');
          }
          return out.join('<br>');
        }
      },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: '', minInterval: 1, min: 0 },
      series: series
    });
  }

  // Karpenter's allowed count for a pool without a budget is unbounded
  // (math.MaxInt32): drawn as a gap, said in the legend.
  var unbounded = 1e6;
  function drawNodePool(el) {
    var p = tl.nodePools[+el.getAttribute('data-index')];
    var allowed = p.allowed.map(function (v) { return v >= unbounded ? null : v; });
    lineChart(el, 'nodes', [
      lineSeries('disrupting', p.t, p.disrupting, 'solid', { color: '#0072B2', areaStyle: { color: fill('#0072B2', 'draining'), opacity: 0.6 } }),
      lineSeries(allowed.indexOf(null) < 0 ? 'allowed (drift budget)' : 'allowed (drift budget; a gap: unbounded)', p.t, allowed, 'dashed', { color: '#D55E00' })
    ]);
  }

  var draw = { steps: drawSteps, group: drawGroup, workload: drawWorkload, availability: drawAvailability, pdb: drawPDB, nodepool: drawNodePool };
  var places = Array.prototype.slice.call(document.querySelectorAll('[data-chart]'));
  function drawOne(el) {
    if (!el.hasAttribute('data-drawn')) {
      el.setAttribute('data-drawn', '');
      draw[el.getAttribute('data-chart')](el);
    }
  }
  // Every chart, for printing and for tests; it returns how many there are.
  function drawAll() {
    places.forEach(drawOne);
    return charts.length;
  }

  // The charts within a screen of the window are drawn at once, the others
  // as they come near it: a report of a hundred charts opens as fast as one
  // of ten. Their places are sized already (the template sets the height
  // of each range chart), so nothing moves while they draw.
  legend();
  var margin = window.innerHeight;
  places.forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.top < window.innerHeight + margin && r.bottom > -margin) {
      drawOne(el);
    }
  });
  if ('IntersectionObserver' in window) {
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting) {
          observer.unobserve(e.target);
          drawOne(e.target);
        }
      });
    }, { rootMargin: margin + 'px 0px' });
    places.forEach(function (el) {
      if (!el.hasAttribute('data-drawn')) {
        observer.observe(el);
      }
    });
  } else {
    drawAll();
  }
  window.addEventListener('beforeprint', drawAll);
  window.addEventListener('resize', function () {
    charts.forEach(function (c) { c.resize(); });
  });
  window.ladderReport = { drawAll: drawAll };
  // When the page was ready to read, in milliseconds since the navigation
  // began.
  document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));
})();
