// latlab's pages: draws the charts whose data latlab computed (the
// "latlab-data" block): values, and each axis' kind, range, ticks and tick
// labels; the optional extras report_charts.hpp lists. No statistics here,
// and no request of any kind.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("latlab-data").textContent);
  var palette = data.palette;
  var status = { charts: 0, drawn: 0, failed: [], labels: {} };
  window.latlabReport = status;
  document.getElementById("nojs").style.display = "none";
  status.charts = data.charts.length;

  function scale(a, ori) {
    var s = { time: false, range: [a.min, a.max] };
    if (a.log) { s.distr = 4; s.asinh = a.linear_below; }
    if (ori != null) { s.ori = ori; s.dir = ori === 1 ? -1 : 1; }  // categories top down
    return s;
  }

  // latlab's ticks inside the scale's range (all of them until zoomed), with its labels.
  function axis(c, key, label, side, colour) {
    var a = c.axes[key], shown = status.labels[c.id] = status.labels[c.id] || {};
    var longest = Math.max.apply(null, a.labels.map(function (l) { return l.length; }).concat(0));
    var o = {
      scale: key, label: label, side: side, grid: { show: side !== 1 },
      size: side % 2 === 0 ? 50 : Math.max(70, 7 * longest + 20),
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

  function colour_of(s, i) {
    return typeof s.colour === "string" ? s.colour
                                        : palette[(s.colour != null ? s.colour : i) % palette.length];
  }

  // Canvas position of (x, y) on scale `key`, whichever way x runs.
  function at(u, c, x, y, key) {
    var a = u.valToPos(x, "x", true), b = u.valToPos(y, key || "y", true);
    return c.horizontal ? [b, a] : [a, b];
  }

  // Under the series: the shaded band, dashed lines at the gaps, the intervals.
  function underlay(c) {
    return function (u) {
      var ctx = u.ctx, box = u.bbox, xs = u.data[0];
      ctx.save();
      ctx.beginPath();
      ctx.rect(box.left, box.top, box.width, box.height);
      ctx.clip();
      if (c.band) {
        var p = at(u, c, c.axes.x.min, c.band.lo), q = at(u, c, c.axes.x.max, c.band.hi);
        ctx.fillStyle = "#0000000f";
        ctx.fillRect(Math.min(p[0], q[0]), Math.min(p[1], q[1]), Math.abs(q[0] - p[0]),
                     Math.abs(q[1] - p[1]));
      }
      ctx.setLineDash([3 * devicePixelRatio, 3 * devicePixelRatio]);
      ctx.strokeStyle = "#999";
      (c.gaps || []).forEach(function (g) {
        var p = at(u, c, g, c.axes.y.min), q = at(u, c, g, c.axes.y.max);
        ctx.beginPath(); ctx.moveTo(p[0], p[1]); ctx.lineTo(q[0], q[1]); ctx.stroke();
      });
      ctx.setLineDash([]);
      ctx.lineWidth = 2 * devicePixelRatio;
      c.series.forEach(function (s, k) {
        if (s.type !== "interval") return;
        var lo = u.data[s.from + 1], hi = u.data[k + 1];
        ctx.strokeStyle = colour_of(s, k);
        for (var i = 0; i < xs.length; i++) {
          if (lo[i] == null || hi[i] == null) continue;
          var p = at(u, c, xs[i], lo[i], s.scale), q = at(u, c, xs[i], hi[i], s.scale);
          ctx.beginPath(); ctx.moveTo(p[0], p[1]); ctx.lineTo(q[0], q[1]); ctx.stroke();
        }
      });
      ctx.restore();
    };
  }

  function options(c, width, hover) {
    var series = [{ label: c.x_label }], colours = {}, names = c.axes.x.names;
    if (names) {  // a category axis: the legend names the category under the cursor
      series[0].value = function (u, v) { return v == null ? "--" : names[Math.round(v)]; };
    }
    c.series.forEach(function (s, i) {
      var colour = colour_of(s, i), type = s.type || c.type;
      var o = { label: s.label, stroke: colour, width: 1.5, scale: s.scale || "y",
                spanGaps: !!s.span };
      colours[o.scale] = colours[o.scale] || colour;
      if (type === "hist") {
        o.paths = uPlot.paths.stepped({ align: 1 });
        o.fill = colour + "33";
      } else if (type === "points") {
        o.width = 0;
        o.paths = function () { return null; };
        o.points = { show: true, size: s.type ? 7 : 3, fill: colour };  // few or many points
      } else if (type === "interval" || type === "none") {
        o.paths = function () { return null; };
        o.points = { show: false };
      } else {
        o.points = { show: false };
      }
      series.push(o);
    });
    var h = c.horizontal;
    var scales = { x: scale(c.axes.x, h ? 1 : null), y: scale(c.axes.y, h ? 0 : null) };
    var axes = [axis(c, "x", c.x_label, h ? 3 : 2),
                axis(c, "y", c.y_label, h ? 2 : 3, c.axes.y2 && colours.y)];
    if (c.axes.y2) {  // own axes: each side in its series' colour
      scales.y2 = scale(c.axes.y2);
      axes.push(axis(c, "y2", c.y_label, 1, colours.y2));
    }
    var hooks = { drawAxes: [underlay(c)] };
    if (hover) {
      hooks.setCursor = [function (u) {
        var i = u.cursor.idx;
        hover.textContent = i == null ? "" : c.hover[i];
      }];
    }
    return {
      title: c.title, width: width, height: c.height || 260, scales: scales, axes: axes,
      series: series, legend: { live: true }, hooks: hooks
    };
  }

  data.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    if (!el) { status.failed.push(c.id + ": no element"); return; }
    var width = Math.max(320, Math.floor(el.getBoundingClientRect().width) || 600);
    var columns = [c.x].concat(c.series.map(function (s) { return s.values; }));
    var hover = null;
    if (c.hover) {
      hover = document.createElement("p");
      hover.className = "hover";
      el.parentNode.insertBefore(hover, el.nextSibling);
    }
    new uPlot(options(c, width, hover), columns, el);
    el.setAttribute("data-drawn", "1");
    status.drawn += 1;
  });
  document.documentElement.setAttribute("data-latlab-charts", status.drawn + "/" + status.charts);
})();
