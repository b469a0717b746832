// Package console is the operators' web console, served by the venue on
// the admin address beside the admin API (README "Operating the venue").
//
// Pages (html/template, embedded with the small JavaScript and CSS they
// load; no build step, nothing from elsewhere):
//
//   - /market: every instrument's status, the day's last trade, the
//     reference (labelled: previous close or reference price) and the
//     change from it, the day's volume and trades, best bid and offer;
//   - /market/{symbol}: the depth ladder (LadderLevels price levels a side,
//     from the market data feed's books), the day's last TradesKept trades
//     and a chart of the day's last ChartPointsMax trades' prices, drawn in
//     SVG;
//   - /sessions and /sessions/{comp_id}: each FIX session's state, peer,
//     sequence numbers, message, order, cancel and reject rates, throttle
//     hits and open orders against the session's bound (open_orders_max,
//     "off" when it has none);
//   - /latency: order to ExecutionReport and order to feed, p50, p99,
//     p99.9 and max over the last minute and since start, with a
//     percentile plot, from the venue's HdrHistograms (package latency);
//   - /operations: halt or resume an instrument, or uncross one in a
//     call now (the admin API's resume, offered as "Uncross"), log out, disable or
//     enable a session, cancel a session's orders or one order (by a
//     session's ClOrdID or its OrderID, or from the session's open orders,
//     which it lists when asked, not with each update: the listing walks
//     the venue's open orders), turn a session's kill
//     switch on or off (ops, "Risk"; the row shows a switch that is on
//     and offers Reset then, Kill otherwise; not a drop-copy session's,
//     which has none), each confirmed on the
//     page and sent to the admin API with the operator token typed there
//     (never stored); and the operator commands the journal recorded, each
//     with its date and time (UTC)
//     (an instrument listed, a kill switch turned on or off and a limit
//     changed through the admin API among them: a limit by its name in
//     the configuration, with its new value, "none" for one removed; and
//     the automatic kills, by "automatic", with the rule that tripped).
//
// Every figure comes from the venue's event stream, never from engine
// state: the market data DepthCache (status, best bid and offer, the
// ladder: the feed's view, durable commands only), the console's own
// consumer of committed events, the tape (the day's last trade, volume,
// trades and chart, the previous close, operator commands; also durable
// commands only), and the ops Monitor (open orders per session, stops
// waiting for their trigger included, the
// reference price, and status and best bid and offer when market data is
// off). The admin API's GET /v1/instruments reports the day from the same
// tape (Tape.DayFigures, an ops.DaySource), so the two never disagree.
//
// Updates reach a browser over Server-Sent Events (stream.go): at most
// updates_per_second per browser, changes in between coalesced, one
// encoding per topic shared by every browser, and a deadline on each
// write, so that a browser that stops reading is dropped and holds
// nothing beyond its socket's buffers. A browser has one stream for all
// its tabs (/stream/<topic>,<topic>,…, a comma within a topic as %2C,
// each update an event named by its topic), kept by a SharedWorker (static/console-worker.js; a dedicated
// Worker per tab in a browser without one), opened again when its tabs'
// topics change: a stream holds an HTTP/1.1 connection (the console
// serves no HTTP/2, with TLS or without) for as long as it is open, and a
// browser keeps six to a host, so a stream per tab left a seventh tab
// hanging. The worker pings its tabs every 2 s and stops following one
// that has not answered for 6 s, as a tab that crashed says no goodbye
// (one that answers later is followed again). A topic the venue does not
// have (a tab left on the book of an instrument that a restart on another
// configuration no longer lists) is named in an "unknown" event the stream
// opens with, and that tab says so while the others stay live: refused,
// it took every tab off the air (16 such topics at most; a stream of no
// known topic is 404). A session's page whose session the venue no longer
// lists says so. streams_max bounds the streams: a
// page whose stream is refused (503, or 401) says why it is not live (a
// cluster node that no longer leads: which node does) and tries again
// every 5 s, which a browser does not do by itself.
//
// Access (ops.Ops.Authorize): on a loopback listener the pages need no
// token when called by a loopback name (127.0.0.1, [::1], localhost: a
// page elsewhere may have its own name resolve to loopback); beyond loopback (TLS only) a read or operator token, in the
// Authorization header or in the HttpOnly cookie the sign-in page sets
// (and a page's Sign out button, POST /signout, drops: no script can).
// Changes always need an operator token in the Authorization header, so a
// cookie alone can change nothing, and a POST a browser sends from a page
// of another origin, the sign-in's included, is refused (ops.CrossOrigin):
// a form elsewhere could sign the browser in with a token of its own. An unknown instrument or session in a
// URL is a 404 page, a page called with another method than its own a 405
// page with Allow; a missing or forged token is 401, a read token used
// for a change 403, with nothing done.
//
// # The day and restarts
//
// The day starts at the last EndOfDay the journal holds (before any, at
// the journal's start): an EndOfDay done empties each instrument's trades,
// chart, volume, last trade and first, high and low prices, and the day's
// last trade, if it traded, becomes the previous close, which the market
// row shows as its reference until the next trade, as an exchange does.
// The change is measured from the previous close or the reference price of
// a SetPriceBand, whichever the tape saw last; else the Monitor's (the
// reference of the band in force), else the day's first trade.
//
// A restart rebuilds the tape as the venue rebuilds the feed (package
// marketdata, "Restarts"): the venue hands the tape every event of the
// replayed journal (Tape.Replay), and saves the tape's state (state.go)
// beside each snapshot, captured after the snapshot's command as the
// feed's is (Tape.SnapshotAt), so that a start from that snapshot restores
// it (Tape.Restore) and replays the commands after it. A snapshot without
// the tape's state is passed over, so the pages after a restart show what
// they showed before it: the same trades, chart points, volume and
// operator commands. A cluster node keeps a tape while it follows, fed
// with the events of each command it applies as the command commits
// (Tape.Replay), so that a new leader's pages and admin API show the day.
//
// The journal list names each command's operator and filters, and what a
// status or band change set: a band change's reference price (a price of
// the instrument's tick) and band percent, from its OperatorResult. Where
// the result event a row is listed from does not (a kill switch's or a
// limit's RiskControlResult names no operator, a mass cancel's
// OperatorResult no account, a status change's no status, a refused band
// change's no band), the tape takes them from the command (Tape.Command),
// which it is shown before the command's events: by the admin API as it
// journals it, by a start-up's replay and by a cluster follower (and a
// Raft snapshot's replay) as they apply it. A row whose command the tape
// has no note of, or restored from a state saved by an older build (which
// kept none of them, nor a done band change's band), says that its
// operator, account filter, status or band is unknown, rather
// than show none: a cancel by account read as a cancel of every order. The
// tape keeps notes of as many commands awaiting their results as the admin
// API can have calls in flight (notesKept), so only calls that outlived
// admin.call_timeout, beyond those, lose theirs.
//
// Limits: the chart shows the day's last ChartPointsMax trades, not time
// bars; the journal list shows the last OperatorResultsKept operator
// commands, without their reason (in the command: `fixvenue journal dump`
// prints it), nor the value a refused limit change asked (its result
// carries the figure in the way instead), and not a FIX client's
// OrderMassCancelRequest, which is no operator's command. An automatic
// kill (a limit tripped) is listed with them, by "automatic", naming the
// subject and the rule (its RiskControlResult carries no figure: GET
// /v1/risk and the venue's log say what is known of it); it takes a place
// of the OperatorResultsKept.
package console
