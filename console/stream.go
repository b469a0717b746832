package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// A browser follows its page over Server-Sent Events. Each stream wakes
// UpdatesPerSecond times a second, takes its topic's current update (built
// at most once per wake-up interval and shared by every browser on the
// topic) and sends it when it differs from what that browser got last: so
// changes in between are coalesced, a browser costs at most
// UpdatesPerSecond writes a second, and the only thing a stream holds is
// a reference to the shared update it sent last. Each write has a
// deadline (write_timeout): a browser that stops reading fills its socket
// buffers, the write times out and the stream ends. README "Operating the
// venue" describes the console.

// keepaliveEvery sends a comment on an idle stream, so that proxies keep it
// and a browser that went away is noticed.
const keepaliveEvery = 15 * time.Second

// payload is one topic's last update.
type payload struct {
	at   time.Time
	body []byte
}

// topicBuild returns the builder of a topic's update (false: unknown topic).
func (c *Console) topicBuild(topic string) (func() any, bool) {
	switch topic {
	case "market":
		return func() any { return c.marketView() }, true
	case "sessions":
		return func() any { return c.sessionsView() }, true
	case "latency":
		return func() any { return c.latencyView() }, true
	case "operations":
		return func() any { return c.operationsView() }, true
	}
	if sym, ok := strings.CutPrefix(topic, "book-"); ok {
		if in, ok := c.instrument(sym); ok {
			return func() any { return c.bookView(in) }, true
		}
	}
	return nil, false
}

// current returns a topic's update, built again when the cached one is
// older than one update interval.
func (c *Console) current(topic string, build func() any) []byte {
	interval := time.Second / time.Duration(c.cfg.Settings.UpdatesPerSecond)
	c.payloadMu.Lock()
	defer c.payloadMu.Unlock()
	now := c.cfg.Now()
	p := c.payloads[topic]
	if p != nil && now.Sub(p.at) < interval/2 {
		return p.body
	}
	body, err := json.Marshal(build())
	if err != nil {
		c.log.Error("console: update not encoded", "topic", topic, "err", err)
		body = []byte(`{}`)
	}
	c.payloads[topic] = &payload{at: now, body: body}
	return body
}

// unknownTopicsMax bounds the topics a stream may name that the venue
// does not have (a browser's tabs left open across a restart on another
// configuration): beyond it the stream is refused.
const unknownTopicsMax = 16

// streamTopic is one topic of a stream and the update it sent last.
type streamTopic struct {
	name  string
	event string // "event: <name>\ndata: "
	build func() any
	sent  []byte
}

// handleStream serves /stream/{topics}: one topic, or several separated
// by commas (a comma within a topic, as a symbol may hold one, is sent
// percent-encoded, %2C). A browser follows every page it has open over one stream
// (static/console-worker.js): it may hold only six HTTP/1.1 connections to
// a host, and a stream holds one for as long as it is open. Each update is
// an event named by its topic.
//
// A topic the venue does not have (a tab left open on the book of an
// instrument the venue no longer lists, after a restart on another
// configuration) is named in an "unknown" event that opens the stream,
// and the others are served: refused, it took every tab of the browser
// off the air with it. A stream of no known topic is 404.
func (c *Console) handleStream(w http.ResponseWriter, r *http.Request) {
	var topics []streamTopic
	var unknown []string
	seen := map[string]bool{}
	for _, part := range strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/stream/"), ",") {
		name, err := url.PathUnescape(part)
		if err != nil {
			http.Error(w, "no such stream: "+part, http.StatusNotFound)
			return
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		build, ok := c.topicBuild(name)
		if !ok {
			if unknown = append(unknown, name); len(unknown) > unknownTopicsMax {
				http.Error(w, "no such stream: "+strings.Join(unknown, ","), http.StatusNotFound)
				return
			}
			continue
		}
		topics = append(topics, streamTopic{name: name, event: "event: " + name + "\ndata: ", build: build})
	}
	if len(topics) == 0 {
		http.Error(w, "no such stream: "+strings.Join(unknown, ","), http.StatusNotFound)
		return
	}
	if c.streams.Add(1) > int64(c.cfg.Settings.StreamsMax) {
		c.streams.Add(-1)
		c.refused.Add(1)
		http.Error(w, "too many console streams open (admin.console.streams_max)", http.StatusServiceUnavailable)
		return
	}
	defer c.streams.Add(-1)
	rc := http.NewResponseController(w)
	// The admin server's read and write timeouts bound API calls; a stream
	// lives on, with a deadline on each write instead.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if len(unknown) > 0 {
		names, _ := json.Marshal(unknown)
		if c.write(rc, w, "event: unknown\ndata: ", names, "\n\n") != nil {
			c.dropped.Add(1)
			return
		}
	}
	tick := time.NewTicker(time.Second / time.Duration(c.cfg.Settings.UpdatesPerSecond))
	defer tick.Stop()
	lastWrite := time.Now()
	haltShown := false
	for {
		if !haltShown {
			if err := c.cfg.Ops.Halted(); err != nil {
				// A named event: the page shows its banner (layout.html).
				cause, _ := json.Marshal(map[string]string{"cause": err.Error()})
				if c.write(rc, w, "event: halted\ndata: ", cause, "\n\n") != nil {
					c.dropped.Add(1)
					return
				}
				haltShown = true
			}
		}
		var err error
		for i := range topics {
			tp := &topics[i]
			if body := c.current(tp.name, tp.build); !bytes.Equal(body, tp.sent) {
				if err = c.write(rc, w, tp.event, body, "\n\n"); err != nil {
					break
				}
				tp.sent, lastWrite = body, time.Now()
			}
		}
		if err == nil && time.Since(lastWrite) > keepaliveEvery {
			if err = c.write(rc, w, ": keepalive", nil, "\n\n"); err == nil {
				lastWrite = time.Now()
			}
		}
		if err != nil {
			c.dropped.Add(1)
			c.log.Debug("console: stream dropped (browser not reading)", "topics", r.PathValue("topics"), "remote", r.RemoteAddr, "err", err)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-c.stop:
			return
		case <-tick.C:
		}
	}
}

// write sends one event within the write timeout.
func (c *Console) write(rc *http.ResponseController, w http.ResponseWriter, prefix string, body []byte, suffix string) error {
	if err := rc.SetWriteDeadline(time.Now().Add(c.cfg.Settings.WriteTimeout.Duration)); err != nil {
		return err
	}
	if _, err := w.Write([]byte(prefix)); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if _, err := w.Write([]byte(suffix)); err != nil {
		return err
	}
	return rc.Flush()
}
