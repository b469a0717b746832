// Package core is the venue's matching engine: a deterministic, single-
// threaded state machine that applies one binary command at a time and writes
// binary events, without allocating.
//
// # Contract
//
// A Matcher is built once by NewMatcher from a Config, which sizes all of its
// memory. Then one goroutine calls
//
//	err := m.Apply(cmd, sink)
//
// for each command, where cmd is an SBE command of schema venue (header and
// block, as it sits in a command-ring slot; trailing slot bytes are ignored)
// and sink is an EventSink: for each event the matcher calls sink.Claim(),
// encodes the event at the start of the returned slot (at least EventSlotMin
// bytes) and calls sink.Commit(). Every event carries the command's seq as
// causeSeq and the command's timestampNs. The matcher performs no I/O, reads
// no clock, starts no goroutine and takes no lock: time, sequence numbers and
// sessions arrive in the commands; OrderIDs, ExecIDs and TradeIDs come from
// counters inside the matcher. The same commands therefore give the same
// events, byte for byte, which is what journal replay relies on.
//
// Apply returns an error only for bytes it cannot apply: a short buffer,
// another schema, a template that is not a command, a block shorter than the
// schema's (the sbe errors, unwrapped), or an operator SetTradingStatus naming
// an unknown instrument or status (ErrInvalidCommand). Then no event is
// written and the state is unchanged. Invalid client requests are never
// errors: they are answered with OrderRejected, CancelRejected or OrderStatus.
// Apply never panics on input bytes (FuzzMatcher checks it); it panics only
// when a sink hands out a slot shorter than EventSlotMin, a wiring bug.
//
// Claim cannot fail because events are emitted while the state changes and
// cannot be taken back. An event-ring adapter waits on back-pressure; at
// shutdown it may discard into a scratch slot, since the journal holds the
// commands and a replay recreates the events.
//
// BufferSink is an EventSink over a reusable byte slice for tests, replay
// checks and tools. BookLevels, BookOrders, Order, Counters and friends are a
// read-only view for tests of other packages; like everything else they must
// be called from the applying goroutine or while it is stopped.
// WriteSnapshot and ReadSnapshot save and restore the whole logical state
// (books in priority order, ClOrdIDs of the day, counters, statuses); a
// restored matcher applies later commands exactly as the original would.
// ReadSnapshot never panics on input bytes and leaves the matcher empty on
// any refusal (FuzzReadSnapshot, which makes the checksum right so that
// changed bytes reach the checks after it). The pipeline calls WriteSnapshot after applying a Snapshot command, which
// itself has no effect but GTD expiry.
//
// Prefetch shows the matcher a command it will apply soon: it starts
// loading, one dependent step per call, the table slot, the ClOrdID record
// and the order that applying it will read (see prefetch.go), without
// waiting for them and without changing anything Apply reads
// (TestPrefetchChangesNothing, FuzzMatcher). The pipeline shows each
// published command up to PrefetchDistance (3) commands before applying
// it. With a book and tables larger than the caches it takes about a fifth
// off a command (BenchmarkMixedFlowDeepBook); on architectures other than
// amd64 it only hashes.
//
// # Rules
//
// Price-time priority per instrument; a trade prints at the resting order's
// price. Each trade gives two Fill events with one TradeID, the aggressor's
// first. An accepted order always gets OrderAccepted first, even when it then
// trades or is cancelled at once.
//
// A NewOrder is checked in this order, and the first failure is its reject
// reason: session index ≥ SessionsMax (CapacityExceeded); ClOrdID already
// known in the session (DuplicateClOrdId, or with PossResend an OrderStatus
// of the known order instead); unknown instrument (UnknownInstrument); side,
// type, time in force, STP mode or flag bits not in the schema
// (UnsupportedOrderCharacteristic); instrument halted or closed
// (InstrumentHalted, InstrumentClosed); a stop or stop-limit order with
// post-only (StopPostOnly); a market or stop order with a price or
// post-only, a stop price on an order that is not a stop, a post-only
// IOC/FOK, an expire time on a non-GTD order
// (UnsupportedOrderCharacteristic); a GTD expire time before the command's
// timestamp (ExpireTimeInPast); a limit price ≤ 0 ticks
// (InvalidPriceIncrement: prices are whole ticks, so off-tick decimals are
// the gateway's to refuse) or outside the band (PriceOutOfBand); a stop
// price likewise, then a stop-limit whose limit its stop price already
// passes (StopLimitPriceWrongSide), a stop price at or through the last
// trade price (StopPxAtOrThroughMarket); a quantity
// ≤ 0 (QtyOutOfRange), not a multiple of the lot (QtyNotLotMultiple), or
// outside [MinQty, MaxQty] (QtyOutOfRange); OrdersMax orders already resting
// when this one could rest or is a stop, StopsMax stops waiting, or
// ClOrdIDsMax ClOrdIDs used today (CapacityExceeded); post-only that would
// trade (PostOnlyWouldTake). Last, a display size (maxFloorQty) on an order that is not a resting
// limit order (a stop, market, IOC or FOK: UnsupportedOrderCharacteristic),
// negative or above the quantity (MaxFloorAboveQty) or off the lot
// (MaxFloorNotLotMultiple). Flag Iceberg in a NewOrder is refused
// (UnsupportedOrderCharacteristic): the matcher sets it from maxFloorQty.
// Rejected orders leave no trace: their ClOrdIDs may be used again.
//
// Time in force: DAY rests until EndOfDay (then OrderCancelled, ordStatus
// Expired, reason Expiry); GTC rests; GTD rests while the command timestamp
// is ≤ its expireTimeNs and expires, before any command with a later
// timestamp is applied, in (expireTimeNs, OrderID) order (on an idle venue
// the control plane's timer journals a Tick for it, package ops); IOC cancels its
// remainder (IocRemainder); FOK first checks that it can fill completely
// and, if not, is accepted then cancelled with FokNotFilled, as FIX venues
// answer a killed FOK with an execution report rather than a reject (the
// schema's FokNotFillable reject reason is therefore never used). Market
// orders take any time in force, never rest (MarketRemainder) and trade only
// with resting orders, which are inside the band, so never outside it.
//
// Cancel and cancel/replace address an order by OrigClOrdID within the
// session, or by OrderID (which must belong to the session); when both are
// given they must agree (OrderIdMismatch). Only the order's current ClOrdID
// addresses it: a replaced ClOrdID gets UnknownOrder, a finished order
// TooLateToCancel, with the order's status in the CancelRejected (a cancel
// with CancelRemembersClOrdID, or a replace with ReplaceEndedTooLate, that
// names a ClOrdID a replace or a cancel left, of an order that has ended,
// gets TooLateToCancel too: no request can change that order any more;
// every request the gateway journals carries the bit). Cancels
// work while halted or closed; replaces do not. A replace keeps the OrderID
// and the side, instrument, type, time in force and post-only (changing one,
// or asking post-only, ReplacePostOnly, of an order entered without it, is
// UnsupportedOrderCharacteristic; an empty account means unchanged); the new
// quantity is the new total. A price change or quantity increase loses time
// priority and may trade at once (after the OrderReplaced event); a decrease
// at the same price keeps it; a quantity at or below the filled quantity ends
// the order Filled, its quantity cut to the filled quantity, as FIX 4.4
// Appendix D answers it (OrderCancelled, reason ReplacedToZero, ordStatus
// Filled, cancelledQty the leaves taken off the book). A cancel must name
// the order's side and instrument when its checks say so (every cancel the
// gateway journals; UnsupportedOrderCharacteristic, as for a replace;
// cancels journaled before the check replay as they did). A cancel's own ClOrdID
// must be new in the session (DuplicateClOrdId when it names an order,
// checked once the order to cancel is found). With CancelRemembersClOrdID
// in its checks (every cancel the gateway journals) a cancel that is done
// records its ClOrdID for the day, naming the cancelled order as a
// ClOrdID a replace left does: a status request by it answers the order
// (under the order's current ClOrdID), a NewOrder or a request using it
// again is a duplicate (a PossResend NewOrder gets the order's status),
// and a cancel or a replace naming it as OrigClOrdID is TooLateToCancel; at
// ClOrdIDsMax the cancel is done and its ClOrdID not recorded. Cancels
// without it (journaled before it) record nothing and replay as they did.
// OrderStatusRequest (and a PossResend NewOrder or ReplaceOrder with a known
// ClOrdID, ReplacePossResend) answers
// live and finished orders until EndOfDay, a replaced ClOrdID with the
// order's current state under its current ClOrdID, else ordStatus Unknown
// with reason UnknownOrder. With StatusMatchesOrder in its checks (every
// status request the gateway journals) a request whose side or
// instrument is not the order's is answered ordStatus Unknown with reason
// UnsupportedOrderCharacteristic, echoing the request: they identify the
// order as ClOrdID does in FIX 4.4; requests journaled before the check
// replay as they did. The answer carries a stop's stop price, a GTD
// order's expire time, an iceberg's maxFloorQty and the flags PostOnly and
// Iceberg, a finished order's too: its record keeps them (recordTerms; FIX
// 4.4 requires the first two on every report of such an order, and the
// others say what the order was, as its other reports did). OrderTerms
// reads the same terms by OrderID without a command (bookview.go), for the
// reports rebuilt after a crash, whose orders may have ended.
//
// # Stops
//
// A Stop or StopLimit order (with its stop price in stopPxTicks) is
// accepted and then waits off the book, invisible to market data, until
// the instrument's last trade price reaches its stop price: at or above it
// for a buy, at or below for a sell. Stops are elected after the order that
// traded has finished (filled, rested or cancelled), inside the same
// command, one at a time, each finishing before the next is chosen: buy
// stops first, the lowest stop price first, then sell stops, the highest
// first, earliest first within a stop price. An elected stop is reported
// with OrderTriggered and then executes as a market order (Stop) or a limit
// order (StopLimit) with its time in force; it keeps its OrderID, ClOrdID
// and OrdType in every later event, and its stop price in those that carry
// one (a stop waiting for an uncross too, though its stop price no longer
// counts: OrderStatus, a kept record). Its trades may elect further stops:
// the cascade runs until the last trade price elects no waiting stop. A
// waiting stop can be cancelled, mass cancelled, expired (DAY at EndOfDay,
// GTD at its time) and replaced (a new stop price or a larger quantity
// loses its place among the stops of its stop price; a replace never
// elects it, and a stop price it keeps is not checked against the last
// trade, so that a stop elected outside continuous trading, waiting for
// the open, can be amended; a replace of an elected stop-limit ignores the
// stop price).
//
// # Icebergs
//
// A limit order with a maxFloorQty (FIX MaxFloor) is an iceberg: it trades
// its whole quantity on arrival, and once resting the book shows, and
// trades, only a display slice of at most maxFloorQty. When a trade
// empties the slice and quantity is left, a new slice is cut from the
// reserve and the order goes to the back of its price level (OrderRefilled,
// after the Fill): the aggressor goes on to the orders behind it, and may
// come back to the new slice (the market-data feed shows it as a new order
// under a public id of its own, never the OrderID, which would link the
// slices: marketdata doc, "Icebergs"). Events carry the display (displayQty in
// OrderAccepted, Fill and OrderReplaced) beside the full quantities, and
// OrderAccepted has flag Iceberg. A FOK counts the reserves it would reach
// through refills: all of them, unless a same-account order stops it
// (CancelAggressor, CancelBoth) before the slices have passed. A replace
// may change maxFloorQty (0 makes a plain order, and a plain order may
// become an iceberg): that loses priority like a new price; a smaller
// quantity keeps it, the slice shrinking only below the new leaves. The
// display lives beside the order (orderPool.ext), so that the order stays
// 128 bytes and other orders pay one flag test per trade.
//
// # Auctions
//
// A trading status may be a call phase: OpeningCall, ClosingCall or
// VolatilityAuction (auction.go). In a call, new orders, cancels and
// replaces are taken and nothing matches: limit orders rest even when the
// book crosses, market orders wait in a FIFO per side, IOC and FOK are
// refused (ImmediateInCall), and a market order needs a free order slot.
// TimeInForce AtTheOpening (FIX 59=2) is taken only in the opening call,
// AtTheClose (59=7) only in the closing call (AtTheOpeningOutsideCall,
// AtTheCloseOutsideCall; never on a stop); the uncross expires those left
// over (OrderCancelled, reason Expiry, ordStatus Expired). A replace of a
// waiting market order, an elected stop waiting as one included, is
// refused: it has no price to change (MarketNotReplaceable when the
// replace carries ReplaceSaysMarket, as every one the gateway journals
// does; UnsupportedOrderCharacteristic for those journaled before it).
//
// After every command that changes a call's book, AuctionIndicative gives
// the price, volume and imbalance the book would uncross at now, when they
// differ from the last one published in this call (a call starts from
// "nothing would trade, no imbalance": a call whose book is empty, or
// balanced with nothing crossing, publishes nothing), at most once per
// Config.IndicativeIntervalNs of command time (a change held back is
// published by the first command at or after the interval: no clock is
// read). Moving the instrument to Open or Closed uncrosses: AuctionUncrossed
// (price, volume, imbalance, and the rule that decided: MaxVolume,
// MinImbalance, MarketPressure or ReferencePrice; NoCross when nothing
// trades: then the price is 0 and the imbalance is the side with more
// interest in all, market orders plus every resting limit order with its
// reserve, by the difference, as in an indicative), then the trades, all at that price, market orders first, then
// limit orders in price-time priority, buy side reported first, neither
// the aggressor, flag auction set; then the market orders left over are
// cancelled (MarketRemainder) and the status changes. The price is the
// candidate (a price of a resting limit order) with the most volume, then
// the least imbalance, then the highest when every remaining candidate
// leaves buyers over (the lowest for sellers); else, as on Xetra and
// Euronext, the reference price itself when it lies between the lowest and
// the highest remaining candidate (it trades the same volume there, with
// at most their imbalance, and the imbalance reported is its own), the
// highest when the reference is above them, the lowest when it is below.
// When market orders alone would trade (the most volume is no more than
// either side's market orders, which trade first), they trade at the
// reference price, whatever limit orders rest beside them: a limit order
// that does not trade sets no price, and the imbalance is the one at the
// reference price. The reference price is the last trade while it lies
// inside the band in force, else the band's own reference price
// (RefPriceTicks, or the one an operator moved the band to): an uncross
// never prints outside the band. The volume counts
// icebergs' reserves; they trade slice by slice, refilled at the back of
// their level as in continuous trading. Self-trade prevention does not
// apply in an uncross. A halt keeps the call's orders: opening or
// closing from it uncrosses.
//
// Moving the opening call to the closing call, or the closing call to the
// opening call, with an OperatorCommand that carries UncrossBetweenCalls
// (the control plane sets it on every status change: the schedule's
// closing call that meets an operator's pre-open, an operator's resume
// into the group's call) ends the first call as opening or closing it
// would: its uncross (AuctionUncrossed, the trades, the market orders
// left over cancelled, its time in force expired), the status it ends in
// (Open after the opening call, the stops it elects run; Closed after the
// closing call, they wait for the open), then the second call, its own
// TradingStatusChanged. So from the call, from a halt in it, or from its
// extension, which ends then; the uncross is not extended. A volatility auction that a call meets has no time in force and no call
// its orders were entered for: its book and waiting market orders become
// the call's, its timer stops, and the call's end uncrosses them, with or
// without the flag. A command without the flag (an earlier build's record,
// or a SetTradingStatus command) does what it did: the first call's time
// in force expires, with no uncross, and its book, crossed or not, stays
// for the second call.
//
// Stops elected by an opening or volatility
// uncross run at once; after a closing uncross they wait, elected, until
// the instrument opens. Stops elected before an uncross to Open (by the
// close, or left waiting when a volatility interruption stopped their
// cascade) run first after it, reported as triggered by that earlier
// trade, whatever the uncross price; then those the uncross price elects.
//
// Volatility interruption: with InstrumentConfig.VolatilityBandTicks, an
// order in continuous trading that would trade at a price more than that
// from the last trade price before it (the band's reference price before
// the first trade, or when an operator has moved the band away from the
// last trade, as for an uncross) does not: VolatilityInterruption, then the instrument enters
// VolatilityAuction, the order's remainder rests (a limit order, or a
// market order, which waits) or is cancelled (IOC), and the auction
// uncrosses back to Open at the first command whose timestamp reaches
// VolatilityAuctionNs later, before that command's own effect (the
// operations timer sends a Tick then), or earlier when an operator opens
// it. A FOK counts only the liquidity inside the band, so it is killed
// rather than interrupted half-filled.
//
// Call extension: with InstrumentConfig.CallExtension, a phase change
// (SetPhaseStatus: the schedule's, or an operator's for a group) that
// would end the opening or the closing call with an uncross trading
// further than VolatilityBandTicks from the reference price extends the
// call instead (extendCall):
// VolatilityInterruption with OrderID 0 and the indicative uncross price,
// then the instrument enters VolatilityAuction for VolatilityAuctionNs.
// Its book stays the call's (the phase is kept): the call's time in force
// is still taken, and the uncross at the end of the extension, once and at
// whatever price the book then gives, reports the call's phase, expires
// its time in force left over and moves the instrument to Open after the
// opening call, Closed after the closing call. A phase change to where a
// volatility auction or an extension will end changes nothing
// (InvalidTransition), so that one sent again does not end it; an
// operator's SetTradingStatus of the instrument ends it at once and is
// never extended, nor is a halted call.
//
// Command time need not only grow: a command stamped more than a second
// (ClockStepBackNs) before the one before (a wall clock stepped back by an
// NTP step or an operator's date command; the stamps of several threads a
// few microseconds out of order are not, so that journals written before
// the rule replay as they did) bounds the auction timers by its time, so that none waits for the clock to come
// back to a time it left: a volatility auction ends at most
// VolatilityAuctionNs after it (earlier than the end its
// VolatilityInterruption announced, by the later clock), and an indicative
// the throttle holds is due at most IndicativeIntervalNs after it. A GTD
// order's ExpireTime is a wall time the client chose and is compared as
// it is: one that expired stays expired, and one resting expires once a
// command's time passes it, by whichever clock. The rule reads only the
// journaled times, so a replay agrees (CommandTimeNs: the last one).
//
// Self-trade prevention applies between orders of the same non-empty
// account; the aggressor's mode decides (Default: the account's mode from
// Config.AccountStpModes, else CancelResting): CancelResting cancels the
// resting order and goes on, CancelAggressor cancels the aggressor's
// remainder, CancelBoth both, None lets them trade. A FOK counts only the
// liquidity it would really trade under its mode.
//
// MassCancel cancels, in OrderID order, every order matching all its filters
// (session, instrument, side, account; each may be "any") and then reports
// the count; an unknown instrument or invalid side is refused in the report.
// SessionDisconnected with cancelOnDisconnect cancels the session's DAY
// orders (GTC and GTD stay, as on CME); the flag travels in the command, so a
// replay does not depend on today's session configuration. EndOfDay expires
// DAY orders, and orders at the opening or the close that their instrument's
// auction did not reach that day, and forgets the day's ClOrdIDs except the current ones of live
// orders. SetTradingStatus answers TradingStatusChanged.
//
// # Operator commands
//
// OperatorCommand is how an operator (the admin API) or the trading schedule
// changes the venue: set an instrument's trading status (one or all; as a
// phase change, SetPhaseStatus, the schedule's or an operator's for a whole
// group, it leaves an instrument an operator halted halted, and naming one
// is refused with InstrumentHalted: only an operator lifts a halt),
// EndOfDay, cancel the orders of a session, account or instrument, and
// the session actions (logout, disable, enable) that the gateway carries
// out, and moving an instrument's price band (reference price and percent)
// within the levels its configured band allocated, when every resting
// order, and the stop price of every stop order, stays inside it (stop
// prices do not move with the band). It names the operator and the reason, so the journal is the audit
// trail. Its flags say how the build that wrote it applies it
// (UncrossBetweenCalls: "Auctions"); a record from before they were
// appended has the shorter block and replays with none (widened;
// DecodeOperatorCommand and AppendText read it so too). It is answered by one OperatorResult, after the events it caused
// (TradingStatusChanged, OrderCancelled). A command that names an unknown
// instrument or session, or asks for a status the instrument already has,
// changes nothing and is answered with the reason (UnknownInstrument,
// UnknownSession, InvalidTransition); it is never an Apply error, because
// an error stops the venue.
//
// A halt remembers the status it interrupted (HaltedFrom), so that the
// control plane's resume lifts it to where the instrument would be without
// it: an instrument an operator closed, then halted (a halt of all halts
// the closed ones too), returns to Closed rather than opening. Any other
// status forgets it, and so does a phase change that passes over the halt
// (refused InstrumentHalted, or one of every instrument, whatever its
// answer: the only state a refused phase change changes), after which the
// group's phase says where the instrument would be. No event carries it
// (the control plane follows it from the Halted TradingStatusChanged and
// the phase change's OperatorResult); the snapshot does.
//
// OperatorCancelOrder cancels one live order for its owner (a client that
// cannot reach the venue, an order the venue's operations must pull), with
// the operator and the reason as an OperatorCommand has them: by OrderID
// (in any session, or only in the one named), or by any ClOrdID the order
// had in its session (a replaced ClOrdID, or a cancel's the matcher
// recorded, names the order it became). The order is cancelled as a mass
// cancel cancels it, with reason Operator: a resting, waiting (stop) or
// iceberg order, in any trading status, a halt's included. Its
// OperatorResult (action CancelOrder) names the order found, its session
// and instrument; an order that has ended is TooLateToCancel, none found
// UnknownOrder (a ClOrdID of a session the venue does not have:
// UnknownSession), and nothing changes.
//
// # Adding instruments
//
// AddInstrument lists an instrument while the venue runs (addinstrument.go):
// id, symbol, tick, lot, quantity bounds, reference price and band, initial
// status and schedule group. The matcher checks it as it checks a
// configured instrument (Config.validate) and refuses, changing nothing, a
// used id or symbol (DuplicateInstrument), bad values (InvalidInstrument), a
// full table (CapacityExceeded: Config.InstrumentsMax configured plus added
// instruments). With risk on, its cells (one per subject) were allocated
// with the table and start with each subject's limits in force. It answers with one InstrumentAdded carrying the
// reference data and the band in ticks, or the reason. The instrument
// table and its id index are sized for InstrumentsMax by NewMatcher, so
// nothing another command uses moves or grows; the command itself
// allocates its book's levels (O(band width)) and is the one command that
// allocates. The added instruments' reference data is matcher state: the
// snapshot carries it (format version 8, as 5 to 7 did, with the auction state) and ReadSnapshot lists them again.
//
// # Risk
//
// With Config.Risk, a new order that passed every check above is checked
// against pre-trade limits (risklimits.go, risk.go) of its subject: the
// account's when Config.Risk.Accounts lists it, else the session's. In
// order: maximum order quantity, maximum order notional (a market or stop
// order valued at the band's far edge), open orders and gross open notional
// (for orders that can rest, and stops and market orders in a call, which
// wait), credit (buys: executed buy notional net of sells today plus open
// buys) and the worst-case position in the instrument. Stops and icebergs pass the same checks; a
// waiting stop is an open order of its subject from its parking to its
// election, cancel or expiry. An order without a limit price (a stop, a
// market order waiting for an uncross) counts in the open figures, as in
// its checks, at the band's far edge (riskPrice); a band change values the
// waiting ones again, so that none counts as nothing. A market order
// entered in continuous trading, which was not held at entry, is checked
// against the open limits when a volatility interruption its trades started
// would leave its remainder waiting: past them the remainder is cancelled
// (reason RiskLimit, after a RiskBreach). The
// first breach is reported in a RiskBreach event (limit, figure, request)
// followed by OrderRejected with RiskLimitExceeded. A replace is checked on
// its delta (a figure it does not increase passes), and refused with a
// RiskBreach and a CancelRejected. A session or account whose kill switch is
// on gets KillSwitchActive (RiskBreach with limit None) for new orders and
// replaces; cancels pass. Session kill switches work without Config.Risk.
//
// RiskControl turns a kill switch on (cancelling the subject's orders,
// reason KillSwitch) or off, or reports utilisation (RiskUtilisation
// events); RiskSetLimit changes one limit. Both carry the operator and the
// reason for the journal, which the matcher does not read; a record from
// before those fields were appended replays with them empty
// (widened). Each answers RiskControlResult;
// an invalid value, an unknown session, account or instrument, or a limit
// that the figures already pass is refused and changes nothing. The value
// RiskLimitRemove removes a limit: a subject's is then none, and an
// instrument's follows the subject's again. An
// automatic kill (KillAfterBreaches, KillAtLoss) is decided during a command
// and carried out at its end, with a RiskControlResult AutoKill. EndOfDay
// restarts the day's figures. Limits and figures are in the snapshot, for
// the listed instruments (the cells of the room left for added ones hold
// no figures and follow the subject's limits). The cells take
// (SessionsMax + accounts) × InstrumentsMax × 64 bytes, allocated by
// NewMatcher.
// Without Config.Risk the order path pays one test per order, per trade and
// per order joining or leaving a price level; with limits on every session
// a place+cancel costs 10% more instructions, a fill+refill 15% and a
// sweep 13% (docs/benchmarks.md, "Risk checks"). A new order's checks are
// written out in enterCheckedOrder, with no call on the passing path but
// the account lookup; the aggressor's figures change once per match, each
// resting order's once per fill.
//
// # Structures and their costs
//
// Price levels: each side of each instrument is an array with one level per
// tick of the price band (index = priceTicks − band low), plus a two-tier
// bitmap of the non-empty levels and the index of the best one. A level is a
// FIFO of orders, an intrusive doubly linked list through the order pool, with
// its total quantity. Joining a level, leaving it and the best price are O(1)
// whatever the depth; finding the next best level when the best empties reads
// at most 2 + levels/4096 words. The price band is the only set of prices an
// order can have, which is what makes the array possible.
//
// Waiting stops are held in the same structure as the book, a second pair
// of price-level arrays per instrument indexed by stop price (stop.go), so
// that parking, cancelling and electing the next stop are O(1); they take
// order slots (StopsMax of the OrdersMax) and are listed like resting
// orders. Checking for elected stops after an order costs one test when
// the instrument has no stops.
//
// Orders live in a pool of OrdersMax+1 fixed slots with a free list (the
// extra slot serves an order that will not rest while the books are full).
// Each live order is also in its session's list and in the list of all
// orders, both in OrderID order, so that mass cancel, cancel-on-disconnect and
// EndOfDay cost O(orders concerned) and are deterministic. GTD orders are in a
// binary min-heap with positions kept in the orders: checking for expiry is
// O(1) per command and each expiry, cancel or fill of a GTD order O(log n).
//
// The day's ClOrdIDs are records in one array. An open-addressing table
// kept at most half full indexes them by (session, ClOrdID), hashed and
// compared as five NUL-padded words (as the wire fields carry ClOrdIDs, so
// that they are read, compared and written back without a byte loop; the
// words are hashed with multiplications, not xxhash, which measured 10%
// more instructions per place+cancel: docs/benchmarks.md, "ClOrdID hash"). It
// keeps ClOrdIDs that differ in their last character, as client counters
// do, in one or two cache lines, so that a stream of new orders does not
// miss the cache on every insert; at production sizes those misses
// otherwise dominate. It probes by a step chosen by the ClOrdID's prefix,
// because linear probing let each counter's full bucket push later keys
// along for many slots. OrderID → current record is a plain array for the
// OrderIDs of the day (they are the matcher's counter, and each new one
// comes with a new record, so ClOrdIDsMax entries hold them) and an
// open-addressing table, probed linearly, for the orders of earlier days
// still indexed. Nothing is deleted during the day, so there are no
// tombstones; EndOfDay compacts the records and rebuilds the indexes.
//
// # Limits
//
//   - An order's notional, MaxQty at the band's top at most, is within
//     OrderNotionalMax (the largest risk limit): NewMatcher, AddInstrument
//     and a band change (InvalidPriceBand) hold it, so that no notional
//     wraps int64 or passes "no limit".
//   - MaxQty is at most MaxQtyFor(OrdersMax, ClOrdIDsMax), (2^63−1) /
//     (OrdersMax + ClOrdIDsMax + 1): a level's and a side's totals, an
//     auction's volumes, a fill-or-kill's available quantity, the open
//     quantities of the risk figures and the day's traded volume add at
//     most that many orders' quantities, so none wraps.
//   - The band is fixed at start-up from RefPriceTicks and BandPercent; a new
//     reference price needs a restart (and an empty book outside the new
//     band). Each level costs 24 bytes and a bit per side: a band of
//     LevelsPerSideMax levels is checked at NewMatcher (default 2^20, at most
//     2^22), so bands of a few thousand ticks cost a few hundred kilobytes.
//   - ClOrdIDsMax bounds the ClOrdIDs of one day (orders, replaces and the
//     cancels that record theirs: a place and cancel takes two); at the
//     bound new orders and replaces are rejected until EndOfDay, and a
//     cancel is done without recording its ClOrdID. A ClOrdID
//     costs 120 bytes of record plus 36 to 68 bytes of indexes and 32
//     bytes of terms, touched only by stop, GTD, iceberg and post-only
//     orders, an order slot 128 bytes (two cache lines) plus 24 bytes
//     touched only by icebergs and elected stops waiting for an uncross
//     (orderExt). The memory is reserved at start-up and holds no pointers
//     (the garbage collector never scans it); the operating system backs it
//     as it is touched.
//   - Status requests by OrderID, and cancels of finished orders, are answered
//     only until EndOfDay forgets the finished orders. EndOfDay clears and
//     rebuilds the ClOrdID tables, O(ClOrdIDsMax): a pause of up to about
//     half a second at the default size, while the market is closed.
//   - Session indexes are below SessionsMax (0xFFFF means "any" in MassCancel).
//   - The ClOrdID hash is not keyed: a session that picks colliding ClOrdIDs
//     makes its own lookups probe longer (never wrong, bounded by the table);
//     the gateway's throttles bound how fast it can do so.
//   - The matcher is not safe for concurrent use: one goroutine owns it.
//
// # Checking
//
// CheckInvariants verifies the whole state (books never crossed, level totals
// equal their FIFOs, bitmap and best agree, every pool slot in use is a
// resting order or a waiting stop indexed everywhere, waiting stops only in
// the stop structures and never elected by the last trade price, the GTD heap holds exactly the GTD
// orders, and quantity is conserved: ordered = filled + cancelled + resting).
// Tests call it after every command; building with -tags invariants makes
// Apply call it and panic on a broken invariant: after every command while
// the state is small, and once the state passes invariantUnitsPerCommand
// units (pool slots, price levels, ClOrdID records) after every
// units/invariantUnitsPerCommand+1 commands, so that a replay of a long
// journal stays linear; the panic names the last clean command and the one
// whose check failed.
// testdata/*.txt are golden scripts (see TestGolden; -update rewrites them),
// TestMatcherAgainstModel compares the events with a reference model over
// random commands (-long for millions, -seed to replay), FuzzMatcher feeds
// arbitrary bytes (use -fuzzminimizetime of a few seconds: each input runs the
// model too), and the benchmarks mirror the reference Java engine's table
// (make bench-instr counts their instructions per iteration by part of the
// order path, which a noisy machine does not move; TestBenchInstrScript).
// Commands and events are read and written through the generated
// flyweights; the order flow uses their hot-path wraps (venue.DecodeX,
// venue.OverwriteX) and moves ClOrdIDs, accounts and the events' shared
// report head a word at a time (wire.go): TestCommandDecoding,
// TestCommandHeaderErrors and TestEventEncoding hold that to the
// flyweights' own getters and setters byte for byte.
package core
