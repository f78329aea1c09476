// A chart wider than its box (a phone: charts keep a width they can be read at, and scroll) opens where it matters:
// on its mark when it has one (a tournament's ratings chart marks the leader's dot), scrolled no further than needed
// so that the bots' names at its left stay in view as far as they can; a chart of several lines at its left, where
// its legend and axis tell the lines apart; else on its right end, where its newest points are (a rating history
// ends at the bot's current rating). live.js calls window.arenaCharts() again after it
// puts a new live part in place.
(function () {
  "use strict";
  var MARGIN = 24;  // px of chart kept beyond the mark
  function show(box) {
    if (box.scrollWidth <= box.clientWidth) { return; }
    var mark = box.querySelector(".mark");
    var lines = box.querySelector("svg[data-series]");
    if (!mark && lines && Number(lines.getAttribute("data-series")) > 1) { return; }  /* its legend, at the left */
    if (!mark) { box.scrollLeft = box.scrollWidth; return; }
    var room = box.getBoundingClientRect(), dot = mark.getBoundingClientRect();
    if (dot.left >= room.left && dot.right + MARGIN <= room.right) { return; }
    box.scrollLeft = Math.max(0, box.scrollLeft + dot.right + MARGIN - room.right);
  }
  window.arenaCharts = function () {
    var boxes = document.querySelectorAll(".chart-box");
    for (var i = 0; i < boxes.length; i += 1) { show(boxes[i]); }
  };
  window.arenaCharts();
}());
