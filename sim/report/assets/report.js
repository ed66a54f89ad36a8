// pipesim report: draws the page's charts with Chart.js from the data block
// the C++ side wrote (<script id="pipesim-charts">), and records on each canvas
// what it drew, so a headless browser's DOM shows that every chart rendered
// and which numbers it holds (tools/report_check.py reads them).
(function () {
  'use strict';
  var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  var VERDICT = {PASS: '#2ca02c', FAIL: '#d62728'};

  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
  }

  function axes(spec, horizontal) {
    var value = {beginAtZero: spec.begin_at_zero !== false, title: {display: !!spec.y_label, text: spec.y_label || ''}};
    var category = {title: {display: !!spec.x_label, text: spec.x_label || ''}};
    return horizontal ? {x: value, y: category} : {x: category, y: value};
  }

  // Bars with their 95% intervals: the interval is a thin floating bar
  // [lo, hi] over the value's bar (Chart.js draws floating bars natively).
  function bars(spec) {
    var d = spec.datasets[0];
    var colors = d.colors || spec.labels.map(function () { return PALETTE[0]; });
    var datasets = [{label: d.name, data: d.values, backgroundColor: colors.map(function (c) { return alpha(c, 0.6); }),
                     borderColor: colors, borderWidth: 1, order: 2}];
    if (d.lo && d.hi) {
      datasets.push({label: '95% CI', data: d.lo.map(function (lo, i) { return [lo, d.hi[i]]; }), grouped: false,
                     barPercentage: 0.06, categoryPercentage: 1, backgroundColor: '#222', order: 1});
    }
    return {type: 'bar', data: {labels: spec.labels, datasets: datasets},
            options: {indexAxis: spec.horizontal ? 'y' : 'x', scales: axes(spec, spec.horizontal)}};
  }

  function histogram(spec) {
    var d = spec.datasets[0];
    return {type: 'bar',
            data: {labels: spec.labels, datasets: [{label: d.name, data: d.values, backgroundColor: alpha(PALETTE[0], 0.6),
                                                    borderColor: PALETTE[0], borderWidth: 1,
                                                    barPercentage: 1, categoryPercentage: 1}]},
            options: {scales: axes(spec, false), plugins: {legend: {display: false}}}};
  }

  // One line per series with its 95% band: the band is the area between two
  // borderless datasets (the lower, then the upper filled down to it).
  function lines(spec) {
    var datasets = [];
    spec.datasets.forEach(function (d, k) {
      var c = PALETTE[k % PALETTE.length];
      datasets.push({label: d.name, data: d.values, borderColor: c, backgroundColor: c, pointRadius: 3, fill: false});
      if (d.lo && d.hi) {
        datasets.push({label: d.name + ' lo', data: d.lo, borderWidth: 0, pointRadius: 0, fill: false, band: true});
        datasets.push({label: d.name + ' hi', data: d.hi, borderWidth: 0, pointRadius: 0, fill: '-1',
                       backgroundColor: alpha(c, 0.15), band: true});
      }
    });
    return {type: 'line', data: {labels: spec.labels, datasets: datasets},
            options: {scales: axes(spec, false),
                      plugins: {legend: {labels: {filter: function (item, data) {
                        return !data.datasets[item.datasetIndex].band; }}}}}};
  }

  // A check's expectation: the estimate's interval beside the allowed range.
  function interval(spec) {
    var d = spec.datasets[0];
    var colors = d.colors || [PALETTE[0], '#888'];
    return {type: 'bar',
            data: {labels: spec.labels, datasets: [{label: d.name, data: d.values, backgroundColor: colors.map(function (c) {
              return alpha(c, 0.6); }), borderColor: colors, borderWidth: 1, barPercentage: 0.5}]},
            options: {indexAxis: 'y', scales: axes(spec, true), plugins: {legend: {display: false}}}};
  }

  var KINDS = {bars: bars, histogram: histogram, lines: lines, interval: interval};

  function ink(canvas) {
    var ctx = canvas.getContext('2d');
    var px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    var n = 0;
    for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) ++n;
    return n;
  }

  function draw(spec) {
    var canvas = document.getElementById(spec.id);
    try {
      var config = KINDS[spec.kind](spec);
      config.options.animation = false;
      config.options.responsive = false;
      config.options.plugins = config.options.plugins || {};
      config.options.plugins.title = {display: true, text: spec.title};
      var chart = new Chart(canvas, config);
      var elements = 0;
      chart.data.datasets.forEach(function (d, i) { elements += chart.getDatasetMeta(i).data.length; });
      canvas.setAttribute('data-elements', String(elements));
      canvas.setAttribute('data-drawn', JSON.stringify(chart.data.datasets.map(function (d) {
        return {label: d.label, data: d.data}; })));
      canvas.setAttribute('data-ink', String(ink(canvas)));
      canvas.setAttribute('data-rendered', 'true');
      return true;
    } catch (e) {
      canvas.setAttribute('data-error', String(e && e.message ? e.message : e));
      return false;
    }
  }

  var specs = JSON.parse(document.getElementById('pipesim-charts').textContent);
  var rendered = 0;
  specs.forEach(function (spec) { if (draw(spec)) ++rendered; });
  document.body.setAttribute('data-charts-rendered', String(rendered));
  document.body.setAttribute('data-charts', String(specs.length));

  // The layout, for the checker: every table, story and chart must fit the
  // page's column (no horizontal scroller inside the page, nothing past its
  // right edge) at the width the page is opened with.
  var column = document.body.getBoundingClientRect().right -
      parseFloat(getComputedStyle(document.body).paddingRight);
  var wide = [];
  document.querySelectorAll('table, pre, figure').forEach(function(el, i) {
    if (el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > column + 1) {
      wide.push(el.tagName.toLowerCase() + ' ' + i + ' (' + Math.round(el.scrollWidth) + ' px)');
    }
  });
  if (document.documentElement.scrollWidth > document.documentElement.clientWidth + 1)
    wide.push('the page itself');
  document.body.setAttribute('data-too-wide', wide.join('; '));
  document.body.setAttribute('data-column-px', String(Math.round(column)));
})();
