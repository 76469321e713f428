// latlab report: draws the charts whose data latlab computed (the
// "latlab-data" block). No statistics here, and no request of any kind.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                 "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79"];
  var status = { charts: 0, drawn: 0, failed: [] };
  window.latlabReport = status;
  document.getElementById("nojs").style.display = "none";
  var data = JSON.parse(document.getElementById("latlab-data").textContent);
  status.charts = data.charts.length;

  function options(c, width) {
    var series = [{ label: c.x_label }];
    c.series.forEach(function (s, i) {
      var color = palette[i % palette.length];
      var o = { label: s.label, stroke: color, width: 1.5 };
      if (c.type === "hist") {
        o.paths = uPlot.paths.stepped({ align: 1 });
        o.fill = color + "33";
      } else if (c.type === "points") {
        o.width = 0;
        o.paths = function () { return null; };
        o.points = { show: true, size: 3, fill: color };
      } else {
        o.points = { show: false };
      }
      series.push(o);
    });
    return {
      title: c.title, width: width, height: 260,
      scales: { x: { time: false } },
      axes: [{ label: c.x_label }, { label: c.y_label, size: 70 }],
      series: series,
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
