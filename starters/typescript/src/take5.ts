// Take 5 (6 nimmt!): a small heuristic over the view the referee sends (arena.v1.Take5View). Rules: 104 cards;
// a played card goes to the row whose last card is the highest below it (rules 1-2); the sixth card of a row
// takes the five (rule 3); a card lower than every row end takes a row of the player's choice (rule 4). Fewer
// bullheads is better.

export interface Take5Row {
  cards: number[];
}

export interface Take5View {
  hand: number[];
  rows: Take5Row[];
  resolving_card: number;
  draft_pool: number[];
}

const ROW_CAPACITY = 5;

/** Bullheads of a card, tested in order: 55 -> 7; other multiples of 11 -> 5; multiples of 10 -> 3; other
 * multiples of 5 -> 2; else 1. */
export function bullheads(card: number): number {
  if (card === 55) return 7;
  if (card % 11 === 0) return 5;
  if (card % 10 === 0) return 3;
  if (card % 5 === 0) return 2;
  return 1;
}

function rowBullheads(row: Take5Row): number {
  return row.cards.reduce((sum, c) => sum + bullheads(c), 0);
}

/** The row index a card goes to (rules 1-2), or -1 when it is lower than every row end (rule 4). */
function targetRow(rows: Take5Row[], card: number): number {
  let best = -1;
  rows.forEach((row, i) => {
    const end = row.cards[row.cards.length - 1];
    if (end !== undefined && end < card && (best < 0 || end > rows[best].cards[rows[best].cards.length - 1])) {
      best = i;
    }
  });
  return best;
}

/** TAKE5_CHOOSE_ROW: the row with the fewest bullheads (ties: the lowest index). */
export function chooseRow(view: Take5View): number {
  let best = 0;
  view.rows.forEach((row, i) => {
    if (rowBullheads(row) < rowBullheads(view.rows[best])) best = i;
  });
  return best;
}

/** TAKE5_CHOOSE_CARD: the card that would take the fewest bullheads if it were played alone, ties by the
 * smallest gap to its row's end (the safest place), then the lowest card. */
export function chooseCard(view: Take5View): number {
  let bestCard = view.hand[0];
  let bestCost = Infinity;
  let bestGap = Infinity;
  for (const card of view.hand) {
    const target = targetRow(view.rows, card);
    let cost = 0;
    let gap = 0;
    if (target < 0) {
      cost = Math.min(...view.rows.map(rowBullheads));
      gap = 200 - card; // a low card taking a row: prefer the lowest
    } else {
      const row = view.rows[target];
      cost = row.cards.length >= ROW_CAPACITY ? rowBullheads(row) : 0;
      gap = card - row.cards[row.cards.length - 1];
    }
    if (cost < bestCost || (cost === bestCost && gap < bestGap)) {
      bestCard = card;
      bestCost = cost;
      bestGap = gap;
    }
  }
  return bestCard;
}

/** TAKE5_DRAFT_PICK: the card of the pool with the fewest bullheads, ties by the lowest card. */
export function draftPick(view: Take5View): number {
  return [...view.draft_pool].sort((a, b) => bullheads(a) - bullheads(b) || a - b)[0];
}
