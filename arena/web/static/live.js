// A running tournament's page follows its progress without a reload: every data-poll-s seconds the live part
// (progress, standings, format status, seed, newest matches) is fetched again from data-live-url and put in place,
// while the part says data-live (a running or planned tournament, or a cancelled one whose last matches still
// play). The server renders and escapes that HTML; no other script runs on the page.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !live.dataset.running) { return; }
  var url = live.dataset.liveUrl;
  var every = Math.max(1, Number(live.dataset.pollS) || 2) * 1000;
  function poll() {
    fetch(url, { headers: { "Accept": "text/html" }, cache: "no-store" }).then(function (answer) {
      if (!answer.ok) { throw new Error("status " + answer.status); }
      return answer.text();
    }).then(function (html) {
      live.innerHTML = html;
      if (window.arenaCharts) { window.arenaCharts(); }  // charts.js: a wide chart opens on its mark again
      var part = live.querySelector(".live-part");
      live.dataset.updated = String(Date.now());
      if (part && !part.dataset.live) { return; }
      window.setTimeout(poll, every);
    }).catch(function () {
      live.dataset.error = "1";
      window.setTimeout(poll, every * 2);
    });
  }
  window.setTimeout(poll, every);
})();
