// Package fixcheck checks a received FIX message as a stock validating client
// does on receipt: QuickFIX/Go with the FIX 4.4 dictionary the venue ships
// (gateway/spec, QuickFIX's FIX44.xml byte for byte) as its DataDictionary
// and QuickFIX's default validation (ValidateFieldsOutOfOrder,
// ValidateFieldsHaveValues, RejectInvalidMessage, ValidateUserDefinedFields,
// AllowUnknownMsgFields=N), parsing with the dictionary, and refusing a
// PossDupFlag=Y message without OrigSendingTime or with one after its
// SendingTime; and, beyond what such a client checks, a byte other than
// printable ASCII outside a data field (FIX 4.4 has Encoded fields for
// other characters, and a client decoding ISO-8859-1 misreads UTF-8). The tests that read the venue's bytes with a raw client
// (internal/fixclient, the fixtests runner) pass every message through it,
// so that each message they drive the venue to send is one such a client
// accepts, not only those of the tests that run a QuickFIX/Go client.
//
// Latency (CheckLatency) is not checked: a test machine's pauses are not the
// venue's. Limits: FIX 4.4 only; the dictionary is parsed once per process.
package fixcheck
