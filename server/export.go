package server

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/eventstream"
)

// exportState is the event export's part of a Server (README.md, "Event
// stream"): a tap that copies the matcher's events off the event ring, an
// exporter that publishes them (both off the order path), and the
// embedded NATS server when the configuration asks for one.
type exportState struct {
	tap      *eventstream.Tap
	exporter *eventstream.Exporter
	embedded *eventstream.Embedded
	stop     chan struct{}
	done     chan struct{}
	tapDone  chan struct{}
	running  bool // the exporter's goroutine was started
}

// natsConnectTimeout bounds a connection attempt to NATS.
const natsConnectTimeout = 2 * time.Second

// buildExport prepares the exporter; the embedded NATS server starts here
// too, so that a port already taken fails the start.
func (s *Server) buildExport() error {
	cfg := s.cfg
	if !cfg.Export.Enabled {
		return nil
	}
	x := &exportState{}
	url := cfg.Export.NATSURL
	if cfg.Export.Embedded() {
		emb, err := eventstream.StartEmbedded(cfg.Export.EmbeddedAddr, filepath.Join(cfg.Venue.DataDir, "nats"))
		if err != nil {
			return fmt.Errorf("export.embedded_addr: %w", err)
		}
		x.embedded = emb
		url = emb.URL()
	}
	opts, err := NATSOptions(&cfg.Export)
	if err != nil {
		x.close()
		return err
	}
	subj := eventstream.Subjects{Prefix: cfg.Export.SubjectPrefix, Venue: cfg.ExportVenue(), Symbols: map[uint32]string{}}
	seen := make(config.SubjectTokens, len(s.instruments))
	for _, in := range s.instruments {
		subj.Symbols[in.ID] = in.Symbol
		// Only a journal written with export off can hold both: the
		// venue refuses the second listing while export is on.
		if other := seen.Add(in.Symbol); other != "" {
			s.log.Warn("event export: two instruments share their subjects (export turns '.', '*' and '>' into '_'); "+
				"a consumer of one gets the other's events too, told apart by their instrument ids",
				"symbol", in.Symbol, "other", other, "token", config.SubjectToken(in.Symbol))
		}
	}
	connect := func() (*nats.Conn, error) {
		if x.embedded != nil {
			url = x.embedded.URL()
		}
		return nats.Connect(url, opts...)
	}
	// The tap is a gating consumer of the event ring that only copies
	// (eventstream/doc.go, "Where the events come from").
	_, tapSeq := s.pipe.AddEventConsumer()
	p := s.pipe
	x.tap, err = eventstream.NewTap(eventstream.TapSource{Ring: p.Events, Sequence: tapSeq, SeqBase: p.SeqBase(),
		Applied: func() int64 { return int64(p.SeqBase()) + p.MatcherSequence() }}, cfg.Export.TapEvents)
	if err != nil {
		x.close()
		return err
	}
	journalDir := filepath.Join(cfg.Venue.DataDir, "journal")
	var base func() (*core.Matcher, uint64, error)
	if cfg.Cluster.Enabled() {
		// A replica that caught up from a Raft snapshot holds no command
		// before it: a new leader's catch-up starts from that state.
		base = func() (*core.Matcher, uint64, error) { return cluster.Base(journalDir, MatcherConfig(cfg)) }
	}
	x.exporter, err = eventstream.New(eventstream.Config{
		JournalDir: journalDir, SnapshotsFrom: s.snapshotsFrom, Base: base,
		NewMatcher: func() (*core.Matcher, error) { return core.NewMatcher(MatcherConfig(cfg)) },
		Durable:    s.pipe.Durable().Load, Tap: x.tap,
		Connect: connect, Subjects: subj, Stream: cfg.ExportStream(),
		Format: eventstream.Format(cfg.Export.Format), Window: cfg.Export.PublishWindow, Poll: cfg.Export.BatchInterval.Duration,
		Logger: s.log, Registerer: s.registry,
	})
	if err != nil {
		x.close()
		return err
	}
	s.export = x
	return nil
}

// NATSOptions are the connection options of the configuration: no
// reconnection of its own (the exporter reconnects and reads the stream's
// end first), credentials and TLS.
func NATSOptions(e *config.Export) ([]nats.Option, error) {
	opts := []nats.Option{nats.Name("fixvenue"), nats.NoReconnect(), nats.Timeout(natsConnectTimeout)}
	switch {
	case e.CredsFile != "":
		opts = append(opts, nats.UserCredentials(e.CredsFile))
	case e.User != "":
		opts = append(opts, nats.UserInfo(e.User, e.Password))
	case e.Token != "":
		opts = append(opts, nats.Token(e.Token))
	}
	if e.TLSCAFile != "" {
		opts = append(opts, nats.RootCAs(e.TLSCAFile))
	}
	if e.TLSCertFile != "" {
		opts = append(opts, nats.ClientCert(e.TLSCertFile, e.TLSKeyFile))
	}
	if e.TLSCAFile != "" || e.TLSCertFile != "" || strings.HasPrefix(e.NATSURL, "tls://") {
		opts = append(opts, nats.Secure(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	return opts, nil
}

// startExportTap runs the tap's copier, with the pipeline: it gates the
// event ring, so it must run whenever the matcher does.
func (s *Server) startExportTap() {
	x := s.export
	if x == nil {
		return
	}
	x.stop, x.done = make(chan struct{}), make(chan struct{})
	x.tapDone = make(chan struct{})
	go func() {
		defer close(x.tapDone)
		x.tap.Run(x.stop, eventstream.TapPollDefault)
	}()
}

// startExport runs the exporter on its own goroutine.
func (s *Server) startExport() {
	x := s.export
	if x == nil {
		return
	}
	x.running = true
	go func() {
		defer close(x.done)
		x.exporter.Run(x.stop)
	}()
	var embedded any = false
	if x.embedded != nil {
		// Its address, which an embedded_addr of port 0 leaves to the
		// system, is where `events tail` and other consumers dial.
		embedded = x.embedded.URL()
	}
	s.log.Info("event export", "stream", s.cfg.ExportStream(), "format", s.cfg.Export.Format, "embedded_nats", embedded)
}

// stopExport stops the exporter, then the embedded server.
func (s *Server) stopExport() {
	if x := s.export; x != nil {
		if x.stop != nil {
			close(x.stop)
			<-x.tapDone
			if x.running {
				<-x.done
			}
		}
		x.close()
	}
}

func (x *exportState) close() {
	if x.embedded != nil {
		x.embedded.Stop()
	}
}

// EmbeddedNATS is the embedded NATS server, or nil (tests stop and start it).
func (s *Server) EmbeddedNATS() *eventstream.Embedded {
	if s.export == nil {
		return nil
	}
	return s.export.embedded
}

// ExportLag is the number of durable commands not yet in the stream (-1: export off).
func (s *Server) ExportLag() int64 {
	if s.export == nil {
		return -1
	}
	return s.export.exporter.Lag()
}
