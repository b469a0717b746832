package fixtests

import (
	"context"
	"fmt"
)

// SessionSeqNums asks an acceptor to change the next sequence numbers of
// one of its sessions, named from the acceptor's side (SenderCompID is the
// acceptor, e.g. ISLD; TargetCompID the client, e.g. TW). A zero sequence
// number leaves that counter unchanged.
type SessionSeqNums struct {
	BeginString  string
	SenderCompID string
	TargetCompID string
	// NextSenderSeqNum is the MsgSeqNum the acceptor will put on its next
	// outgoing message.
	NextSenderSeqNum int
	// NextTargetSeqNum is the MsgSeqNum the acceptor expects on the next
	// incoming message.
	NextTargetSeqNum int
}

func (s SessionSeqNums) String() string {
	return fmt.Sprintf("%s:%s->%s next sender %d, next target %d (0 = unchanged)",
		s.BeginString, s.SenderCompID, s.TargetCompID, s.NextSenderSeqNum, s.NextTargetSeqNum)
}

// SessionSetter is the test hook behind iSET_SESSION. An acceptor under test
// provides one (the venue through a test-only admin endpoint, the tests of
// this package by calling QuickFIX/Go directly). A script that uses
// iSET_SESSION fails when Options.Setter is nil, because it cannot put the
// acceptor in the state it assumes.
type SessionSetter interface {
	SetNextSeqNums(ctx context.Context, s SessionSeqNums) error
}
