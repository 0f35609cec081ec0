"""Fair play on a shared server: seeds that do not reveal hands (:mod:`.seeds`), who a client is
(:mod:`.clients`), request-rate limits and the live-games cap (:mod:`.limits`) and the AI CPU budget
(:mod:`.budget`).  Everything is kept in Redis, so every API process and worker agrees."""
