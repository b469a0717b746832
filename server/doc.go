// Package server assembles one running venue from a configuration: journal
// recovery and replay, the pipeline (command ring, journal, matcher, event
// ring), the gateway and its QuickFIX/Go acceptor behind the FIX edge, market
// data, and Prometheus metrics. Only cmd/fixvenue imports it.
//
// Start-up order matters and is fixed: take the data directory's lock
// (datadir.go: one venue or cluster node per directory; a second process is
// refused before it opens anything), check the configured sessions,
// instruments, matcher bounds and risk limits against those the journal was
// written under (termsrecord.go: a change would alter what replayed orders
// mean; without that record the whole journal replays under the configured
// terms, and the orders they refuse are counted, logged and shown on
// /metrics and /v1/status: replayrefused.go), recover the journal (cut a torn tail,
// refuse corruption), replay every journaled command into a fresh matcher,
// into market data and into the web console's tape (the day's trades), from
// the newest snapshot beside which both saved their state (mdstate/,
// consolestate/), then start the pipeline, then accept FIX sessions. No
// session is accepted before the replayed state is complete.
//
// The Server is the admin API's ops.Risk (risk.go): each risk call is
// checked against the configuration, journaled as a risk command, and
// answered with the matcher's result once durable. With a [risk] table the server journals a
// utilisation report every risk.report_interval, when a command other than
// the periodic ones was journaled since the last report; the periodic
// snapshot, every journal.snapshot_interval, when the matcher published an
// event since the last snapshot: an idle venue journals nothing, and
// commands without events (a session's disconnect) take no snapshot that
// would push the one before the export stream's end out of the two kept
// (runRiskReports, runSnapshots). The periodic commands start once the
// schedule has caught up (ops.Ops.CaughtUp): among the catch-up's commands,
// stamped with the times their transitions were due, one stamped with the
// clock would run the matcher's timers before those transitions. The
// periodic snapshot also waits while the last ended trading day or an
// operator's phase change is not in schedule.state and phases.json, or the
// disabled sessions are not in their file, or a disable or enable is
// between its command and its file's write (ops.Ops.SnapshotGate, one step
// with the snapshot's command): a
// start from it would not know the day ended, would resume a halted
// instrument into the schedule's phase or reopen a group closed early, or
// would let a disabled session log on; and while an end of day runs
// (ops.Ops.EndOfDayRunning), which takes its own, then finding that one
// the newest command. The start's replay takes the phase changes of the
// commands after its snapshot over those files (scheduleprogress.go,
// replayedSchedule: as a follower takes them), as it takes the disables
// over the disabled sessions' file.
//
// Shutdown is the reverse: stop accepting and log sessions out (their
// SessionDisconnected commands are journaled), drain the rings, flush and close
// the journal and the FIX message stores.
//
// A cluster node (StartCluster, cluster.go) follows first: its own matcher
// applies every committed command and a follower gate refuses FIX logons,
// naming the leader. Its QuickFIX/Go acceptor is built and started when it
// opens, with no connection reaching it (clusterfix.go). When the node
// leads, New builds the venue on that matcher, on the replicated journal
// and on that acceptor (Options.Replica), without a replay; StartCluster
// returns only once the acceptor's sessions run, so that a promotion
// waits for neither. The follower also keeps, from the events of every
// command it applies (standbySink), the gateway's open-order view
// (gateway.OpenView, bounded by engine.orders_max like the gateway's own)
// and the control plane's resting orders (ops.StandbyResting, one entry
// per live order, bounded by the matcher's OrdersMax); both are started
// by one walk of the live orders (core.Matcher.OpenOrders) when it opens
// and when it restores a Raft snapshot, and handed over at promotion, so
// that a new leader walks no order (docs/benchmarks.md, "failover").
// A single venue seeds both from that walk after replay, as before.
// From the same events (and, for the schedule, the commands) it keeps what
// the venue otherwise keeps in its own data directory: the sessions an
// operator disabled (disabled.go) and the trading day's progress
// (scheduleprogress.go: which transition each group last ran, read from
// the reasons of the schedule's commands, or the phase an operator set it
// to since, and each group's phase as last
// set, where a resume takes a halted instrument; an operator's phase
// change that found the group in that phase and, by its commands'
// results, moved no instrument records nothing, as on the leader, which
// answered it 409), so that a new leader
// refuses those logons, neither runs a transition again nor misses one,
// and resumes into the phase an operator set; Raft snapshots carry both.
// At each Snapshot command it applies, a follower writes the journal
// snapshot the leader's venue writes at it, the same bytes
// (ClusterNode.snapshot), with the snapshotter the venue takes over when
// the node leads (Replica.Snaps), so that a new leader's event export
// catches up from its newest snapshot, not from the first command.
// Nodes whose configured terms differ are refused by their peers
// (termsrecord.go, cluster.TransportConfig.Terms); a node records changed
// terms only once it knows a leader (ClusterNode.recordTerms). A node's
// start checks its configuration against the record as a single venue's
// does, and its replay of the committed journal refuses what a single
// venue's replay refuses: a configured instrument the journal adds
// (addedAgain), and one new to a journal holding a halt or close of all
// (changedBeforeConfigured).
package server
