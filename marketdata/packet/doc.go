// Package packet frames the market data feed: it packs SBE messages into
// packets (a packetHeader, then each message behind a uint16 length) and
// reads them back, and it frames packets on the TCP recovery service (a
// uint16 length before each packet). The layout is drawn in
// schemas/marketdata.xml.
//
// A Builder owns one preallocated buffer. Reserve makes room for one
// message, closing the current packet through the Sink when the message
// would not fit, so packets never exceed the configured size (1,400 bytes on
// UDP: under the 1,500-byte Ethernet MTU with room for IP and UDP headers,
// so datagrams are never fragmented). A sequenced Builder numbers messages
// one by one from FirstSeq; an unsequenced one writes seq 0. Neither Reserve
// nor Flush allocates.
//
// A Reader checks a whole packet in Reset (header, every length, the message
// count, no trailing bytes) before Next hands out any message, so a caller
// never acts on half of a malformed packet. Message bodies are checked by
// the generated flyweights when the caller wraps them.
//
// Limits: a message must fit in one packet with its header; a packet holds at
// most 65,535 messages and a TCP frame at most FrameBytesMax bytes, as their
// uint16 fields allow.
package packet
