// Package fixmd serves FIX market data on the order sessions.
//
// A MarketDataRequest (V) is answered with a MarketDataSnapshotFullRefresh
// (W) per requested symbol; with SubscriptionRequestType 1 the session stays
// subscribed and gets a MarketDataIncrementalRefresh (X) with the changed
// levels (MDUpdateType 1) or a new W (MDUpdateType 0) after each change;
// SubscriptionRequestType 2 ends the subscriptions of that MDReqID. What the
// venue cannot serve is refused with a MarketDataRequestReject (Y) and a
// MDReqRejReason: 0 unknown symbol or too many subscriptions, 1 duplicate
// MDReqID, 4 unsupported SubscriptionRequestType, 5 unsupported MarketDepth,
// 6 unsupported MDUpdateType, 8 an MDEntryType other than bid (0) and offer (1).
//
// Books come from a marketdata.DepthCache that the feed keeps current after
// each batch of durable events, never from the engine, so FIX market data
// shows what the UDP feed shows. The feed's goroutine only marks the changed
// instruments; Run sends the refreshes on its own goroutine, and answers go
// through the gateway's paced per-session sender (Sender). The gateway calls
// Handle for each V (gateway.Gateway.Handle) and SessionEnded when a session
// ends, which drops its subscriptions.
//
// Imports: the gateway's QuickFIX/Go types and the marketdata depth cache; it
// is wired to both by the server.
//
// Limits: DepthMax levels per side (264=0 means DepthMax), SubscriptionsMax
// subscriptions per session; pending refreshes are one mark per instrument,
// so a burst of changes to one instrument sends one refresh.
package fixmd
