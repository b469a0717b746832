// Package console is the operators' web console, served by the venue on
// the admin address beside the admin API (README "Operating the venue").
//
// Pages (html/template, embedded with the small JavaScript and CSS they
// load; no build step, nothing from elsewhere):
//
//   - /market: every instrument's status, last trade, change from the
//     reference price in force, volume, best bid and offer;
//   - /market/{symbol}: the depth ladder (LadderLevels price levels a side,
//     from the market data feed's books), the last TradesKept trades and a
//     chart of the last ChartPointsMax trades' prices, drawn in SVG;
//   - /sessions and /sessions/{comp_id}: each FIX session's state, peer,
//     sequence numbers, message, order, cancel and reject rates, throttle
//     hits and open orders;
//   - /latency: order to ExecutionReport and order to feed, p50, p99,
//     p99.9 and max over the last minute and since start, with a
//     percentile plot, from the venue's HdrHistograms (package latency);
//   - /operations: halt or resume an instrument, log out, disable or
//     enable a session, cancel a session's orders, turn a session's kill
//     switch on or off (ops, "Risk"), each confirmed on the
//     page and sent to the admin API with the operator token typed there
//     (never stored); and the operator commands the journal recorded.
//
// Every figure comes from the venue's event stream, never from engine
// state: the market data DepthCache (status, last trade, volume, best bid
// and offer, the ladder: the feed's view, durable commands only), the
// console's own consumer of committed events, the tape (trades, chart,
// operator commands; also durable commands only), and the ops Monitor
// (resting orders per session, the reference price, and the market rows
// when market data is off).
//
// Updates reach a browser over Server-Sent Events (stream.go): at most
// updates_per_second per browser, changes in between coalesced, one
// encoding per topic shared by every browser, and a deadline on each
// write, so that a browser that stops reading is dropped and holds
// nothing beyond its socket's buffers. streams_max bounds the streams.
//
// Access (ops.Ops.Authorize): on a loopback listener the pages need no
// token; beyond loopback (TLS only) a read or operator token, in the
// Authorization header or in the HttpOnly cookie the sign-in page sets.
// Changes always need an operator token in the Authorization header, so a
// cookie alone can change nothing. An unknown instrument or session in a
// URL is a 404 page; a missing or forged token is 401, a read token used
// for a change 403, with nothing done.
//
// Limits: the tape covers events since start (a restart empties the
// trades and chart); the chart shows trades, not time bars; the journal
// list shows the last OperatorResultsKept operator commands, without
// their reason (in the command: `fixvenue journal dump` prints it).
package console
