// The station's live stream for the pages with board cards (arbiter, board, hall screen).
"use strict";
(function () {
  // EventSource reconnects by itself; the station answers each new connection with "hello"
  // (every board's view: its state and status). What hello does not carry (the records, a
  // board's events) a page reads again at each hello (board.js, display.js).
  QZ.stream = function (handlers) {
    const banner = document.getElementById("conn");
    const es = new EventSource("/api/stream");
    const kinds = ["hello", "state", "status", "event", "alert", "game", "record", "ping"];
    for (const kind of kinds) {
      es.addEventListener(kind, (msg) => {
        let data;
        try { data = JSON.parse(msg.data); } catch (e) { return; }
        QZ.clock.sample(data.station_ts);
        if (banner && !banner.hidden) banner.hidden = true; // (rewriting it is a DOM change: a frame)
        if (handlers[kind]) handlers[kind](data);
      });
    }
    es.addEventListener("error", () => { if (banner && banner.hidden) banner.hidden = false; });
    return es;
  };
})();
