// Package eventstream publishes the venue's events to a NATS JetStream
// stream, every event once and in order, and reads that stream back
// (`fixvenue events tail` and `fixvenue events verify`).
//
// # Where the events come from
//
// The exporter publishes the venue's own event bytes, as the matcher wrote
// them; it runs no matcher while it keeps up. A Tap is a gating consumer
// of the pipeline's event ring that only copies: every TapPollDefault it
// copies the published events into a bounded buffer (export.tap_events
// entries, TapEventsDefault) with their ring sequence and their index
// among their command's events, and releases the ring slots at once. It
// polls rather than parking on the ring, so the matcher has no further
// consumer to wake, and it never waits for the exporter: when its buffer
// is full it drops the event (fixvenue_export_tap_dropped_total). The
// exporter takes an event off the tap once its command is durable
// (Config.Durable), never before. Stream event n is ring sequence
// n-1-runBase, where runBase is the number of events before this run: 0
// for a run that started on an empty journal, otherwise learnt by a
// catch-up.
//
// Nothing in the pipeline waits for the exporter and the exporter waits
// for nothing in the pipeline: a slow or absent NATS never delays an
// ExecutionReport nor holds ring space; the export only falls behind
// (fixvenue_export_lag_commands). Publishing is pipelined: up to
// export.publish_window events are in flight, their acks taken oldest
// first at each poll (Config.Poll) rather than one wake-up per ack.
//
// # Catching up from the journal
//
// When the tap cannot give the next event (after a restart the stream
// ends before the run's first event; the tap dropped events; the stream
// lost acknowledged events), the exporter catches up: it builds a matcher
// of its own configured as the venue's, loads the newest snapshot before
// the event to continue after, applies the journal's durable commands
// after it (journal.Tailer) and publishes the events it produces, byte for
// byte the venue's (docs/ARCHITECTURE.md, "Determinism"). It hands over to
// the tap, and drops that matcher, at the first event the tap still holds:
// by ring sequence when runBase is known, else at the first event of the
// next command to apply, which fixes runBase (fixvenue_export_catching_up,
// fixvenue_export_catchups_total).
//
// # Messages
//
// One message per event, on the subject <prefix>.<venue>.trades.<SYMBOL>
// (Fill), <prefix>.<venue>.status (TradingStatusChanged) or
// <prefix>.<venue>.orders.<SYMBOL> (every other event; "_" for an event of
// no instrument). The payload is the SBE event (header and block, as the
// matcher wrote it) or, with format json, {"eventSeq", "causeSeq", "index",
// "text" (venue.AppendText), "sbe" (the same bytes in base64)}. Headers:
// Fixvenue-Event-Seq (1 for the journal's first event, +1 per event),
// Nats-Msg-Id (the same number, for JetStream's duplicate window),
// Fixvenue-Cause-Seq (the command's journal seq), Fixvenue-Event-Index (the
// event's place among its command's events) and Fixvenue-Schema
// ("venue/<schema id>/<version>/<format>").
//
// The stream (created when missing, file storage, subjects
// <prefix>.<venue>.>) holds event n at stream sequence n: each publish
// carries Nats-Expected-Last-Sequence = n-1, so JetStream refuses a message
// that would not continue the stream. The stream can therefore never get a
// gap, a duplicate or a foreign message from the exporter, whatever happens
// to the connection.
// # Outages and restarts
//
// On each connection the exporter reads the stream's last message and
// continues after it. Events it published but saw no acknowledgement for
// are kept and sent again when the stream ends just before them;
// otherwise (a venue restart, a stream lost or recreated) it catches up
// from the journal, checks that the journal's event at the stream's last
// position is byte for byte the stream's last one, and exports from the
// next. A stream it cannot continue — its last message not written by
// this exporter (ErrForeign), its last message not at the sequence its
// event names (a gap: messages were removed), an event beyond the journal
// or different from the journal's — is never written to: the exporter
// logs it once, counts fixvenue_export_errors_total, retries every
// Config.Retry, and the lag grows. Deleting such a stream makes the
// exporter re-export everything from the journal.
//
// # Limits
//
// The tap takes export.tap_events × 272 bytes (17 MiB at the default).
// A catch-up's matcher takes as much memory as the venue's (776 MiB at the
// default engine sizes) while the catch-up lasts; it replays the journal
// from the newest snapshot before the stream's end, or from its start
// without snapshots. Events in flight are bounded by
// export.publish_window. The stream keeps what its JetStream limits keep;
// verify needs the whole stream.
package eventstream
