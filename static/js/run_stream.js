/* The live trajectory transport: a websocket that reconnects and never hands
 * the same event twice.
 *
 *   const stream = AtelierRunStream.connect({
 *     url: "/ws/runs/42/",          // path or absolute ws(s):// URL
 *     after: 0,                      // last seq already rendered (e.g. server-rendered)
 *     onEvent(event) {},             // {seq, kind, payload, at}, strictly increasing seq
 *     onStatus(state, detail) {},    // "connecting" | "live" | "reconnecting" | "ended" | "closed"
 *   });
 *   stream.close();
 *
 * Reconnects with exponential backoff and jitter, resuming from the last seq it
 * handed to onEvent (?after=N). The server closes with code 1000 once the run's
 * final event is sent; then the stream ends instead of reconnecting. Before a
 * final refusal the server may say why ({type: "closing", message}); onStatus
 * gets it as detail.message. Rendering is the page's job.
 */
(function () {
  "use strict";

  var BASE_DELAY_MS = 500;
  var MAX_DELAY_MS = 15000;
  // The server's final answers: no access (4403), no such run (4404), too many pages open (4429).
  var FORBIDDEN_CODES = { 4403: true, 4404: true, 4429: true };

  function absoluteUrl(url) {
    if (/^wss?:\/\//.test(url)) return url;
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    return scheme + window.location.host + (url.charAt(0) === "/" ? url : "/" + url);
  }

  function withAfter(url, after) {
    var base = url.replace(/([?&])after=\d*&?/, "$1").replace(/[?&]$/, "");
    return base + (base.indexOf("?") === -1 ? "?" : "&") + "after=" + after;
  }

  function connect(options) {
    var url = absoluteUrl(options.url);
    var lastSeq = Math.max(0, parseInt(options.after || 0, 10) || 0);
    var onEvent = options.onEvent || function () {};
    var onStatus = options.onStatus || function () {};
    var attempt = 0;
    var socket = null;
    var timer = null;
    var stopped = false;
    var ended = false;
    var closingMessage = "";

    function status(state, detail) {
      try { onStatus(state, detail); } catch (error) { console.error(error); }
    }

    function open() {
      if (stopped) return;
      status(attempt === 0 ? "connecting" : "reconnecting", { attempt: attempt, after: lastSeq });
      socket = new WebSocket(withAfter(url, lastSeq));
      socket.onopen = function () {
        attempt = 0;
        status("live", { after: lastSeq });
      };
      socket.onmessage = function (message) {
        var data;
        try { data = JSON.parse(message.data); } catch (error) { return; }
        if (data && data.type === "closing") {
          closingMessage = String(data.message || "");
          return;
        }
        if (!data || data.type !== "event" || typeof data.seq !== "number") return;
        if (data.seq <= lastSeq) return; // already handed over: never twice
        lastSeq = data.seq;
        if (data.kind === "status" && data.payload && data.payload.final) ended = true;
        try { onEvent(data); } catch (error) { console.error(error); }
      };
      socket.onclose = function (event) {
        socket = null;
        if (stopped) return;
        if (ended && event.code === 1000) {
          stopped = true;
          status("ended", { seq: lastSeq });
          return;
        }
        if (FORBIDDEN_CODES[event.code]) {
          stopped = true;
          status("closed", { code: event.code, message: closingMessage });
          return;
        }
        schedule();
      };
    }

    function schedule() {
      attempt += 1;
      var ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * Math.pow(2, attempt - 1));
      var delay = ceiling / 2 + Math.random() * (ceiling / 2); // "equal jitter"
      status("reconnecting", { attempt: attempt, delay: Math.round(delay), after: lastSeq });
      timer = window.setTimeout(open, delay);
    }

    open();

    return {
      close: function () {
        stopped = true;
        if (timer) window.clearTimeout(timer);
        if (socket) socket.close(1000);
        status("closed", { seq: lastSeq });
      },
      get lastSeq() { return lastSeq; },
    };
  }

  window.AtelierRunStream = { connect: connect };
})();
