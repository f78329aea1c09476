/* Taki board of the match viewer (frames: arena/render/frames/taki.py): the discard pile and the leading card,
   the colour and symbol to follow, the run, the +2 stack, the direction, every seat's card count and stairs
   stage, the events of the decision (plays, +3 Breaker reactions, draws with their reason); the hands this
   perspective may see. */
(function () {
  "use strict";
  var V = window.ArenaViewer;
  var COLORS = {R: "red", Y: "yellow", G: "green", B: "blue"};

  var COLORLESS = {"SUPERTAKI": 1, "KING": 1, "+3": 1, "BREAKER": 1, "CHCOLOR": 1};

  function card(token) {
    token = String(token);
    var color = COLORLESS[token] ? "wild" : (COLORS[token.charAt(0)] || "wild");
    return V.el("span", {"class": "tcard " + color, "data-card": token}, String(token));
  }
  function eventText(e, data) {
    var who = e.seat === null || e.seat === undefined ? "" : V.seatName(data, e.seat) + " ";
    switch (e.kind) {
      case "lead": return "the first leading card is " + e.card;
      case "return": return e.card + " is put back into the draw pile";
      case "play": return who + "plays " + e.card + (e.color ? " (" + e.color + ")" : "") +
        (e.closed ? ", closing the run" : "") + (e.declared ? ", last card!" : "");
      case "break": return who + "breaks the +3 with a Breaker";
      case "end": return who + "ends its turn" + (e.closed ? " (run closed)" : "");
      case "draw": return who + "draws " + e.count + " (" + e.reason + ")";
      case "skip": return who + "is skipped (Stop)";
      case "reshuffle": return e.count + " cards reshuffled into the draw pile";
      case "stage": return who + "moves to stage " + e.count;
      case "win": return who + "wins";
      case "cap": return "the turn cap ends the game after " + e.count + " turns";
      default: return who + e.kind;
    }
  }

  V.boards.taki = function (frame, data) {
    var b = frame.board, box = V.el("div", {"class": "taki"});
    var table = V.el("div", {"class": "table"});
    var pile = V.el("div", {"class": "discard", "id": "taki-discard"}, V.el("span", {"class": "label"},
      "discard (" + b.discard_size + "): "));
    b.discard.forEach(function (t, i) {
      var c = card(t);
      if (i === b.discard.length - 1) { c.setAttribute("id", "taki-leading"); c.classList.add("leading"); }
      pile.appendChild(c);
    });
    table.appendChild(pile);
    var facts = V.el("dl", {"class": "facts", "id": "taki-facts"});
    function fact(name, value, id) { facts.appendChild(V.el("dt", {}, name)); facts.appendChild(V.el("dd", {"id": id}, value)); }
    fact("follow", (COLORS[b.follow_color] || b.follow_color) + " / " + b.follow_symbol, "taki-follow");
    fact("direction", b.direction > 0 ? "↻ ascending seats" : "↺ descending seats", "taki-direction");
    if (b.winner === null || b.winner === undefined) { fact("to play", V.seatName(data, b.current), "taki-current"); }
    fact("draw pile", String(b.draw_pile), "taki-draw-pile");
    if (b.stack) { fact("+2 stack", "draw " + b.stack, "taki-stack"); }
    if (b.run) {
      fact("run", (COLORS[b.run.color] || b.run.color) + " by " + V.seatName(data, b.run.seat) + ", " + b.run.cards +
        " card(s)" + (b.run.open ? ", left open" : "") + (b.run.continued ? ", continued" : ""), "taki-run");
    }
    if (b.winner !== null && b.winner !== undefined) { fact("winner", V.seatName(data, b.winner), "taki-winner"); }
    table.appendChild(facts);
    box.appendChild(table);
    var counts = V.el("table", {"class": "scores", "id": "taki-counts"});
    counts.appendChild(V.el("tr", {}, V.el("th", {}, "seat"), V.el("th", {}, "cards"),
                            b.stages.length ? V.el("th", {}, "stage") : null));
    b.counts.forEach(function (n, s) {
      counts.appendChild(V.el("tr", {"data-seat": s, "class": s === b.current ? "current" : ""},
        V.el("td", {}, V.seatCell(data, s)), V.el("td", {"class": "count"}, String(n)),
        b.stages.length ? V.el("td", {}, String(b.stages[s])) : null));
    });
    box.appendChild(V.el("div", {"class": "scroll"}, counts));
    if (b.events.length) {
      var list = V.el("ul", {"class": "events", "id": "taki-events"});
      b.events.forEach(function (e) { list.appendChild(V.el("li", {"class": "ev-" + e.kind}, eventText(e, data))); });
      box.appendChild(list);
    }
    V.hands(box, b.hands, data, card);
    return box;
  };
}());
