/* Take 5 board of the match viewer (frames: arena/render/frames/take5.py): the four rows, the cards of the turn
   revealed together and placed lowest first, the rule-4 row choice, who took which row for how many bullheads,
   the bullheads of the hand, the running totals, the hand boundaries; the hands this perspective may see. */
(function () {
  "use strict";
  var V = window.ArenaViewer;

  function bullheads(card) {
    if (card === 55) { return 7; }
    if (card % 11 === 0) { return 5; }
    if (card % 10 === 0) { return 3; }
    if (card % 5 === 0) { return 2; }
    return 1;
  }
  function card(c, extra) {
    var heads = bullheads(c);
    return V.el("span", {"class": "card heads" + heads + (extra ? " " + extra : ""), "data-card": c,
                         "title": heads + " bullhead" + (heads > 1 ? "s" : "")}, String(c));
  }

  V.boards.take5 = function (frame, data) {
    var b = frame.board, box = V.el("div", {"class": "take5"});
    var placed = b.placed;
    var rows = V.el("ol", {"class": "rows", "id": "take5-rows"});
    b.rows.forEach(function (row, r) {
      var li = V.el("li", {"class": "row" + (placed && placed.row === r ? " touched" : ""), "data-row": r},
                    V.el("span", {"class": "row-name"}, "row " + (r + 1)));
      row.forEach(function (c) { li.appendChild(card(c, placed && placed.card === c ? "new" : "")); });
      var heads = row.reduce(function (sum, c) { return sum + bullheads(c); }, 0);
      li.appendChild(V.el("span", {"class": "muted heads-sum"}, heads + " bh"));
      rows.appendChild(li);
    });
    box.appendChild(rows);
    if (b.revealed && b.revealed.length) {
      var rev = V.el("div", {"class": "revealed", "id": "take5-revealed"}, V.el("span", {"class": "label"}, "revealed: "));
      b.revealed.forEach(function (p) {
        var done = placed && p.card <= placed.card;
        rev.appendChild(V.el("span", {"class": "pick" + (done ? " done" : "")}, card(p.card),
                             V.el("small", {}, " seat " + p.seat)));
      });
      box.appendChild(rev);
    }
    if (placed) {
      var how = placed.rule === "extend" ? "goes on row " + (placed.row + 1)
        : placed.rule === "sixth" ? "is the sixth card of row " + (placed.row + 1)
        : "is lower than every row: rule 4, it takes row " + (placed.row + 1);
      var text = V.seatName(data, placed.seat) + "'s " + placed.card + " " + how +
        (placed.taken.length ? " and takes " + placed.taken.join(", ") + " for " + placed.bullheads + " bullheads" : "");
      box.appendChild(V.el("p", {"class": "placed" + (placed.taken.length ? " took" : ""), "id": "take5-placed"}, text));
    }
    if (b.waiting_row) {
      box.appendChild(V.el("p", {"class": "waiting"}, V.seatName(data, b.waiting_row.seat) + "'s " +
        b.waiting_row.card + " is lower than every row end: it chooses a row to take (rule 4)"));
    }
    if (b.hand_end) {
      box.appendChild(V.el("p", {"class": "hand-end", "id": "take5-hand-end"}, "end of hand " + (b.hand_end.hand + 1) +
        ": bullheads " + b.hand_end.penalties.join(" / ") + "; totals " + b.hand_end.totals.join(" / ")));
    }
    if (b.draft_pool && b.draft_pool.length) {
      var pool = V.el("div", {"class": "draft"}, V.el("span", {"class": "label"}, "draft pool: "));
      b.draft_pool.forEach(function (c) { pool.appendChild(card(c)); });
      box.appendChild(pool);
    }
    var table = V.el("table", {"class": "scores", "id": "take5-scores"});
    /* each title has a short form for a phone (arena.css shows one of the two), so all five columns fit 390 px */
    function title(wide, narrow, what) {
      return V.el("th", {"title": what}, V.el("span", {"class": "wide"}, wide), V.el("span", {"class": "narrow"}, narrow));
    }
    table.appendChild(V.el("tr", {}, V.el("th", {}, "seat"), title("cards", "cards", "cards in hand"),
                           title("chosen", "✓", "chosen a card this turn"),
                           title("this hand", "hand", "bullheads taken this hand"),
                           title("total", "total", "bullheads in all")));
    b.totals.forEach(function (total, s) {
      table.appendChild(V.el("tr", {"data-seat": s}, V.el("td", {}, V.seatCell(data, s)),
        V.el("td", {}, String(b.hand_sizes[s])), V.el("td", {}, b.chosen[s] ? "✓" : ""),
        V.el("td", {"class": "penalty"}, String(b.penalties[s])), V.el("td", {"class": "total"}, String(total))));
    });
    box.appendChild(V.el("div", {"class": "scroll"}, table));
    V.hands(box, b.hands, data, card);
    /* what the colours say, for a phone (no hover for the cards' titles) */
    var legend = V.el("p", {"class": "legend muted", "id": "take5-legend"}, "bullheads per card: ");
    [1, 2, 3, 5, 7].forEach(function (h) {
      legend.appendChild(V.el("span", {"class": "chip heads" + h, "title": h + " bullhead" + (h > 1 ? "s" : "")},
                              h + " bh"));
    });
    legend.appendChild(document.createTextNode(" · bh: the bullheads of a row"));
    box.appendChild(legend);
    return box;
  };
}());
