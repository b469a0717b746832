// fixvenue console: the one event stream of a browser, shared by its tabs.
// A browser holds at most six HTTP/1.1 connections to a host and a stream
// holds one for as long as it is open: a stream per tab would leave a
// seventh tab hanging. This worker (a SharedWorker; a dedicated Worker
// per tab where a browser has none) follows every topic its tabs show
// over one stream (/stream/<topic>,<topic>,…), opened again when the
// topics change, and hands each tab its topic's updates, the venue's halt
// and whether the stream is live. No dependencies.
"use strict";
const tabs = new Map(); // port -> topic
const last = new Map(); // topic -> its last update (JSON text)
let es = null;
let opened = "";         // the topics of es, or of the stream being retried
let status = { kind: "connecting" };
let halted = null;
let timer = null;
// gone are the topics the venue said it does not have (the stream's
// "unknown" event): the book of an instrument it no longer lists, in a tab
// left open while it restarted on another configuration. They are followed
// no more, and their tabs say so, while the others stay live; a page
// loaded again with one (the venue has it again) follows it again.
const gone = new Set();
function goneStatus(t) {
  const what = t.startsWith("book-") ? "instrument " + t.slice(5) : "page " + t;
  return { kind: "offline", text: "not live: the venue has no " + what + " now; reload the page", why: "the venue's stream does not know " + t };
}
// A tab that crashes, or is killed, says no bye: its topic would be
// followed until the browser closes. Each tab is asked every pingMs
// whether it is still there, and one that has not answered for deadMs is
// dropped (and its topic, unless another tab shows it); one that answers
// after all (a tab paused that long) is followed again.
const pingMs = 2000;
const deadMs = 3 * pingMs;
const heard = new Map(); // port -> when it last spoke (ms)
// The browser reconnects a stream that broke by itself, but not one the
// venue refused (503 at streams_max, 401 once a token is no longer
// configured): that one is retried here every retryMs, and the pages say
// why they are not live (README "Operating the venue").
const retryMs = 5000;

// send gives m to the tabs of topic, or to every tab but those of a gone
// topic.
function send(m, topic) {
  for (const [port, t] of tabs) if (topic === undefined ? !gone.has(t) : t === topic) port.postMessage(m);
}
function setStatus(s) { status = s; send(s); }

// follow opens the stream of the tabs' topics, unless it is open already.
function follow(force) {
  clearTimeout(timer);
  timer = null;
  const shown = new Set(tabs.values());
  for (const t of gone) if (!shown.has(t)) gone.delete(t); // its tabs closed
  const want = [...shown].filter((t) => !gone.has(t)).sort();
  const key = want.join(",");
  if (key === opened && !force) return;
  if (es) es.close();
  es = null;
  opened = key;
  for (const t of [...last.keys()]) if (!want.includes(t)) last.delete(t);
  if (!key) return;
  const url = "/stream/" + want.map(encodeURIComponent).join(",");
  const s = new EventSource(url);
  es = s;
  s.onopen = () => {
    // A stream opens with the venue's halt, if it has halted: a page that
    // showed one before the venue restarted shows it no longer.
    halted = null;
    setStatus({ kind: "open" });
  };
  s.onerror = () => {
    if (s !== es) return;
    if (s.readyState !== EventSource.CLOSED) { setStatus({ kind: "offline", text: "reconnecting…" }); return; }
    refused(url).then((why) => {
      if (s !== es) return;
      setStatus({ kind: "offline", text: "not live: " + why + "; retrying", why: why });
      timer = setTimeout(() => follow(true), retryMs);
    });
  };
  s.addEventListener("halted", (e) => { halted = JSON.parse(e.data).cause; send({ kind: "halted", cause: halted }); });
  s.addEventListener("unknown", (e) => {
    for (const t of JSON.parse(e.data)) {
      gone.add(t);
      last.delete(t);
      send(goneStatus(t), t);
    }
  });
  for (const t of want) {
    s.addEventListener(t, (e) => { last.set(t, e.data); send({ kind: "update", data: e.data }, t); });
  }
}

// refused asks the stream's URL once more for the reason it was refused
// (a stream that opens now is let go at once: follow opens its own).
async function refused(url) {
  const ctl = new AbortController();
  try {
    const r = await fetch(url, { signal: ctl.signal, credentials: "same-origin" });
    if (r.ok) { ctl.abort(); return "the stream was refused"; }
    // The console's refusals are plain text; a cluster node that does not
    // lead answers in the admin API's JSON, whose error names the leader.
    const type = r.headers.get("Content-Type") || "";
    let text = "";
    if (type.startsWith("text/plain")) {
      text = (await r.text()).trim();
    } else if (type.startsWith("application/json")) {
      text = await r.json().then((j) => (typeof j.error === "string" ? j.error : ""), () => "");
    }
    return "HTTP " + r.status + (text ? ": " + text : r.status === 401 ? ": sign in again" : "");
  } catch (e) {
    return "the venue does not answer";
  }
}

// A tab says {topic} when it shows a page, {bye} when it leaves it, and
// {pong, topic} to each ping. One that joins a topic already followed
// gets its last update at once; the stream is opened again, once for the
// changes of a moment, when the topics change.
function attach(port) {
  port.onmessage = (e) => {
    const m = e.data;
    heard.set(port, Date.now());
    if (m.bye) {
      tabs.delete(port);
      heard.delete(port);
    } else if (m.pong && tabs.has(port)) {
      return;
    } else {
      if (!m.pong) gone.delete(m.topic); // a page loaded with it: the venue has it again
      tabs.set(port, m.topic);
      if (gone.has(m.topic)) {
        port.postMessage(goneStatus(m.topic));
      } else {
        if (status.kind !== "connecting") port.postMessage(status);
        if (halted !== null) port.postMessage({ kind: "halted", cause: halted });
        if (last.has(m.topic)) port.postMessage({ kind: "update", data: last.get(m.topic) });
      }
    }
    if (timer === null) timer = setTimeout(() => follow(false), 0);
  };
}

setInterval(() => {
  const now = Date.now();
  let dropped = false;
  for (const port of [...tabs.keys()]) {
    if (now - heard.get(port) > deadMs) {
      tabs.delete(port);
      heard.delete(port);
      dropped = true;
    } else {
      port.postMessage({ kind: "ping" });
    }
  }
  if (dropped && timer === null) timer = setTimeout(() => follow(false), 0);
}, pingMs);

if (typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope) {
  self.onconnect = (e) => attach(e.ports[0]);
} else {
  attach(self);
}
