package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"
)

// ErrDiverged is returned when this replica's events differ from the
// leader's: its matcher is not in the state the journal says, so it must
// stop (doc.go, "Hash checks").
var ErrDiverged = errors.New("cluster: events hash differs from the leader's")

// A check entry carries the leader's events hash after a Snapshot command:
//
//	"FVCHECK1" | seq u64 | events hash u64 | crc32c u32 of the 24 bytes before
//
// It carries no command, so only its entry mark (of 0 commands) is written
// to the journal, and it is lost for replicas that read
// it back from disk after a restart: a check is best effort, never a
// condition for progress.
const (
	checkMagic = "FVCHECK1"
	checkBytes = 28
	// checkPointsMax bounds the snapshot points a replica remembers (its own
	// hashes waiting for the leader's, and the leader's waiting for its own).
	checkPointsMax = 64
)

// EncodeCheck returns the data of a check entry.
func EncodeCheck(seq, hash uint64) []byte {
	b := make([]byte, checkBytes)
	copy(b, checkMagic)
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint64(b[16:], hash)
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
	return b
}

// decodeCheck reports whether data is a check entry and returns it.
func decodeCheck(data []byte) (seq, hash uint64, ok bool, err error) {
	if len(data) < len(checkMagic) || string(data[:len(checkMagic)]) != checkMagic {
		return 0, 0, false, nil
	}
	if len(data) != checkBytes || binary.LittleEndian.Uint32(data[24:]) != crc32.Checksum(data[:24], castagnoli) {
		return 0, 0, true, errors.New("damaged check entry")
	}
	return binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:]), true, nil
}

// HashCheck compares a replica's events hash with the leader's at the same
// Snapshot command. Either side may come first: the leader proposes its
// check after its matcher applied the command, which may be before or after
// the command's own entry. Used by one goroutine.
type HashCheck struct {
	own    map[uint64]uint64 // seq → this replica's hash
	leader map[uint64]uint64 // seq → the leader's hash, not yet matched
	// Checked counts snapshot points compared and found equal.
	Checked atomic.Int64
}

// NewHashCheck returns an empty checker.
func NewHashCheck() *HashCheck {
	return &HashCheck{own: map[uint64]uint64{}, leader: map[uint64]uint64{}}
}

// Own records this replica's hash after applying Snapshot command seq.
func (h *HashCheck) Own(seq, hash uint64) error {
	if leader, ok := take(h.leader, seq); ok {
		return h.compare(seq, hash, leader)
	}
	boundedPut(h.own, seq, hash)
	return nil
}

// Leader records the leader's hash after Snapshot command seq.
func (h *HashCheck) Leader(seq, hash uint64) error {
	if own, ok := take(h.own, seq); ok {
		return h.compare(seq, own, hash)
	}
	boundedPut(h.leader, seq, hash)
	return nil
}

// take removes and returns the hash m holds after seq, if any.
func take(m map[uint64]uint64, seq uint64) (uint64, bool) {
	hash, ok := m[seq]
	delete(m, seq)
	return hash, ok
}

func (h *HashCheck) compare(seq, own, leader uint64) error {
	if own != leader {
		return fmt.Errorf("%w: after command seq %d this replica's events hash is %016x, the leader's %016x", ErrDiverged, seq, own, leader)
	}
	h.Checked.Add(1)
	return nil
}

// boundedPut keeps at most checkPointsMax entries, dropping the oldest seq:
// a point whose partner never comes (a check lost with a leader) must not
// hold memory for ever.
func boundedPut(m map[uint64]uint64, seq, hash uint64) {
	if len(m) >= checkPointsMax {
		oldest := seq
		for s := range m {
			oldest = min(oldest, s)
		}
		delete(m, oldest)
	}
	m[seq] = hash
}
