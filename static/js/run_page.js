/* The live run page: renders the trajectory as events stream in over the websocket
 * (window.AtelierRunStream, static/js/run_stream.js).
 *
 * Every piece of model or sandbox text is inserted with textContent, never as
 * HTML: it may come from a prompt-injected model. The markup mirrors
 * templates/creations/_trajectory.html, which renders finished runs.
 */
(function () {
  "use strict";
  var root = document.getElementById("run-page");
  if (!root || !window.AtelierRunStream) return;

  var list = root.querySelector("[data-role=trajectory]");
  var statusBadge = root.querySelector("[data-role=status]");
  var elapsedEl = root.querySelector("[data-role=elapsed]");
  var stepsEl = root.querySelector("[data-role=steps]");
  var tokensEl = root.querySelector("[data-role=tokens]");
  var connectionEl = root.querySelector("[data-role=connection]");
  var reasonEl = root.querySelector("[data-role=reason]");
  var finishedEl = root.querySelector("[data-role=finished]");
  var announcer = root.querySelector("[data-role=announcer]");
  var cancelForm = root.querySelector("[data-role=cancel-form]");
  var talkBox = root.querySelector("[data-role=talk]");
  var artifactsBox = root.querySelector("[data-role=artifacts]");
  // The whole text of an event's field, for one the server had to cut: ".../events/0/field/".
  var eventFieldUrl = root.getAttribute("data-event-field-url") || "";

  var startedAt = Date.parse(root.getAttribute("data-started-at")) || Date.now();
  var finishedAt = null;
  // The stream starts after data-after (0: the first event; later for a long run, whose earlier
  // steps load on demand). Tokens start from the server's total, which counts the usage
  // events up to data-usage-seq; later ones are added as they arrive.
  var replayAfter = Number(root.getAttribute("data-after")) || 0;
  var usageCountedThrough = replayAfter ? Number(root.getAttribute("data-usage-seq")) || 0 : 0;
  var tokens = replayAfter ? Number(root.getAttribute("data-tokens")) || 0 : 0;
  var steps = {};
  var calls = {};
  var artifactsLoaded = false;
  var STATUS_LABELS = {
    queued: "Queued", starting: "Starting", running: "Running", succeeded: "Succeeded", failed: "Failed",
    cancelled: "Cancelled", timed_out: "Timed out", limit_reached: "Limit reached", quota_exceeded: "Quota exceeded"
  };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function announce(text) {
    if (announcer) announcer.textContent = text;
  }

  function bytes(n) {
    if (n >= 1048576) return (n / 1048576).toFixed(1) + " MB";
    return (n / 1024).toFixed(1) + " KB";
  }

  function compact(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
    if (n >= 1e3) return (n / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
    return String(n);
  }

  function clock(seconds) {
    seconds = Math.max(0, Math.floor(seconds));
    var h = Math.floor(seconds / 3600), m = Math.floor((seconds % 3600) / 60), s = seconds % 60;
    var mm = (h ? String(m).padStart(2, "0") : String(m)) + ":" + String(s).padStart(2, "0");
    return h ? h + ":" + mm : mm;
  }

  function tick() {
    var end = finishedAt || Date.now();
    elapsedEl.textContent = clock((end - startedAt) / 1000);
  }

  function nearBottom(node) {
    return node.scrollHeight - node.scrollTop - node.clientHeight < 40;
  }

  function step(number) {
    number = Number(number) || 0;
    if (steps[number]) return steps[number];
    var item = el("li", "step");
    item.setAttribute("data-step", number);
    item.appendChild(el("h3", "step-title", "Step " + number));
    list.appendChild(item);
    steps[number] = { item: item, text: null, reasoning: null, hasMessage: false };
    stepsEl.textContent = String(Math.max(Number(stepsEl.textContent) || 0, number));
    return steps[number];
  }

  function stepText(s) {
    if (!s.text) {
      s.text = el("p", "assistant-text prose");
      var firstCall = s.item.querySelector(".call");
      s.item.insertBefore(s.text, firstCall);
    }
    return s.text;
  }

  function stepReasoning(s) {
    if (!s.reasoning) {
      var box = el("details", "reasoning");
      box.appendChild(el("summary", null, "Reasoning"));
      s.reasoning = el("p", "prose");
      box.appendChild(s.reasoning);
      s.item.insertBefore(box, s.item.children[1] || null);
    }
    return s.reasoning;
  }

  function commandOf(name, args) {
    if (!args || typeof args !== "object") return args ? String(args).slice(0, 2000) : "";
    if (name === "execute_bash") return String(args.command || "");
    if (name === "str_replace_editor") return (String(args.command || "") + " " + String(args.path || "")).trim();
    if (name === "submit") return "";
    return JSON.stringify(args).slice(0, 2000);
  }

  function addCall(p) {
    // An earlier call's output folds away when the next one starts.
    Object.keys(calls).forEach(function (id) { calls[id].details.open = false; });
    var s = step(p.step);
    var box = el("div", "call");
    box.setAttribute("data-call-id", p.call_id || "");
    var head = el("div", "call-head");
    head.appendChild(el("span", "tool-name", p.name));
    var command = commandOf(p.name, p.arguments);
    if (command) head.appendChild(el("code", "command", command));
    var meta = el("span", "call-meta", "running…");
    head.appendChild(meta);
    box.appendChild(head);
    var details = el("details", "output");
    details.open = true;
    details.appendChild(el("summary", null, "Output"));
    var pre = el("pre");
    details.appendChild(pre);
    details.hidden = true;
    box.appendChild(details);
    s.item.appendChild(box);
    calls[p.call_id] = { box: box, meta: meta, details: details, pre: pre, done: false };
    announce("Step " + (p.step || "") + ": " + p.name + (command ? " " + command.slice(0, 80) : ""));
  }

  function appendOutput(p) {
    var call = calls[p.call_id];
    if (!call || call.done) return;
    var follow = nearBottom(call.pre);
    call.details.hidden = false;
    call.pre.appendChild(document.createTextNode(String(p.text || "")));
    if (follow) call.pre.scrollTop = call.pre.scrollHeight;
  }

  function wholeTextLink(seq, field, size) {
    var line = el("p", "small");
    var link = el("a", null, "Show the whole " + field + " (" + bytes(size) + ")");
    link.href = eventFieldUrl.replace(/\/0\/field\/$/, "/" + seq + "/" + field + "/");
    link.target = "_blank";
    link.rel = "noopener";
    line.appendChild(link);
    return line;
  }

  function finishCall(p, seq) {
    var call = calls[p.call_id];
    if (!call) return;
    call.done = true;
    if (typeof p.output === "string") call.pre.textContent = p.output;
    // A very long output is stored cut; the rest is a click away, as on the finished page.
    if (p.overflow && p.overflow.output && eventFieldUrl) {
      call.details.appendChild(wholeTextLink(seq, "output", p.overflow.output.bytes));
    }
    call.details.hidden = !call.pre.textContent;
    var bits = [];
    if (p.exit_code !== null && p.exit_code !== undefined) bits.push("exit " + p.exit_code);
    if (typeof p.duration === "number") bits.push(p.duration.toFixed(1) + " s");
    call.meta.textContent = bits.join(" · ");
    if (p.is_error) call.box.classList.add("call-error");
  }

  function setStatus(status, reason) {
    statusBadge.className = "status status-" + status;
    statusBadge.textContent = STATUS_LABELS[status] || status;
    if (!reasonEl) return;
    // Each status says why, or nothing: a run that starts no longer waits, so its waiting reason goes.
    reasonEl.textContent = reason || "";
    reasonEl.hidden = !reason;
  }

  function loadArtifacts() {
    if (artifactsLoaded || !window.htmx) return;
    artifactsLoaded = true;
    window.htmx.ajax("GET", root.getAttribute("data-artifacts-url"), { target: artifactsBox, swap: "innerHTML" });
  }

  // One case per event kind of creations/events/schema.py, reading only the fields it
  // declares (a test holds this switch to the schema). Not drawn on purpose:
  // tool_result.stream_omitted_bytes (the streamed text says where it was cut) and
  // usage.total_tokens/estimated (the page sums prompt and completion tokens).
  function onEvent(event) {
    var p = event.payload || {};
    switch (event.kind) {
      case "status":
        setStatus(p.status, p.reason);
        if (p.status === "running" && !finishedAt) startedAt = Date.parse(event.at) || startedAt;
        if (p.final) {
          finishedAt = Date.parse(event.at) || Date.now();
          if (p.usage) {
            tokens = (p.usage.prompt_tokens || 0) + (p.usage.completion_tokens || 0);
            tokensEl.textContent = compact(tokens);
            if (p.usage.steps) stepsEl.textContent = String(p.usage.steps);
          }
          if (cancelForm) cancelForm.hidden = true;
          if (talkBox) talkBox.hidden = true;  // nobody would read it now: a refine asks for more
          announce("Run " + (STATUS_LABELS[p.status] || p.status).toLowerCase() + ".");
          tick();
          loadArtifacts();
        }
        break;
      case "step_started":
        step(p.step);
        announce("Step " + p.step + " started.");
        break;
      case "assistant_delta":
        var s1 = step(p.step);
        if (!s1.hasMessage) stepText(s1).appendChild(document.createTextNode(String(p.text || "")));
        break;
      case "reasoning_delta":
        stepReasoning(step(p.step)).appendChild(document.createTextNode(String(p.text || "")));
        break;
      case "assistant_message":
        var s2 = step(p.step);
        s2.hasMessage = true;
        if (p.content) stepText(s2).textContent = String(p.content);
        if (p.reasoning) stepReasoning(s2).textContent = String(p.reasoning);
        break;
      case "tool_call":
        addCall(p);
        break;
      case "tool_output_delta":
        appendOutput(p);
        break;
      case "tool_result":
        finishCall(p, event.seq);
        break;
      case "usage":
        if (event.seq <= usageCountedThrough) break;
        tokens += (Number(p.prompt_tokens) || 0) + (Number(p.completion_tokens) || 0);
        tokensEl.textContent = compact(tokens);
        break;
      case "error":
        var target = p.step ? step(p.step).item : list;
        var note = el("p", "step-error", p.message);
        note.setAttribute("role", "note");
        target.appendChild(note);
        break;
      case "finished":
        if (finishedEl) {
          finishedEl.textContent = "";
          finishedEl.appendChild(el("strong", null, "Finished: "));
          finishedEl.appendChild(document.createTextNode(String(p.message || p.reason || "")));
          finishedEl.hidden = false;
        }
        break;
      case "artifacts":
        loadArtifacts();
        break;
      case "person_message":
        var said = el("p", "person-message");
        said.appendChild(el("strong", null, String(p.author || "") + ": "));
        said.appendChild(document.createTextNode(String(p.text || "")));
        var s3 = step(p.step);
        s3.item.insertBefore(said, s3.item.children[1] || null);
        announce(String(p.author || "Someone") + " told the agent: " + String(p.text || "").slice(0, 80));
        break;
      case "snapshot":
        // Said on the finished page (its note); nothing to draw live.
        break;
    }
  }

  var CONNECTION_LABELS = {
    connecting: "connecting…", live: "live", reconnecting: "reconnecting…", ended: "finished", closed: "closed"
  };

  tick();
  var timer = window.setInterval(function () {
    tick();
    if (finishedAt) window.clearInterval(timer);
  }, 1000);

  window.AtelierRunStream.connect({
    url: root.getAttribute("data-ws-url"),
    after: replayAfter,
    onEvent: onEvent,
    onStatus: function (state, detail) {
      var label = CONNECTION_LABELS[state] || state;
      connectionEl.textContent = detail && detail.message ? label + ": " + detail.message : label;
      root.setAttribute("data-connection", state);
    },
  });
})();
