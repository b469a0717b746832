package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/eventstream"
	"github.com/fixvenue/fixvenue/internal/regularfile"
	"github.com/fixvenue/fixvenue/server"
)

// verifyTimeout bounds reading the whole stream in `events verify`.
const verifyTimeout = 10 * time.Minute

// subjectList collects repeated --subject flags.
type subjectList []string

func (s *subjectList) String() string     { return strings.Join(*s, ",") }
func (s *subjectList) Set(v string) error { *s = append(*s, v); return nil }

const eventsUsage = `usage: fixvenue events <command> [options]

commands:
  tail [--from SEQ] [--subject SUBJ]... [--json] [--count N]
                 print the stream's events from SEQ, following new ones (across losses of NATS)
  verify [--data DIR]
                 compare the stream with the journal in DIR (count, last sequence, events hash)

both take --config FILE (the venue's), --nats URL and --stream NAME.
`

func cmdEvents(args []string) int {
	sub, fs, exit, ok := subcommand("events", args, eventsUsage, "tail", "verify")
	if !ok {
		return exit
	}
	cfgPath := fs.String("config", "", "the venue's configuration (export section, instruments)")
	natsURL := fs.String("nats", "", "NATS URL (default: export.nats_url, else the embedded server's export.embedded_addr)")
	stream := fs.String("stream", "", "JetStream stream (default: the configuration's)")
	var (
		from     uint64
		subjects subjectList
		asJSON   bool
		count    int64
		dataDir  string
	)
	switch sub {
	case "tail":
		fs.Uint64Var(&from, "from", 1, "the first event sequence to print")
		fs.Var(&subjects, "subject", "only this subject (wildcards allowed; repeatable)")
		fs.BoolVar(&asJSON, "json", false, "one JSON object per line")
		fs.Int64Var(&count, "count", 0, "stop after this many events (0: follow until interrupted)")
	case "verify":
		fs.StringVar(&dataDir, "data", "", "data directory (default: venue.data_dir of the config)")
	}
	cfg, exit := parseWithConfig("events", fs, args[1:], cfgPath)
	if cfg == nil {
		return exit
	}
	// A negative --count would follow for ever, and a subject NATS cannot
	// take fails the consumer's creation as "no responders".
	if count < 0 {
		fmt.Fprintf(os.Stderr, "fixvenue events tail: --count must be 0 (follow) or more, got %d\n", count)
		return 2
	}
	if sub == "tail" && from == 0 {
		fmt.Fprintf(os.Stderr, "fixvenue events tail: --from must be 1 or more (events are numbered from 1), got 0\n")
		return 2
	}
	for _, subj := range subjects {
		if !natsserver.IsValidSubject(subj) {
			fmt.Fprintf(os.Stderr, "fixvenue events tail: --subject %q is not a NATS subject\n", subj)
			return 2
		}
	}
	if *natsURL != "" {
		// Checked as export.nats_url is: another scheme was dialled as a
		// host name and failed its lookup (exit 1), where the value was
		// the command line's mistake.
		if err := config.CheckNATSURL("--nats", *natsURL); err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue events %s: %v\n", sub, err)
			return 2
		}
	}
	if *stream == "" {
		*stream = cfg.ExportStream()
	}
	if err := exportFilesError(&cfg.Export); err != nil {
		// The configuration's, as a configuration that cannot be read is
		// (loadConfig): no connection could use it.
		fmt.Fprintf(os.Stderr, "fixvenue events %s: %v\n", sub, err)
		return 2
	}
	if err := embeddedPortZero(cfg, *natsURL); err != nil {
		// The command line lacks the address, as it would lack an option
		// (exit 2): a 1 reads to a script as a stream it could not read.
		fmt.Fprintf(os.Stderr, "fixvenue events %s: %v\n", sub, err)
		return 2
	}
	if sub == "verify" {
		if dataDir == "" {
			dataDir = cfg.Venue.DataDir
		}
		cfg.Venue.DataDir = dataDir
		return eventsVerify(cfg, *natsURL, *stream, os.Stdout)
	}
	js, nc, err := dialJetStream(cfg, *natsURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue events: %v\n", err)
		return 1
	}
	defer nc.Close()
	// Interrupted (Ctrl-C) or terminated, a following tail stops and exits
	// 0, as `md watch` does, whatever it waits for (README, "Event stream").
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := &tailer{stream: *stream, from: from, subjects: subjects, asJSON: asJSON, count: count, w: os.Stdout, notes: os.Stderr, nextOn: map[string]uint64{},
		dial: func() (jetstream.JetStream, *nats.Conn, error) { return dialJetStream(cfg, *natsURL) }}
	// Interrupted, the tail ends there, whatever the read in flight
	// returned (a lookup of a deleted stream answers "not found").
	if err := t.run(ctx, js, nc); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "fixvenue events tail: %v\n", err)
		return 1
	}
	return 0
}

// embeddedPortZero refuses to dial the embedded server's address when it
// has port 0 and no URL is given: the system chose the port at the venue's
// start, and dialling port 0 only said "no servers available", as if the
// venue were not running.
func embeddedPortZero(cfg *config.Config, url string) error {
	if url != "" || cfg.Export.NATSURL != "" {
		return nil
	}
	if _, port, err := net.SplitHostPort(cfg.Export.EmbeddedAddr); err == nil && port == "0" {
		return fmt.Errorf("export.embedded_addr %q has port 0: the venue's embedded NATS server listens on a port "+
			"the system chose at its start; give it with --nats (the venue's log names it, event export embedded_nats=, "+
			"as does its --ready-file, nats_url)", cfg.Export.EmbeddedAddr)
	}
	return nil
}

// dialJetStream connects with the configuration's credentials and TLS.
func dialJetStream(cfg *config.Config, url string) (jetstream.JetStream, *nats.Conn, error) {
	hint := ""
	if url == "" {
		url = cfg.Export.NATSURL
	}
	if url == "" {
		if err := embeddedPortZero(cfg, ""); err != nil {
			return nil, nil, err
		}
		url = "nats://" + cfg.Export.EmbeddedAddr
		hint = " (export.embedded_addr"
		if !cfg.Export.Enabled {
			hint += "; the configuration turns the export off, [export] enabled = false: is it the venue's? give its --config, or --nats"
		}
		hint += ")"
	}
	opts, err := server.NATSOptions(&cfg.Export)
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("nats %s%s: %w", url, hint, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return js, nc, nil
}

// errTailDone ends a tail that printed its --count events.
var errTailDone = errors.New("done")

// tailRedialMax bounds the pause between a following tail's attempts to
// reach NATS again.
const tailRedialMax = 5 * time.Second

// tailer is `fixvenue events tail`: it prints the stream's events from
// event sequence from, one by one, following new ones, until ctx ends or
// count events were printed. Without a subject filter it puts each batch's
// parts back in event order (eventstream.Batches); with one, each message's
// events are printed as they come, in order within the subjects. A tail
// that follows outlives its NATS connection (a venue restarted with its
// embedded server, a NATS server restarted): it says so on notes, dials
// again until it is back, and goes on from the message after the last it
// printed whole, so that nothing is printed twice or left out. Over a
// stream deleted or created again, exported again from event 1, it goes on
// by event sequence: from the event after the last printed or, with
// subjects, from the first event the parts of a batch it had not read yet
// can hold, passing over each subject's events it printed.
type tailer struct {
	stream   string
	from     uint64
	subjects []string
	asJSON   bool
	count    int64
	w, notes io.Writer
	dial     func() (jetstream.JetStream, *nats.Conn, error)

	printed int64
	batches eventstream.Batches
	resume  uint64 // the stream sequence to go on from (0: from's batch)
	// next is the event after the highest printed; created is when the
	// stream read was created; replaced is set once it was deleted or
	// created again, until an event is printed.
	next     uint64
	created  time.Time
	replaced bool
	// nextOn is, with subjects, the event after the last printed of each
	// subject; done is, with subjects, the event before which every event
	// of the chosen subjects was printed (t.next may be past events of a
	// batch's parts not read yet).
	nextOn map[string]uint64
	done   uint64
}

func (t *tailer) run(ctx context.Context, js jetstream.JetStream, nc *nats.Conn) error {
	defer func() { nc.Close() }() // the last connection dialled (the first is the caller's to close too)
	for {
		err := t.read(ctx, js)
		if err != nil && ctx.Err() == nil && !nc.IsClosed() && !t.created.IsZero() && !errors.Is(err, errTailDone) {
			// New messages at the sequences after the last read (a gap
			// between batches) may be the first sign of a stream replaced.
			if rerr := eventstream.StreamReplaced(ctx, js, t.stream, t.created); rerr != nil {
				err = rerr
			}
		}
		if ctx.Err() == nil && (errors.Is(err, eventstream.ErrStreamReplaced) || (t.replaced && errors.Is(err, jetstream.ErrStreamNotFound))) {
			// The exporter exports every event again into a stream deleted
			// or created again (eventstream/doc.go, "Outages and
			// restarts"): go on from the event after the last printed
			// once the stream holds it, by event sequence, as the stream
			// sequences start again. With subjects a batch's parts come
			// as they are read, each subject's events in order: the parts
			// not read yet may hold events before t.next, so the read
			// goes on from t.done and passes over, subject by subject,
			// the events printed (nextOn).
			resumeAt := t.next
			if len(t.subjects) > 0 {
				resumeAt = t.done
			}
			t.from, t.resume, t.batches = max(t.from, resumeAt), 0, eventstream.Batches{}
			if !t.replaced {
				fmt.Fprintf(t.notes, "fixvenue events tail: %v; going on from event %d once the stream holds it\n", err, t.from)
			}
			t.replaced = true
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		switch {
		case errors.Is(err, errTailDone):
			return nil
		case err == nil || ctx.Err() != nil || !nc.IsClosed():
			return err
		}
		fmt.Fprintf(t.notes, "fixvenue events tail: lost NATS (%v); dialling again, to go on from stream message %d\n", err, t.resume)
		for wait := 250 * time.Millisecond; ; wait = min(2*wait, tailRedialMax) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			if js, nc, err = t.dial(); err == nil {
				break
			}
		}
		fmt.Fprintf(t.notes, "fixvenue events tail: NATS is back; going on from stream message %d\n", t.resume)
		// The read goes on from the first part of a batch whose last part
		// had not come (t.resume moves past whole batches only): the open
		// batch's parts are read again, so it is dropped, none of its
		// events printed, or its first part read again was taken for a gap.
		t.batches = eventstream.Batches{Next: t.batches.Next}
	}
}

// read follows the stream on js from t.resume until an error.
func (t *tailer) read(ctx context.Context, js jetstream.JetStream) error {
	st, err := js.Stream(ctx, t.stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", t.stream, err)
	}
	created := st.CachedInfo().Created
	if t.resume != 0 && !t.created.IsZero() && !created.Equal(t.created) {
		// Back after a loss of NATS to another stream of the name (a
		// NATS whose store was lost, exported again): its sequences are
		// not the ones t.resume counts.
		prev := t.created
		t.created = created
		return fmt.Errorf("stream %s: %w (created at %s, then at %s)", t.stream, eventstream.ErrStreamReplaced,
			prev.UTC().Format(time.RFC3339Nano), created.UTC().Format(time.RFC3339Nano))
	}
	t.created = created
	if t.resume == 0 {
		t.resume = 1
		if t.from > 1 {
			start, err := eventstream.FindEvent(ctx, js, t.stream, t.from)
			if err != nil {
				return err
			}
			t.resume = start
		}
	}
	subjectOf := map[uint64]string{} // the open batch's events' subjects
	return eventstream.ReadStream(ctx, js, t.stream, t.resume, t.subjects, true, func(m *eventstream.Message) error {
		if len(t.subjects) > 0 {
			for _, ev := range m.Events {
				if ev.EventSeq < t.nextOn[m.Subject] {
					// Printed already: a subject's events ascend, and a stream
					// replaced can give a few messages of the new stream, which
					// begins again at event 1, before the replacement shows.
					continue
				}
				t.nextOn[m.Subject] = ev.EventSeq + 1
				if err := t.print(m.Subject, ev); err != nil {
					return err
				}
			}
			t.resume = m.StreamSeq + 1
			// A batch's parts are in the order of their first events, each
			// part's events in order: the parts after this one hold only
			// events after its first, and the parts before it were read
			// (eventstream/doc.go, "Messages").
			if len(m.Events) > 0 {
				t.done = max(t.done, m.Events[0].EventSeq+1)
			}
			if m.Part == m.Parts {
				t.done = max(t.done, m.Last+1)
			}
			return nil
		}
		for _, ev := range m.Events {
			subjectOf[ev.EventSeq] = m.Subject
		}
		if m.Part == m.Parts {
			// The batch is printed whole by the Add below or refused: the
			// next read starts at the batch after it.
			t.resume = m.StreamSeq + 1
		}
		return t.batches.Add(m, func(ev eventstream.Event) error {
			subj := subjectOf[ev.EventSeq]
			delete(subjectOf, ev.EventSeq)
			return t.print(subj, ev)
		})
	})
}

func (t *tailer) print(subject string, ev eventstream.Event) error {
	if ev.EventSeq < t.from {
		return nil
	}
	if want := max(t.from, t.next); len(t.subjects) == 0 && ev.EventSeq > want {
		// Read whole, the stream gives every event: the ones before this
		// were removed from it (its first messages deleted, or a limit).
		missing := fmt.Sprintf("events %d-%d are", want, ev.EventSeq-1)
		if want == ev.EventSeq-1 {
			missing = fmt.Sprintf("event %d is", want)
		}
		fmt.Fprintf(t.notes, "fixvenue events tail: %s not in the stream (removed from it); going on from event %d\n", missing, ev.EventSeq)
	}
	t.next, t.replaced = max(t.next, ev.EventSeq+1), false
	text, err := core.AppendText(nil, ev.Bytes, 0)
	if err != nil {
		text = []byte("undecodable: " + err.Error())
	}
	if t.asJSON {
		err = json.NewEncoder(t.w).Encode(struct {
			EventSeq uint64 `json:"eventSeq"`
			CauseSeq uint64 `json:"causeSeq"`
			Index    uint32 `json:"index"`
			Subject  string `json:"subject"`
			Text     string `json:"text"`
		}{ev.EventSeq, ev.CauseSeq, ev.Index, subject, string(text)})
	} else {
		_, err = fmt.Fprintf(t.w, "%d %s %s\n", ev.EventSeq, subject, text)
	}
	if err != nil {
		return err
	}
	if t.printed++; t.count > 0 && t.printed >= t.count {
		return errTailDone
	}
	return nil
}

// exportFilesError names the first of the export's credentials and TLS
// files (creds_file, tls_ca_file, tls_cert_file, tls_key_file) that cannot
// be read, nil when each given can. NATS reads them at the connection,
// whose failure read as a NATS that did not answer (exit 1).
func exportFilesError(e *config.Export) error {
	for _, f := range []struct{ key, path string }{{"export.creds_file", e.CredsFile}, {"export.tls_ca_file", e.TLSCAFile},
		{"export.tls_cert_file", e.TLSCertFile}, {"export.tls_key_file", e.TLSKeyFile}} {
		if f.path == "" {
			continue
		}
		if _, err := regularfile.ReadMax(f.path, exportFileBytesMax); err != nil {
			return fmt.Errorf("%s: %w", f.key, err)
		}
	}
	return nil
}

// exportFileBytesMax bounds a credentials or TLS file read by
// exportFilesError: a certificate chain or a creds file is a few KB.
const exportFileBytesMax = 1 << 20

// verified is what `events verify` compares: the stream's summary and the
// journal's, with the hash of the journal's first events as many as the
// stream holds.
type verified struct {
	stream, journal eventstream.Summary
	prefix          uint64
	err             error
}

// eventsVerify compares the stream on NATS with the journal of cfg's data
// directory and prints both. Interrupted (Ctrl-C) or terminated, it stops
// at once, whatever it waits for (NATS, the stream, the journal's replay,
// which has no way to stop), saying that nothing was verified, with exit
// status 1: it ran for up to verifyTimeout, and the signal killed it
// without a word.
func eventsVerify(cfg *config.Config, natsURL, stream string, w io.Writer) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	done := make(chan verified, 1)
	go func() { done <- summarize(ctx, cfg, natsURL, stream, os.Stderr) }()
	var v verified
	select {
	case sig := <-sigs:
		fmt.Fprintf(os.Stderr, "fixvenue events verify: stopped (%v) before the stream and the journal were compared: nothing was verified\n", sig)
		return 1
	case v = <-done:
	}
	if v.err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue events verify: %v\n", v.err)
		return 1
	}
	fmt.Fprintf(w, "stream  %s\njournal %s\n", v.stream, v.journal)
	if err := eventstream.Compare(v.stream, v.journal, v.prefix); err != nil {
		fmt.Fprintf(w, "MISMATCH: %v\n", err)
		return 1
	}
	fmt.Fprintln(w, "OK: the stream holds every event of the journal, in order")
	return 0
}

// summarize reads the stream on NATS and replays the journal of cfg's
// data directory, for eventsVerify.
func summarize(ctx context.Context, cfg *config.Config, natsURL, stream string, progress io.Writer) (v verified) {
	js, nc, err := dialJetStream(cfg, natsURL)
	if err != nil {
		v.err = err
		return v
	}
	defer nc.Close()
	// The journal replays into the events to compare under the
	// configuration's terms: refused, as the journal tools refuse it,
	// when they are not those the journal was written under.
	if _, v.err = server.CheckTermsRecord(cfg); v.err != nil {
		return v
	}
	if v.stream, v.err = eventstream.SummarizeStream(ctx, js, stream, 0); v.err != nil {
		return v
	}
	dir := filepath.Join(cfg.Venue.DataDir, "journal")
	if cfg.Cluster.Enabled() {
		if base, err := cluster.StartsFromSnapshot(dir); err != nil || base {
			v.err = err
			if base {
				v.err = fmt.Errorf("%s starts from a Raft snapshot (the node caught up from one) and holds no event before it: "+
					"verify against another node's configuration", dir)
			}
			return v
		}
	}
	v.journal, v.prefix, v.err = eventstream.SummarizeJournal(dir, server.MatcherConfig(cfg), v.stream.Events)
	if v.err == nil && cfg.Cluster.Enabled() && v.stream.Events > v.journal.Events {
		// A replica writes what the leader replicates to it: a follower,
		// the old leader restarting after a failover among them, may be
		// behind the stream the leader exports. Its journal is replayed
		// again, for up to verifyCatchUpWait, until it holds the stream's
		// events; one still behind then is compared as it is (a mismatch).
		fmt.Fprintf(progress, "fixvenue events verify: the journal is %d events behind the stream (a cluster node catching up?): "+
			"replaying it again for up to %v until it reaches event %d\n", v.stream.Events-v.journal.Events, verifyCatchUpWait, v.stream.Events)
		v.err = pollFor(ctx, verifyCatchUpWait, verifyReplayPoll, func() (bool, error) {
			var err error
			v.journal, v.prefix, err = eventstream.SummarizeJournal(dir, server.MatcherConfig(cfg), v.stream.Events)
			return v.stream.Events <= v.journal.Events, err
		})
	}
	if v.err != nil || v.stream.Events >= v.journal.Events || (v.stream.Events > 0 && v.stream.Hash != v.prefix) {
		return v
	}
	// The stream matches the start of the journal and is behind it. A
	// venue that runs journals on while the stream is read, and the journal
	// replayed after it: the export follows within its batch interval. The
	// stream is read again, for up to verifyCatchUpWait, until it holds
	// the journal's events, and its first as many are compared; one still
	// behind then is behind (a mismatch).
	fmt.Fprintf(progress, "fixvenue events verify: the stream is %d events behind the journal (a running venue?): "+
		"waiting up to %v for the export to reach event %d\n", v.journal.Events-v.stream.Events, verifyCatchUpWait, v.journal.Events)
	v.err = pollFor(ctx, verifyCatchUpWait, verifyCatchUpPoll, func() (bool, error) {
		s, err := eventstream.SummarizeStream(ctx, js, stream, v.journal.Events)
		if err == nil && s.Events == v.journal.Events {
			v.stream = s
			return true, nil
		}
		return false, err
	})
	return v
}

// pollFor runs step every poll until it is done or fails, for at most
// wait; a context ended meanwhile is its error, a wait that passed is
// none (the caller compares what step left).
func pollFor(ctx context.Context, wait, poll time.Duration, step func() (done bool, err error)) error {
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		if done, err := step(); done || err != nil {
			return err
		}
	}
	return nil
}

// verifyCatchUpWait bounds how long `events verify` waits for a stream
// behind the journal to reach it, read again every verifyCatchUpPoll.
const (
	verifyCatchUpWait = 10 * time.Second
	verifyCatchUpPoll = 200 * time.Millisecond
	// verifyReplayPoll paces the replays of a cluster node's journal behind
	// the stream: each replays the whole journal.
	verifyReplayPoll = time.Second
)
