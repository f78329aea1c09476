/* Starts the match viewer once the game's board script has registered itself (see viewer.js). */
window.ArenaViewer.start();
