// latlab report: draws the charts whose data latlab computed (the
// "latlab-data" block): values, and each axis' kind, range, ticks and tick
// labels. No statistics here, and no request of any kind.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("latlab-data").textContent);
  var palette = data.palette;
  var status = { charts: 0, drawn: 0, failed: [], labels: {} };
  window.latlabReport = status;
  document.getElementById("nojs").style.display = "none";
  status.charts = data.charts.length;

  function scale(a) {
    var s = { time: false, range: [a.min, a.max] };
    if (a.log) { s.distr = 4; s.asinh = a.linear_below; }
    return s;
  }

  // latlab's ticks inside the scale's range (all of them until zoomed), with its labels.
  function axis(c, key, label, side, colour) {
    var a = c.axes[key], shown = status.labels[c.id] = status.labels[c.id] || {};
    var o = {
      scale: key, label: label, side: side, size: side === 2 ? 50 : 70, grid: { show: side !== 1 },
      splits: function (u, i, min, max) {
        return a.ticks.filter(function (v) { return v >= min && v <= max; });
      },
      filter: function (u, splits) { return splits; },  // every tick labelled, log axes too
      values: function (u, splits) {
        return (shown[key] = splits.map(function (v) { return a.labels[a.ticks.indexOf(v)]; }));
      }
    };
    if (colour) o.stroke = colour;
    return o;
  }

  function options(c, width) {
    var series = [{ label: c.x_label }], colours = {};
    c.series.forEach(function (s, i) {
      var colour = palette[(s.colour != null ? s.colour : i) % palette.length];
      var o = { label: s.label, stroke: colour, width: 1.5, scale: s.scale || "y" };
      colours[o.scale] = colours[o.scale] || colour;
      if (c.type === "hist") {
        o.paths = uPlot.paths.stepped({ align: 1 });
        o.fill = colour + "33";
      } else if (c.type === "points") {
        o.width = 0;
        o.paths = function () { return null; };
        o.points = { show: true, size: 3, fill: colour };
      } else {
        o.points = { show: false };
      }
      series.push(o);
    });
    var scales = { x: scale(c.axes.x), y: scale(c.axes.y) };
    var axes = [axis(c, "x", c.x_label, 2), axis(c, "y", c.y_label, 3, c.axes.y2 && colours.y)];
    if (c.axes.y2) {  // own axes: each side in its series' colour
      scales.y2 = scale(c.axes.y2);
      axes.push(axis(c, "y2", c.y_label, 1, colours.y2));
    }
    return {
      title: c.title, width: width, height: 260, scales: scales, axes: axes, series: series,
      legend: { live: true }
    };
  }

  data.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    if (!el) { status.failed.push(c.id + ": no element"); return; }
    var width = Math.max(320, Math.floor(el.getBoundingClientRect().width) || 600);
    var columns = [c.x].concat(c.series.map(function (s) { return s.values; }));
    new uPlot(options(c, width), columns, el);
    el.setAttribute("data-drawn", "1");
    status.drawn += 1;
  });
  document.documentElement.setAttribute("data-latlab-charts", status.drawn + "/" + status.charts);
})();
