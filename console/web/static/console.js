// fixvenue console: renders each page from its first update (the JSON in
// #init) and then from the updates of its topic the browser's one event
// stream brings (console-worker.js). No dependencies.
"use strict";
(function () {
  const $ = (s) => document.querySelector(s);
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function row(cells) {
    const tr = el("tr");
    for (const c of cells) tr.appendChild(c instanceof Node ? c : el("td", "", c));
    return tr;
  }
  const num = (v) => el("td", "n", v);
  const link = (href, text) => { const td = el("td"); const a = el("a", "", text); a.href = href; td.appendChild(a); return td; };
  // fill renders a table's rows, keeping each row whose data did not
  // change since the last update: a button in it stays the node the
  // operator pressed, so a click (press, then release) is not lost to an
  // update in between, as it was when every row was rebuilt several times
  // a second while orders flowed.
  const rowData = new WeakMap();
  function fill(sel, list, fn) {
    const tb = $(sel + " tbody");
    if (!tb) return;
    const kept = new Map();
    for (const tr of tb.children) if (rowData.has(tr)) kept.set(rowData.get(tr), tr);
    const rows = list.map((item) => {
      const data = JSON.stringify(item);
      let tr = kept.get(data);
      kept.delete(data);
      if (!tr) { tr = fn(item); rowData.set(tr, data); }
      return tr;
    });
    // A row kept in its place is not touched (a row taken out of the
    // page, even to be put back, loses the click pressed on it).
    rows.forEach((tr, i) => { if (tb.children[i] !== tr) tb.insertBefore(tr, tb.children[i] || null); });
    while (tb.children.length > rows.length) tb.lastElementChild.remove();
  }
  const statusCell = (s) => el("td", "status s-" + s.toLowerCase(), s);

  // refCell shows the price the change is measured from, labelled.
  function refCell(i) {
    const td = num(i.ref);
    td.title = i.refLabel;
    td.appendChild(el("span", "k", " " + (i.refLabel === "previous close" ? "prev close" : i.refLabel === "first trade" ? "first" : "ref")));
    return td;
  }

  function market(v) {
    fill("#market", v.instruments, (i) => {
      const cls = i.up > 0 ? "n up" : i.up < 0 ? "n down" : "n";
      const tr = row([link("/market/" + encodeURIComponent(i.symbol), i.symbol), statusCell(i.status), el("td", cls, i.last),
        refCell(i), el("td", cls, i.change), el("td", cls, i.changePct), num(i.volume), num(i.trades), num(i.bidQty || ""), num(i.bid),
        num(i.ask), num(i.askQty || "")]);
      tr.dataset.symbol = i.symbol;
      return tr;
    });
  }

  function book(v) {
    const st = $("#status");
    st.textContent = v.status;
    st.className = "status s-" + v.status.toLowerCase();
    const sum = $("#summary");
    sum.replaceChildren();
    for (const [k, val] of [["last", v.last ? v.last + " × " + v.lastQty : "no trade today"], [v.refLabel, v.ref], ["change", v.change ? v.change + " (" + v.changePct + ")" : ""],
      ["volume today", v.volume], ["trades today", v.trades], ["bid", v.bid ? v.bidQty + " @ " + v.bid : "none"], ["ask", v.ask ? v.askQty + " @ " + v.ask : "none"]]) {
      const d = el("div");
      d.appendChild(el("span", "k", k));
      d.appendChild(el("span", "v", val));
      sum.appendChild(d);
    }
    const levels = [];
    for (let i = 0; i < Math.max(v.bids.length, v.asks.length); i++) levels.push([v.bids[i], v.asks[i]]);
    fill("#ladder", levels, ([b, a]) => row([num(b ? b.orders : ""), el("td", "n bid", b ? b.qty : ""), el("td", "n bid px", b ? b.price : ""),
      el("td", "n ask px", a ? a.price : ""), el("td", "n ask", a ? a.qty : ""), num(a ? a.orders : "")]));
    $("#feed").textContent = v.marketData ? "From the market data feed's books, up to sequence " + (v.feedSeq - 1) + "." : "Market data is off: no depth.";
    fill("#trades", v.tape, (t) => row([t.time, num(t.price), num(t.qty), el("td", t.side, t.side)]));
    chart($("#chart"), v.chart);
    $("#daystart").textContent = v.chart.dayStart ? "since the end of day at " + v.chart.dayStart + " UTC" : "since the journal's start";
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // chart draws the trades' prices over time: ticks scaled to the box.
  function chart(box, c) {
    box.replaceChildren();
    const W = 800, H = 240, L = 70, R = 10, T = 10, B = 30;
    box.appendChild(svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B, class: "frame" }));
    const pts = c.points || [];
    if (pts.length === 0) {
      box.appendChild(svg("text", { x: W / 2, y: H / 2, class: "empty", "text-anchor": "middle" }, "no trade yet"));
      return;
    }
    const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
    let lo = c.LowTicks, hi = c.HighTicks;
    if (hi === lo) { lo -= 1; hi += 1; }
    const x = (t) => L + (t - t0) / (t1 - t0) * (W - L - R);
    const y = (p) => T + (hi - p) / (hi - lo) * (H - T - B);
    let d = "";
    pts.forEach((p, i) => { d += (i ? " L" : "M") + x(p[0]).toFixed(1) + " " + y(p[1]).toFixed(1); });
    if (pts.length === 1) d += " L" + (W - R) + " " + y(pts[0][1]).toFixed(1);
    box.appendChild(svg("path", { d: d, class: "line" }));
    box.appendChild(svg("text", { x: L - 6, y: y(c.HighTicks) + 4, "text-anchor": "end" }, c.High));
    box.appendChild(svg("text", { x: L - 6, y: y(c.LowTicks) + 4, "text-anchor": "end" }, c.Low));
    const fmt = (ms) => new Date(ms).toISOString().substring(11, 19);
    box.appendChild(svg("text", { x: L, y: H - 10 }, fmt(t0)));
    box.appendChild(svg("text", { x: W - R, y: H - 10, "text-anchor": "end" }, fmt(pts[pts.length - 1][0])));
  }

  // openAgainstBound is a session's open orders against its bound
  // (open_orders_max), past which its orders are refused: "12 / 262144",
  // "12 / off" with no bound, "–" for a drop-copy session (no orders).
  function openAgainstBound(s) {
    if (s.dropCopy) return "–";
    return s.openOrders + " / " + (s.openOrdersMax > 0 ? s.openOrdersMax : "off");
  }

  function sessions(v) {
    const only = document.body.dataset.comp;
    const list = only ? v.sessions.filter((s) => s.compId === only) : v.sessions;
    // A page left open while the venue restarted without its session says
    // so, rather than showing an empty table as if nothing were wrong.
    const gone = $("#gone");
    if (gone) {
      gone.hidden = list.length > 0;
      gone.textContent = list.length > 0 ? "" : "The venue lists no session " + only + " now.";
    }
    const c = $("#count");
    if (c) c.textContent = v.loggedOn + " of " + v.sessions.length + " logged on";
    fill("#sessions", list, (s) => {
      const state = s.disabled ? "disabled" : s.loggedOn ? "logged on" : "logged off";
      const tr = row([link("/sessions/" + encodeURIComponent(s.compId), s.compId), el("td", "st-" + state.replace(" ", "-"), state),
        s.address, num(s.nextSenderSeq), num(s.nextTargetSeq), num(s.messagesPerSecond), num(s.ordersPerSecond),
        num(s.cancelsPerSecond), num(s.rejectsPerSecond.toFixed(1)), num(s.rejects), num(s.throttleHits), num(openAgainstBound(s))]);
      tr.dataset.comp = s.compId;
      tr.dataset.state = state;
      return tr;
    });
  }

  const colours = ["c0", "c1", "c2", "c3"];
  function latency(v) {
    $("#at").textContent = v.at ? "at " + v.at + " UTC" : "";
    const lines = [];
    for (const s of v.series) {
      for (const [w, d] of [["last minute", s.lastMinute], ["since start", s.sinceStart]]) {
        lines.push({ name: s.name + ", " + w, d: d });
      }
    }
    fill("#latency", lines, (l) => {
      const [path, win] = l.name.split(", ");
      return row([path, win, num(l.d.count), num(l.d.p50 || "–"), num(l.d.p99 || "–"), num(l.d.p999 || "–"), num(l.d.max || "–")]);
    });
    plot($("#plot"), lines);
  }

  // plot draws percentile curves: x is the percentile on the usual
  // log scale of 1/(1-p), y the latency in µs on a log scale.
  function plot(box, lines) {
    box.replaceChildren();
    const W = 800, H = 300, L = 70, R = 30, T = 10, B = 30;
    box.appendChild(svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B, class: "frame" }));
    const xs = (p) => Math.log10(1 / (1 - Math.min(p, 99.999) / 100));
    const xmax = xs(99.999);
    let ymax = 1, ymin = Infinity;
    for (const l of lines) for (const c of l.d.curve) { ymax = Math.max(ymax, c.us); ymin = Math.min(ymin, Math.max(c.us, 0.1)); }
    if (!isFinite(ymin)) ymin = 1;
    const ly = (u) => Math.log10(Math.max(u, 0.1));
    const lo = Math.floor(ly(ymin)), hi = Math.max(Math.ceil(ly(ymax)), lo + 1);
    const x = (p) => L + xs(p) / xmax * (W - L - R);
    const y = (u) => T + (hi - ly(u)) / (hi - lo) * (H - T - B);
    for (let e = lo; e <= hi; e++) {
      box.appendChild(svg("line", { x1: L, x2: W - R, y1: y(10 ** e), y2: y(10 ** e), class: "grid" }));
      box.appendChild(svg("text", { x: L - 6, y: y(10 ** e) + 4, "text-anchor": "end" }, (10 ** e >= 1000 ? 10 ** (e - 3) + " ms" : 10 ** e + " µs")));
    }
    for (const p of [50, 90, 99, 99.9, 99.99, 99.999]) {
      box.appendChild(svg("text", { x: x(p), y: H - 10, "text-anchor": "middle" }, p + "%"));
    }
    let drawn = 0;
    lines.forEach((l, i) => {
      const pts = l.d.curve.filter((c) => c.p < 100);
      box.appendChild(svg("text", { x: L + 10, y: T + 18 + i * 18, class: colours[i % 4] + " legend" }, l.name + (pts.length ? "" : " (no data)")));
      if (pts.length === 0) return;
      let d = "";
      pts.forEach((c, j) => { d += (j ? " L" : "M") + x(c.p).toFixed(1) + " " + y(c.us).toFixed(1); });
      box.appendChild(svg("path", { d: d, class: "curve " + colours[i % 4], "data-points": pts.length }));
      drawn++;
    });
    box.dataset.curves = drawn;
  }

  let pending = null;
  function operations(v) {
    const n = $("#notice");
    n.hidden = !v.notice;
    n.textContent = v.notice;
    const act = (label, what, method, path, body) => {
      const b = el("button", "act", label);
      b.type = "button";
      b.dataset.action = label.toLowerCase();
      b.addEventListener("click", () => ask(what, method, path, body));
      return b;
    };
    fill("#ops-instruments", v.instruments, (i) => {
      const td = el("td");
      const base = "/v1/instruments/" + encodeURIComponent(i.symbol) + "/";
      // A resume lifts a halt, and opens a closed instrument as the admin
      // API's does (README, "The admin API"); an instrument in a call it
      // uncrosses now and opens, ending a volatility auction early, say,
      // or closes, ending a closing call's extension (uncrossTo): offered
      // as what it does there.
      if (i.status === "Halted" || i.status === "Closed") td.appendChild(act("Resume", "Resume " + i.symbol, "POST", base + "resume", {}));
      if (i.uncrossTo) {
        td.appendChild(act("Uncross", "Uncross " + i.symbol + " now (ends its " + (i.auction ? i.auction.replace(/ until .*/, "") : i.status) +
          ": its orders trade at one price, then it is " + i.uncrossTo + ")", "POST", base + "resume", {}));
      }
      if (i.status !== "Halted") td.appendChild(act("Halt", "Halt " + i.symbol, "POST", base + "halt", {}));
      const st = statusCell(i.status);
      if (i.auction) st.appendChild(el("span", "k", " " + i.auction));
      const tr = row([i.symbol, st, td]);
      tr.dataset.symbol = i.symbol;
      return tr;
    });
    // Only what a row shows: its rates change at every update while the
    // session trades, its state and open orders far less often (fill).
    const shown = v.sessions.map((s) => ({ compId: s.compId, loggedOn: s.loggedOn, disabled: s.disabled, openOrders: s.openOrders, openOrdersMax: s.openOrdersMax, dropCopy: s.dropCopy, killed: s.killed }));
    fill("#ops-sessions", shown, (s) => {
      const td = el("td");
      const base = "/v1/sessions/" + encodeURIComponent(s.compId) + "/";
      if (s.loggedOn) td.appendChild(act("Logout", "Log out " + s.compId, "POST", base + "logout", {}));
      td.appendChild(s.disabled ? act("Enable", "Enable " + s.compId, "POST", base + "enable", {})
        : act("Disable", "Disable " + s.compId + " (logs it out and refuses its logons)", "POST", base + "disable", {}));
      if (s.openOrders > 0) td.appendChild(act("Cancel orders", "Cancel the " + s.openOrders + " open orders of " + s.compId, "POST", "/v1/cancel", { session: s.compId }));
      // A drop-copy session has no kill switch (the API refuses both); an
      // order session is offered the one its switch's state allows.
      if (!s.dropCopy) {
        td.appendChild(s.killed ? act("Reset", "Kill switch off for " + s.compId, "POST", "/v1/risk/reset", { session: s.compId })
          : act("Kill", "Kill switch on for " + s.compId + " (cancels its orders and refuses new ones until reset)", "POST", "/v1/risk/kill", { session: s.compId }));
      }
      const state = (s.disabled ? "disabled" : s.loggedOn ? "logged on" : "logged off") + (s.killed ? ", kill switch on" : "");
      const tr = row([s.compId, el("td", "", state), num(openAgainstBound(s)), td]);
      tr.dataset.comp = s.compId;
      return tr;
    });
    fill("#journal", v.journal, (j) => row([num(j.seq), j.time, j.action, j.target, j.result, num(j.count), j.operator]));
  }

  function ask(what, method, path, body) {
    pending = { method: method, path: path, body: body };
    $("#confirm-text").textContent = what + "?";
    $("#confirm").hidden = false;
  }

  // A token an HTTP header cannot carry (beyond Latin-1, or a control
  // character, as a paste may bring) is never sent: fetch would refuse it
  // with an error that reads as if the venue did not answer.
  const unsendableToken = () => /[^\t\x20-\x7e\xa0-\xff]/.test($("#token").value);
  const unsendableText = "the operator token holds a character an HTTP header cannot carry (nothing was sent): type or paste it again";
  // bad shows what went wrong where an action's result goes.
  const bad = (text) => { const out = $("#result"); out.className = "result bad"; out.textContent = text; };

  // callAPI makes one admin API call with the token typed on the page and
  // returns its JSON answer, or null once it has said what went wrong
  // (noAnswer: what to add when the venue did not answer).
  async function callAPI(method, path, body, noAnswer) {
    if (unsendableToken()) {
      bad(unsendableText);
      return null;
    }
    const init = { method: method, headers: { "Authorization": "Bearer " + $("#token").value }, credentials: "omit" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let r, text;
    try {
      r = await fetch(path, init);
      text = await r.text();
    } catch (e) {
      bad("no answer from the venue (" + e.message + "): is it running?" + noAnswer);
      return null;
    }
    let j;
    try {
      j = JSON.parse(text);
    } catch (e) {
      // Not the admin API's JSON (a proxy's or the HTTP server's own page).
      bad("HTTP " + r.status + ": " + (text.trim().substring(0, 200) || r.statusText));
      return null;
    }
    if (!r.ok) {
      bad("HTTP " + r.status + ": " + j.error);
      return null;
    }
    return j;
  }

  async function confirmed() {
    const p = pending;
    pending = null;
    $("#confirm").hidden = true;
    if (!p) return;
    // No answer: the venue stopped, or the connection broke. The call may
    // or may not have been journaled: the journal list says.
    const j = await callAPI(p.method, p.path, Object.assign({ reason: $("#reason").value }, p.body),
      " The journal list below shows whether the action was taken before you try again.");
    if (!j) return;
    const done = j.action + ": " + j.result + " by " + j.operator + " (journal seq " + j.seq + ", count " + (j.count ?? j.cancelled) + ")" +
      (j.order ? ": order " + j.order.order_id + " of " + j.order.session + " in " + j.order.instrument : "");
    // A cancel of one order reads the session's list again, if one is shown.
    if (j.order && listed !== "") await listOrders(listed);
    const out = $("#result");
    out.className = "result ok";
    out.textContent = done;
  }

  // cancelOrder asks to cancel the order the form names: by OrderID (in
  // the session given, or any), or by a ClOrdID of the session's. The
  // admin API checks what it is given; the form only says what is missing.
  function cancelOrder() {
    const session = $("#co-session").value.trim(), clOrdID = $("#co-clordid").value.trim(), orderID = $("#co-orderid").value.trim();
    if (orderID !== "" && clOrdID !== "") return bad("name the order by its OrderID or by its ClOrdID, not both (nothing was sent)");
    if (orderID !== "") {
      const body = { order_id: orderID };
      if (session !== "") body.session = session;
      return ask("Cancel order " + orderID + (session !== "" ? " of " + session : ""), "POST", "/v1/orders/cancel", body);
    }
    if (clOrdID === "" || session === "") return bad("name the order: its OrderID, or its session and a ClOrdID it had (nothing was sent)");
    ask("Cancel the order " + clOrdID + " of " + session, "POST", "/v1/orders/cancel", { session: session, cl_ord_id: clOrdID });
  }

  // listOrders shows the first 100 open orders of the form's session
  // (GET /v1/sessions/{session}/orders, with the token typed above), each
  // with a Cancel of its own; fetched when asked and again after each
  // cancel of an order, not with every update: it walks the venue's open
  // orders.
  let listed = "";
  async function listOrders(session) {
    const note = $("#co-listed"), table = $("#co-orders");
    if (session === "") return bad("name the session whose orders to show (nothing was sent)");
    const j = await callAPI("GET", "/v1/sessions/" + encodeURIComponent(session) + "/orders?limit=100", undefined, "");
    if (!j) return;
    listed = session;
    note.hidden = false;
    note.textContent = j.session + ": " + j.total + " open order" + (j.total === 1 ? "" : "s") +
      (j.total > j.orders.length ? ", the first " + j.orders.length + " listed" : "") + " (as of " + new Date().toISOString().substring(11, 19) + " UTC)";
    const tb = $("#co-orders tbody");
    tb.replaceChildren(...j.orders.map((o) => {
      const td = el("td");
      const b = el("button", "act", "Cancel");
      b.type = "button";
      b.dataset.action = "cancel";
      b.addEventListener("click", () => ask("Cancel order " + o.order_id + (o.cl_ord_id ? " (" + o.cl_ord_id + ")" : "") + " of " + j.session + " (" + o.side + " " + o.leaves_qty + " " + o.instrument +
        (o.price ? " at " + o.price : "") + ")", "POST", "/v1/orders/cancel", { order_id: o.order_id, session: j.session }));
      td.appendChild(b);
      const tr = row([num(o.order_id), o.cl_ord_id || "–", o.instrument, o.side + (o.stop_waiting ? " (stop, waiting)" : ""), num(o.price || "–"), num(o.leaves_qty), td]);
      tr.dataset.order = o.order_id;
      return tr;
    }));
    table.hidden = j.orders.length === 0;
  }

  const topic = document.body.dataset.topic || "";
  const render = topic === "market" ? market : topic.startsWith("book-") ? book : topic === "sessions" ? sessions
    : topic === "latency" ? latency : topic === "operations" ? operations : null;
  if (!render) return;
  if (topic === "operations") {
    $("#confirm-yes").addEventListener("click", confirmed);
    $("#co-go").addEventListener("click", cancelOrder);
    $("#co-list").addEventListener("click", () => listOrders($("#co-session").value.trim()));
    $("#confirm-no").addEventListener("click", () => { pending = null; $("#confirm").hidden = true; });
  }
  const init = $("#init");
  if (init) render(JSON.parse(init.textContent));
  const live = $("#live");
  let updates = 0;
  const offline = (text, why) => { live.textContent = text; live.title = why || ""; live.className = "live off"; };
  // Updates come from the browser's one stream, which console-worker.js
  // keeps for all its tabs: a stream per tab would hold one of the six
  // connections a browser keeps to a host, and a seventh tab would hang.
  function hub(m) {
    switch (m.kind) {
      case "open":
        live.textContent = "live"; live.title = ""; live.className = "live on";
        $("#halted").hidden = true;
        break;
      case "offline":
        offline(m.text, m.why);
        break;
      case "halted":
        $("#halted-cause").textContent = m.cause; $("#halted").hidden = false;
        break;
      case "update":
        updates++; document.body.dataset.updates = updates; render(JSON.parse(m.data));
        break;
    }
  }
  const worker = "/static/console-worker.js";
  const port = typeof SharedWorker === "function" ? new SharedWorker(worker).port : new Worker(worker);
  // The worker pings each tab, so that one that crashed (and said no bye)
  // is no longer followed; a page left does not answer.
  let left = false;
  port.onmessage = (e) => {
    if (e.data.kind === "ping") {
      if (!left) port.postMessage({ pong: true, topic: topic });
      return;
    }
    hub(e.data);
  };
  port.postMessage({ topic: topic });
  // A page left is no longer followed; one the browser brings back from
  // its cache is again.
  addEventListener("pagehide", () => { left = true; port.postMessage({ bye: true }); });
  addEventListener("pageshow", (e) => { if (e.persisted) { left = false; port.postMessage({ topic: topic }); } });
})();
