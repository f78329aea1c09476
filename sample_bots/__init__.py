"""Sample Take 5 bots, each a separately runnable process (``python -m sample_bots.NAME --port N``):
``random_bot`` (uniformly random), ``heuristic_bot`` (smallest gap to a non-full row end) and ``montecarlo_bot``
(sampling over the unseen cards; the strongest). Their classes can also be used in-process
(``arena_sdk.play_game``)."""
