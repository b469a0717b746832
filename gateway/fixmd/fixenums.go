package fixmd

// Every enumerated FIX value this package writes is a constant of one of the
// types below, one type per FIX field. gateway's TestWrittenEnumsInDictionary
// reads this file with its own fixenums.go and checks each constant against
// the FIX 4.4 dictionary the venue ships (see "FIX 4.4 conformance of
// outbound messages" in docs/ARCHITECTURE.md).

// mdEntryType is FIX MDEntryType (269).
type mdEntryType string

const (
	mdEntryBid         mdEntryType = "0"
	mdEntryOffer       mdEntryType = "1"
	mdEntryTrade       mdEntryType = "2"
	mdEntryImbalance   mdEntryType = "A"
	mdEntryTradeVolume mdEntryType = "B"
)

// mdUpdateAction is FIX MDUpdateAction (279).
type mdUpdateAction string

const (
	mdUpdateNew    mdUpdateAction = "0"
	mdUpdateChange mdUpdateAction = "1"
	mdUpdateDelete mdUpdateAction = "2"
)

// mdReqRejReason is FIX MDReqRejReason (281).
type mdReqRejReason string

const (
	mdRejUnknownSymbol      mdReqRejReason = "0"
	mdRejDuplicateMDReqID   mdReqRejReason = "1"
	mdRejBandwidth          mdReqRejReason = "2" // FIX's reason for a capacity: the session's subscriptions bound
	mdRejUnsupportedSubType mdReqRejReason = "4"
	mdRejUnsupportedDepth   mdReqRejReason = "5"
	mdRejUnsupportedUpdType mdReqRejReason = "6"
	mdRejUnsupportedAggBook mdReqRejReason = "7"
	mdRejUnsupportedEntry   mdReqRejReason = "8"
	mdRejUnsupportedSession mdReqRejReason = "9"
	mdRejUnsupportedScope   mdReqRejReason = "A"
	mdRejUnsupportedOCSFlag mdReqRejReason = "B"
)

// tradeCondition is FIX TradeCondition (277): the side of an indicative
// uncross's imbalance.
type tradeCondition string

const (
	tradeCondImbalanceMoreBuyers  tradeCondition = "P"
	tradeCondImbalanceMoreSellers tradeCondition = "Q"
)
