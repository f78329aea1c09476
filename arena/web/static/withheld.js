// A finished match whose record is withheld (its tournament still runs): the page asks every 15 s whether the
// record is revealed (the match's JSON at data-summary no longer says "withheld"), then reloads into the viewer.
(function () {
  "use strict";
  var note = document.getElementById("no-frames");
  var url = note && note.getAttribute("data-summary");
  if (!url) { return; }
  var watch = window.setInterval(function () {
    fetch(url, {headers: {"accept": "application/json"}, cache: "no-store"})
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        if (body && !body.withheld) { window.clearInterval(watch); window.location.reload(); }
      })
      .catch(function () { /* asked again at the next tick */ });
  }, 15000);
}());
