// Package fixstore is a QuickFIX/Go MessageStore that keeps FIX sequence numbers
// and sent messages across a crash without one fsync per message.
//
// Each session has one append-only file of CRC-framed records:
//
//	offset  size  field
//	0       4     length of kind+a+b+payload (little endian uint32)
//	4       4     CRC32C (Castagnoli) of kind+a+b+payload
//	8       1     kind: 1 message (a = MsgSeqNum), 2 sequence numbers
//	              (a = next sender, b = next target), 3 reset (a = creation time, Unix ns;
//	              b = the highest matcher ExecID of a report before it that still counts:
//	              0 after a reset, carried by a compaction; see ReadLastReport)
//	9       8     a
//	17      8     b
//	25      n     payload (the FIX message bytes for kind 1)
//
// Every change is written as it happens, straight into the file mapped shared
// and writable (mmap): the bytes are in the kernel's page cache the moment the
// copy ends, without a system call, so they survive the process being killed
// (kill -9, a panic, an OOM kill): that is the crash this store is built for.
// The file's blocks are reserved (fallocate, or zeros written where the file
// system has no fallocate) before they are mapped, 1 MiB at first and then
// doubling by at most 32 MiB at a time (a step the disk refuses is tried
// again as the least the next message needs, in 64 KiB, so that a nearly
// full disk is used to its end), so that a full disk is an error from
// the store, never a fault (SIGBUS) on a write to the mapping (the venue
// halts on it: docs/ARCHITECTURE.md, "A venue that failed"); Close (and
// Factory.Close, which the venue calls at shutdown) cuts the file back to its
// records. Surviving a power cut needs the data on disk;
// instead of an fsync per message, a Syncer fdatasyncs every file written
// since its last pass (which writes back the mapping's dirty pages), once per
// interval (group commit: one fsync covers every message of every session in
// that interval). The window of loss on a power cut is that interval. Each
// file it syncs is checked to still have a name (one fstat): a store
// removed under the venue (its directory rm -r'ed) takes every write and
// sync without an error, and would be gone at the next start, so that
// sync fails instead (ErrRemoved, wrapped with ErrFailed, once per store),
// and the venue halts. Sent
// messages are also recoverable from the journal: every ExecutionReport is
// derived from a journaled command.
//
// On open, the file is scanned up to the first record that is not whole (a
// torn write, or the zeros of space reserved by a process that did not
// close the store), and cut there. The newest sequence-number
// record and every later message rebuild the state. A bad record with a
// good one after it is damage, not a torn write: the store is not opened
// (ErrDamaged, naming both offsets), as cutting there would lose every
// later message and send their sequence numbers again.
//
// A resend reads the store through IterateMessages, which the venue steers
// with two hooks of the factory: ResendWhile stops it early, between
// messages, once the session's connection is going, and AfterResend says
// it handed over its last message (QuickFIX/Go holds the session's send
// lock meanwhile; docs/ARCHITECTURE.md, "Resends"). GetMessages has
// neither.
//
// Limits: the store indexes the last MessagesMax sent messages per session for
// resend; a ResendRequest for anything older is answered by QuickFIX/Go with a
// gap fill (it fills every sequence number the store does not return). A file
// is compacted (rewritten with only the indexed window) when it grows past
// FileBytesMax (journal.fix_store_bytes_max) and past twice what the window
// takes, so that a bound below the window does not compact at every message.
package fixstore
