// Package eventstream publishes the venue's events to a NATS JetStream
// stream, every event once and in order, and reads that stream back
// (`fixvenue events tail` and `fixvenue events verify`).
//
// # Where the events come from
//
// The Exporter is not a consumer of the event ring: it follows the journal,
// the source of truth, with a journal.Tailer that reads the records at or
// below the durable sequence, and applies them to a matcher of its own (the
// shadow matcher, configured as the venue's). Replay gives byte-identical
// events (docs/ARCHITECTURE.md, "Determinism"), so the shadow matcher
// produces exactly the venue's events, and only those of durable commands.
// Nothing in the pipeline waits for the exporter and the exporter waits for
// nothing in the pipeline: a slow or absent NATS never delays an
// ExecutionReport nor holds ring space; the export only falls behind
// (fixvenue_export_lag_commands).
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
//
// # Outages and restarts
//
// On each connection the exporter reads the stream's last message and
// continues after it. Events it published but saw no acknowledgement for
// are kept and sent again when the stream ends just before them; otherwise
// (a venue restart, a stream lost or recreated) it rebuilds the shadow
// matcher from the newest snapshot before the stream's last event and the
// journal after it, checks that the journal's event at that position is
// byte for byte the stream's last one, and exports from the next. A stream
// it cannot continue — its last message not written by this exporter
// (ErrForeign), its last message not at the sequence its event names (a
// gap: messages were removed), an event beyond the journal or different
// from the journal's — is never written to: the exporter logs it once,
// counts fixvenue_export_errors_total, retries every Config.Retry, and the
// lag grows. Deleting such a stream makes the exporter re-export everything
// from the journal.
//
// # Limits
//
// The shadow matcher takes as much memory as the venue's matcher (776 MiB
// at the default engine sizes). A rebuild replays the journal from the
// newest snapshot before the stream's end, or from its start without
// snapshots. Events in flight are bounded by export.publish_window, the
// events of one command excepted (a mass cancel is taken whole). The stream
// keeps what its JetStream limits keep; verify needs the whole stream.
package eventstream
