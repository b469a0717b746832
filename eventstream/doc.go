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
// (fixvenue_export_lag_commands). Publishing is batched and pipelined: at
// each poll (Config.Poll, export.batch_interval, PollDefault) the exporter
// takes every durable event the tap holds and publishes them as batches
// (see "Messages"), up to export.publish_window events in flight; a
// batch's one ack is taken at a later poll rather than one wake-up per ack.
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
// fixvenue_export_catchups_total). A cluster replica that caught up from a
// Raft snapshot holds no command before it (cluster/doc.go, "Raft
// snapshots"): with no journal snapshot to start from, its catch-up starts
// from that snapshot's matcher (Config.Base), so a new leader restored so
// continues the stream; a stream that ends before that snapshot (an export
// far behind) is one this replica cannot continue, and says so.
//
// # Messages
//
// Events go out in batches of consecutive events: up to BatchEventsMax
// events, all the durable ones the tap holds at a poll. A batch is one
// message per subject (at most BatchPartsMax; the batch ends before an
// event that would need one more), holding that subject's events of the
// batch in order; its parts are published in the order of their first
// events. The subjects are <prefix>.<venue>.trades.<SYMBOL> (Fill),
// <prefix>.<venue>.status (TradingStatusChanged, InstrumentAdded) and
// <prefix>.<venue>.orders.<SYMBOL> (every other event; "_" for an event
// of no instrument). In <SYMBOL> '.', '*', '>' and white space, which
// NATS reads as separators and wildcards, are '_' (config.SubjectToken):
// BRK.A's subjects end in BRK_A, so with export on the venue refuses to
// list BRK_A beside it (at load and when listed at runtime), or a symbol
// whose token is the events of no instrument's (_, *, >), and an
// older journal holding both is named in the start's log. Headers of
// every message:
//
//   - Fixvenue-Batch: "<first>-<last>", the batch's event sequences (1 for
//     the journal's first event, +1 per event);
//   - Fixvenue-Part: "<part>/<parts>", from 1;
//   - Fixvenue-Cause-Seq and Fixvenue-Event-Index: the command seq of the
//     batch's first event and its index among that command's events;
//   - Fixvenue-Stream-Seq: the stream sequence the message was published
//     for;
//   - Fixvenue-Schema: "venue/<schema id>/<version>/<format>/batch";
//   - Nats-Msg-Id: "<first>-<last>/<part>", for JetStream's duplicate
//     window.
//
// The payload (format sbe) is, per event: its event sequence (uint64), its
// index among its command's events (uint32), both little-endian, then the
// SBE event (header and block, as the matcher wrote it; its length is in
// its header, its command seq is its first field). With format json it is
// a JSON array of {"eventSeq", "causeSeq", "index", "text"
// (core.AppendText: venue.AppendText, a removed risk limit's value read
// as none), "sbe" (the same bytes in base64)}. DecodeMessage
// reads both. A reader that wants every event in order puts a batch's
// parts back together (Batches: `fixvenue events tail` without a subject
// filter, `fixvenue events verify`); a reader of some subjects gets their
// events in order message by message. A stream written one message per
// event (schema without "/batch") is foreign to this exporter.
//
// The stream (created when missing, file storage, subjects
// <prefix>.<venue>.>) holds the batches in order, each batch's parts
// together. Every message carries Nats-Expected-Last-Sequence = its own
// sequence - 1, so JetStream refuses a message that would not continue the
// stream: the stream can never get a gap, a duplicate or a foreign message
// from the exporter, whatever happens to the connection. A stream keeps
// its last sequence when it is purged or its last message deleted, so the
// first message of each batch also carries
// Nats-Expected-Last-Subject-Sequence = its sequence - 1 with
// Nats-Expected-Last-Subject-Sequence-Subject = <prefix>.<venue>.>: the
// stream's last message must still be there (NATS 2.11 and later; with an
// older server the exporter leaves both out and finds such a stream only
// when it next connects). JetStream checks it with a look-up over the
// stream's subjects (two per instrument), once per batch, not per event. Only a batch's
// last part asks for an ack (the parts before it go without a reply
// subject): it is stored only if the parts before it were, since each
// message also carries Nats-Expected-Last-Msg-Id, the Nats-Msg-Id of the
// message before it (none for a stream's first): a foreign message that
// took a refused part's sequence would otherwise satisfy the next part's
// Nats-Expected-Last-Sequence. A part
// JetStream refused (its storage full, a limit of the stream) thus shows
// only as the last part not continuing the stream; so after a failure the
// first batch on the next connection asks an ack of every part, and the
// log names JetStream's own error ("insufficient resources").
//
// # Outages and restarts
//
// On each connection the exporter reads the stream's last message, part p
// of a batch, and continues after it. It forms that batch again, from the
// events it still holds (published, their ack lost) or else (a venue
// restart, a stream lost or recreated) from the journal, by a catch-up
// that starts at the batch's first event (Fixvenue-Cause-Seq and
// Fixvenue-Event-Index); the same events give the same parts. It checks
// that its part p is byte for byte the stream's last message, publishes
// the parts after p (none when the batch is complete) and goes on with new
// batches. A batch's range and parts are thus fixed by what the stream
// holds, and a re-publish has the same Nats-Msg-Id. A stream it cannot
// continue — its last message not written by this exporter (ErrForeign),
// its last message not at the sequence it was published for (a gap:
// messages were removed), its last message removed (deleted, or the stream
// purged: JetStream keeps the last sequence, a gap too; one purged while
// the exporter is connected refuses its next batch, and the exporter reads
// the stream's end again and finds that gap), its last message's batch not
// following the last part of the batch before it (a copy of an earlier message
// published again at the end), an event beyond the journal or different
// from the journal's — is never written to: the exporter logs it once, counts
// fixvenue_export_errors_total, retries every Config.Retry, and the lag
// grows. Deleting such a stream makes the exporter re-export everything
// from the journal; a following ReadStream returns ErrStreamReplaced, and
// `fixvenue events tail` goes on from the event after the last it printed
// (with a subject filter, from the first event the parts it had not read
// yet can hold, each subject's events printed once). `fixvenue events
// verify` reads the stream to the end its messages reach: one whose last
// messages were deleted or purged (JetStream keeps its last sequence) is
// reported as a gap.
//
// A failure is logged when it first happens and again only when it
// changes, not at every retry; so is the catch-up each retry starts again
// (one that fails in the journal, say), "catching up from the journal"
// once per failure; "event export resumed" is logged once a connection
// makes progress (an ack, or nothing left to publish), not merely once it
// connects.
//
// A catch-up starts at the newest snapshot before the stream's last event
// (or at the journal's first command) and reads the commands the end of day
// moved to the archive from there (journal.ChainTailer), also when an end of
// day archives segments a catch-up far behind has not reached yet; commands
// neither live nor archived stop it with an error, never a silent skip.
// The venue journals a periodic snapshot only after an event (server's
// runSnapshots), so with the export caught up, of the two snapshots the
// journal keeps, at least one is before the stream's last event.
//
// # Cost, and the embedded server's settings
//
// The export's CPU is per message and per wake-up, not per event: NATS
// parses, stores and acknowledges each message, each with a few system
// calls and goroutine wake-ups on both sides. One message per event took
// 28-30% of the venue's CPU samples at 5,000 orders/s (about 12,000
// events/s), two thirds of it in the embedded server; batches at a 2 ms
// poll took 9%, at 5 ms 5%, at 10 ms (PollDefault) 4%, a fifth of it the
// file store's writes (docs/benchmarks.md, "export"). A longer
// batch_interval saves little more and makes the stream follow later.
//
// The embedded server stores the stream in files with JetStream's default
// sync: written at once (page cache), fsynced in the background every 2
// minutes, not per message. A crash of the machine can lose the stream's
// last acknowledged messages; the exporter then finds the stream ending
// before what it had acknowledged and re-exports from the journal, which
// is the venue's durable record. Memory storage would save the file
// writes but lose the whole stream at each restart of the embedded server
// (a full re-export); sync_always would add an fsync per message. The
// duplicate window (DuplicatesWindow, 10 s) holds one entry per message:
// no cost that shows. The stream has no limits (verify needs it whole): it
// grows as the journal does, and the embedded server's store is bounded
// only by JetStream's default (75% of the free disk).
//
// # Limits
//
// The tap takes export.tap_events × 272 bytes (17 MiB at the default).
// A catch-up's matcher takes as much memory as the venue's (912 MiB at the
// default engine sizes) while the catch-up lasts; it replays the journal
// from the newest snapshot before the stream's end, or from its start
// without snapshots. Events in flight are bounded by
// export.publish_window, one message by BatchEventsMax events (at most 71
// KiB in SBE, some 250 KiB in JSON: an external NATS needs a max_payload
// of at least that). The stream keeps what its JetStream limits keep;
// verify needs the whole stream. A reader (ReadStream: `fixvenue events
// tail`, `fixvenue events verify`) reads through an ordered consumer and
// deletes it when it ends, a SIGTERM included: JetStream would keep it,
// read by nobody, for five minutes, three goroutines and its state in the
// server's process (the venue's own, with the embedded server). A reader
// killed, or cut off from NATS, leaves it to those five minutes.
package eventstream
