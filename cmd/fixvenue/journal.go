package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/server"
)

const journalUsage = `usage: fixvenue journal <command> [options]

commands:
  verify [--data DIR] [--config FILE]               replay the journal and print its records, last seq and events hash
  dump   [--data DIR] [--config FILE] [--from SEQ]  print every record (from sequence number SEQ)
  book   [--data DIR] [--config FILE] [--symbol S]  replay the journal and print the books it leaves, as JSON

--data defaults to venue.data_dir of the configuration; --config is the configuration the journal
was written with (default: the embedded demo configuration).

dump prints every record from --from to the journal's end, one line each, holding one at a time
(and one archived segment, decompressed, at most a segment's size). book holds a matcher sized by
the configuration's engine bounds, as a start does, and prints every price level of each book.

Exit status: 0 when the journal reads to its end (a torn tail, which a start cuts, is only warned of
on stderr); 1 when it cannot be read or is refused, the reason on stderr (corruption, naming the
segment file and offset; records missing that a snapshot or the last start shows were durable, or
that a session's FIX store holds a report of; a configuration that differs from the journal's
terms, or adds an instrument to a journal holding a halt or close of all), or when what it prints
cannot be written; 2 for a usage error. dump asked for records no segment holds (--from before
the first segment it has: archived segments moved away) names them on stderr, prints from its
first record, and exits 1; a replica's records before its Raft snapshot are named, not missing.
`

func cmdJournal(args []string) int {
	sub, fs, exit, ok := subcommand("journal", args, journalUsage, "verify", "dump", "book")
	if !ok {
		return exit
	}
	dataDir := fs.String("data", "", "data directory (default: venue.data_dir of the config)")
	cfgPath := fs.String("config", "", "configuration the journal was written with (instruments and sessions)")
	var from uint64
	var symbol string
	switch sub {
	case "dump":
		fs.Uint64Var(&from, "from", 0, "first sequence number to print")
	case "book":
		fs.StringVar(&symbol, "symbol", "", "the instrument (default: every instrument, one JSON line each)")
	}
	cfg, exit := parseWithConfig("journal", fs, args[1:], cfgPath)
	if cfg == nil {
		return exit
	}
	if *dataDir == "" {
		*dataDir = cfg.Venue.DataDir
	}
	dir := filepath.Join(*dataDir, "journal")
	if st, err := os.Stat(dir); err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue journal: no journal at %s: %v\n", dir, err)
		return 1
	} else if !st.IsDir() {
		// Read as a directory, a file there failed on a cluster file the
		// journal never has, naming that instead.
		fmt.Fprintf(os.Stderr, "fixvenue journal: no journal at %s: not a directory\n", dir)
		return 1
	}
	cfg.Venue.DataDir = *dataDir
	snapshotsFrom, err := server.CheckTermsRecord(cfg)
	if err == nil {
		err = server.CheckJournalComplete(cfg)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue journal: %v\n", err)
		return 1
	}
	bar := newProgressBar(os.Stderr)
	switch sub {
	case "verify":
		var stores server.FIXStoresMark
		if !cfg.Cluster.Enabled() {
			// A single venue's start refuses a journal behind its FIX
			// stores; verify says so as well (a cluster node's stores are
			// its own days as leader, not checked at its start). The
			// stores are read before the journal, so that a venue
			// answering orders beside verify is not taken for one.
			stores = server.ReadFIXStoresMark(cfg)
		}
		res, err := cluster.Verify(dir, server.MatcherConfig(cfg), bar.update)
		bar.done()
		if err != nil {
			hint := ""
			if *cfgPath == "" && errors.Is(err, core.ErrSnapshot) {
				// A replica that caught up from a Raft snapshot starts from a
				// state its own configuration sized.
				hint = " (this replica starts from a Raft snapshot of a state its configuration sized: give the node's --config)"
			}
			fmt.Fprintf(os.Stderr, "fixvenue journal verify: %v%s\n", err, hint)
			return 1
		}
		if !cfg.Cluster.Enabled() && res.Entries.Marks == 0 {
			if err := stores.Check(res.LastExecID); err != nil {
				fmt.Fprintf(os.Stderr, "fixvenue journal verify: %v\n", err)
				return 1
			}
		}
		out := res.String() + "\n"
		if line := res.RaftLine(); line != "" {
			out += line + "\n"
		}
		// The line is what a script keeps and compares: one that could
		// not be written (a full disk) is no journal checked.
		if _, err := io.WriteString(os.Stdout, out); err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue journal verify: %v\n", err)
			return 1
		}
	case "book":
		err := printEngineBooks(os.Stdout, dir, cfg, symbol, snapshotsFrom)
		bar.done()
		if err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue journal book: %v\n", err)
			return 1
		}
	case "dump":
		missing := false
		err := journal.Dump(dir, os.Stdout, journal.DumpOptions{FromSeq: from, Progress: bar.update,
			Missing: func(from, first uint64) {
				bar.done()
				missing = dumpStartsLate(os.Stderr, dir, from, first)
			}})
		bar.done()
		if err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue journal dump: %v\n", err)
			return 1
		}
		if missing {
			return 1
		}
	}
	return 0
}

// dumpStartsLate says why a dump asked from seq from starts at first, the
// journal's first record from there on: the records between are in this
// replica's Raft snapshot, which holds every command before its journal's
// first, or in no segment (archived segments moved away, or lost). The
// dump went on from first silently, read as all the records asked for. It
// reports whether records are missing, which the dump's exit status says.
func dumpStartsLate(w io.Writer, dir string, from, first uint64) (missing bool) {
	seqs := func(lo, hi uint64) string {
		if lo == hi {
			return fmt.Sprintf("seq %d is", lo)
		}
		return fmt.Sprintf("seqs %d to %d are", lo, hi)
	}
	var why []string
	// A raft.snapshot that cannot be read leaves the records before the
	// first unexplained: journal verify names the damage.
	if base, ok, err := cluster.SnapshotNext(dir); err == nil && ok && from < base {
		why = append(why, fmt.Sprintf("%s in this replica's Raft snapshot (%s), not in its journal",
			seqs(from, min(base, first)-1), filepath.Join(dir, "raft.snapshot")))
		from = min(base, first)
	}
	if from < first {
		missing = true
		why = append(why, fmt.Sprintf("%s in no segment of %s or %s (archived segments moved away, or lost)",
			seqs(from, first-1), dir, filepath.Join(dir, journal.ArchiveDirName)))
	}
	fmt.Fprintf(w, "fixvenue journal dump: %s: the dump starts at seq %d\n", strings.Join(why, "; "), first)
	return missing
}

// progressBar draws a one-line bar on a terminal, at most every 100 ms; on
// anything else it stays silent so that piped output stays clean.
type progressBar struct {
	out   *os.File
	tty   bool
	last  time.Time
	shown bool
}

func newProgressBar(out *os.File) *progressBar {
	st, err := out.Stat()
	return &progressBar{out: out, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (b *progressBar) update(p journal.Progress) {
	if !b.tty || p.BytesTotal <= 0 || time.Since(b.last) < 100*time.Millisecond {
		return
	}
	b.last = time.Now()
	const width = 40
	done := int(float64(width) * float64(p.BytesDone) / float64(p.BytesTotal))
	if done > width {
		done = width
	}
	bar := make([]byte, width)
	for i := range bar {
		if i < done {
			bar[i] = '#'
		} else {
			bar[i] = '.'
		}
	}
	fmt.Fprintf(b.out, "\r[%s] %5.1f%% %d records", bar, 100*float64(p.BytesDone)/float64(p.BytesTotal), p.Records)
	b.shown = true
}

func (b *progressBar) done() {
	if b.shown {
		fmt.Fprintln(b.out)
		b.shown = false
	}
}

// printEngineBooks replays the journal (from its newest snapshot) into a
// matcher and prints the books the matcher holds, one JSON line per
// instrument in the shape of `fixvenue md book --json` without the feed's
// sequence number: {"symbol":"ACME","bids":[[price,qty,orders],...],"asks":[...]}.
// A level's quantity is what the book shows, as on the feed: an iceberg
// counts with its display slice, never its reserve.
// It reads engine state, which market data never does, so it is the check
// that the feed's books are the engine's. It never writes to the journal.
// Snapshots before snapshotsFrom are passed over (server.CheckTermsRecord).
func printEngineBooks(out io.Writer, dir string, cfg *config.Config, symbol string, snapshotsFrom uint64) error {
	// A cluster replica that caught up from a Raft snapshot holds no
	// command before it, in any segment: its books are the snapshot's
	// matcher and the commands after it, as verify replays them
	// (cluster.Verify). A replay from the first command would call them
	// missing and point at an archive that never held them.
	m, next, err := cluster.Base(dir, server.MatcherConfig(cfg))
	if err != nil {
		return err
	}
	opts := journal.ReplayOptions{FromSeq: next}
	if m == nil {
		if m, err = core.NewMatcher(server.MatcherConfig(cfg)); err != nil {
			return err
		}
		opts = journal.ReplayOptions{UseSnapshot: true, SnapshotUsable: func(seq uint64) bool { return seq >= snapshotsFrom }}
	}
	// A start reads every live segment and refuses damage in any of them,
	// those before the snapshot it loads too (journal.Open): book reads
	// them all as well, rather than the records after the snapshot only,
	// which printed the books of a journal the venue refuses to start
	// from, with exit 0. Its warnings (a torn tail, a snapshot passed
	// over) go to stderr, as verify's and dump's do.
	warn := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, err := journal.NewReader(dir, journal.ReaderOptions{LiveOnly: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	for _, err := range r.All() {
		if err != nil {
			r.Close()
			return err
		}
	}
	r.Close()
	opts.Logger = warn
	if _, err := journal.Replay(dir, m, nil, opts); err != nil {
		return err
	}
	found := false
	var orders []core.OrderView
	// The configured instruments, then those the journal added.
	listed := append([]config.Instrument(nil), cfg.Instruments...)
	for _, a := range m.AddedInstruments() {
		listed = append(listed, config.Instrument{ID: a.ID, Symbol: a.Symbol, Tick: a.Tick})
	}
	for _, in := range listed {
		if symbol != "" && in.Symbol != symbol {
			continue
		}
		found = true
		line := append([]byte(`{"symbol":`), strconv.Quote(in.Symbol)...)
		for _, side := range []struct {
			key  string
			side venue.Side
		}{{`,"bids":[`, venue.SideBuy}, {`],"asks":[`, venue.SideSell}} {
			line = append(line, side.key...)
			orders = m.BookOrders(in.ID, side.side, orders[:0])
			for i, n := 0, 0; i < len(orders); n++ {
				// A level is what it shows: an iceberg counts with its
				// display slice, as on the feed, not with its reserve
				// (marketdata/doc.go, "Icebergs"). Orders come in
				// priority order, so a level's orders are contiguous.
				px, qty, count := orders[i].PriceTicks, int64(0), 0
				for ; i < len(orders) && orders[i].PriceTicks == px; i++ {
					qty += orders[i].DisplayQty
					count++
				}
				if n > 0 {
					line = append(line, ',')
				}
				line = append(line, '[')
				line = decimal.FormatTicks(line, px, in.Tick)
				line = fmt.Appendf(line, ",%d,%d]", qty, count)
			}
		}
		line = append(line, "]}\n"...)
		if _, err := out.Write(line); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("no instrument %q in the configuration or the journal", symbol)
	}
	return nil
}
