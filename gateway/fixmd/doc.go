// Package fixmd serves FIX market data on the order sessions.
//
// A MarketDataRequest (V) is answered with a MarketDataSnapshotFullRefresh
// (W) per requested symbol; with SubscriptionRequestType 1 the session stays
// subscribed and gets a MarketDataIncrementalRefresh (X) with the changed
// levels (MDUpdateType 1) or a new W (MDUpdateType 0) after each change;
// SubscriptionRequestType 2 ends the subscriptions of that MDReqID (a Y
// with Text alone, no MDReqRejReason fitting, when the session has none
// under it). What the
// venue cannot serve is refused with a MarketDataRequestReject (Y) and a
// MDReqRejReason: 0 unknown symbol, 1 duplicate MDReqID, 2 too many
// subscriptions on the session (insufficient bandwidth, FIX's reason for a
// capacity; the Text names the bound), 4 unsupported
// SubscriptionRequestType, 5 unsupported MarketDepth, 6 unsupported
// MDUpdateType, 7 AggregatedBook N (a book by order: the
// venue serves price levels, each with NumberOfOrders), 8 an MDEntryType
// other than bid (0), offer (1), trade (2), imbalance (A) and trade volume
// (B), 9 a TradingSessionID
// other than ALL or the requested symbols (each instrument is the trading
// session of its symbol, as in TradingSessionStatus) or one that leaves a
// requested symbol out, and any TradingSessionSubID, A a Scope other than
// 1 (local market: the venue's own book), B any OpenCloseSettlFlag (no
// opening, closing or settlement entries are served), and 0 a SymbolSfx
// (no listed instrument has one) or another field of an entry's instrument
// that names it otherwise or gives it terms of its own (a SecurityID, a
// SecurityExchange, a maturity, underlyings or legs:
// gateway.NamesInstrument, as for an order), the venue naming its
// instruments by Symbol alone; each Text names the field. A field that only
// classifies the instrument (SecurityType, CFICode, Product) is taken.
// ApplQueueAction 2 (overlay last) is what the venue does for a slow
// reader ("Slow readers") and is taken; another ApplQueueAction, and any
// ApplQueueMax, get a Y with Text alone naming the field (FIX 4.4 has no
// MDReqRejReason for them). MDImplicitDelete
// is taken as Y or N: a level that leaves the requested depth is always
// deleted explicitly, before the level that takes its place is added.
// NoMDEntryTypes (267) is required, as FIX 4.4's
// dictionary has it: a request without it gets a session Reject (3,
// RefTagID 267); one with NoMDEntryTypes 0 gets bids and offers, any other
// only the types it lists. W and X are never sent again for a
// ResendRequest: the gateway has QuickFIX/Go gap-fill them, as the book
// they showed is stale by then (docs/ARCHITECTURE.md, "FIX 4.4 conformance
// of outbound messages").
//
// # Trades
//
// A subscription to MDEntryType 2 (trade) gets the instrument's last trade
// as one entry, MDEntryPx its price and MDEntrySize its quantity: in the W
// once the instrument has traded, and as an X entry with MDUpdateAction 0
// (new) in each refresh in which it traded. Refreshes carry state, not
// events ("Slow readers"): trades between two refreshes, close together or
// while the client was slow to read, come as the last of them; each trade
// is on the binary feed (marketdata). MDEntryType B (trade volume) is the
// quantity traded in the trading day, MDEntrySize alone, in the W and as an
// X entry with MDUpdateAction 1 when it changes; an end of day sets it to 0
// and keeps the last trade. Both come from the feed's instrument state, so
// a client joining later and one subscribed all along agree.
//
// # Auctions
//
// During a call (opening, closing or volatility auction) the matcher
// publishes the uncross the book would make now (core's "Auctions"); a
// subscription to MDEntryType A (IMBALANCE, the FIX 4.4 value: 4.4 has no
// auction clearing price type) gets it as one entry per instrument:
//
//	269=A  IMBALANCE
//	270    MDEntryPx: the indicative uncrossing price (absent when nothing
//	       would trade, rule NoCross)
//	271    MDEntrySize: the volume that would trade at it
//	277    TradeCondition: P (imbalance, more buyers) or Q (more sellers);
//	       absent when the sides match
//	58     Text: "imbalance <buy|sell|none> <qty>; rule <rule>", the
//	       quantity left over and the rule that chose the price
//	       (MaxVolume, MinImbalance, MarketPressure, ReferencePrice, NoCross)
//
// With NoCross, 271 is 0 and the imbalance (277 and 58) is the whole buy
// interest against the whole sell interest (market orders and every
// resting limit order): a call with 10 bought and no sellers shows 277=P,
// "imbalance buy 10; rule NoCross".
//
// The W of a subscription carries the entry while a call is on and has
// published one (a call with an empty book has not); each change
// sends an X entry with MDUpdateAction 0 (the call's first indicative) or 1
// (a new price, volume or imbalance; there is one entry per instrument, so
// no MDEntryID), and the uncross, or any status that is neither a call nor
// a halt, sends MDUpdateAction 2 with the last price. A halted call keeps
// its entry (its orders stay, and the matcher publishes its changes), so it
// is there when the call resumes. Changes come as often as the matcher
// publishes them (engine indicative_interval). The feed's saved state keeps
// the entry across a restart from a snapshot.
//
// Books come from a marketdata.DepthCache that the feed keeps current after
// each batch of durable events, never from the engine, so FIX market data
// shows what the UDP feed shows. The feed's goroutine only marks the changed
// instruments; Run sends the refreshes on its own goroutine, and answers go
// through the gateway's paced per-session sender (Sender). The gateway calls
// Handle for each V (gateway.Gateway.Handle) and SessionEnded when a session
// ends, which drops its subscriptions. A venue whose market data is off
// registers Off instead, which refuses each V with a Y naming its MDReqID.
// An instrument added while the venue runs is known to the gateway (which
// tells the sessions of it and takes its orders) before the feed has
// applied its addition, which is when the cache learns it: a request for a
// symbol the gateway lists (Lister) and the cache does not hold yet waits
// for the cache, a second at most, rather than being refused as unknown.
//
// # Slow readers
//
// A session whose client reads slower than its subscriptions change is
// sent no refresh while it is backlogged (Backlog: for the gateway, more
// than 64 messages, or a quarter of its outbound queue, waiting, or its
// connection's outbound buffer past half full). Each of its subscriptions
// keeps the depth it was last sent and its instrument stays marked; once
// the client has read, every heldRetry (10 ms) or at the next change, it
// gets one refresh with the net change since then: an X with the levels
// as they now stand, or a W of the book as it is. The refreshes it skipped
// are never sent, so such a client costs a bounded queue (a full refresh
// of a deep book holds tens of kilobytes until it is written) and is not
// disconnected for market data it could not read; a client that stops
// reading altogether is still closed by the FIX edge's write timeout. The
// answers to its requests (W, Y) are never held.
//
// Imports: the gateway's QuickFIX/Go types and its list of the instrument
// fields it refuses, and the marketdata depth cache; it is wired to both by
// the server. internal/fixwire reads the fields of a request's groups from
// its bytes (NoRelatedSym's instruments, NoTradingSessions).
//
// Limits: DepthMax levels per side (264=0 means DepthMax), SubscriptionsMax
// subscriptions per session (Stats counts them, and the requests refused
// at the bound, for the venue's metrics); an instrument named several times in a request
// is served once, so a request has at most one answer per instrument;
// pending refreshes are one mark per instrument, so a burst of changes to
// one instrument sends one refresh, and a backlogged session gets its
// refreshes as their net change ("Slow readers"). The feed's notification never waits for
// a session: a session whose queue is full holds up only other market-data
// sends, never the UDP feed (Handler).
package fixmd
