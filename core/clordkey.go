package core

import (
	"encoding/binary"
	"math/bits"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// clOrdKey is a ClOrdID as the matcher keeps, hashes, compares and writes
// it: its bytes as little-endian words, NUL-padded to the schema's fixed
// width exactly as the wire fields carry them (36 bytes: four words and the
// low half of a fifth). A ClOrdID holds no NUL, so the padding tells its
// length, and two keys are equal when their words are: five compares
// instead of a byte loop. Loading, hashing and writing a key work on whole
// words.
type clOrdKey struct {
	w [5]uint64 // w[4] holds bytes 32-35 in its low half; its high half is zero
}

// The key layout covers exactly the ClOrdID field.
const _ = -uint(venue.ClOrdIDLength ^ 36)

// SWAR constants: 0x01 in every byte, and the high bit of every byte.
const (
	lowBytes = 0x0101010101010101
	highBits = 0x8080808080808080
)

// nulMarks marks the NUL bytes of w (little-endian) with their high bit.
// The lowest mark is exact; a false mark can only appear above a true one,
// which is all that finding the first NUL needs.
func nulMarks(w uint64) uint64 {
	return (w - lowBytes) &^ w & highBits
}

// halfHigh stands for the missing upper half of the key's last word: never NUL.
const halfHigh = 0xFFFFFFFF << 32

// load reads a fixed-width ClOrdID field (venue.ClOrdIDLength bytes) up to
// its first NUL, as the generated getters do, but a word at a time, and
// returns its length: the bytes after the first NUL are dropped, whatever
// the sender left there. Each word costs a load, a NUL test and a branch
// that is taken the same way for every ClOrdID of the same length.
func (k *clOrdKey) load(field []byte) int {
	f := field[:venue.ClOrdIDLength]
	*k = clOrdKey{}
	w := binary.LittleEndian.Uint64(f[0:8])
	if z := nulMarks(w); z != 0 {
		return k.end(0, w, z)
	}
	k.w[0] = w
	w = binary.LittleEndian.Uint64(f[8:16])
	if z := nulMarks(w); z != 0 {
		return k.end(1, w, z)
	}
	k.w[1] = w
	w = binary.LittleEndian.Uint64(f[16:24])
	if z := nulMarks(w); z != 0 {
		return k.end(2, w, z)
	}
	k.w[2] = w
	w = binary.LittleEndian.Uint64(f[24:32])
	if z := nulMarks(w); z != 0 {
		return k.end(3, w, z)
	}
	k.w[3] = w
	w = uint64(binary.LittleEndian.Uint32(f[32:36]))
	if z := nulMarks(w | halfHigh); z != 0 {
		return k.end(4, w, z)
	}
	k.w[4] = w
	return venue.ClOrdIDLength
}

// end keeps the bytes of word j before its first NUL (z marks the NULs) and
// returns the key's length.
func (k *clOrdKey) end(j int, w, z uint64) int {
	first := z & -z // the mark of the first NUL alone
	k.w[j] = w & (first>>7 - 1)
	return 8*j + bits.TrailingZeros64(first)/8
}

// keyOf makes the key of a ClOrdID given as its bytes (at most
// venue.ClOrdIDLength, no NUL), as tests and snapshots have it.
func keyOf(id []byte) clOrdKey {
	var b [venue.ClOrdIDLength]byte
	copy(b[:], id)
	var k clOrdKey
	k.load(b[:])
	return k
}

// bytes returns the key as its NUL-padded field.
func (k *clOrdKey) bytes() (b [venue.ClOrdIDLength]byte) {
	k.put(&b)
	return b
}

// len returns the ClOrdID's length in bytes.
func (k *clOrdKey) len() int {
	b := k.bytes()
	var again clOrdKey
	return again.load(b[:])
}

// id returns the ClOrdID's bytes (a copy: for tests, snapshots and views).
func (k *clOrdKey) id() []byte {
	b := k.bytes()
	n := k.len()
	return b[:n:n]
}

// empty reports whether the ClOrdID has no byte.
func (k *clOrdKey) empty() bool { return k.w[0] == 0 }

// put writes the key as a NUL-padded field of venue.ClOrdIDLength bytes.
func (k *clOrdKey) put(f *[venue.ClOrdIDLength]byte) {
	binary.LittleEndian.PutUint64(f[0:8], k.w[0])
	binary.LittleEndian.PutUint64(f[8:16], k.w[1])
	binary.LittleEndian.PutUint64(f[16:24], k.w[2])
	binary.LittleEndian.PutUint64(f[24:32], k.w[3])
	binary.LittleEndian.PutUint32(f[32:36], uint32(k.w[4]))
}

// equal reports whether two keys are the same ClOrdID.
func (k *clOrdKey) equal(o *clOrdKey) bool {
	// Word by word: comparing the arrays whole would call memequal.
	return k.w[0] == o.w[0] && k.w[1] == o.w[1] && k.w[2] == o.w[2] && k.w[3] == o.w[3] && k.w[4] == o.w[4]
}

// clOrdHashK multiplies the key's words in its hash: odd constants with
// about half their bits set (the golden ratio's, SplitMix64's, MurmurHash3's).
var clOrdHashK = [5]uint64{0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB,
	0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53}

// hashLen hashes a ClOrdID of n bytes for the (session, ClOrdID) table. The
// ClOrdID without its last character, with the session index, chooses a
// 16-slot bucket, and the last character's digit value chooses the slot in
// it. Clients mostly number their orders (ORD1041, ORD1042, ...), so
// consecutive ClOrdIDs share a bucket and a new order usually finds its slot
// already in cache instead of missing on a random one; random ClOrdIDs
// (UUIDs) spread as with a plain hash. The last character is also mixed into
// the high half, which the table keeps to skip record compares, so
// neighbours in a bucket are told apart without reading their records.
//
// The words are multiplied independently and summed, so the products
// overlap in the pipeline, and taking the last character's product out of
// the sum leaves the prefix's; one 128-bit multiply then folds the high bits
// down into the bits that index the table.
func (k *clOrdKey) hashLen(n int, sessionIdx uint16) uint64 {
	sum := k.w[0]*clOrdHashK[0] + k.w[1]*clOrdHashK[1] + k.w[2]*clOrdHashK[2] +
		k.w[3]*clOrdHashK[3] + k.w[4]*clOrdHashK[4]
	var last uint64
	if n > 0 {
		j, shift := uint(n-1)/8, uint(n-1)%8*8
		last = k.w[j] >> shift & 0xFF
		sum -= last << shift * clOrdHashK[j]
	}
	hi, lo := bits.Mul64(sum^uint64(sessionIdx)<<48, 0x9E3779B97F4A7C15)
	h := hi ^ lo
	// The last character moves bits 32-48 only (255 × 0x1B3 < 2^17): bits
	// 4-31 (the bucket) and 49-63 (clOrdStep) stay the prefix's.
	h ^= last * 0x1B3 << 32
	return h&^15 | uint64(digitValue(byte(last)))
}

// hash is hashLen for a key whose length is not at hand.
func (k *clOrdKey) hash(sessionIdx uint16) uint64 { return k.hashLen(k.len(), sessionIdx) }

// loadHashed is load followed by hashLen: the ClOrdID of a command, and its
// hash in sessionIdx's namespace.
func (k *clOrdKey) loadHashed(field []byte, sessionIdx uint16) uint64 {
	return k.hashLen(k.load(field), sessionIdx)
}

// digitValue maps '0'-'9' to 0-9 and hex letters to 10-15 (so decimal and
// hex counters fill a bucket without collisions), anything else to its low
// four bits. It is written as selects rather than nested branches: counters
// alternate digits and letters.
func digitValue(c byte) byte {
	v := c & 15
	if letter := c | 0x20 - 'a'; letter < 6 {
		v = letter + 10
	}
	if digit := c - '0'; digit < 10 {
		v = digit
	}
	return v
}
