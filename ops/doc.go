// Package ops is the venue's control plane: the admin HTTP API, the
// trading day (the schedule's transitions and the end-of-day sequence),
// and the Monitor they read.
//
// Every change is an OperatorCommand published into the command ring like
// any client command, so it is journaled before it takes effect, replayed
// after a restart, and names the operator (an admin token's operator, or
// "schedule") and the reason: the journal is the audit trail (`fixvenue
// journal dump` prints it). A status change (SetTradingStatus,
// SetPhaseStatus) carries the flag UncrossBetweenCalls: a call it moves to
// the other call ends with its uncross first ("Auctions" in core/doc.go),
// which records of earlier builds, without it, did not. Ops never reads or writes the matcher's state
// from another goroutine: the Monitor is an event-ring consumer that keeps
// statuses, best bid and offer and resting orders from events,
// seeded once from the matcher before the pipeline starts (on a cluster's
// new leader, its resting orders are a StandbyResting the follower kept
// from the same events: Config.Standby).
//
// The admin API (api.go) lists instruments, sessions (and a session's
// open orders, from the Monitor) and status, and
// changes trading status (one instrument, all, or a schedule group's
// phase), price bands, cancels by session/account/instrument or of one
// order (ordercancel.go: by OrderID, or a session's ClOrdID), ends the
// day, and logs out, disables or enables sessions; with the venue's Risk
// (risk.go) it shows pre-trade risk per session and account and turns kill
// switches on and off and changes limits. Input is checked before
// anything is journaled: for a change, an operator token whose SHA-256 is
// configured (Authorize; with none configured every change is refused),
// a strict JSON body within admin.body_bytes_max with a reason, known
// names. Reads need no token on a loopback listener called by a loopback
// name (Host 127.0.0.1, [::1] or localhost, or none as HTTP/1.0 allows:
// another name may be a web page's own, resolved to loopback), else a read or operator token. The web console (package console) is served on the same
// listener (SetConsole) and goes through Authorize too. A cluster node's
// leadership transfer, on its status listener, is a change checked the same
// way (AuthorizeChange). A POST a browser sends from a page of another
// origin is refused before (CrossOrigin), on these listeners and on the
// metrics listener.
//
// POST /v1/instruments (instruments.go) lists a new instrument without a
// restart: the request is checked in full (symbol, tick, price on the
// tick, quantities, band, status, schedule group, an unused id and symbol,
// room under engine.instruments_max) and journaled as an AddInstrument
// command; AddInstrument waits for its InstrumentAdded, durability, and
// until the gateway and FIX market data know it (Config.Listed), so a
// client told of the instrument can order it at once. The
// Monitor learns the instrument from that event (Instruments lists the
// configured ones, then the added ones), places it in its schedule group
// (its group, else the group its symbol falls in) and registers its status
// gauge; halts, bands and cancels then treat it like any other.
//
// Do publishes one command and waits (admin.call_timeout) for its
// OperatorResult and for durability; a command the matcher refuses
// (unknown instrument or session, a transition that makes no sense)
// changed nothing and is answered with the reason. A call that timed out
// published its command all the same, and the matcher applies it once the
// journal has it: an end of day, a session action and a phase change
// (/v1/phase, which publishes the commands of the group's instruments it
// had not reached, without waiting: phaseTimedOut) are then done as for a
// call answered done (recordAwaited: the day recorded as ended, the
// session logged out or disabled, the group's phase and its place in the
// day recorded, each command counted in fixvenue_operator_actions_total
// with its result, appliedResult; a phase change that changed nothing, as
// a call answered then would have found, records nothing: changedNothing);
// a command of the schedule's transitions is counted and logged so once
// applied (awaitStatusChange), and the try after it waits for it rather
// than send another, which would change nothing and count as refused;
// and one of the
// same kind (of the same session; a phase change or a resume for a phase
// change, and the schedule's transitions) waits for it meanwhile and sends
// nothing. EndOfDay runs the EOD
// command, then a Snapshot command, then, once its file is published,
// journal.ArchiveSegments up to the newest snapshot a start would load
// (Config.UsableSnapshot: the states kept beside it are written too); an
// end of day whose call timed out gets that snapshot and archive once it is
// durable and applied, after its day is recorded (archiveAwaited), once,
// and a transition of the schedule waits for it meanwhile (runTransition);
// a venue that stops or halts first leaves both to the next end of day.
// No snapshot is taken (the end of day's, or the server's periodic one:
// SnapshotHeldBack) while the last ended day is not in schedule.state (a
// full disk; endedDayRecorded writes it again first): a start from a
// snapshot after that end of day would replay none, and take the day as
// still open. Nor while another change of schedule.state (an operator's
// phase change: where the group stands in its day), or of phases.json
// (phasesRecorded), or another record of the venue is behind its journal
// (Config.Recorded: the disabled sessions), for the same reason: each is
// written again before a snapshot. The periodic snapshot's check and its
// command are one step against a session's disable or enable, which holds
// the check off from before its command is published until its file is
// written or known behind (SnapshotGate). A single venue's start takes the phase
// changes of the commands it replays after its snapshot over both files
// (Config.Phases, Config.Groups) and writes them, so that a change made
// durable whose record the disk refused, or a crash came before, holds.
//
// The schedule's progress (the last transition run) is kept in
// <data_dir>/schedule.state, each group's phase as last set (by the
// schedule or /v1/phase: where a resume takes a halted instrument) in
// <data_dir>/phases.json, both written once every command of the change
// is answered and durable (a change whose command failed records nothing,
// unless one before it was answered and durable: recorded then, as a
// cluster's follower records it from the journal; one whose call timed
// out, once applied); a cluster node keeps no such file (a node that
// leads again would read those of its own last term): a new leader is
// given the phases its follower saw set (Config.Phases), and starts on the
// schedule.state its follower derived from the journaled commands
// (SaveScheduleProgress: each names its transition in its reason,
// ScheduleTransitionOf). At start the transitions missed since then
// run once, in order (at most catchUpMax, the last ones), each stamped
// with the time it was due (stampNs: the matcher's GTD expiries and auction
// timers due later fire after it, and the auction timer's Ticks wait for
// the catch-up's end), before the server takes FIX logons (CaughtUp);
// meanwhile the admin API refuses changes (503 catching_up, nothing
// journaled), so that no command stamped with the clock lands among the
// catch-up's; with no state file, every group is
// brought to the status of its phase now, recorded only once every command
// is confirmed (applyPhasesDone: sent again until then, or at the next
// start after a halt), and a state file that cannot be
// read refuses the start (Start), as the missed transitions cannot be
// known. A transition whose commands
// cannot be confirmed (tried transitionAttemptsMax times) is not recorded:
// it runs again every transitionAgainWait, later ones waiting, or at the
// next start. A
// phase change run twice (a crash between journaling it and saving the
// state) changes nothing the second time; an end of day would (it expires
// the DAY orders taken since), so the schedule marks one pending
// (eod.pending, with the seq it is journaled from) before journaling it
// (not journaling it while the mark cannot be written), keeps the mark
// until the transition is recorded, and a start that finds its command in
// the journal does not run it again; a try whose call timed out is waited
// for, never sent again, and its day recorded as ended only once its
// command is durable and applied, even when the journal's files show it
// before: written, its sync may not have returned, and a crash would lose
// it (a start cuts what was never synced) with the day recorded as ended.
// The state also names the last
// trading day whose end of day ran (EndedDay), the schedule's or an
// operator's (POST /v1/eod ends the day of the last transition due, not one
// yet to begin: schedule.Plan.EndedBy; one whose call timed out counts once
// its command is durable and applied, recorded then, and no end of day is
// sent meanwhile: awaitEndOfDays; a start takes the day of the last end of
// day its replay applied as ended too, Config.EndOfDayNs, so a stop before
// the record loses nothing): a transition of that day or an earlier one
// (end_of_day or a close moved later in the configuration after the day
// ended, or any after an operator's end of day) is passed over, one end of
// day per day; a transition of a day its group went past (its record
// by group name, Groups, of the configured groups only: times changed in
// the configuration after it ran)
// is passed over too, so no group goes back within a day, as is one at or
// before the phase an operator set (POST /v1/phase) in the trading day in
// progress (operatorSetPhase, schedule.Plan.DayInProgress): an operator's
// early close stays closed, the schedule resuming with the group's later
// phases or the next day's (a follower derives it from the operator's
// commands alike); and a day
// that began and no longer trades (a holiday added) ends first at start
// (schedule.Plan.Unended). A transition runs once the
// clock (Config.Now) reads its time, read at least every onTimeSlack: a
// timer that ends earlier by that clock (a wall clock stepped back, a
// test's clock) is set again; a clock stepped ahead past a transition's
// time by more than onTimeSlack (not a timer's latency, which finds two
// transitions milliseconds apart due together, nor the time the ones
// before took: they run as on time) runs
// those due as the start's
// catch-up does (catchUp, the one path: bounded, stamped with their times,
// logged as late, begun once the operators' changes in flight are answered;
// CatchingUp meanwhile, so the server's gateway refuses orders and the
// admin API changes). GET /v1/status and
// fixvenue_schedule_next_transition_timestamp_seconds name the next
// transition from where the schedule stands, the last transition recorded
// (schedulePosition, nextToRun), not from the clock: one due and not yet
// run is next until it has run and its record is written, so that a
// status read after a clock stepped ahead does not name a later one (the
// next day's pre-open before the close and end of day had run).
//
// GET /v1/instruments reports the day's last trade, volume, trades and
// previous close from the DaySource (SetDaySource: the console's tape, kept
// whenever the admin API is on), the figures the console shows: the day
// starts at the last EndOfDay and survives restarts and a cluster's
// failover.
//
// Limits: the Monitor's events hash covers events since start; one end of
// day runs at a time. Pre-open is the opening call and a group's
// closing_call the closing call; the matcher uncrosses when the next
// transition opens or closes the instrument. The matcher's timers (a
// volatility auction's end, an indicative uncross the throttle held back,
// a GTD order's expiry) run at the first command at or after their time;
// the auction timer (every 50 ms) journals a Tick once that time has come,
// as the matcher's thread last published it (Config.TimersDue,
// core.Matcher.NextDueNs), so that an idle venue uncrosses, publishes and
// expires at the time too, after a restart or a promotion as well; and,
// with a timer waiting, once the clock reads more than onTimeSlack before
// the last command's time (Config.CommandTimeNs: a clock stepped back),
// the Tick's earlier time bounding the matcher's auction timers (core,
// "Command time need not only grow"), so that an idle venue's volatility
// auction does not wait for the clock to come back to its end.
package ops
