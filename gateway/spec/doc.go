// Package spec embeds the FIX 4.4 data dictionary that QuickFIX/Go validates
// messages against. FIX44.xml is the dictionary published with QuickFIX
// (see LICENSE-quickfix: "This product includes software developed by
// quickfixengine.org (http://www.quickfixengine.org/)"). It is data, not code.
//
// It is QuickFIX's FIX44.xml byte for byte, the one stock QuickFIX clients
// validate against, copied over and never edited (TestFIX44IsQuickFIXs
// compares it with the copy beside the worktree): the session layer then
// refuses a message exactly where such a client's own validation would, and
// a message such a client builds reaches the venue's application, which
// gives its own answer. An edition of its own had dropped PutOrCall (201)
// and UnderlyingPutOrCall (315) and put MarketDataRequest's
// NoTradingSessions, ApplQueueAction and ApplQueueMax in each NoRelatedSym
// entry, so such messages got a session Reject; it also defined tags and
// values of earlier FIX versions (Rule80A 47, OrdType 5), which FIX 4.4
// refuses as an invalid tag (373=0) and a value out of range (373=5).
// A restriction of the venue's is an answer of the application with a Text
// naming it, never a change to the dictionary (docs/ARCHITECTURE.md, "FIX
// 4.4 conformance of outbound messages").
//
// QuickFIX/Go reads dictionaries from a file path only, so WriteFIX44 writes the
// embedded copy into the venue's data directory at start-up.
package spec
