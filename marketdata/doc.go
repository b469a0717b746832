// Package marketdata publishes the venue's market data feed, derived from
// the engine's event stream and never from engine state: only the matcher
// goroutine reads or writes the books, so the Tracker keeps a model of its
// own, rebuilt from events, and a property test (TestTrackerEqualsMatcher)
// holds it equal to the matcher's books after every command.
//
// # Tracker
//
// A Tracker consumes venue events (schemas/venue.xml) and keeps, per
// instrument, the book by order and by price level, the last trade, the
// traded volume and the trading status. For every change it writes feed
// messages (schemas/marketdata.xml) into a packet.Builder:
//
//   - market by order, in the spirit of ITCH: OrderAdded, OrderModified
//     (priorityLost says whether it moved to the back), OrderExecuted,
//     OrderDeleted;
//   - market by price, in the spirit of MDP 3.0: PriceLevelUpdate
//     New/Change/Delete with the level number (1 = best) and the new
//     aggregate;
//   - Trade (exactly one per tradeId, from the aggressor's Fill; the resting
//     side's Fill gives the OrderExecuted), InstrumentStatus.
//
// Every instrument message carries the instrument's rptSeq; the builder
// numbers messages on the channel. Sending times are event times, so the
// same events give the same bytes (a journal replay reproduces the feed).
//
// The one subtle point is an order that trades on arrival. Its OrderAccepted
// comes before its Fill events, and whether it rests is known only when the
// command's events end: it may be filled, or its remainder cancelled (IOC,
// FOK, market, self-trade prevention). The tracker therefore holds the
// orders a command enters, and a replace that crosses the book, as pending:
// indexed but in no level and not on the feed. Fill events reduce them;
// a cancel drops them. When the command ends (the next event has another
// causeSeq, or EndCommand), a pending order with quantity left rests at the
// back of its level, which is exactly where the engine put it: no other
// order joins that side during the command. So the feed never shows a
// crossed book, and the property test (tracker_property_test.go) checks
// after every command of long random streams that the tracker's books,
// orders in priority order and statuses equal the matcher's.
//
// # Stops
//
// A stop or stop-limit order waits off the engine's book until a trade
// elects it, and the feed must not show it before: the tracker ignores the
// OrderAccepted of a Stop or StopLimit order, and the OrderCancelled and
// OrderReplaced of such an order it does not hold (a waiting stop; an
// elected one it holds like any order). OrderTriggered enters the stop as
// an order of the current command, pending like a new one. The engine
// elects a stop only once the order before it has finished, so at
// OrderTriggered the tracker first publishes what the command has entered
// so far: a cascade of any length keeps at most one order pending, and the
// orders rest in the engine's order.
//
// # Icebergs
//
// An iceberg shows only a display slice; the tracker holds that slice as
// the order's quantity and never reads what tells the reserve behind it
// (TestTrackerNeverReadsIcebergReserve changes those fields and requires
// the same feed). It reads displayQty from OrderAccepted, Fill and
// OrderReplaced. A Fill that empties a slice takes the order off the book
// like any order executed in full; the OrderRefilled that follows adds the
// new slice at the back of its level, where the engine put it, as a new
// order under a new public id, as Nasdaq's ITCH gives a replenished reserve
// order a new order reference number: the n-th refill the feed has ever
// published is order RefillIDBase+n (2^62+n). Under the order's OrderID,
// any reader could link the slices, see that the order is an iceberg, since
// when it rests and how often it refilled: what an iceberg exists to hide.
// The venue's OrderIDs, a counter from 1, never come near 2^62, and the
// tracker refuses an event that names an order there, so a refill's id is
// one no order had and tells nothing of the order behind it. All the feed
// later says of the slice (OrderExecuted, OrderModified, OrderDeleted, a
// Trade's buyOrderId or sellOrderId, a snapshot's entry) names it by the id
// it last published; a replace across the book deletes it and adds it
// again under that id, as any order. Only the public market data uses these
// ids: events, ExecutionReports, drop copy, the event export and the
// console keep the OrderID. What the feed still shows is the sequence: an
// order added, in a command's trades, at the price and on the side of an
// order just executed in full is a refill (no other order joins that side
// during a command), most likely of that order, and an id from 2^62 says
// that it is one.
//
// The count is in the feed's saved state (state.go, since version 05), so a
// replay, a start from a snapshot and every cluster replica hand out the
// same ids. A version 04 state, saved when the feed showed a refill under
// its OrderID, loads with every order under its OrderID, as receivers saw
// them, and the count at 0. A replay of the whole journal counts the
// refills before it too, so after such an upgrade two starts (two cluster
// nodes) agree on the refills' ids only from the same state: a
// market-by-order reader that follows a failover onto a node started from
// another may meet an id it does not know and should take a snapshot, as
// for a gap; the sequence numbers and the levels agree either way.
//
// An incoming iceberg stays pending until its command ends, even across
// EndBatch, since its slice is cut from what is left when it stops
// trading.
//
// # Auctions
//
// In a call phase (InstrumentStatus OpeningCall, ClosingCall,
// VolatilityAuction) the engine's book may cross, and the feed shows it
// as it is. Market orders waiting for the uncross are in no book: the
// tracker ignores the OrderAccepted of a market order in a call, the
// OrderCancelled of one it does not hold, and the auction Fill of one it
// does not hold; a market order whose sweep a volatility interruption cut
// leaves the tracker at the end of its command. AuctionIndicative and
// AuctionUncrossed become AuctionUpdate messages (kind Indicative or
// Uncrossed: price, volume, imbalance side and quantity, and the rule that
// chose the price), after the order messages of the command that moved
// it (the orders that command entered rest at once, before it); an
// uncross's trades are Trade messages with auction
// True, published from the buy side's Fill (aggressorSide Buy), followed by
// the OrderExecuted of both orders. A VolatilityInterruption gives the
// reason of the InstrumentStatus that follows it. A snapshot of an
// instrument in a call carries its last indicative, an AuctionUpdate of kind
// Indicative after its entries at their rptSeq, so that a client that joins
// or recovers during a call knows what it would uncross at. Its status is
// the one that indicative's AuctionUpdate carried (Indicative.Phase, the
// call phase the engine gave), not the instrument's status now, which the
// entries carry: during a closing call's extension (VolatilityAuction) a
// client that recovers sees ClosingCall as the live clients did, and in a
// halted call the call's phase, not Halted.
// InstrumentState.Indicative (so a DepthCache's copy, which FIX market
// data reads) holds the last indicative until the uncross or a status that
// is neither a call nor a halt clears it (a halted call keeps its orders and
// the engine publishes its changes, so its indicative stays); the feed's
// saved state carries it with its phase (since version 06: an older state
// loads with the instrument's status as the phase, what the feed that saved
// it put in a snapshot, until the call's next indicative).
//
// The tracker is allocated once (OrdersMax orders, LevelsMax levels per side
// per instrument: set both at least as large as the engine's) and applies an
// event without allocating (about 100 ns on the development machine). An
// event that contradicts the book is an error and the feed stops: a silent
// feed is better than a wrong one.
//
// # Feed
//
// A Feed wires a Tracker to the network: each batch of events is applied
// under one lock, then the open packet is sent as a UDP datagram of at most
// 1,400 bytes (unicast, loopback by default, or multicast), after being kept
// in a bounded retransmission window. Idle channels get heartbeats carrying
// the next sequence number, so a client also sees a lost tail. A TCP
// recovery service answers RetransmitRequest from the window (or refuses:
// too old, too many, invalid range, each meaning "take a snapshot"; rate
// limited, meaning "ask again later", as the connection's limit refuses a
// snapshot alike) and SnapshotRequest with the books stamped with the last
// sequence number they include. Connections, requests per connection,
// concurrent snapshots and snapshot size are bounded. A request frame that
// is not an unsequenced packet of requests only (empty, over 512 bytes, a
// message of another template or cut short) closes the connection without
// an answer to any of its requests: the client's framing is lost. An
// accept that fails (out of file descriptors) is counted and tried again
// after a pause of up to a second; the service does not stop for it.
//
// The feed must only publish events of durable commands, because no market
// data may leave the process for a command before that command is durable
// (with fsync "batch", the default; a crash must not have shown the market
// an order that recovery does not know):
// RingSource hands out events whose causeSeq is at most a watermark the
// pipeline provides (durable and completely applied commands), which also
// makes every batch end on a command boundary. The one exception is a
// command with more events than half the ring (a mass cancel or end of day
// over very many orders): its durable events are handed out before it ends,
// since the matcher cannot end it until the feed frees ring space. With
// batches that end inside a command the books stay exact; only an order that
// rests can be shown early (EndBatch). A batch that ends a command ends it
// at once (RingSource.EndsCommand, Tracker.EndCommand), so what the command
// left pending (an incoming iceberg, cut to its display only when it stops
// trading) goes out with it, not when the venue next has an event. A batch
// ends its command only when the next published event is of a later one: a
// command taken in parts may complete before the feed asks.
//
// # A and B lines
//
// With FeedConfig.FeedBAddr the feed has a B line: every datagram, packets
// and heartbeats alike, goes out again to a second destination (another
// multicast group, on another network), from the same socket right after
// the A line's, so a receiver reading both loses a datagram only when
// both lines lose it. The bytes are the same on both lines: a receiver
// applies each message once, from whichever line brings it first
// (feedclient, "A and B lines"), and recovers over TCP only what neither
// brought. The B line costs the feed one more send per datagram; the
// window, the recovery service and the sequence are the lines' own, one
// for both.
//
// With FeedConfig.BLineFromStandby the B line leaves another machine: a
// cluster's leader (a live feed) sends line A alone, and each follower's
// standby feed (FeedConfig.Standby, in replay mode), once SendStandbyB is
// called, sends on line B every packet of the commands it replays,
// EndStandbyCommand completing a command's packet: the messages and their
// numbers are the live feed's (a replay gives them wherever a batch ends),
// only the packets are bounded otherwise, and a receiver reads messages.
// A standby feed sends no heartbeat: two followers sending would announce
// different ends on one line. Nor does it send a packet older than
// StandbyBLineAgeMax (a follower catching up): it keeps it in its window.
// A standby feed's Close sends nothing either: its EndOfSession would tell
// the receivers of the live feed that it ended.
//
// # The trading day
//
// An instrument's volume (in each Trade, in snapshots, in the saved state
// and in the DepthCache's copy) is the quantity traded since the last end
// of day, as the console's and the admin API's day's volume is. An
// OperatorResult of an EndOfDay done, the last event of its command (the
// expiries come before it, as OrderDeleted), sets every instrument's
// volume to 0 and publishes, for each, an InstrumentStatus of its status
// unchanged with reason EndOfDay, so that a client running across the end
// of day learns of it at that point of the sequence and shows what one
// joining by snapshot then is given, a volume of 0 (feedclient sets
// Book.Volume to 0).
// The reset is derived from the journaled event, like everything else on
// the feed, so a replay and a cluster's standby feed give the same bytes.
// The last trade's price and quantity are not reset: they stay the
// instrument's last trade, of whatever day (the previous close, until it
// trades again), the feed's one reference for a client that joins before
// the next trade.
//
// # Adding an instrument
//
// An InstrumentAdded event (the engine listed an instrument while the venue
// runs) opens an empty book for it, with as many levels per side as its
// band holds, and publishes in the sequenced stream an InstrumentDefinition
// (symbol, tick, lot and status; it has no rptSeq) followed by an
// InstrumentStatus (the instrument's rptSeq 1), so a running client learns
// it without a snapshot (feedclient applies a sequenced definition). From
// then on it is like a configured instrument: in snapshots, in the saved
// state (which carries its definition) and in the DepthCache, which adds
// its book at its first update. TrackerConfig.InstrumentsMax bounds
// configured plus added instruments, the engine's own bound; the instrument
// table and the dirty list are sized for it at start.
//
// # Restarts
//
// The feed's sequence continues across a restart of the venue; it is never
// reset. At start-up the venue replays its journal into the matcher and
// hands every event to the feed (Feed.Replay): the tracker rebuilds the
// books, the per-instrument rptSeq, last trade and day's volume, and the builder
// numbers the messages exactly as it did the first time, since the same
// events give the same messages. The replayed packets go into the
// retransmission window but not onto the network (a receiver that was
// running has them already). The first message after the restart has the
// number that follows the last one derived from the journal, which is the
// last one published before the stop: the feed publishes only durable
// commands, and the journal holds every durable command.
//
// With snapshots on, the replay need not start at the beginning of the
// journal. When the venue captures the matcher's snapshot after command S
// it asks the feed for its state after S (Feed.SnapshotAt); the feed saves
// it just before it applies the first event of a later command, when it has
// applied every event up to S and none after, or, when no later command
// brought an event before the venue stopped (an end of day, then the
// night), at the stop once every event is applied (Feed.CaptureAtStop)
// (state.go draws the format: the
// books by order in priority order, each instrument's rptSeq, status, last
// trade, volume and call's last indicative, the number of refills
// published, and the next sequence number). A start loads the newest
// snapshot that has the feed's state beside it (Feed.Restore) and replays
// the commands after it; a snapshot without one is passed over, and with
// none the whole journal is replayed. Either way the feed holds only what it
// derived from events.
//
// A cluster (docs/ARCHITECTURE.md, "Cluster") keeps this property across a
// failover the same way: each follower hands the events of every committed
// command to a standby feed in replay mode, and the node that becomes
// leader ends the replay and publishes from there, so its first message
// follows the last one derived from the committed log; the old leader
// published only committed commands.
//
// EndOfSession, sent at a clean stop, is therefore unsequenced: it travels
// after a Heartbeat carrying the next sequence number in one unsequenced
// packet, and takes no number a restarted venue could not reproduce.
//
// What a receiver must do: nothing special. A receiver that was running
// across the restart sees the sequence go on; if it missed messages around
// the stop (a kill -9 loses the datagrams in flight), it sees a gap and
// recovers it from the window or with a snapshot, as for any gap, from the
// recovery service at its configured address once the venue is back. A
// receiver that starts after the restart joins with a snapshot, as always.
// A venue started on another data directory (an empty one, or a copy from
// before) numbers from where that journal ends, below what a running
// receiver applied: feedclient takes the first heartbeat that announces a
// lower next sequence for a new feed and joins it with a snapshot, so a
// watch does not keep the old books (a heartbeat is sent under the lock
// that sends packets, so it never announces less than one already sent).
//
// # Clients and the gateway
//
// Package feedclient is the client library; its Watch and BookJSON are the
// `fixvenue md watch` and `fixvenue md book --json` commands (the feed
// package never imports its client; watch_test.go reads this package's feed
// with them). The FIX gateway answers MarketDataRequest from a DepthCache, an UpdateListener
// that copies the top levels after each batch, readable from any goroutine,
// with AppendLevelChanges to turn two copies into incremental refresh
// entries.
//
// Limits: one channel per Feed; the feed carries instrument definitions on
// UDP only for instruments added while the venue runs (the others are in
// every snapshot, which a client takes to join); a
// snapshot is encoded while holding the feed's lock, so a very deep book
// delays the feed by the encoding time (about 30 ns per order); a feed
// hands out at most 2^64-2^62-1 refills' public ids over its life
// (ErrRefillIDs stops it after the last, at a million refills a second
// some 400,000 years on).
package marketdata
