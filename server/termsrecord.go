package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/durable"
	"github.com/fixvenue/fixvenue/internal/regularfile"
	"github.com/fixvenue/fixvenue/journal"
)

// termsRecordFile, in the data directory, holds the configured terms the
// journal was written under: the sessions by index, the matcher's bounds
// and risk limits, and the instruments (docs/ARCHITECTURE.md, "The
// configured terms and the journal").
const termsRecordFile = "terms.json"

// instrumentRecordFile is the record of a data directory written before the
// record held sessions and matcher terms: its instruments are checked, and
// it is replaced by termsRecordFile.
const instrumentRecordFile = "instruments.json"

// termsRecord is what replaying the journal depends on besides the
// journal. Journaled commands name their session by index (the position in
// the configuration, ranges expanded), their instrument by id, prices in
// ticks; the matcher refuses what its bounds and risk limits refuse.
// Replayed under other terms the same commands give other events.
type termsRecord struct {
	// Sessions are the CompIDs by session index (nil: not recorded yet).
	Sessions []string `json:"sessions"`
	// Matcher are the matcher's configured bounds and risk limits by
	// configuration key (nil: not recorded yet).
	Matcher     map[string]string    `json:"matcher"`
	Instruments []recordedInstrument `json:"instruments"`
	// SnapshotsFrom is the first seq whose snapshots fit the recorded
	// instruments: a start that adds a configured instrument sets it to the
	// journal's next seq, as the snapshots before it list the instruments
	// of their day by position (Server.replay). 0: every snapshot.
	SnapshotsFrom uint64 `json:"snapshots_from,omitempty"`
	// JournalNextSeq is the journal's next seq when the last start had
	// replayed it, or when the venue last stopped cleanly, its journal
	// closed with every record durable (recordJournalEnd); journal.fsync =
	// "batch" only: then every record it held was durable, the journal
	// syncing what it finds when it opens and each batch it writes. A
	// journal that now ends earlier lost durable records: the start is
	// refused (journal.Open for a damaged last record, Server.replay for
	// records gone). 0: not recorded.
	JournalNextSeq uint64 `json:"journal_next_seq,omitempty"`
}

// recordedInstrument is what the matcher takes from a configured
// instrument, by configuration key.
type recordedInstrument struct {
	ID    uint32            `json:"id"`
	Terms map[string]string `json:"terms"`
}

func recordOf(in *config.Instrument) recordedInstrument {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	r := recordedInstrument{ID: in.ID, Terms: map[string]string{"symbol": in.Symbol, "tick_size": in.TickSize,
		"lot_size": n(in.LotSize), "min_qty": n(in.MinQty), "max_qty": n(in.MaxQty), "ref_price": in.RefPrice,
		"band_percent": n(in.BandPercent), "status": in.Status.String(), "volatility_band_ticks": n(in.VolatilityBandTicks),
		"volatility_auction": in.VolatilityAuction.Duration.String()}}
	if in.ExtendsCalls() {
		r.Terms["call_extension"] = "true"
	}
	return r
}

// instrumentTermAbsent is the value of an instrument term that a record
// lacks. call_extension is recorded only when on: a record written before
// the rule (whose journal replays as written only without it) reads as
// off, and the terms of an instrument without it hash as before
// (termsHash), so that a cluster's nodes on an earlier build still join.
var instrumentTermAbsent = map[string]string{"call_extension": "false"}

// matcherTerms are the terms of MatcherConfig other than the instruments
// and the session count, by configuration key; a risk limit that is not
// set has no key. engine.instruments_max is recorded as configured ("0":
// unset, when it grows with the configured instruments, so that adding one
// is accepted); it bounds AddInstrument commands
// (TestMatcherTermsCoverTheMatcherConfig lists each field).
func matcherTerms(cfg *config.Config) map[string]string {
	out := map[string]string{
		"engine.orders_max":          strconv.Itoa(cfg.Engine.OrdersMax),
		"engine.clordids_max":        strconv.Itoa(cfg.Engine.ClOrdIDsMax),
		"engine.instruments_max":     strconv.Itoa(cfg.Engine.InstrumentsMaxSetting),
		"engine.indicative_interval": cfg.Engine.IndicativeInterval.Duration.String(),
	}
	r := cfg.Risk
	if r == nil {
		out["risk"] = "off"
		return out
	}
	out["risk"] = "on"
	limits := func(prefix string, l *config.RiskLimits) {
		set := func(key string, v *int64) {
			if v != nil {
				out[prefix+"."+key] = strconv.FormatInt(*v, 10)
			}
		}
		set("max_order_qty", l.MaxOrderQty)
		set("max_order_notional", l.MaxOrderNotional)
		set("max_open_orders", l.MaxOpenOrders)
		set("max_open_notional", l.MaxOpenNotional)
		set("credit_limit", l.CreditLimit)
		set("max_position", l.MaxPosition)
		set("kill_after_breaches", l.KillAfterBreaches)
		set("kill_at_loss", l.KillAtLoss)
		for _, in := range l.Instrument {
			p := prefix + ".instrument." + in.Symbol + "."
			if in.MaxOrderQty != nil {
				out[p+"max_order_qty"] = strconv.FormatInt(*in.MaxOrderQty, 10)
			}
			if in.MaxOrderNotional != nil {
				out[p+"max_order_notional"] = strconv.FormatInt(*in.MaxOrderNotional, 10)
			}
			if in.MaxPosition != nil {
				out[p+"max_position"] = strconv.FormatInt(*in.MaxPosition, 10)
			}
		}
	}
	limits("risk.sessions", &r.Sessions)
	for i := range r.Session {
		limits("risk.session."+r.Session[i].CompID, &r.Session[i].RiskLimits)
	}
	for i := range r.Account {
		limits("risk.account."+r.Account[i].Name, &r.Account[i].RiskLimits)
	}
	return out
}

func termsOf(cfg *config.Config) termsRecord {
	t := termsRecord{Sessions: make([]string, len(cfg.Sessions)), Matcher: matcherTerms(cfg),
		Instruments: make([]recordedInstrument, len(cfg.Instruments))}
	for i := range cfg.Sessions {
		t.Sessions[i] = cfg.Sessions[i].CompID
	}
	for i := range cfg.Instruments {
		t.Instruments[i] = recordOf(&cfg.Instruments[i])
	}
	return t
}

// gatewayTerms are the settings of the venue and its sessions that a
// cluster's nodes must share, though the journal does not depend on them:
// the venue's CompIDs, cancel-on-disconnect, and what each drop-copy
// session is granted.
func gatewayTerms(cfg *config.Config) map[string]string {
	out := map[string]string{"venue.sender_comp_id": cfg.Venue.SenderCompID}
	for i := range cfg.Sessions {
		sc := &cfg.Sessions[i]
		p := "session." + sc.CompID + "."
		out[p+"venue_comp_id"] = sc.SenderCompID
		out[p+"cancel_on_disconnect"] = strconv.FormatBool(cfg.CancelOnDisconnect(sc))
		out[p+"kind"] = sc.Kind
		if sc.IsDropCopy() {
			out[p+"copy"] = fmt.Sprintf("%v %v %v", sc.CopySessions, sc.CopyAccounts, sc.CopyAll)
		}
	}
	return out
}

// verifiedBounds are the matcher terms a single venue's start may change
// once it has replayed the journal under the recorded and the configured
// value and found the same events (verifyBoundChange): a bound the journal
// never reached changes nothing it replays.
var verifiedBounds = map[string]bool{"engine.orders_max": true, "engine.clordids_max": true}

// termsUpdate is what a start learns from the record and writes to it
// once its replay has succeeded (a start that fails leaves the record as
// it was): the configured terms; a change of verifiedBounds, verified
// before the replay (verifyBoundChange); the snapshots it may load.
type termsUpdate struct {
	record   termsRecord // the configured terms
	path     string
	legacy   string         // the instruments-only record to remove, or ""
	recorded map[string]int // changed verifiedBounds by configuration key: the recorded value
	changes  []string       // "key recorded, configured", for the log
	// newInstruments are configured instruments the record lacks, and
	// newSessions configured sessions after the recorded ones: the
	// snapshots, written without them, are not loaded (Server.replay).
	newInstruments, newSessions []string
	// recordedSessions is how many of the configured sessions the record
	// holds (0 without one): each ran, with its FIX store, at an earlier
	// start on this journal.
	recordedSessions int
	// replaced are the recorded terms the configuration differs from,
	// taken as configured because the journal holds no command yet.
	replaced []string
	// unrecorded: there is no record, and the journal holds commands.
	// Its snapshots may have been taken under other terms (a band they
	// hold, orders another band refuses), which loading one would keep,
	// or which would not load at all: none is loaded (Server.replay).
	unrecorded bool
	dirty      bool // the record is to be written
}

// write writes the record and removes an instruments-only one.
func (u *termsUpdate) write() error {
	if err := writeTermsRecord(u.path, u.record); err != nil {
		return err
	}
	if u.legacy != "" {
		if err := os.Remove(u.legacy); err != nil {
			return fmt.Errorf("configured terms: %w", err)
		}
	}
	return nil
}

// checkTermsRecord compares the configuration with the terms the data
// directory's journal was written under, before anything is replayed. A
// start is refused, with each difference named, when a recorded session is
// at another index or gone (its orders would belong to another CompID),
// when a recorded instrument changed or is gone (a resting order outside a
// band it was inside of is refused on replay and disappears; prices in
// ticks change their value with the tick size), or when a bound or risk
// limit of the matcher changed (an order accepted then may be refused on
// replay, or the reverse). Sessions added after the recorded ones, new
// instruments, and engine terms the record lacks (a record written by a
// build that did not record them) are accepted and recorded. A missing
// record (a new data directory, or one from before the record) is written
// from the configuration; one from before sessions and matcher terms were
// recorded has them added; without a record beside a journal that holds
// commands no snapshot is loaded (unrecorded). A journal that holds no
// command yet takes the configured terms whatever the record says
// (replaced, for the log). Moving the record aside accepts the
// configuration as it is, the whole journal replayed under it. Nothing is
// written here: the update is returned for the caller to write (when
// dirty) once its replay has succeeded. With verify, a change of
// verifiedBounds and nothing else is returned instead of refused, for the
// start to verify. With tool (a journal tool's check, which writes
// nothing) a refusal says to give the venue's configuration instead of how
// to start under this one.
func checkTermsRecord(cfg *config.Config, verify, tool bool) (*termsUpdate, error) {
	dir := cfg.Venue.DataDir
	path := filepath.Join(dir, termsRecordFile)
	current := termsOf(cfg)
	recorded, legacy, err := readTermsRecord(dir)
	switch {
	case err != nil:
		return nil, fmt.Errorf("configured terms: %w", err)
	case recorded == nil:
		// Without a record (moved aside to take the configured terms as
		// they are, or a data directory from a build that wrote none) the
		// terms the journal's snapshots were taken under are unknown: a
		// journal that holds commands is replayed whole under the
		// configured ones (snapshotsPredate).
		jdir := filepath.Join(dir, "journal")
		empty := true
		if _, err := os.Stat(jdir); err == nil {
			if empty, err = journalEmpty(jdir); err != nil {
				return nil, fmt.Errorf("configured terms: %w", err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("configured terms: %w", err)
		}
		return &termsUpdate{record: current, path: path, dirty: true, unrecorded: !empty}, nil
	}
	var diffs, hints []string
	update := &termsUpdate{record: current, path: path, recorded: map[string]int{}}
	if legacy {
		update.legacy = filepath.Join(dir, instrumentRecordFile)
	}
	newTerm := false
	hint := func(h string) {
		if !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	if recorded.Sessions != nil {
		for i, was := range recorded.Sessions {
			switch {
			case i >= len(current.Sessions):
				diffs = append(diffs, fmt.Sprintf("session %s (index %d) is no longer configured", was, i))
			case current.Sessions[i] != was:
				diffs = append(diffs, fmt.Sprintf("session index %d is %s in the journal, %s configured", i, was, current.Sessions[i]))
			default:
				continue
			}
			hint("Sessions are numbered in the configuration's order (ranges expanded): keep the recorded ones, in " +
				"that order, and add new sessions after them.")
		}
	}
	if recorded.Matcher != nil {
		for _, k := range slices.Sorted(maps.Keys(union(recorded.Matcher, current.Matcher))) {
			was, now := recorded.Matcher[k], current.Matcher[k]
			if _, ok := recorded.Matcher[k]; !ok && strings.HasPrefix(k, "engine.") {
				newTerm = true // a term the build that wrote the record did not record: recorded now
				continue
			}
			if was == now {
				continue
			}
			diffs = append(diffs, fmt.Sprintf("%s %s recorded, %s configured", k, orNone(was), orNone(now)))
			if n, err := strconv.Atoi(was); err == nil && verifiedBounds[k] {
				update.recorded[k] = n
				update.changes = append(update.changes, diffs[len(diffs)-1])
			}
			switch {
			case verifiedBounds[k]:
				hint("A single venue's start takes a new engine.orders_max or clordids_max once the journal replays the " +
					"same under both values (one that was reached does not), when nothing else changed.")
			case k == "risk":
				hint("Risk limits on or off decide what every replayed order is checked against: keep the recorded setting.")
			case strings.HasPrefix(k, "risk."):
				hint("Risk limits in force change through the admin API, which journals each change (README, \"Risk limits\").")
			}
		}
	}
	byID := make(map[uint32]recordedInstrument, len(current.Instruments))
	for _, r := range current.Instruments {
		byID[r.ID] = r
	}
	known := make(map[uint32]bool, len(recorded.Instruments))
	for _, was := range recorded.Instruments {
		known[was.ID] = true
		now, ok := byID[was.ID]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("instrument id %d (%s) is no longer configured", was.ID, was.Terms["symbol"]))
			continue
		}
		if changes := termChanges(was, now); changes != "" {
			diffs = append(diffs, fmt.Sprintf("instrument id %d: %s", was.ID, changes))
			if strings.Contains(changes, "call_extension") {
				hint("A journal written without call extensions replays as written only without them: set call_extension = " +
					"false on the instrument (a new data directory takes them).")
			}
		}
	}
	// The matcher numbers the configured instruments in the configuration's
	// order: a command for every instrument (an operator's halt or close of
	// all) changes them, and uncrosses their calls, in that order, and
	// snapshots list them by position. Recorded instruments swapped replay
	// the same journal to other events, so they keep their order; a new one
	// may come anywhere, as the recorded ones keep theirs among themselves.
	position := make(map[uint32]int, len(current.Instruments))
	for i, r := range current.Instruments {
		position[r.ID] = i
	}
	last := -1
	var lastWas recordedInstrument
	for _, was := range recorded.Instruments {
		p, ok := position[was.ID]
		switch {
		case !ok:
			continue
		case p < last:
			diffs = append(diffs, fmt.Sprintf("instrument id %d (%s) is configured before id %d (%s), which the journal has in the other order",
				was.ID, was.Terms["symbol"], lastWas.ID, lastWas.Terms["symbol"]))
			hint("Instruments are numbered in the configuration's order: keep the recorded ones in that order (a new one may " +
				"come anywhere).")
		default:
			last, lastWas = p, was
		}
	}
	verified := verify && len(diffs) == len(update.changes)
	if len(diffs) > 0 && !verified {
		// Terms protect commands: a journal that holds none (a first start
		// that failed later, on a port in use) takes the configured ones.
		empty, err := journalEmpty(filepath.Join(dir, "journal"))
		if err != nil {
			return nil, fmt.Errorf("configured terms: %w", err)
		}
		if empty {
			return &termsUpdate{record: current, path: path, legacy: update.legacy, replaced: diffs, dirty: true}, nil
		}
	}
	if len(diffs) > 0 && !verified {
		if tool {
			hint("Give --config the configuration the venue runs with.")
		} else {
			hint(fmt.Sprintf("To replay the journal under the configured terms as they are, move %s aside and start again: "+
				"the start then replays the whole journal, archive included, loading no snapshot (taken under the recorded terms).",
				filepath.Join(dir, recordFileName(legacy))))
		}
		return nil, fmt.Errorf("the configuration differs from the terms the journal in %s was written under: %s. "+
			"Replaying its commands under other terms would change them (orders of another session, orders refused or "+
			"repriced). %s", dir, strings.Join(diffs, "; "), strings.Join(hints, " "))
	}
	update.record.SnapshotsFrom = recorded.SnapshotsFrom
	update.record.JournalNextSeq = recorded.JournalNextSeq // until the replay has succeeded (Server.replay)
	update.dirty = len(diffs) > 0 || legacy || newTerm || len(current.Sessions) > len(recorded.Sessions) || recorded.Matcher == nil
	for _, r := range current.Instruments {
		if !known[r.ID] {
			update.dirty = true
			update.newInstruments = append(update.newInstruments, r.Terms["symbol"])
		}
	}
	if recorded.Sessions != nil && len(current.Sessions) > len(recorded.Sessions) {
		update.newSessions = current.Sessions[len(recorded.Sessions):]
	}
	update.recordedSessions = min(len(recorded.Sessions), len(current.Sessions))
	return update, nil
}

// snapshotsPredate reports whether the snapshots may predate the
// configured terms: the configuration adds instruments or sessions the
// snapshots were written without (a snapshot lists the instruments of its
// day by position and holds per-session state, risk figures and disabled
// sessions, for the sessions of its day), or there is no record of the
// terms they were written under (unrecorded).
func (u *termsUpdate) snapshotsPredate() bool {
	return u.unrecorded || len(u.newInstruments) > 0 || len(u.newSessions) > 0
}

// journalEmpty reports whether the journal directory holds no command:
// no record, live or archived, and no snapshot.
func journalEmpty(dir string) (bool, error) {
	snaps, err := journal.ListSnapshots(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if len(snaps) > 0 {
		return false, nil
	}
	for _, err := range journal.Records(dir, journal.ReaderOptions{}) {
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		return false, nil
	}
	return true, nil
}

// termsHash identifies the configured terms for a cluster's transport
// (cluster.TransportConfig.Terms): replicas apply the same commands, so they
// must apply them under the same terms, and a node configured otherwise is
// refused by its peers. The JSON of the terms is canonical (sorted keys).
// Engine terms left at zero are not hashed, so that a build which records a
// new engine term still joins older peers while it is unset. Beside the
// recorded terms it hashes what the clients see of whichever node leads
// (gatewayTerms): a node that would answer logons as another venue, or
// cancel on disconnect where the others do not, is refused as well.
func termsHash(cfg *config.Config) (uint32, error) {
	t := termsOf(cfg)
	for k, v := range t.Matcher {
		if strings.HasPrefix(k, "engine.") && (v == "0" || v == "0s") {
			delete(t.Matcher, k)
		}
	}
	b, err := json.Marshal(struct {
		termsRecord
		Gateway map[string]string `json:"gateway"`
	}{t, gatewayTerms(cfg)})
	if err != nil {
		return 0, err
	}
	return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)), nil
}

// CheckTermsRecord refuses a configuration that differs from the terms the
// data directory's journal was written under, as a start does, and writes
// nothing: for the tools that replay a journal (fixvenue journal verify,
// dump and book, events verify), whose results would otherwise describe
// another venue. One that adds an instrument to a journal holding a halt
// or close of all is refused too, as the start's replay refuses it
// (checkChangedBeforeConfigured). snapshotsFrom is the first seq whose snapshots fit the configuration
// (termsRecord.SnapshotsFrom; none when it adds an instrument or a session,
// or when there is no record beside a journal that holds commands).
func CheckTermsRecord(cfg *config.Config) (snapshotsFrom uint64, err error) {
	u, err := checkTermsRecord(cfg, false, true)
	if err == nil {
		err = checkChangedBeforeConfigured(cfg, addedInstruments(cfg, u.newInstruments))
	}
	switch {
	case err != nil:
		return 0, err
	case u.snapshotsPredate():
		return math.MaxUint64, nil
	}
	return u.record.SnapshotsFrom, nil
}

// checkChangedBeforeConfigured refuses for the tools, as a start does, a
// configuration that adds the instruments in added to a journal holding a
// command for every instrument (changedBeforeConfigured). A start finds it
// as it replays; each tool replays in its own way (into a hash, the books,
// the events to compare), so the journal is replayed here as that start
// would replay it (every command, archive included, into a fresh matcher:
// the snapshots predate the new instruments), only when the configuration
// adds one. A journal this replay cannot read, or one that starts from a
// Raft snapshot (whose state, sized without the new instruments, does not
// load), is left for the tool's own read to report.
func checkChangedBeforeConfigured(cfg *config.Config, added map[uint32]string) error {
	if len(added) == 0 {
		return nil
	}
	dir := filepath.Join(cfg.Venue.DataDir, "journal")
	if base, err := cluster.StartsFromSnapshot(dir); err != nil || base {
		return nil
	}
	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		return nil
	}
	sink := &changedSink{added: added}
	_, err = journal.Replay(dir, m, sink, journal.ReplayOptions{Logger: slog.New(slog.DiscardHandler)})
	runtime.GC() // the matcher's tables, before the tool's own
	if err != nil || sink.err == nil {
		return nil
	}
	return fmt.Errorf("%w. Give --config the configuration the venue runs with.", sink.err)
}

// changedSink keeps the first refusal of changedBeforeConfigured.
type changedSink struct {
	added map[uint32]string
	slot  [core.EventSlotMin]byte
	err   error
}

func (k *changedSink) Claim() []byte { return k.slot[:] }

func (k *changedSink) Commit() {
	if k.err == nil {
		k.err = changedBeforeConfigured(k.added, k.slot[:])
	}
}

// CheckJournalComplete refuses, as a start does (Server.replay), a journal
// that ends before what the data directory says was durable: the terms
// record's journal_next_seq, or a valid snapshot, published only once its
// command was durable (docs/ARCHITECTURE.md, "Start-up and shutdown"). It
// is for the tools that read a journal (fixvenue journal verify, dump and
// book), which would otherwise call a journal that lost records sound, and
// writes nothing. The snapshots are listed before the journal's end is
// read, so a venue writing beside the tool is never taken for a loss. A
// journal it cannot read is left for the tool's own read to report.
func CheckJournalComplete(cfg *config.Config) error {
	dir := filepath.Join(cfg.Venue.DataDir, "journal")
	rec, _, err := readTermsRecord(cfg.Venue.DataDir)
	if err != nil {
		return err
	}
	snaps, err := journal.ListSnapshots(dir)
	if err != nil {
		return err
	}
	r, err := journal.NewReader(dir, journal.ReaderOptions{LiveOnly: true, FromSeq: math.MaxUint64,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil
	}
	for _, err := range r.All() {
		if err != nil {
			return nil
		}
	}
	next := r.NextSeq()
	lost, partial := "the journal's volume not mounted, a segment lost, a partial restore", "a segment lost, or a copy or restore of the data directory that was partial"
	if t := r.Tail(); t != nil {
		// The reader stops at a bad frame at the end as at a torn tail,
		// but these records were durable: name the damage, not a loss.
		lost = fmt.Sprintf("%s holds a damaged record at offset %d: %s", t.Segment, t.Offset, t.Reason)
		partial = lost
	}
	if rec != nil && rec.JournalNextSeq > next {
		return fmt.Errorf("the journal in %s ends before seq %d, and when the venue last started or stopped cleanly it held every command "+
			"before seq %d, durably: records are missing (%s), and the venue refuses to start on it",
			dir, next, rec.JournalNextSeq, lost)
	}
	for _, sf := range snaps {
		if sf.Seq < next {
			break // newest first
		}
		if _, err := journal.CheckSnapshot(sf.Path); err != nil {
			continue // an invalid snapshot proves nothing; a start passes it over
		}
		return fmt.Errorf("%w: %s is at seq %d and the journal ends before seq %d, so records are missing "+
			"(%s), and the venue refuses to start on it",
			journal.ErrJournalBehindSnapshot, filepath.Base(sf.Path), sf.Seq, next, partial)
	}
	return nil
}

// durableBefore returns a seq every record before which the data directory
// shows was durable, and how it shows it: the terms record's
// journal_next_seq (terms, from checkTermsRecord: the journal's end at the
// last start or clean stop), or the newest valid
// snapshot in the journal directory, published only once its command was
// durable. A start gives it to journal.Open, which then refuses, rather
// than cuts as a torn tail, a bad frame at the journal's end that those
// records lie behind: cut, the bytes of an acknowledged record would be
// gone before the replay refused the journal for lacking it
// (docs/ARCHITECTURE.md, "Start-up and shutdown").
func durableBefore(journalDir string, terms *termsUpdate) (uint64, string) {
	var before uint64
	var evidence string
	if terms != nil && terms.record.JournalNextSeq > 0 {
		before = terms.record.JournalNextSeq
		evidence = fmt.Sprintf("the journal held them when the venue last started or stopped cleanly, %s", terms.path)
	}
	snaps, err := journal.ListSnapshots(journalDir)
	if err != nil {
		return before, evidence // no journal yet, or one Open reports on
	}
	for _, sf := range snaps { // newest first
		if sf.Seq < before {
			break
		}
		if _, err := journal.CheckSnapshot(sf.Path); err != nil {
			continue // an invalid snapshot proves nothing; a start passes it over
		}
		return sf.Seq + 1, fmt.Sprintf("%s, written once seq %d was durable", filepath.Base(sf.Path), sf.Seq)
	}
	return before, evidence
}

// recordJournalEnd records, at a clean stop, the journal's next seq as the
// terms record's journal_next_seq, once the journal has closed with every
// record it holds durable: the next start (journal.Open, given it by
// durableBefore, then Server.replay) and the journal tools
// (CheckJournalComplete) then refuse a journal that ends before it, where
// otherwise damage to the last records, the commands answered just before
// the stop, would be cut as a torn tail and a confirmed command lost
// without an error. Only under journal.fsync = "batch", as at a start:
// under "none" a close does not sync either, so those records may yet be
// lost to a power cut, which that policy accepts, and a start would be
// refused for it. Not on a cluster's leader: its journal is its node's
// Raft log, whose uncommitted tail a later leader may replace, and a
// node's start does not compare the record's mark. A venue whose journal
// failed records nothing (its Close fails, and this is not called). A
// record that is missing, or the instruments-only one, is left as it is:
// the start that writes the record compares the configuration with it.
// Failing to write it stops nothing, as the journal is whole: the next
// start only lacks the mark, and the log says so.
func (s *Server) recordJournalEnd() {
	w, local := s.journal.(*journal.Writer) // a leader's is the Raft log
	if !local || s.opts.Replica != nil || s.cfg.Journal.Fsync != journal.PolicyBatch || w.Err() != nil {
		return
	}
	next := w.NextSeq()
	if w.Durable()+1 != int64(next) {
		return // not every record durable: nothing to claim
	}
	dir := s.cfg.Venue.DataDir
	rec, legacy, err := readTermsRecord(dir)
	if err == nil && (rec == nil || legacy || rec.JournalNextSeq >= next) {
		return
	}
	if err == nil {
		rec.JournalNextSeq = next
		err = writeTermsRecord(filepath.Join(dir, termsRecordFile), *rec)
	}
	if err != nil {
		s.log.Warn("the journal's end could not be recorded at the stop: the next start cannot tell damage to its last records from a torn tail",
			"next_seq", next, "err", err)
	}
}

// readTermsRecord reads the data directory's record: nil when there is none;
// legacy when it is the instruments-only record.
func readTermsRecord(dir string) (rec *termsRecord, legacy bool, err error) {
	raw, err := readRegularFile(filepath.Join(dir, termsRecordFile))
	if errors.Is(err, os.ErrNotExist) {
		legacy = true
		raw, err = readRegularFile(filepath.Join(dir, instrumentRecordFile))
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	rec = &termsRecord{}
	if legacy {
		err = json.Unmarshal(raw, &rec.Instruments)
	} else {
		err = json.Unmarshal(raw, rec)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", filepath.Join(dir, recordFileName(legacy)), err)
	}
	return rec, legacy, nil
}

// readRegularFile is os.ReadFile for a file of the data directory that
// refuses, naming it, one that is not a regular file: reading a named pipe
// waits for a writer for ever (the start and the journal tools hung on a
// terms.json that was one; journal/doc.go, "Segment files").
func readRegularFile(path string) ([]byte, error) {
	if _, err := regularfile.Stat(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func recordFileName(legacy bool) string {
	if legacy {
		return instrumentRecordFile
	}
	return termsRecordFile
}

// termChanges names the terms that differ, as "key recorded, configured",
// in key order.
func termChanges(was, now recordedInstrument) string {
	var out []string
	term := func(terms map[string]string, k string) string {
		if v, ok := terms[k]; ok {
			return v
		}
		return instrumentTermAbsent[k]
	}
	for _, k := range slices.Sorted(maps.Keys(union(was.Terms, now.Terms))) {
		if w, n := term(was.Terms, k), term(now.Terms, k); w != n {
			out = append(out, fmt.Sprintf("%s %s recorded, %s configured", k, w, n))
		}
	}
	return strings.Join(out, ", ")
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}

func writeTermsRecord(path string, t termsRecord) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := durable.WriteFile(path, append(b, '\n'), 0o640); err != nil {
		return fmt.Errorf("configured terms: %w", err)
	}
	return nil
}

// verifyBoundChange replays the journal, from the snapshot the start will
// use (opts), once under the recorded bounds and once under the configured
// ones, each into a matcher of its own, and refuses the change unless both
// give the same events: then no command the journal holds was refused at
// the recorded bound, or would be at the configured one, and the journal
// means what it meant. Each replay's matcher is garbage once it is done.
func (s *Server) verifyBoundChange(c *termsUpdate, opts journal.ReplayOptions) error {
	opts.SnapshotLoaded = nil
	opts.Logger = slog.New(slog.DiscardHandler)
	was := *s.cfg
	for k, v := range c.recorded {
		switch k {
		case "engine.orders_max":
			was.Engine.OrdersMax = v
		case "engine.clordids_max":
			was.Engine.ClOrdIDsMax = v
		}
	}
	start := time.Now()
	replayed := func(cfg *config.Config) (journal.ReplayResult, *journal.HashSink, error) {
		m, err := core.NewMatcher(MatcherConfig(cfg))
		if err != nil {
			return journal.ReplayResult{}, nil, err
		}
		h := journal.NewHashSink()
		res, err := journal.Replay(filepath.Join(cfg.Venue.DataDir, "journal"), m, h, opts)
		runtime.GC() // the matcher's tables, before the next one's
		return res, h, err
	}
	resWas, hashWas, err := replayed(&was)
	if err != nil {
		return fmt.Errorf("configured terms: replaying the journal under the recorded %s: %w", strings.Join(c.changes, "; "), err)
	}
	resNow, hashNow, err := replayed(s.cfg)
	if err != nil {
		return fmt.Errorf("configured terms: replaying the journal under the configured %s: %w", strings.Join(c.changes, "; "), err)
	}
	if hashWas.Sum64() != hashNow.Sum64() || hashWas.Events() != hashNow.Events() || resWas.Records != resNow.Records {
		return fmt.Errorf("the configuration differs from the terms the journal in %s was written under: %s. The journal "+
			"replays differently under the configured value (%d events against %d recorded): it reached the recorded "+
			"bound, or reaches the configured one, and orders refused then would be taken on replay or the reverse. "+
			"Keep the recorded value until a snapshot taken after that point (journal.snapshot_interval, or the end of day) "+
			"is what the start replays from, or move %s aside and start again to replay all of it, archive included, under the configured terms as they are.",
			s.cfg.Venue.DataDir, strings.Join(c.changes, "; "), hashNow.Events(), hashWas.Events(), c.path)
	}
	s.log.Info("configured terms: bounds changed, the journal replays the same under both", "changes", strings.Join(c.changes, "; "),
		"commands", resNow.Records, "events", hashNow.Events(), "took", time.Since(start).String())
	return nil
}
