/* The match viewer (arena/web/matches.py): steps through the frames the server cut for one perspective.
   Plain JavaScript, no build step, no inline script (the pages' CSP). Every text goes in with textContent, so a
   bot name or a crafted record cannot inject markup. Each game's board is drawn by static/viewer-<game>.js, which
   registers ArenaViewer.boards[<game id>] = function (frame, data, root). */
(function () {
  "use strict";
  var V = window.ArenaViewer = window.ArenaViewer || {};
  V.boards = V.boards || {};

  /* el("div", {class: "x", "data-seat": 1}, child, "text", ...) */
  V.el = function (tag, attrs) {
    var node = document.createElement(tag);
    var key;
    for (key in attrs || {}) {
      if (Object.prototype.hasOwnProperty.call(attrs, key) && attrs[key] !== null && attrs[key] !== undefined) {
        node.setAttribute(key, String(attrs[key]));
      }
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) { continue; }
      node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    }
    return node;
  };

  V.seatName = function (data, seat) {
    var name = (data.seats || [])[seat];
    return "seat " + seat + (name ? " (" + name + ")" : "");
  };

  /* seatName for a table cell: its line may break before a bot id's @VERSION, never inside it (class "ver") */
  V.seatCell = function (data, seat) {
    var name = String((data.seats || [])[seat] || ""), at = name.lastIndexOf("@");
    if (at <= 0) { return V.el("span", {}, V.seatName(data, seat)); }
    return V.el("span", {}, "seat " + seat + " (" + name.slice(0, at), V.el("wbr", {}),
                V.el("span", {"class": "ver"}, name.slice(at) + ")"));
  };

  /* The hands a perspective may see (board.hands, {seat: cards}), each card drawn by drawCard, into box. */
  V.hands = function (box, hands, data, drawCard) {
    Object.keys(hands || {}).forEach(function (seat) {
      var hand = V.el("div", {"class": "hand", "data-seat": seat}, V.el("span", {"class": "label"},
        V.seatName(data, Number(seat)) + " holds: "));
      hands[seat].forEach(function (c) { hand.appendChild(drawCard(c)); });
      box.appendChild(hand);
    });
  };

  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }

  function actionText(action) {
    if (!action) { return "hidden from this view when it was made"; }  /* a sealed choice: the board shows it once revealed */
    var parts = [];
    for (var key in action) {
      if (Object.prototype.hasOwnProperty.call(action, key)) {
        var value = action[key];
        if (value === true) { parts.push(key.replace(/_/g, " ")); }
        else if (value !== false && value !== null) { parts.push(key.replace(/_/g, " ") + " " + value); }
      }
    }
    return parts.join(", ");
  }

  /* over: the last step of a finished match. Its decision's choice, hidden from this view when it was made (a sealed
     card), is not said to be hidden there: nothing is being chosen any more, and the board shows what came of it. The
     frame holds no more than before (its action stays null), so nothing more is shown. */
  function describe(frame, data, over) {
    var box = V.el("div", {"class": "decision"});
    if (frame.seat === null || frame.seat === undefined) {
      box.appendChild(V.el("span", {}, frame.decision < 0 ? "the table before the first decision" : "the table"));
    } else {
      /* "TAKE5_CHOOSE_CARD" reads "choose card": the game's prefix says nothing on its own page */
      var viewer = document.getElementById("viewer");
      var prefix = String((viewer && viewer.getAttribute("data-game")) || "").toUpperCase() + "_";
      var kind = String(frame.kind || "");
      if (kind.indexOf(prefix) === 0) { kind = kind.slice(prefix.length); }
      var hidden = !frame.action_text && !frame.action;
      var text = V.seatName(data, frame.seat) + ": " + kind.replace(/_/g, " ").toLowerCase() +
        (over && hidden ? "" : " — " + (frame.action_text || actionText(frame.action)));
      /* a later board of one decision (a reveal's placements) shows what it led to: said as its consequence */
      var after = frame.parts > 1 && frame.part > 0;
      box.appendChild(V.el("span", {"class": after ? "what after" : "what"},
        after ? "after " + text + " · step " + (frame.part + 1) + " of " + frame.parts : text));
      if (frame.latency_ms !== null && frame.latency_ms !== undefined) {
        box.appendChild(V.el("span", {"class": "muted"}, " · " + Number(frame.latency_ms).toFixed(1) + " ms"));
      }
      if (frame.source && frame.source !== "bot") {
        box.appendChild(V.el("span", {"class": "source"}, " · " + frame.source + " action"));
      }
    }
    if (frame.note) {
      box.appendChild(V.el("div", {"class": "note"}, "note of " + V.seatName(data, frame.seat) + ": " + frame.note));
    }
    (frame.faults || []).forEach(function (f) {
      var ms = f.latency_ms === null || f.latency_ms === undefined ? "" : ", " + Number(f.latency_ms).toFixed(1) + " ms";
      box.appendChild(V.el("div", {"class": "fault", "data-seat": f.seat},
        "fault: " + f.kind + " of " + V.seatName(data, f.seat) + ms + (f.detail ? " — " + f.detail : "")));
    });
    (frame.forfeits || []).forEach(function (f) {
      box.appendChild(V.el("div", {"class": "fault forfeit", "data-seat": f.seat},
        "forfeit: " + V.seatName(data, f.seat) + " (" + f.reason + ")" + (f.detail ? " — " + f.detail : "")));
    });
    return box;
  }

  V.start = function () {
    var root = document.getElementById("viewer");
    if (!root) { return; }
    var $ = function (id) { return document.getElementById(id); };
    var status = $("v-status"), boardBox = $("v-board"), turnBox = $("v-turn"), scrub = $("v-scrub");
    var frames = [], data = null, index = 0, timer = null;
    var draw = V.boards[root.getAttribute("data-game")];

    /* polled: a live poll's redraw, which leaves the step box alone while the viewer is typing in it */
    function show(i, polled) {
      if (!frames.length) { return; }
      index = Math.max(0, Math.min(frames.length - 1, i));
      var frame = frames[index];
      clear(boardBox);
      var over = index === frames.length - 1 && !root.hasAttribute("data-live") && !data.stopped;  /* the last step */
      var said = describe(frame, data, over);
      if (over) {
        said.appendChild(V.el("strong", {"class": "over", "id": "v-over"}, " · the match is over"));
      }
      boardBox.appendChild(said);
      if (draw) { boardBox.appendChild(draw(frame, data, root)); }
      else { boardBox.appendChild(V.el("pre", {}, JSON.stringify(frame.board, null, 1))); }
      if (!polled || document.activeElement !== turnBox) { turnBox.value = String(index); }
      scrub.value = String(index);
      $("v-count").textContent = "of " + (frames.length - 1) + " · " + frame.position;
      status.textContent = index === frames.length - 1 && data.stopped ? data.stopped : "";
      status.className = index === frames.length - 1 && data.stopped ? "status error" : "status";
      root.setAttribute("data-index", String(index));
      var url = new URL(window.location.href);
      url.searchParams.set("turn", String(index));
      window.history.replaceState(null, "", url.toString());
      var links = document.querySelectorAll("#perspectives a[data-view]");
      for (var k = 0; k < links.length; k++) {  // another perspective opens at this moment too
        var link = new URL(links[k].href, window.location.href);
        link.searchParams.set("turn", String(index));
        links[k].href = link.pathname + link.search;
      }
    }

    function roundStart(i) {
      var r = frames[i].round;
      while (i > 0 && frames[i - 1].round === r) { i--; }
      return i;
    }
    function nextRound() {
      var r = frames[index].round, i = index;
      while (i < frames.length - 1 && frames[i].round === r) { i++; }
      show(i);
    }
    function prevRound() {
      var start = roundStart(index);
      show(start < index ? start : (start > 0 ? roundStart(start - 1) : 0));
    }
    function pause() {
      if (timer !== null) { window.clearInterval(timer); timer = null; }
      $("v-play").textContent = "play";
    }
    function play() {
      if (index >= frames.length - 1) { show(0); }
      pause();
      $("v-play").textContent = "pause";
      timer = window.setInterval(function () {
        if (index >= frames.length - 1) { pause(); } else { show(index + 1); }
      }, Number($("v-speed").value) || 700);
    }

    $("v-start").addEventListener("click", function () { pause(); show(0); });
    $("v-end").addEventListener("click", function () { pause(); show(frames.length - 1); });
    $("v-back").addEventListener("click", function () { pause(); show(index - 1); });
    $("v-next").addEventListener("click", function () { pause(); show(index + 1); });
    $("v-round-back").addEventListener("click", function () { pause(); prevRound(); });
    $("v-round-next").addEventListener("click", function () { pause(); nextRound(); });
    $("v-play").addEventListener("click", function () { if (timer === null) { play(); } else { pause(); } });
    $("v-speed").addEventListener("change", function () { if (timer !== null) { play(); } });
    turnBox.addEventListener("change", function () { pause(); show(parseInt(turnBox.value, 10) || 0); });
    /* Enter jumps and hands the keys back to the board: the arrows, Home, End and Space step again */
    turnBox.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); pause(); show(parseInt(turnBox.value, 10) || 0); turnBox.blur(); }
    });
    scrub.addEventListener("input", function () { pause(); show(parseInt(scrub.value, 10) || 0); });
    document.addEventListener("keydown", function (e) {
      var tag = (e.target && e.target.tagName) || "";
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") { return; }
      if (e.key === "ArrowRight") { pause(); if (e.shiftKey) { nextRound(); } else { show(index + 1); } }
      else if (e.key === "ArrowLeft") { pause(); if (e.shiftKey) { prevRound(); } else { show(index - 1); } }
      else if (e.key === "Home") { pause(); show(0); }
      else if (e.key === "End") { pause(); show(frames.length - 1); }
      else if (e.key === " ") { e.preventDefault(); if (timer === null) { play(); } else { pause(); } }
      else { return; }
    });

    var live = root.getAttribute("data-live") === "1";
    var following = true;  /* live: stay on the newest frame until the viewer steps back */
    var liveNote = document.getElementById("live-note");
    var liveText = liveNote ? liveNote.textContent : "";

    /* a live match whose worker has published nothing for a while: say so instead of looking frozen */
    function staleness(body) {
      if (!liveNote) { return; }
      if (body.stale) {
        liveNote.textContent = "Live, but its worker has sent nothing for " + Math.round(body.age_s) +
          " s: it may have stopped; if so, another worker plays the match again from its start.";
        liveNote.className = "live warning";
        root.setAttribute("data-stale", "1");
      } else if (root.getAttribute("data-stale") === "1") {
        liveNote.textContent = liveText;
        liveNote.className = "live";
        root.removeAttribute("data-stale");
      }
    }

    /* live: the frames from "settled" on may still change; a poll asks for those only and replaces them (the
       frames before stay as they are within one play of the match, "started_at") */
    var settled = 0, playStarted = null;
    function load(first) {
      var url = root.getAttribute("data-frames") + (live && !first ? "&from=" + settled : "");
      /* a poll that hangs is given up after 15 s, so the next one can go out */
      var abort = typeof AbortController === "function" ? new AbortController() : null;
      var giveUp = abort ? window.setTimeout(function () { abort.abort(); }, 15000) : null;
      return fetch(url, {headers: {"accept": "application/json"}, cache: "no-store",
                         signal: abort ? abort.signal : undefined})
        .finally(function () { if (giveUp !== null) { window.clearTimeout(giveUp); } })
        .then(function (response) {
          return response.json().then(function (body) {
            return {ok: response.ok, busy: response.status === 503 || response.status === 429, body: body};
          });
        })
        .then(function (answer) {
          if (!answer.ok) {
            var error = new Error(answer.body.error || "the frames could not be read");
            error.busy = answer.busy;  /* busy building frames, or this reader's share used: asked again */
            throw error;
          }
          var body = answer.body;
          if (body.finished) { return ended(); }
          if (live && !first && (body.started_at !== playStarted || body.first_frame > frames.length)) {
            settled = 0;  /* the match was started again: every frame anew */
            return load(true);
          }
          following = first || index >= frames.length - 1;
          if (live) {
            staleness(body);
            body.frames = frames.slice(0, body.first_frame || 0).concat(body.frames || []);
            settled = body.settled_frames || 0;
            playStarted = body.started_at;
          }
          data = body;
          frames = data.frames || [];
          scrub.max = String(Math.max(0, frames.length - 1));
          turnBox.max = String(Math.max(0, frames.length - 1));
          root.setAttribute("data-frames-count", String(frames.length));
          if (first && !live) { show(parseInt(root.getAttribute("data-turn"), 10) || 0); }
          else if (following && timer === null) { show(frames.length - 1, !first); }
          else { show(index, !first); }
          root.setAttribute("data-ready", "1");
          if (live && body.ended && !over) { return ended(true); }  /* its last frames: the end is shown */
        });
    }
    /* the match followed live has ended: the page of a finished match shows its record, unless that is withheld
       (its tournament still runs): then the frames shown live stay, with a note saying why nothing more comes */
    var over = false;
    /* the page of the finished match, at the step shown now, or at its end when the viewer was following the
       newest step (a reload would keep the ?turn= of the moment the match ended) */
    function reloadFinished() {
      var url = new URL(window.location.href);
      if (!frames.length || index >= frames.length - 1) { url.searchParams.set("turn", "end"); }
      window.location.replace(url.toString());
    }
    function ended(whole) {
      over = true;
      var summary = root.getAttribute("data-frames").split("/live")[0];
      return fetch(summary, {headers: {"accept": "application/json"}, cache: "no-store"})
        .then(function (response) { return response.json(); })
        .then(function (body) {
          if (!(body && body.withheld && frames.length)) { reloadFinished(); return; }
          var sm = body.summary || {}, seats = sm.seats || [];
          var result = seats.map(function (name, k) {
            return name + " " + (sm.scores || [])[k] + " (rank " + (sm.ranks || [])[k] + ")";
          }).join(", ");
          if (liveNote) {
            var why = body.withheld.charAt(0).toUpperCase() + body.withheld.slice(1);
            liveNote.textContent = "This match has ended" + (result ? ": " + result : "") + ". " + why +
              (whole ? ". Shown here: every move of it the public saw, to its end; "
                     : ". What is shown here is what was shown while it was played (its last moves may be missing); ") +
              "this page shows the whole match, every hand, once its record is revealed.";
            liveNote.className = "live ended";
          }
          root.setAttribute("data-ended", "1");
          /* the record is revealed when the tournament ends: then the page becomes the finished match's */
          var watch = window.setInterval(function () {
            fetch(summary, {headers: {"accept": "application/json"}, cache: "no-store"})
              .then(function (response) { return response.json(); })
              .then(function (now) {
                if (now && !now.withheld) { window.clearInterval(watch); reloadFinished(); }
              })
              .catch(function () { /* asked again at the next tick */ });
          }, 15000);
        })
        .catch(reloadFinished);
    }
    function failed(err) {
      status.textContent = "This match cannot be shown: " + err.message;
      status.className = "status error";
      root.setAttribute("data-ready", "error");
    }
    /* one load at a time: an answer that arrived after a newer one would put older frames back */
    var polling = true;
    /* the first load; a 503 (frames busy) or a 429 (too many at once from here) is asked again every 2 s, up to 30
       times, saying so meanwhile */
    function firstLoad(tries) {
      return load(true).catch(function (err) {
        if (!err.busy || tries >= 30) { return failed(err); }
        status.textContent = err.message + " (trying again)";
        return new Promise(function (resolve) { window.setTimeout(resolve, 2000); })
          .then(function () { return firstLoad(tries + 1); });
      });
    }
    firstLoad(0).then(function () { polling = false; });
    if (live) {
      window.setInterval(function () {
        if (polling || over) { return; }
        polling = true;
        load(false)
          .catch(function (err) { status.textContent = "live: " + err.message + " (retrying)"; })
          .then(function () { polling = false; });
      }, 1000);
    }
  };
}());
