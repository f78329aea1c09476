// A chart wider than its box (a phone: charts keep a width they can be read at, and scroll) opens where it matters:
// on its mark when it has one (a tournament's ratings chart marks the leader's dot), scrolled no further than needed
// so that the bots' names at its left stay in view as far as they can; a chart of several lines at its left, where
// its legend and axis tell the lines apart; else on its right end, where its newest points are (a rating history
// ends at the bot's current rating). live.js calls window.arenaCharts() again after it
// puts a new live part in place. A centred title (the x axis's, "rated matches") that the box cuts at an edge where
// it opens moves to the middle of what is in view (it read "d matches" at 320 px); a tick's number stays.
(function () {
  "use strict";
  var MARGIN = 24;  // px of chart kept beyond the mark
  var PAD = 4;  // px kept between a moved text and the box's edge
  function uncut(box) {
    var room = box.getBoundingClientRect();
    var texts = box.querySelectorAll("svg.chart text[text-anchor='middle']");
    for (var i = 0; i < texts.length; i += 1) {
      var t = texts[i], r = t.getBoundingClientRect(), svg = t.ownerSVGElement;
      var cut = (r.left < room.left && r.right > room.left) || (r.left < room.right && r.right > room.right);
      if (/^[-+]?[0-9.]+$/.test(t.textContent.trim())) { continue; }  /* a tick's number stays at its place */
      var ctm = svg && svg.getScreenCTM();
      if (!cut || !ctm || !ctm.a) { continue; }
      var middle = (room.left + room.right) / 2;  /* its centre there, all of it inside the box */
      middle = Math.max(room.left + PAD + r.width / 2, Math.min(room.right - PAD - r.width / 2, middle));
      var x = Number(t.getAttribute("x")) + (middle - (r.left + r.right) / 2) / ctm.a;
      t.setAttribute("x", x.toFixed(1));
    }
  }
  function scroll(box) {
    if (box.scrollWidth <= box.clientWidth) { return; }
    var mark = box.querySelector(".mark");
    var lines = box.querySelector("svg[data-series]");
    if (!mark && lines && Number(lines.getAttribute("data-series")) > 1) { return; }  /* its legend, at the left */
    if (!mark) { box.scrollLeft = box.scrollWidth; return; }
    var room = box.getBoundingClientRect(), dot = mark.getBoundingClientRect();
    if (dot.left >= room.left && dot.right + MARGIN <= room.right) { return; }
    box.scrollLeft = Math.max(0, box.scrollLeft + dot.right + MARGIN - room.right);
  }
  function show(box) {
    scroll(box);
    if (box.scrollWidth > box.clientWidth) { uncut(box); }
  }
  window.arenaCharts = function () {
    var boxes = document.querySelectorAll(".chart-box");
    for (var i = 0; i < boxes.length; i += 1) { show(boxes[i]); }
  };
  window.arenaCharts();
}());
