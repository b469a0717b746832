package feedclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Bounds of the terminal view and the JSON book.
const (
	watchDepth          = 10                     // levels per side on screen
	watchTradesMax      = 10                     // recent trades on screen
	watchRefreshMin     = 100 * time.Millisecond // at most ten redraws a second
	bookJSONSettleMax   = 3 * time.Second        // BookJSON waits at most this long for the live edge after joining
	bookJSONJoinTimeout = 10 * time.Second       // and at most this long to join
	// notServingWait is how long Watch and BookJSON go on trying to join
	// while every recovery address they were given is not serving
	// (NoneServing): a cluster electing a leader serves again within a few
	// election timeouts; past that the leader's address is not among them,
	// and waiting would not change it.
	notServingWait = 5 * time.Second
)

// joinGiveUp decides when Watch and BookJSON stop trying to join a feed
// none of whose recovery addresses serves (notServingWait).
type joinGiveUp struct {
	since  time.Time // the first of the joins in a row that found none serving
	joined bool
}

// seen takes a recovery the client reported; it returns the error to give
// up with, nil to go on.
func (g *joinGiveUp) seen(r Recovery, now time.Time) error {
	switch {
	case g.joined || r.Cause != CauseJoin:
	case r.Outcome != Unrecovered:
		g.joined = true // a later failover is waited through, as always
	case !NoneServing(r.Err):
		g.since = time.Time{}
	case g.since.IsZero():
		g.since = now
	case now.Sub(g.since) >= notServingWait:
		return fmt.Errorf("feedclient: no recovery address serves market data (tried for %v; a cluster's leader serves it: "+
			"give every node's recovery address): %w", notServingWait, r.Err)
	}
	return nil
}

// ErrUnknownSymbol is BookJSON's error when the feed has no instrument of
// that symbol (Watch waits for one).
var ErrUnknownSymbol = errors.New("feedclient: the feed has no such symbol")

// Watch joins the feed described by cfg and draws a live view of symbol's
// top levels and recent trades on out (an ANSI terminal), redrawing at
// most ten times a second, until ctx ends. It returns nil when ctx ends.
// A symbol the feed does not list yet is waited for, the screen saying so
// and naming the symbols it lists: an operator may watch an instrument
// before adding it at runtime, whose definition then arrives in the
// sequenced stream (doc.go). A recovery address that is not serving (a
// cluster's follower) is passed over, the screen saying so; when none of
// them serves for notServingWait from the start, Watch returns that
// error. cfg.Callbacks is replaced.
func Watch(ctx context.Context, cfg Config, symbol string, out io.Writer) error {
	w := &watcher{symbol: symbol, out: out}
	runCtx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	var joining joinGiveUp
	cfg.Callbacks = Callbacks{
		OnBook: func(b *Book) {
			switch {
			case b.Symbol == symbol:
				w.book, w.dirty = b, true
			case w.book == nil:
				w.dirty = true // another instrument listed: the waiting screen names it
			}
		},
		OnTrade: func(b *Book, t Trade) {
			if b.Symbol == symbol {
				w.addTrade(t)
			}
		},
		OnRecovery: func(r Recovery) {
			w.lastRecovery, w.dirty = r, true
			w.recoveredSeq = w.client.NextSeq() // after a snapshot, the seq after the last it reflects
			if err := joining.seen(r, time.Now()); err != nil {
				w.gaveUp = err
				giveUp()
			}
		},
		OnIdle: func() {
			if w.book == nil && w.client.InSync() != w.drawnInSync {
				w.dirty = true // joined (or a gap since): the screen says whether the feed lists the symbol
			}
			w.maybeDraw()
		},
	}
	c, err := New(cfg)
	if err != nil {
		return err
	}
	w.client = c
	err = c.Run(runCtx)
	switch {
	case w.gaveUp != nil:
		return w.gaveUp
	case ctx.Err() != nil:
		return w.writeErr
	}
	return err
}

type watcher struct {
	symbol       string
	out          io.Writer
	client       *Client
	book         *Book
	trades       [watchTradesMax]Trade
	tradesN      int
	lastRecovery Recovery
	recoveredSeq uint64 // the client's NextSeq once lastRecovery ended
	dirty        bool
	drawnInSync  bool // the client was in sync at the last draw
	lastDraw     time.Time
	buf          []byte
	writeErr     error
	gaveUp       error // no recovery address serves (joinGiveUp)
}

func (w *watcher) addTrade(t Trade) {
	copy(w.trades[1:], w.trades[:watchTradesMax-1])
	w.trades[0] = t
	w.tradesN = min(w.tradesN+1, watchTradesMax)
	w.dirty = true
}

func (w *watcher) maybeDraw() {
	if !w.dirty || time.Since(w.lastDraw) < watchRefreshMin {
		return
	}
	w.dirty, w.lastDraw, w.drawnInSync = false, time.Now(), w.client.InSync()
	w.buf = append(w.buf[:0], "\x1b[H\x1b[2J"...) // home, clear screen
	switch {
	case w.book == nil && w.client.InSync():
		// Joined, and the feed lists no such symbol: not an empty book,
		// which would read as an instrument nobody trades.
		w.buf = appendWaitingView(w.buf, w.client, w.symbol)
	case w.book == nil:
		w.buf = fmt.Appendf(w.buf, "waiting for %s on the feed (next seq %d)\n", w.symbol, w.client.NextSeq())
	default:
		w.buf = appendBookView(w.buf, w.book, w.trades[:w.tradesN], watchDepth, w.client.NextSeq())
	}
	if r := w.lastRecovery; r.Outcome != 0 {
		switch {
		case r.Cause == CauseJoin && r.Outcome == Snapshotted && w.recoveredSeq > 0:
			// A join misses nothing: say where the snapshot put the books.
			w.buf = fmt.Appendf(w.buf, "\nlast recovery: joined with a snapshot at seq %d", w.recoveredSeq-1)
		case r.Cause == CauseJoin:
			w.buf = fmt.Appendf(w.buf, "\nlast recovery: %s, not joined", r.Outcome)
		default:
			w.buf = fmt.Appendf(w.buf, "\nlast recovery: %s from seq %d (%d messages)", r.Outcome, r.FromSeq, r.Count)
		}
		if r.Err != nil {
			// Why it failed (the recovery service refused the connection,
			// timed out, refused the snapshot): without it a watch that
			// cannot join shows only "unrecovered", for ever.
			w.buf = fmt.Appendf(w.buf, ": %v", r.Err)
		}
		w.buf = append(w.buf, '\n')
		for _, err := range r.PassedOver {
			// A follower's address before the leader's: said, rather
			// than shown as the connection reset it met.
			w.buf = fmt.Appendf(w.buf, "passed over: %v; the next address answered\n", err)
		}
	}
	if w.client.lines > 1 {
		w.buf = appendLinesView(w.buf, w.client.Stats().Lines)
	}
	if _, err := w.out.Write(w.buf); err != nil && w.writeErr == nil {
		w.writeErr = err
	}
}

// appendLinesView says what each line brought, with two lines: a line that
// brings nothing (a B line nobody sends, a network down) shows as 0, and
// one that brings only what the other brought first as all duplicates.
func appendLinesView(dst []byte, lines [2]LineStats) []byte {
	return fmt.Appendf(dst, "\nlines: A %d datagrams (%d duplicates), B %d datagrams (%d duplicates)\n",
		lines[0].Datagrams, lines[0].Duplicates, lines[1].Datagrams, lines[1].Duplicates)
}

// watchSymbolsListed bounds the symbols the waiting screen names.
const watchSymbolsListed = 16

// appendWaitingView says that the feed c has joined does not list symbol,
// and that the watch waits for it to be added, naming the symbols the feed
// lists (a mistyped symbol shows beside them).
func appendWaitingView(dst []byte, c *Client, symbol string) []byte {
	dst = fmt.Appendf(dst, "%s is not listed on the feed (seq %d): waiting for it to be added (fixvenue admin instrument add); Ctrl-C to stop\n",
		symbol, c.NextSeq()-1)
	return append(appendListed(dst, c), '\n')
}

// appendListed writes "the feed lists A, B, …", the symbols c's feed has
// defined, sorted, at most watchSymbolsListed of them.
func appendListed(dst []byte, c *Client) []byte {
	var symbols []string
	c.Books(func(b *Book) {
		if b.Defined {
			symbols = append(symbols, b.Symbol)
		}
	})
	if len(symbols) == 0 {
		return append(dst, "the feed lists no instrument"...)
	}
	slices.Sort(symbols)
	dst = append(dst, "the feed lists "...)
	dst = append(dst, strings.Join(symbols[:min(len(symbols), watchSymbolsListed)], ", ")...)
	if more := len(symbols) - watchSymbolsListed; more > 0 {
		dst = fmt.Appendf(dst, " and %d more", more)
	}
	return dst
}

// appendBookView renders a book and recent trades as plain text.
func appendBookView(dst []byte, b *Book, trades []Trade, depth int, nextSeq uint64) []byte {
	dst = fmt.Appendf(dst, "%s  %v  seq ", b.Symbol, b.Status)
	if nextSeq == 0 { // not joined (again, after a failover): no message applied yet
		dst = append(dst, '-')
	} else {
		dst = strconv.AppendUint(dst, nextSeq-1, 10)
	}
	dst = fmt.Appendf(dst, "  volume %d", b.Volume)
	if b.LastTradeQty > 0 {
		dst = append(dst, "  last "...)
		dst = strconv.AppendInt(dst, b.LastTradeQty, 10)
		dst = append(dst, " @ "...)
		dst = b.AppendPrice(dst, b.LastTradePriceTicks)
	}
	dst = append(dst, '\n')
	if a := b.Auction; a.Kind == mdsbe.AuctionUpdateKindIndicative && b.Status != mdsbe.TradingStatusOpen && b.Status != mdsbe.TradingStatusClosed {
		// In a call the book is crossed: what it would uncross at says more.
		dst = append(dst, "indicative "...)
		if a.MatchedQty > 0 {
			dst = strconv.AppendInt(dst, a.MatchedQty, 10)
			dst = append(dst, " @ "...)
			dst = b.AppendPrice(dst, a.PriceTicks)
		} else {
			dst = append(dst, "no cross"...)
		}
		switch a.ImbalanceSide {
		case mdsbe.ImbalanceSideBuy:
			dst = fmt.Appendf(dst, "  imbalance buy %d", a.ImbalanceQty)
		case mdsbe.ImbalanceSideSell:
			dst = fmt.Appendf(dst, "  imbalance sell %d", a.ImbalanceQty)
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, '\n')
	dst = fmt.Appendf(dst, "%6s %10s %12s | %-12s %-10s %-6s\n", "orders", "bid qty", "bid", "ask", "ask qty", "orders")
	var px [32]byte
	for i := 0; i < depth && (i < len(b.Bids) || i < len(b.Asks)); i++ {
		if i < len(b.Bids) {
			l := b.Bids[i]
			dst = fmt.Appendf(dst, "%6d %10d %12s", l.OrderCount, l.Qty, b.AppendPrice(px[:0], l.PriceTicks))
		} else {
			dst = fmt.Appendf(dst, "%6s %10s %12s", "", "", "")
		}
		dst = append(dst, " | "...)
		if i < len(b.Asks) {
			l := b.Asks[i]
			dst = fmt.Appendf(dst, "%-12s %-10d %-6d", b.AppendPrice(px[:0], l.PriceTicks), l.Qty, l.OrderCount)
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, "\nrecent trades\n"...)
	for _, t := range trades {
		ts := time.Unix(0, t.TransactTimeNs).UTC().Format("15:04:05.000")
		side := "buy"
		switch {
		case t.Auction:
			side = "auction" // an uncross has no aggressor
		case t.AggressorSide == mdsbe.SideSell:
			side = "sell"
		}
		dst = fmt.Appendf(dst, "%s  %8d @ %-12s %s\n", ts, t.Qty, b.AppendPrice(px[:0], t.PriceTicks), side)
	}
	return dst
}

// BookJSON joins the feed described by cfg, builds symbol's book from a
// snapshot plus the increments that follow, and returns it once the client
// has reached the live edge of the feed (its socket is drained, or a
// heartbeat confirms nothing is missing) as
//
//	{"symbol":"ACME","seq":123,"bids":[[100.25,10,2],...],"asks":[...]}
//
// where seq is the last feed sequence the book reflects and each level is
// [price, quantity, orders], best first, prices in decimal (tick size from
// the instrument's definition). When none of the recovery addresses serves
// for notServingWait, it returns that error at once rather than at its
// deadline. cfg.Callbacks is replaced.
func BookJSON(ctx context.Context, cfg Config, symbol string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, bookJSONJoinTimeout+bookJSONSettleMax)
	defer cancel()
	type result struct {
		json []byte
		err  error
	}
	done := make(chan result, 1)
	var c *Client
	var joinedAt time.Time
	finish := func(force bool) {
		if !c.InSync() {
			return
		}
		if joinedAt.IsZero() {
			joinedAt = time.Now()
		}
		if !force && time.Since(joinedAt) < bookJSONSettleMax {
			return
		}
		b := c.BookBySymbol(symbol)
		var r result
		if b == nil {
			// Which it lists, so that a mistyped symbol shows beside them.
			r.err = fmt.Errorf("%w: %q (%s)", ErrUnknownSymbol, symbol, appendListed(nil, c))
		} else {
			r.json = appendBookJSON(nil, b, c.NextSeq()-1)
		}
		select {
		case done <- r:
			cancel()
		default:
		}
	}
	var joining joinGiveUp
	cfg.Callbacks = Callbacks{
		OnIdle:      func() { finish(true) },
		OnHeartbeat: func(_ uint64, inSync bool) { finish(inSync) },
		OnBook:      func(*Book) { finish(false) },
		OnRecovery: func(r Recovery) {
			if err := joining.seen(r, time.Now()); err != nil {
				select {
				case done <- result{err: err}:
					cancel()
				default:
				}
			}
		},
	}
	var err error
	if c, err = New(cfg); err != nil {
		return nil, err
	}
	runErr := c.Run(ctx)
	select {
	case r := <-done:
		return r.json, r.err
	default:
	}
	if runErr == nil || errors.Is(runErr, context.DeadlineExceeded) || errors.Is(runErr, context.Canceled) {
		feed := cfg.FeedAddr
		if feed == "" {
			feed = "the given socket"
		}
		runErr = fmt.Errorf("feedclient: could not join the feed before the deadline (no snapshot from the recovery service at %s, or no packet on %s: is the venue running with market data on those addresses?): %w",
			cfg.RecoveryAddr, feed, runErr)
	}
	return nil, runErr
}

// appendBookJSON writes the book in BookJSON's format.
func appendBookJSON(dst []byte, b *Book, seq uint64) []byte {
	dst = append(dst, `{"symbol":`...)
	sym, _ := json.Marshal(b.Symbol) // JSON escaping; a string always marshals
	dst = append(dst, sym...)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, `,"bids":`...)
	dst = appendLevelsJSON(dst, b, b.Bids)
	dst = append(dst, `,"asks":`...)
	dst = appendLevelsJSON(dst, b, b.Asks)
	return append(dst, '}')
}

func appendLevelsJSON(dst []byte, b *Book, levels []Level) []byte {
	dst = append(dst, '[')
	for i, l := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = b.AppendPrice(dst, l.PriceTicks)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, l.Qty, 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(l.OrderCount), 10)
		dst = append(dst, ']')
	}
	return append(dst, ']')
}
