// Package gateway is the venue's QuickFIX/Go application: it turns FIX 4.4
// messages into commands and events into FIX messages.
//
// Validation (validate.go): where a session keeps QuickFIX/Go's
// RejectInvalidMessage on (its default), the server gives QuickFIX/Go no data
// dictionary (so its session parses without looking every field up and
// validates nothing) and the session's Validator makes all of QuickFIX/Go's
// dictionary checks first thing in FromApp and FromAdmin, where QuickFIX/Go
// would have made them: a message whose fields are all plain, defined for its
// type, once each, non-empty, in order, of their type and enumeration, with
// every required field, passes from its wire bytes without allocating; any
// other is parsed again, its body left with its top-level fields alone (the
// groups found by walking its bytes with the dictionary: QuickFIX/Go's own
// parse with one misfiles the fields after a nested group; the handlers get
// that message, its groups readable from their count fields), and goes to
// QuickFIX/Go's own validator, so every reject is QuickFIX/Go's (one whose
// XmlData holds an SOH is validated with those bytes masked: QuickFIX/Go's
// validator refused it for a tag 0 without a value, a field it does not
// have). A session
// configured with RejectInvalidMessage=N keeps QuickFIX/Go's dictionary and
// validation as configured, and its Validator checks only the values the
// gateway's answers echo as the request gave them (an order's Side,
// OrdType, OrderQty… in its reject: echoedTags), with QuickFIX/Go's reject:
// echoed, a value the dictionary does not allow made an answer a
// validating client refuses. One verdict, in both kinds of session, is not
// QuickFIX/Go's: a field the dictionary types as an integer (INT, LENGTH,
// NUMINGROUP, SEQNUM, DAYOFMONTH) whose value is an optional '-' and digits,
// more than 18 of them after the sign and leading zeros (0000000000000000000001
// is 1), gets a session Reject 373=5 naming the first such field in the
// message (371) with a Text naming it, before QuickFIX/Go's validator or
// anything else reads it: QuickFIX/Go's integer parser wraps past 64 bits
// without an error, and NoPartyIDs 453=18446744073709551617 with one party
// was a valid order with one party. A plain order pays one length test per
// integer field for it.
//
// Inbound (FromApp, on each session's QuickFIX/Go goroutine): NewOrderSingle,
// OrderCancelRequest, OrderCancelReplaceRequest, OrderStatusRequest and
// OrderMassCancelRequest become one command each, encoded straight into a
// claimed slot of the command ring (sbe/venue flyweights, no copy); prices go
// from the decimal string to ticks and an off-tick price is refused, never
// rounded. SecurityListRequest is answered from the configuration,
// TradingSessionStatusRequest from the instruments' trading status, and
// OrderMassStatusRequest from the gateway's view of each session's open
// orders (kept by outbound from the events, seeded from the matcher's books
// at start-up; see docs/ARCHITECTURE.md); other message types go to handlers
// registered with Handle (market data) or get a BusinessMessageReject (380=3,
// with the message's ID field as BusinessRejectRefID: businessRejectRefIDTags),
// except a BusinessMessageReject, which is taken and never answered.
// Every enumerated value written is a typed constant of fixenums.go, valid in
// the FIX 4.4 dictionary the venue ships (a test checks each). What the gateway refuses on its own (unknown
// symbol, off-tick price, unsupported order type or time in force, throttled,
// command ring busy past its claim timeout, venue halted) is answered without
// a command, after the answers to the session's earlier commands, so that a
// session's answers keep the order of its requests; a refused cancel or
// replace's OrderCancelReject gives the OrderID and OrdStatus of the order
// it names, from the open-order view, which finds an order by OrigClOrdID
// in an index of each session's orders by ClOrdID (a map read under the
// lock outbound takes for every chunk of answers, where a scan of the
// session's orders held them for milliseconds a refusal); an OrigClOrdID a
// replace has superseded still names its order there, as in the matcher,
// until the order ends or an end of day (the Text adds that it is not the
// current ClOrdID), so that a refusal never tells a client with a resting
// order that it is unknown (37=NONE 39=8). An order ended today (filled,
// cancelled, expired) is named likewise, with its final OrdStatus (39=2,
// 4, C), by its OrderID and each ClOrdID it had (its last, those replaces
// took, a done cancel's), as the matcher's too-late reject names it, with
// the refusal's own CxlRejReason and Text: the view remembers the day's
// ended orders until the end of day's OperatorResult, seeded at start-up
// from the matcher's records. It remembers at most Config.EndedClOrdIDsMax
// of their ClOrdIDs (the matcher's engine.clordids_max, about 100 bytes
// each); past that bound an order that ends is not remembered, and a
// refusal naming it is answered 37=NONE 39=8 as before, until the end of
// day. A cancel journaled before CancelRemembersClOrdID left no record of
// its own ClOrdID in the matcher: the view, kept from the events, names
// the order by it too until a restart. Order types: market,
// limit, stop (40=3) and stop-limit (40=4, StopPx 99 required on both and
// refused on others); MaxFloor (111) makes an iceberg. Every report of a
// stop order echoes StopPx (fills and cancels read it from the open-order
// view, a reject what inbound noted of its command: postonly.go) up to the
// one that ends it, and a status request (35=H) for an order already done
// too, from what the matcher's ClOrdID record keeps of it; every report of
// an iceberg echoes its MaxFloor, the accept, replace and status from
// their events, its fills and its cancel or expiry from the open-order
// view (outbound.go, orderTerms: a Fill or an OrderCancelled carries
// neither MaxFloor nor the order's flags, and the view still holds the
// order while its last report is built), its reject as a stop's StopPx
// (postonly.go); an elected stop is a Restated report (150=D, ExecRestatementReason
// 99, Text naming the trade price: FIX 4.4 has no ExecType for a trigger),
// then the usual fills. An elected stop stays a stop order in every report,
// OrdType 3 or 4 with its StopPx, a status report included while it waits
// for an auction's uncross. A status report gives what the order was
// entered with as its other reports did, an ended order's too: StopPx,
// ExpireTime, MaxFloor of an iceberg and ExecInst 6 of a post-only order
// (the OrderStatus event carries them, the matcher's record of an ended
// order keeping them).
//
// After a fail-stop the server calls Halt with the part that failed: every
// logged-on session gets an unsolicited TradingSessionStatus of the venue,
// halted (a session that logs on later gets it at its logon), and every
// later order is refused naming that part, never the cause (docs/ARCHITECTURE.md, "A venue that failed").
//
// # Values that are not printable ASCII
//
// An application message, or a TestRequest, with a value holding a byte
// outside printable ASCII (0x20-0x7E; data fields, which a length field
// gives, aside) is refused before anything reads it: a session Reject
// (373=6, 371 the field), its MsgSeqNum consumed. The fields a Reject
// carries back are the FIX edge's: it drops a MsgType holding such a byte
// and logs out a session whose message has a routing field holding one. The venue sends back what a client names things by
// (ClOrdID, Account, request IDs, TestReqID), and FIX 4.4's strings are
// printable ASCII (printable.go; docs/ARCHITECTURE.md, "FIX 4.4 conformance
// of outbound messages").
//
// # Unsupported order fields
//
// A NewOrderSingle or OrderCancelReplaceRequest with a field that would
// change how the order trades and that the venue does not implement is
// refused (OrdRejReason 11, Unsupported order characteristic; on a replace
// an OrderCancelReject with the same Text), never traded as if the field
// were absent: MinQty (110) above the instrument's lot (every fill is at
// least a lot, so a smaller one asks nothing), MaxShow (210), EffectiveTime
// (168), CashOrderQty (152), OrderPercent (516), PegOffsetValue (211),
// DiscretionInst (388) and DiscretionOffsetValue (389), TargetStrategy
// (847), ParticipationRate (849), Spread (218), Yield (236), a PriceType
// (423) other than 2 (per unit), and a TrdgSesGrp (NoTradingSessions 386)
// entry with a TradingSessionID (336) other than the instrument's trading
// session (its Symbol, or ALL) or any TradingSessionSubID (625): an order
// trades in every phase of its instrument's session, and TimeInForce 2 or 7
// is how it keeps to an auction. So are fields that would give an order a
// limit or an expiry it does not keep: a Price (44) on a market or stop
// order, and an ExpireTime (126) or ExpireDate (432) on an order that is
// not GTD; and so are MaxFloor (111) and post-only (ExecInst 6) on an order
// that cannot rest (market, stop, IOC, FOK), which the matcher would refuse
// without naming the field. An order keeps its post-only through its
// replaces (with or without ExecInst 6), and every report of it carries
// ExecInst 6: its New, Replaced and status reports, its fills and the
// report that ends it (a cancel, an expiry, a mass cancel's or a
// cancel-on-disconnect's, read from the open-order view as an iceberg's
// MaxFloor is), and its reject (postonly.go: the gateway
// notes the seq of each post-only order it publishes, as the matcher's
// OrderRejected carries no flags; a reject of the gateway's own echoes the
// ExecInst asked); a stop order, whose trigger is a report of its own,
// can be neither post-only nor an iceberg. A replace with ExecInst 6 of an
// order entered without it is refused (CxlRejReason 99, the Text naming
// post-only), never amended into an order that may take. A cancel or
// replace that names another Side, Symbol, OrdType, TimeInForce or Account
// than its order's is refused likewise, the Text naming the field, the
// order's value and the one asked (mismatch.go: a session's latest
// changeAsksMax, 64, cancels and replaces are kept for that; the answer to
// an older one lists what must match). A status request (35=H) whose Side
// or Symbol is not its order's names no order, Side and the instrument
// identifying the order in FIX 4.4 as ClOrdID does: it is answered as one
// for an unknown order (103=5, the Text saying no order of that side in
// that instrument has the ClOrdID or OrderID: statusMismatchText), a Side
// other than buy or sell by the gateway, another by the matcher
// (core.StatusMatchesOrder, on every status request inbound publishes; the
// one askAtBound publishes for a possible resend goes without it, as a
// possible resend below the bound is answered whatever its Side). Once an
// end of day has run, a status request's unknown-order answer says that
// the end of day forgot the orders ended by then, and when it ran
// (forgottenAtEndOfDayText): a DAY order it expired is among them, whose
// report a client that logged on to a new cluster leader with a reset may
// not have had. A
// replace of a market order waiting for an uncross, or of a stop elected
// and waiting as one, is refused
// saying that it has no price to change (core.ReplaceSaysMarket, which
// every replace carries: the matcher's MarketNotReplaceable; outbound.go,
// marketNotReplaceableText). A replace refused for a price
// outside the band names the band's edges, and StopPx when the stop price
// is the one outside, as a new order's reject does. Fields that only describe the order
// (OrderCapacity, HandlInst, Text, parties…) are taken and not used. An
// order whose instrument is named by more than its Symbol, by a field of
// the Instrument component that names it otherwise or gives it terms of
// its own (SymbolSfx, SecurityID, SecurityExchange, NoSecurityAltID, a
// maturity, an option's PutOrCall, strike or coupon, NoUnderlyings:
// instrumentTags), is refused as an unknown symbol (OrdRejReason 1, the
// Text naming the tag), never traded on the Symbol alone, as a
// MarketDataRequest naming one is (gateway/fixmd) and an
// OrderMassCancelRequest by security is (MassCancelRejectReason 1, nothing
// cancelled). A mass cancel restricted to a trading session the venue's
// orders are not told apart by (a TradingSessionID other than ALL or, by
// security, its Symbol's; any TradingSessionSubID) is refused likewise
// (MassCancelRejectReason 6, sessionQualifier), never read as one of every
// order. Every order the venue holds was entered with its instrument
// named by Symbol alone, so a request about orders that names the
// instrument otherwise is about none of them, though it names one by
// ClOrdID (ignoring the field would act on an order the request does not
// describe): a cancel or replace is refused
// (an OrderCancelReject, CxlRejReason 99 for an order the session has, the
// order left as it is), an OrderStatusRequest answers unknown order (103=5)
// and an OrderMassStatusRequest by security a BusinessMessageReject (380=2),
// each Text naming the tag; a SecurityListRequest by symbol finds no
// instrument (560=2: a SecurityList has no Text). An order, cancel, replace
// and status request share the Text of an instrument the venue does not
// list (namedInstrument): the unlisted Symbol, no Symbol (naming the field
// the instrument was named by instead, if any), or the tag beyond it. One that only classifies
// it (SecurityType, CFICode, Product) is taken. The Validator's fast check says whether a message has
// any of these tags (CheckFor), so a plain order costs no lookup of them.
//
// # Currency and settlement
//
// The venue prices every instrument in one currency (Config.Currency, the
// configuration's [venue] currency) and settles every trade on one cycle.
// An order or replace whose Currency (15) is another, or that asks for
// another settlement, a SettlType (63) other than 0 (Regular) or any
// SettlDate (64), is refused as an unsupported order field (OrdRejReason
// 11; a replace CxlRejReason 99, the order left as it is), the Text naming
// the field, never traded on terms its sender did not ask for. Currency
// naming the venue's own, and SettlType 0, ask nothing and are taken. Each
// SecurityList entry carries the currency. With no currency configured,
// Currency is not checked and SecurityList entries carry none.
//
// # Possible resends
//
// An order or replace with PossResend (97) or PossDupFlag (43) = Y whose
// ClOrdID the matcher knows is answered with the order's status (the core's
// OrderFlagsPossResend, ReplacePossResend); one it does not know is a new
// order. The end of day forgets the day's ClOrdIDs but those of the orders
// still live, so one whose original was sent before it (OrigSendingTime
// 122, or SendingTime 52 without one, before the last end of day's command
// time) would be booked a second time: the gateway refuses it before any
// command (possresend.go; OrdRejReason 99, on a replace an
// OrderCancelReject 102=99, the Text saying so), unless its ClOrdID is the
// current one of a live GTC or GTD order of the session in the open-order
// view (one the end of day leaves resting; a DAY order shown live is one
// whose expiry the view has not taken yet), which the matcher answers as
// before. Only the message's sending times tell, and
// no command carries them: decided in the gateway, nothing of it is
// journaled, and the replay and every replica apply what they applied
// before. The gateway learns the end of day's time from its OperatorResult
// (outbound), from the control plane as the end of day's command is
// written into the ring, before it is published (ops.Config.EndOfDayStamped:
// a message taken after that is sequenced after the end of day), and at
// start from the replay, the last end of day's report (a start from the
// end of day's snapshot replays none) or, on a cluster's new leader, its
// follower (Gateway.SetDayStart). A message inbound checked in the instant
// before that and published after it is judged by the day before.
//
// # GTD expiry
//
// A GTD order (TimeInForce 6) gives its expiry as ExpireTime (126, UTC), or
// else as ExpireDate (432), the local market date it may trade through: it
// rests until the end of day on that date in the schedule's time zone
// (Config.MarketDateEnd), or with no schedule until the date ends in UTC.
// Both become the order's expire time in the command (ExpireTime when both
// are given); every report of the order up to the one that ends it echoes
// it as ExpireTime, a status report after it and a reject too (FIX 4.4 requires a GTD report's
// ExpireTime unless it has an ExpireDate): the matcher's from what inbound
// noted of the command (postonly.go), the gateway's the order's own 126 or
// 432 (an ExpireDate only when it is a date). Neither, an ExpireDate that is not a date (YYYYMMDD) or a year
// after 2261 is refused with OrdRejReason 99 and a Text naming the field; a
// date or time already past is the matcher's ExpireTimeInPast (one before
// 1678, which int64 nanoseconds cannot hold, is given as their earliest
// time, not wrapped round into the future). Either on
// an order that is not GTD is refused (OrdRejReason 11), never ignored.
//
// Outbound (RunOutbound, one consumer of the event ring): events become FIX
// messages while their commands are being made durable (an ExecutionReport's
// body is written as FIX bytes by one reused erBuilder and handed to
// QuickFIX/Go as a single field, the same bytes on the wire at half the cost
// of setting its fields one by one), and a message is
// handed to its session only once the command that caused it is durable; each
// session's messages reach QuickFIX/Go one at a time, after the connection
// reported the previous write (QuickFIX/Go's send path spins on a busy writer,
// see docs/ARCHITECTURE.md): outbound sends a report itself when the session
// has nothing queued and its last write is reported, otherwise through a
// bounded queue to the session's sender goroutine (outQueue: its memory
// grows with the backlog, up to the bound). A sent ExecutionReport's
// quickfix.Message is reused for the session's next one (reuse.go; at most
// reportsReusedMax kept per session).
// A full queue means the client is not reading: the session is disconnected,
// and its answers still reach the FIX store for the next logon. The order
// round trip (fixvenue_order_round_trip_seconds, Config.OrderToER) is
// recorded at the hand-over, by the monotonic clock from the message's
// arrival (a wall clock stepped meanwhile does not skew it), only for the
// answers of a command inbound published from a FIX message: inbound notes
// its seq and the arrival beside it (roundtrip.go), as the other commands
// have no arrival.
//
// Risk (risk.go): a reject caused by a pre-trade limit or a kill switch
// follows a RiskBreach event of the same command; outbound keeps the last
// one and writes OrdRejReason 3 (order exceeds limit) with a Text naming the
// limit, whose it is and the figures (on a replace, the OrderCancelReject's
// Text). RiskControlResult answers the control endpoint (AwaitRiskResult)
// and, with RiskBreach and RiskUtilisation, feeds the fixvenue_risk_* metrics.
// An automatic kill's is logged as a warning, by the live gateway only (not
// one rendering reports again from the journal), and kept in the view
// (RiskReport.AutoKill) until a reset: the rule, the limit in force, the
// command that tripped it and, for a breach count, the reject that did;
// its event carries no figure (AutoKill says what stands in for it).
//
// Sessions: throttles over a sliding one-second window of the wall clock
// (Config.Now; one stepped back goes on from its time, what the window held
// leaving it within that clock's next second) (orders and cancels
// rejected past their limits, the session logged out past its message limit,
// which counts every message the session sends as QuickFIX/Go reads it,
// session messages and refused ones too (Arrival, called from the session's
// Log: QuickFIX/Go answers some messages without calling the application),
// the FIX edge dropping what the client sends after (InboundStopper); a
// ResendRequest beyond
// ResendRequestsPerSecondMax a second on a connection (a Logon inside the
// session, which QuickFIX/Go answers, does not start the count again), from a BeginSeqNo
// below 1 or past the next MsgSeqNum the venue will send (Text giving the
// last one sent: the client's numbers are out of step), or to an EndSeqNo
// other than 0 below its BeginSeqNo, or with a BeginSeqNo or EndSeqNo of
// more than 18 digits (QuickFIX/Go reads it modulo 2^64, as another
// number), gets a session Reject (373=99 for the first, 373=5 naming the
// tag for the others) and is not served; so does a
// SequenceReset whose NewSeqNo has more than 18 digits, a MsgSeqNum the FIX
// edge would drop, with 373=5 and 371=36, before QuickFIX/Go applies it),
// cancel-on-disconnect through a
// journaled SessionDisconnected command. An application message read behind
// the session's Logout (QuickFIX/Go hands the messages it still holds to
// the application after OnLogout), or once the venue has logged the session
// out (LogOut, LogOutSession: until the connection closes, logoutWriteWait
// later, QuickFIX/Go still hands them over) takes nothing: it gets a
// BusinessMessageReject (380=4, LoggedOutText, 379 the message's ID field:
// businessRejectRefIDTags), stored, so the client finds
// it by resend at its next Logon; an order taken then would rest after its
// session's cancel-on-disconnect, with nobody logged on. A Logon read there
// (OnLogon on the connection the session logged out of, or on none) is
// ignored: it would count the session as logged on with no connection.
//
// A trading status change reaches every session logged on when it is
// handed over (durable) as an unsolicited TradingSessionStatus (325=Y), and
// so does an instrument added at runtime (its trading session, its first
// status); a session that logs on later reads it with a
// TradingSessionStatusRequest.
//
// A resend is written at the connection's pace (app.go, paceResend), and
// the session's answers meanwhile go to its sender's queue, since
// QuickFIX/Go holds the session's send lock for the whole resend
// (sender.resending); it stops at the next message once the connection is
// going (Gateway.ResendGoesOn).
//
// An application message whose header names a third party
// (OnBehalfOfCompID 115, DeliverToCompID 128) is refused with a
// BusinessMessageReject 380=6 (app.go, thirdPartyRefused): the venue
// routes for no one, and such an order was the sender's own.
//
// An order or replace naming an Account (1) its session may not name, one
// another session lists or, from a session with a list, one not on it, is
// refused before a command (accounts.go, OrdRejReason 15): accounts carry
// risk limits, kill switches and drop-copy grants past their sessions.
//
// A drop-copy session (dropcopy.go) enters nothing and receives a copy of
// each ExecutionReport of its grants (797=Y, DeliverToCompID 128); it
// recovers what it missed by ResendRequest, paced until its queue
// overflows, which disconnects it and stops the resend at once (outbound
// waits for room in that queue); beyond
// its FIX store it asks for a period's copies with a
// TradeCaptureReportRequest (35=AD), answered by AQ Accepted, the copies
// rebuilt from the journal (Config.ReplayEvents), and AQ Completed
// (dropcopyreplay.go): at most replayReportsMax copies per request, one
// replay at a time, paced by the client's connection as a mass status is
// (a small window of the session's queue, its connection's buffer at most
// half full). A stop ends a replay with AQ Rejected, which the stop waits
// to queue (errReplayStopped).
//
// A session's open orders are bounded (openbound.go,
// SessionConfig.OpenOrdersMax): the matcher's order pool is every
// session's, and one session resting orders without end would leave the
// others none. Past its bound an order that could rest or wait (any but an
// IOC or FOK order, or a market order while its instrument trades
// continuously, which trades or is cancelled at once: countsAgainstBound)
// is refused before any command (OrdRejReason 3, OpenOrdersBoundText
// naming the bound and the count), as a throttle is: nothing of it is
// journaled. A possible resend adds no order when the
// matcher knows its ClOrdID, and only the matcher knows every ClOrdID of
// the day: at the bound one is published as an OrderStatusRequest by its
// ClOrdID instead of an order (askAtBound), so that an order the session
// sent, live, ended or not answered yet, is answered with its status as
// below the bound, and one unknown gets the bound's reject, kept with the
// session until the answer (boundRefusal). The count is the session's orders in the
// open-order view plus those published whose answer the view has not
// taken yet, so a burst sent without waiting for answers cannot pass it.
// An order refused at the venue's own bounds says they are the whole
// venue's (CapacityText).
//
// Limits: OutboundQueueMax messages per session (DefaultOutboundQueueMax,
// 65,536): a command that answers one session more than that at once, a mass
// cancel of more resting orders, disconnects the session, whose answers then
// wait in its store for the next logon (a mass status is paced instead: it
// keeps at most massStatusWindowMax reports queued and the connection's
// outbound buffer at most half full, waiting up to massStatusStallMax; market
// data refreshes wait while as much is queued, MarketDataBacklogged, and go
// as their net change: gateway/fixmd, "Slow readers");
// OpenOrdersMax orders in the open-order view (the matcher's OrdersMax; an
// OpenView a cluster follower kept from events, Config.OpenView, has the
// same bound); statusReqsMax pending
// OrdStatusReqIDs per session (a status request past it is refused, as one
// is when the command ring is busy); boundResendsMax possible resends per
// session asked of the matcher at its open-order bound and not answered
// yet (one more gets the bound's reject at once, unasked); ClOrdID and
// Account lengths of the schema (36 and 16 characters), refused beyond. Prometheus metrics are named
// fixvenue_*; nothing here logs message contents, so passwords never reach a log.
package gateway
