// Package spec embeds the FIX 4.4 data dictionary that QuickFIX/Go validates
// messages against. FIX44.xml is the dictionary published with QuickFIX
// (see LICENSE-quickfix: "This product includes software developed by
// quickfixengine.org (http://www.quickfixengine.org/)"). It is data, not code.
//
// QuickFIX/Go reads dictionaries from a file path only, so WriteFIX44 writes the
// embedded copy into the venue's data directory at start-up.
package spec
