// A chart wider than its box (a phone: charts keep a width they can be read at, and scroll) opens on its right end,
// where its newest points are (a rating history ends at the bot's current rating).
(function () {
  "use strict";
  var boxes = document.querySelectorAll(".chart-box");
  for (var i = 0; i < boxes.length; i += 1) {
    if (boxes[i].scrollWidth > boxes[i].clientWidth) { boxes[i].scrollLeft = boxes[i].scrollWidth; }
  }
}());
