// Package journal makes commands durable before anyone hears of them, and
// gives them back, byte for byte and in order, after a crash.
//
// The journal stores each command exactly as the matcher consumes it (the
// SBE message bytes) in a CRC32C frame, in preallocated segment files of a
// fixed size. A Writer appends frames into a bounded memory buffer; Flush
// writes the buffer with one pwrite and makes it durable with one
// fdatasync, then advances the durable sequence. Writer.Run drives that
// loop from the command ring (group commit: whatever was published while
// the previous fdatasync ran becomes the next batch, so latency stays near
// one fsync while throughput grows with load).
//
// # Segment files
//
// A journal is a directory of segments named journal-<first seq, 20 digits>.seg.
// Every segment is created at its full size (SegmentBytes, default 64 MiB)
// by fallocate, or by writing zeros where fallocate is not supported, so
// that a full disk shows up when a segment is created rather than in the
// middle of a batch, and so that every byte after the data reads as zero.
// A segment is created as a .tmp file, given its header, fsynced, renamed
// into place, and the directory is fsynced: a segment with its final name
// always has a valid header and its full size. An entry named like a
// segment (or an archived segment, or a snapshot) that is not a regular
// file or a link to one, such as a directory or a named pipe, is an error
// naming it, for the start and the journal tools alike: passed over, it
// could hide a gap, and opened, a named pipe waits for a writer for ever.
// All integers are little-endian.
//
//	segment header (64 bytes, at offset 0)
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 0  magic "FVJOURNL" (8 ASCII bytes)                                   |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 8  version u16  | 10 hdr len u16  | 12 reserved u32, zero             |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 16 first seq u64: the seq of the first record in this segment         |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 24 segment size u64: the file's size in bytes                         |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 32 .. 59 reserved, zero                                               |
//	+                                   +--------+--------+--------+--------+
//	|                                   | 60 crc32c u32 of bytes 0..59      |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//
// version is 1 and hdr len is 64. Records follow the header back to back,
// without padding, from offset 64:
//
//	record frame (16 + length bytes)
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 0  length u32 (payload bytes)     | 4  crc32c u32 of bytes 8..16+len  |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 8  seq u64                                                            |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 16 payload: one SBE command message (header + block), length bytes    |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//
// The CRC is CRC32C (Castagnoli) over seq and payload. length is 1..65536
// (PayloadBytesLimit). A length of zero marks the end of the data: the
// segment is preallocated with zeros, so the first unwritten frame reads as
// length 0. A segment also ends when fewer than 16 bytes are left. A reader
// starts at offset 64 with expected seq = first seq and, for each frame,
// checks length, fit, CRC, and seq == expected, then expected++. The next
// segment's first seq must equal the expected seq where the previous one
// ended, and every byte after a segment's end-of-data must be zero.
//
// A segment is rolled (a new one started) when the next frame would not
// fit. The old segment is fdatasynced before the new one is created, under
// either policy, so a sealed segment (any segment but the last) is always
// complete on disk.
//
// # Raft entry marks
//
// A replicated journal (cluster/doc.go) writes before the command frames of
// each Raft entry a mark of 32 bytes that carries the entry's index and term
// around the unchanged command frames:
//
//	entry mark (32 bytes)
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 0  0xFFFFFFFF (no record length)  | 4  crc32c u32 of bytes 8..32      |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 8  Raft index u64 (never 0)                                           |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 16 Raft term u64                                                      |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| 24 commands u32: the records that follow | 28 reserved u32, zero      |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//
// A mark has no seq; the records after it keep theirs. A reader checks that
// each mark's index is the previous one's plus one, that terms never
// decrease, that each entry gets exactly its commands before the next mark,
// and, once a mark was seen, that no record lies outside an entry: any
// other order is corruption. At the end of the data the last entry may
// miss commands (a write that never completed); Reader.Entries reports it
// and the replica cuts that entry (TruncateEntries). A mark and its records
// may lie in different segments. A single node's journal holds no marks and
// reads exactly as before; Replay, Verify and Tailer skip marks, Dump and a
// Reader with ReaderOptions.Entries return them.
//
// # Recovery and the torn tail
//
// Open reads every segment and checks every frame. Damage in a sealed
// segment, a record whose CRC is good but whose seq breaks the sequence, or
// a bad record in the last segment that is followed by any valid record
// further on, is corruption: Open returns a *CorruptionError naming the
// segment file and byte offset and opens nothing. A bad frame at the end of
// the last segment with nothing valid after it (a partial frame, a CRC
// mismatch, garbage or non-zero bytes after the end-of-data marker) is a
// torn tail: the writes of a batch that was never acknowledged, because the
// fdatasync that would have acknowledged it had not returned. Open zeroes
// those bytes, fsyncs, logs (log/slog) the segment, offset and byte count
// it cut, and appends after the last good record. Unless the records it
// would cut are known to have been durable (Config.DurableBefore: the
// venue passes a valid snapshot's seq and the journal's end at its last
// start or clean stop): then the damage is to acknowledged records, and Open refuses it
// as corruption, naming the segment and offset, and cuts nothing.
//
// A limit of this rule: a power cut may persist the pages of an unsynced
// batch out of order, leaving a hole followed by complete records of the
// same (unacknowledged) batch. Recovery reads that as a bad record followed
// by valid ones and refuses to start, naming the offset, rather than
// guessing; an operator can inspect it with `fixvenue journal dump`.
//
// # Durability and gating
//
// The durable sequence (Writer.Durable, Writer.DurableSequence, a padded
// ring.Sequence) is the seq of the last record whose fdatasync returned.
// It is stored only after the sync returns, and never again after a
// failure. Nothing derived from a command (an ExecutionReport, a cancel
// reject, market data) may leave the process before Durable() >= the
// command's seq; every event carries causeSeq for that comparison.
//
// Policy "batch" (the default) is the only policy that survives a power
// cut. Policy "none" skips the per-batch fdatasync and advances the durable
// sequence when the write reaches the page cache; it is for benchmarks
// only, and every report that uses it says so.
//
// A failed write or sync (EIO, ENOSPC, ...) is fail-stop: the writer keeps
// the error, returns it from every later call, counts it, logs it, and
// never advances the durable sequence again. It does not retry: after a
// failed fsync Linux may already have discarded the dirty pages, so a later
// successful fsync would vouch for data that is gone. The files are left
// as they are; whatever partial frame the failure left is after the last
// complete record, so recovery cuts it as a torn tail. A segment that no
// longer has a name in the file system (removed, or its directory, while
// the writer holds it open) fails the same way (ErrSegmentRemoved): its
// writes and syncs succeed, but its records go with the process, so each
// flush, and each roll for the records it leaves in the old segment,
// checks the segment's link count (one fstat) before the durable sequence
// moves.
//
// # The group-commit loop: beside the matcher, not after it
//
// Writer.Run reads the command ring in parallel with the matcher: both wait
// on the ring's publication, neither on the other. The fdatasync of a batch
// therefore overlaps the matching of the same commands, and a command's
// answer is ready to go when its sync returns. Outbound waits for
// min(event published, Durable() >= causeSeq). Reading after the matcher
// instead would serialise match then sync for every batch and add the
// matching time to every acknowledgement, with no gain in safety: the
// journal holds the command bytes, and replay recomputes the events.
//
// Run copies each batch into its buffer and releases the ring slots (its
// gating sequence) before the fdatasync, so producers never wait for the
// disk unless the write buffer and the whole ring are full. A pipeline
// wires it as:
//
//	w, err := journal.Open(dir, journal.Config{OnFlush: func(journal.FlushInfo) { events.Wake() }})
//	res, err := journal.Replay(dir, matcher, nil, journal.ReplayOptions{UseSnapshot: true})
//	// commands from now on carry seq w.NextSeq()+ringSeq
//	own := ring.NewSequence(-1)
//	commands.AddGatingSequences(own)
//	go w.Run(commands, commands.NewBarrier(), own)
//	// outbound: send the answer to an event once w.Durable() >= its causeSeq
//
// # Snapshots
//
// A snapshot is the matcher's state after command seq, in its own file
// snapshot-<seq, 20 digits>.snap in the journal directory:
//
//	header (32 bytes)
//	| 0  magic "FVSNAPSH" (8) | 8 version u16 = 1 | 10 hdr len u16 = 32 | 12 reserved u32 |
//	| 16 seq u64              | 24 reserved u32   | 28 crc32c u32 of bytes 0..27          |
//	payload (n bytes: whatever the state machine's WriteSnapshot wrote)
//	trailer (16 bytes)
//	| 0 n u64 | 8 crc32c u32 of header and payload | 12 end magic "SNPE" |
//
// It is written to a .tmp file, fsynced, renamed and the directory fsynced.
// Snapshotter does the file work on a background goroutine and renames
// only once command seq is durable, so a snapshot never describes a
// command the journal lost. Replay with UseSnapshot loads the newest
// snapshot that validates and whose seq lies within the journal, and
// applies only the records after it; a damaged snapshot is logged and
// passed over (the journal still holds everything). Verify never uses
// snapshots: it replays every record into a fresh matcher and hashes every
// event byte (xxhash64), and two runs must print the same line.
//
// # Archive
//
// ArchiveSegments, run by the venue at end of day once the day's snapshot is
// durable, moves every sealed segment whose records all precede the
// snapshot to <journal>/archive/journal-<first seq>.seg.gz (compress/gzip,
// the segment byte for byte). Each file is written as .tmp, synced, renamed
// and the archive directory synced before the live segment is removed and
// the journal directory synced, so a crash leaves every record in one place
// or both. A Reader (and so Replay, Verify and dump) reads the archived
// segments before the live ones when it is asked for records they hold,
// decompressing one segment at a time into memory, and checks them exactly
// as live ones: `journal verify` covers the whole chain. An archived segment
// decompressed in place (archive/journal-<first seq>.seg, gunzipped to be
// read or restored so from other storage) is read as it is, as a live one
// (beside its .seg.gz, the .seg.gz is read). A segment archived
// after a Reader listed it as live, by an end of day of the venue running
// beside `journal verify` or dump, or beside a drop-copy replay, is read from
// the archive when the Reader reaches it. A record read from the archive
// names its file as it lies in the journal directory
// (archive/journal-<first seq>.seg.gz, its offset counted in the
// decompressed content), as dump prints it. A gzip stream that
// is damaged or cut is a *CorruptionError naming the .seg.gz file and the
// offset in it where the damage was met (a checksum is checked at the
// stream's end, so a flipped byte is named there). A replay from a
// snapshot at or after the archived records never opens the archive, so the
// archive can live on other storage once written. Open (recovery) reads
// only the live directory. MoveToArchive moves sealed segments there
// uncompressed, by a rename (a replicated journal's start: cluster/doc.go,
// "Archive"); they are read as decompressed segments are.
//
// # Limits
//
// Append, Flush, Close and Run belong to one goroutine; Durable, Err and
// Stats are safe from any goroutine. Readers (Reader, Replay, Verify, Dump)
// never write: they report a torn tail and stop at it, and only Open cuts
// it. The write buffer is bounded
// (BufferBytes); a batch larger than the buffer is written out early and
// still synced once. A record's payload is at most PayloadBytesMax. Segment
// creation (fallocate plus two fsyncs) happens inline when the current
// segment is full, so one batch in every SegmentBytes pays for it.
// Segments are never deleted by this package, so a full replay is always
// possible; only snapshots are pruned (Snapshotter keeps the newest few).
package journal
