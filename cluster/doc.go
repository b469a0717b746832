// Package cluster replicates the venue's command journal over etcd's Raft
// (go.etcd.io/raft/v3): a batch of commands is one Raft entry, and a batch
// counts as durable only once a quorum of replicas has it on disk.
//
// The library implements only the algorithm; this package supplies its
// storage (the venue's own journal segments) and, in transport.go, its
// network. A Node belongs to one goroutine: Tick, Step, Propose and
// Process are plain calls, so a test can drive three nodes in one
// goroutine over a simulated network (sim_test.go) and a server drives each
// from its own loop.
//
// # Files
//
// A replica's directory is a journal directory (journal/doc.go) whose
// segments hold each Raft entry as an entry mark (index, term, command
// count; journal/doc.go, "Raft entry marks") followed by the entry's
// command frames, unchanged, plus three small files (and raft.snapshot once
// the replica caught up from a Raft snapshot, see "Raft snapshots", up to
// two checkpoint-<index>.snap, see "Checkpoints", and raft.archived once
// segments moved to the journal's archive, see "Archive"):
//
//	cluster.id       32 bytes: "FVCLUSTR" | cluster id u64 | node id u64 | reserved u32 | crc32c u32
//	cluster.voters   "FVVOTERS" | count u32 | voter ids u64, ascending | crc32c u32
//	raft.hardstate   two 48-byte slots written in turn, each fdatasynced:
//	                 "FVRAFTHS" | version u64 | term u64 | vote u64 | commit u64 | reserved u32 | crc32c u32
//	                 (the valid slot with the higher version holds the state; a torn
//	                 write damages only the slot being written)
//
// An entry's data is its commands as journal record frames, exactly as a
// segment holds them (journal.AppendFrame): every replica checks each
// frame's CRC and seq before writing it, and writes the same frames into
// its segments behind the entry's mark, so `fixvenue journal verify` reads
// a replica's journal like a single node's and prints the same first line
// on every replica (its second line, the last entry's index and term, may
// differ while logs end at different entries). An entry with no commands
// (the empty entry a new leader commits, a hash check) has a mark of 0
// commands. A directory with a raft.index file (an earlier layout, which
// kept index and term beside the journal) is refused with a clear error.
//
// Appending entries (Log.Append, for Raft's MsgStorageAppend) writes the
// marks and command frames through journal.Writer with one fdatasync, then
// the hard state if it changed; only then are the responses that depend on
// the write delivered (the acknowledgement to the leader, a vote). When
// Raft replaces an uncommitted tail, the journal is cut from the first
// replaced entry's mark on (journal.TruncateEntries). At Open, a last entry
// whose commands end early (a crash during its write, so never
// acknowledged) is cut the same way; any other disorder of marks is
// corruption, reported, never guessed.
//
// A directory is bound to one cluster and node by cluster.id. A node
// refuses a directory whose cluster.id names another cluster or node, and
// a directory holding a single-node journal without one
// (ErrForeignJournal): joining with it would mix two histories. It is
// bound to the cluster's voting nodes by cluster.voters, written when the
// directory is first used: a start whose configured peers differ is
// refused, as a node counting its quorum among other nodes (only itself,
// say) could lead beside the cluster's leader.
//
// # Fresh directories
//
// Raft assumes a node keeps what it wrote; a node whose directory was lost
// (a replaced disk) and that starts on an empty one breaks that, in three
// ways, each handled. Its vote in the current term is gone, so a node that
// opens a directory it never used grants no vote for two election timeouts
// (a new cluster's first election waits that long). Its leader knows the
// entries it acknowledged and sends heartbeats committing them, on which
// Raft panics: such a node commits at most its own last index. And the
// leader never sends a follower entries at or below those it acknowledged,
// and sends a Raft snapshot only when it no longer holds the entry before
// those it would send: with that entry in memory it would probe the
// follower above its log for ever. A leader whose appends are refused by a
// follower whose log ends before the index it acknowledged, for an
// election timeout with no acknowledgement at or past that index (one
// refusal may be a late one, overtaken by a later acknowledgement, and a
// snapshot installed for it would move a healthy journal aside), sends that
// follower, of its own (Node.checkLostLog), a Raft snapshot at or after
// that index (the newest it holds, or one it builds; a committed state,
// which any follower may install; "Snapshot transfer"), one at a time,
// again after one that failed (a node without NodeConfig.NewState builds
// none, and logs so). The follower installs it and answers with
// its new last index, and the leader appends from there. The leader keeps
// leading in the same term throughout, its clients' sessions with it: it
// counts the follower in its quorum at the index it acknowledged, but no
// later entry commits on that follower's account before it holds the
// snapshot, so with the third node down too, orders wait (seconds, the
// snapshot's build and transfer) and are then answered. Until the
// follower answers an append at or past the index it had acknowledged, the
// leader says it is catching up (Node.CatchingUp, NodeStatus.CatchingUp):
// Raft still counts it at that index, as caught up, and on a transfer would
// hand it the leadership at once, where it would campaign with an empty
// log, depose the leader and lose. Node.TransferLeader refuses a transfer
// to it ("node N is catching up from a Raft snapshot after losing its log;
// try again when it has"), and a leader that stops hands over to another.
// The leader sees such a follower only once it probes it: after finding it
// unreachable, or at its next append. Starting on an
// empty directory is the way to rejoin with a new disk: no flag, no
// membership change (README, "Cluster: three replicas").
//
// # Raft settings
//
// AsyncStorageWrites, CheckQuorum and PreVote are on. Node.Process sends
// the messages for peers before it writes, so followers write a batch while
// the leader fdatasyncs it. MaxInflightMsgs (256) and MaxInflightBytes
// (32 MiB) pipeline appends to each follower; MaxUncommittedEntriesSize
// (64 MiB) refuses proposals beyond it. A tick is 50 ms by default;
// heartbeat 1 tick, election 10 ticks (500 ms, randomised by Raft up to
// twice that).
//
// # Transport
//
// Transport carries Raft messages between nodes over TCP: each node dials
// one stream to every peer and sends on it, and receives on the streams
// its peers dial. A stream opens with a 76-byte hello, sent as soon as the
// stream is dialled (a link with nothing to send, two followers', still
// sends it, or its peer would close it after helloTimeout):
//
//	"FVRAFT02" | cluster id u64 | from node u64 | to node u64 | terms u32 | unix ns u64 | HMAC-SHA256
//
// (a Raft snapshot has a stream of its own, whose hello says "FVRSNP02";
// see "Snapshot transfer"). The HMAC, of the fields before it, is keyed by
// the cluster's secret (TransportConfig.Secret, config cluster.secret_file):
// a stream from anyone without it, or with a hello made more than
// helloAgeMax before or after the receiver's clock, or with one seen before
// (a replay: the hellos of that time are remembered), is refused,
// so that no one who can reach a Raft port but is not a node can step a
// message into Raft (one heartbeat of a later term deposes a leader). The
// frames after the hello are not authenticated one by one: the stream is
// the hello's, and a path an attacker can write into is out of scope (put
// the nodes on a private network, or a VPN between sites).
// then carries frames of length u32 | crc32c u32 of the payload | payload
// (a raftpb.Message in protobuf, at most 16 MiB). A hello with the wrong
// magic or HMAC, an age beyond helloAgeMax, another cluster's id, a node that is not a peer, or other
// terms (TransportConfig.Terms: the configuration the replicas apply
// commands under, or what clients see of the leader, differs), and a
// frame with a bad length, CRC or message, or one whose sender or receiver
// differs from the hello's, close the stream; the event is counted
// (TransportStats) and logged (each kind at most once per streamLogEvery,
// with how many were not: a peer configured otherwise redials ten times a
// second; a kind names no address, so that connections that send no hello
// are one kind) and the node carries on. At most helloPendingMax accepted
// streams wait for their hello at once (a peer sends it as it connects):
// one more closes the one that has waited longest, so that connections
// that send nothing, which anyone who can reach the port may open by the
// thousand, hold neither goroutines nor descriptors without bound. A peer that cannot be dialled (down, or
// a wrong raft_addr in [[cluster.peer]], which would otherwise leave a node
// that hears the leader but whose answers go nowhere, a follower to look
// at and none to the leader's quorum) is logged the same way, naming the
// peer and the address dialled. Sending never blocks
// the node: each peer has a queue of peerQueueMessagesMax messages, and a
// message that does not fit is dropped (Raft resends) and the peer reported
// unreachable. Received messages wait in a queue of inboundMessagesMax.
//
// # Snapshot transfer
//
// A MsgSnap's data (the replica state, tens of MiB for a venue with 100k
// resting orders) does not fit the message stream's frames. The transport
// sends it on a new connection, at most one per peer at a time:
//
//	hello   "FVRSNP02" | cluster id | from | to | terms | unix ns | HMAC   (as above)
//	head    length u32 | crc32c u32 | data bytes u64 | the MsgSnap without its data (protobuf)
//	chunks  length u32 | crc32c u32 | data, 1 to 1 MiB each, until the data bytes are read
//	answer  one byte 0x06 from the receiver
//
// The receiver checks the hello as for a message stream, then each frame's
// length and CRC, that the head is a MsgSnap from the hello's node to this
// one, and that the data bytes are within SnapshotBytesMax (config
// cluster.snapshot_bytes_max, default 1 GiB; the sender checks it too, and
// the leader refuses to build a larger snapshot, with an error naming the
// bound). It writes the chunks into raft.snapshot.recv-<n> in the replica
// directory, in raft.snapshot's format (below), fsyncs it, and only then
// hands the message to Raft and answers. Anything wrong (garbage, a bad
// CRC, a stream that ends early, a second snapshot stream while one is
// being received, a full inbound queue) closes the connection, removes the
// file and delivers nothing; the event is logged and counted. The sender
// reports each snapshot's outcome to Raft (Node.ReportSnapshot, through
// the Runner): success once the answer came, failure otherwise, after
// which the leader probes the follower again. Every write and read of the
// stream has its own deadline (snapshotIdleWait), the answer
// snapshotAckWait. Ordinary messages keep their 16 MiB frame bound.
//
// # Fast failover
//
// With CheckQuorum and PreVote a follower ignores pre-votes while it has
// heard from its leader within an election timeout, and campaigns only
// after its own randomised timeout (10 to 20 ticks). When the leader's
// process dies, its streams to the followers end at once; a follower whose
// stream from the leader ended and that then hears nothing from it for
// leaderSilenceTicks (4 ticks, 200 ms by default) forgets it (raft
// ForgetLeader: it may grant pre-votes now). The followers then campaign
// in turn of their ids, the first one tick later (campaignAfterTicks: the
// others saw the stream end within a tick, so they have forgotten the
// leader and grant its pre-vote), the next one tick after it (in case the
// first one's log is behind and it cannot win), each every
// campaignEveryTicks, at most campaignsMax times (runner.go). The
// transport notices a stream it dialled ending when it happens (the peer
// never writes on it, so a read returns only then), not at the next
// write, which the kernel would take and lose, and sends the next message
// on a new stream (an idle link does not redial a dead peer): the first
// messages to a restarted peer, votes among them, get through. A stream
// that ends while the leader lives (a connection reset) is redialled
// within redialPause and the leader's next heartbeat clears the
// suspicion; if it does not, a campaign
// is a pre-vote, which a follower still hearing the leader refuses, so a
// live leader keeps its place unless it has really lost touch with both
// followers.
//
// # Committed, applied, durable
//
// Node.Committed is the seq of the last command this node knows committed
// and has passed to NodeConfig.Apply, in order, exactly once per process:
// at Open the committed part of the journal, later each committed entry;
// NodeConfig.Applied follows each batch of entries committed together
// (never Open's replay), where a follower hands on what a batch built (its
// standby feed's B-line packets). A command at or below it is on the disks
// of a quorum. The serving
// leader's durable sequence is not it but Journal's: the last of its own
// batches the Runner saw committed, which never covers a batch whose fate
// became unknown (a deposed node's Committed goes on with the new leader's
// commands, at the seqs its lost ones had). The leader proposes with
// ProposeNext (the seq after its whole log when it became leader); it may
// take orders only when Serving (leader, and it has applied an entry of
// its own term, hence everything committed before). A proposal accepted by
// a leader that loses leadership before a quorum has it may be replaced by
// the next leader; LostLeadership counts those moments, and whoever applied
// such commands speculatively must rebuild its state from the committed
// log. The Runner fails every such proposal with ErrLostLeadership: those
// it waits for, those parked behind a transfer, and one Node.Propose
// refuses (ErrNotLeader) because the node was deposed since the Runner
// last looked; the venue on a node tells that error from a failure of its
// own, and a server deposed restarts (server.ClusterNode.PrepareRestart:
// its admin and status sockets stay open across the re-execution, so that
// an operator's call in flight is answered, never reset or refused;
// docs/ARCHITECTURE.md, "Losing leadership").
//
// # Hash checks
//
// Every replica hashes the events its matcher writes (xxhash64 of each
// event's bytes, as `journal verify` does), from the first command on. The
// leader's pipeline matcher hashes too; after a Snapshot command commits,
// the leader proposes a check entry carrying (seq, its hash), which holds
// no command and is not written to the journal (hashcheck.go). A follower
// compares it with its own hash after the same command (HashCheck, either
// may come first); a difference is ErrDiverged: the follower stops, with
// an alert. A check entry is best effort: one lost with a leader, or read
// back from disk after a restart (where only its index record survives),
// compares nothing.
//
// # Raft snapshots
//
// A replica keeps at most EntriesInMemoryMax entries (NodeConfig, the
// config's cluster.entries_in_memory) or EntriesInMemoryBytesMax bytes of
// its Raft log in memory, dropping the older half when either is passed
// (never an entry it has not applied). A follower that needs an entry the
// leader no longer holds (it was down, or is new) gets a Raft snapshot:
// the one built at the compaction point (compactions start builds, at
// most one a minute; see "Checkpoints"), or, while none covers the
// follower's need, the leader's Log.Snapshot starts a build and answers
// "try again" until it is ready; Raft retries on the next heartbeat
// response. A build runs on a background goroutine and replays the journal
// from the newest snapshot the replica holds (the last one built, or its
// base, below, or the start) up to the compaction point into a fresh State
// (NodeConfig.NewState). The snapshot's data is the next seq u64 and the
// saved state, sent as in "Snapshot transfer". Without a transport that reports outcomes (the simulation), a
// snapshot not acknowledged within snapshotReportTicks is reported failed.
//
// The venue's State is MatcherState: the matcher, the running events hash,
// and named parts fed from the same events (a CommandPart reads each command
// too, before the matcher applies it), which a replica needs to carry on as
// if it had applied every command itself:
//
//	"FVRSTAT2" | hash state bytes u32 | hash state | parts u32 |
//	per part, by name: name bytes u8 | name | state bytes u64 | state |
//	matcher snapshot (core/snapshot.go), to the end
//
// The server's parts are "marketdata", the feed's state (marketdata/state.go,
// FVMDST06: books, statistics, indicatives, refill count, next sequence number; the
// leader derives it with marketdata.FeedState, which numbers messages as
// the feed does and sends none), and "console", the console tape's state (console/state.go).
// A follower restores each into a new standby feed and tape, so it
// publishes the same sequence numbers and shows the same tape as one that
// applied the log; its open-order view and control-plane resting orders
// (server/doc.go) are not carried: the server reads them once from the
// restored matcher's live orders, which the snapshot holds. A part the saved state lacks (an "FVRSTATE" state of an
// earlier build has none) is listed in MatcherState.Missing; the server
// then runs without that part's data, with an alert.
//
// The follower installs it before it acknowledges: it writes
//
//	raft.snapshot    "FVRSNAPF" | index u64 | term u64 | next seq u64 | data bytes u64 |
//	                 crc32c u32 of bytes 0..40 and the data | reserved u32 | data
//
// as raft.snapshot.tmp (fsynced; the file the transport received is
// renamed to it, not written again), moves its journal segments, and the
// journal snapshots taken at their commands, to replaced-<index>/ (kept for
// inspection, never read again), renames the
// file into place and syncs the directory, then restores its state
// (NodeConfig.Restore) and continues its journal, empty, at the next seq.
// A crash in between is finished at the next Open. The snapshot is then the
// base of that replica's log: Open restores it and replays the journal
// after it, and it builds its own snapshots from it. `fixvenue journal
// verify` on such a replica (Verify) starts from the base's matcher and
// events hash and replays the journal after it, and counts the commands
// the base covers, so it prints the same first line as the other replicas.
//
// # Checkpoints
//
// Every snapshot a replica builds, leader or follower, is also kept in its
// directory, in raft.snapshot's format, as checkpoint-<index, 20 digits>.snap
// (written as .part, fsynced, renamed, the directory synced; a .part a
// crash left is removed at Open); the newest checkpointsKept (2) are kept,
// the older removed. A compaction of the in-memory log starts a build
// (Log.Compact) unless one started within NodeConfig.CheckpointInterval
// (cluster.checkpoint_interval; CheckpointIntervalMin, a minute, by
// default: a build loads and saves the whole state), so a replica's newest
// checkpoint is about half of EntriesInMemoryMax entries (or
// EntriesInMemoryBytesMax bytes) behind its applied index, or on a busy
// replica up to a minute's commands more, each built from the one before:
// a build replays that much of the journal, not the whole of it. Open
// restores the newest checkpoint that is valid (a damaged one is passed
// over with a warning, and the one before it, the base or the start is
// used), after the base, at or before the commit index and at an entry
// boundary of the log (its index, term and next seq those of the entry),
// and replays only the committed commands after it: a restart's replay is
// bounded by the window and that minute, not by the days the replica has
// run (its log says "started from a checkpoint" with the commands
// replayed), then moves the segments before the older checkpoint kept to
// the journal's archive ("Archive"). A Raft snapshot installed moves the
// checkpoints aside with the segments. A checkpoint's matcher state lists
// the sessions and instruments of its day, as a journal snapshot does: a
// start whose configuration adds some (NodeConfig.DropCheckpoints, set by
// the venue from its terms record) removes the checkpoints and replays
// from the base. A build costs the replay of the commands since the last one and
// the load and write of the state (tens of MiB for 100k resting orders),
// on a background goroutine; Close and an install make a build in flight
// give up first.
//
// A replica state's matcher takes its bounds' memory whatever it holds
// (about a gigabyte at the venue's defaults), so none is allocated twice:
// a build loads into the state of the build before it
// (MatcherState.Reload: the matcher keeps its memory, its parts and hash
// are new), which the replica keeps between builds (Log.spare), and a
// start or an install restores into the replica's own matcher
// (MatcherStateOf). A replica that builds holds two states from its first
// build on, where builds into new states held a third until the collector
// and the system took each back.
//
// # Archive
//
// The sealed segments before the older of the two checkpoints kept move to
// the journal's archive directory (journal.MoveToArchive: renamed,
// uncompressed, each segment whose successor starts before the
// checkpoint's next seq, so that no Raft entry mark of a later command goes
// with them): after each checkpoint a running replica keeps (by the build's
// goroutine, the one it was built from), and at a start (the oldest valid
// one). First
//
//	raft.archived    "FVRARCHV" | index u64 | term u64 | next seq u64 | crc32c u32 | reserved u32
//
// names that checkpoint's entry (written as .part, synced, renamed, the
// directory synced), so that a crash in between leaves segments live that
// the next move takes. The live log then starts after that entry: a
// start's reads (the journal's recovery, the entry marks) cover the live
// segments alone, passing over the records before it in the first, and
// Raft's storage starts there; both checkpoints kept stay restorable, the
// newer one's fallback the older. A replay from the base or the first
// command (a start that drops its checkpoints, or finds none valid; a
// build for a follower without one) reads the archive as well, as the
// journal's Reader does for any reader, and a Reader that listed a segment
// live follows it there: `fixvenue journal verify`, dump and the event
// export's catch-up see one chain, and print what they printed before the
// move. The archive may be compressed in place (each segment to
// journal-<seq>.seg.gz, as a single venue's end of day writes them;
// journal/doc.go, "Archive"), but not moved elsewhere while the node may
// need a whole replay: a start whose configuration adds sessions or
// instruments. A truncation of the log, which reopens the journal, and a
// Raft snapshot's install stop a build in flight first; the install moves
// the archive and raft.archived aside with the segments.
//
// # Limits
//
// Membership is static (Voters); configuration changes are refused. The
// leader and the follower each hold a snapshot's data in memory while it
// is sent and installed (up to cluster.snapshot_bytes_max), and a follower
// receives one snapshot at a time. Archived segments are never deleted (a
// whole replay needs them). A failed write
// or fdatasync fail-stops the replica (journal/doc.go, "Durability and
// gating"); the others carry on while they are a quorum. Raft randomises election
// timeouts from crypto/rand, so the simulation's faults are reproducible
// from its seed but its elections are not.
package cluster
