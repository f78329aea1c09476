// Taki: pick one of the legal answers the referee lists in the view (arena.v1.TakiView.legal), preferring to play
// a card over drawing, to declare "last card" when it may, and to close a run rather than leave it open to the
// next seat.

export interface TakiPlay {
  card: string;
  color: string;
  close_run: boolean;
  last_card: boolean;
}

/** A TakiAction as @grpc/proto-loader decodes it with `oneofs: true`: `choice` names the field that is set. */
export interface TakiAction {
  choice?: "play" | "draw" | "end_turn" | "react";
  play?: TakiPlay;
  draw?: boolean;
  end_turn?: boolean;
  react?: boolean;
}

export interface TakiView {
  legal: TakiAction[];
  hand: string[];
}

function score(action: TakiAction): number {
  if (action.choice === "play" && action.play) {
    return 10 + (action.play.last_card ? 4 : 0) + (action.play.close_run ? 1 : 0);
  }
  if (action.choice === "end_turn") return 1;
  return 0; // draw
}

/** TAKI_TURN: the best legal answer by the preferences above (the first of the engine's order among equals). */
export function takeTurn(view: TakiView): TakiAction {
  if (view.legal.length === 0) {
    return { draw: true };
  }
  let best = view.legal[0];
  for (const action of view.legal) {
    if (score(action) > score(best)) best = action;
  }
  if (best.choice === "play" && best.play) return { play: best.play };
  if (best.choice === "end_turn") return { end_turn: true };
  return { draw: true };
}

/** TAKI_REACT: always play the +3 Breaker (the +3's player then draws three instead of this seat). */
export function react(): TakiAction {
  return { react: true };
}
