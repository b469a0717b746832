package packet

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Sizes of the framing.
const (
	// HeaderSize is the size of the packetHeader composite.
	HeaderSize = mdsbe.PacketHeaderEncodedLength
	// LengthPrefixSize is the uint16 before each message and each TCP frame.
	LengthPrefixSize = 2
	// DatagramBytesMax is the largest UDP datagram the feed sends.
	DatagramBytesMax = 1400
	// FrameBytesMax is the largest packet a TCP frame can carry.
	FrameBytesMax = 1<<16 - 1
	// MessagesPerPacketMax is the most messages one packet header can count.
	MessagesPerPacketMax = 1<<16 - 1
)

// Errors of the framing.
var (
	ErrMessageTooLarge = errors.New("packet: message does not fit in an empty packet")
	ErrMalformed       = errors.New("packet: malformed packet")
	ErrFrameTooLarge   = errors.New("packet: frame larger than the reader's buffer")
)

// Sink receives each completed packet. pkt is valid only during the call;
// seq is the first message's sequence number (0 for an unsequenced packet).
type Sink interface {
	WritePacket(pkt []byte, seq uint64, count int) error
}

// BuilderConfig sets up a Builder.
type BuilderConfig struct {
	Channel   uint16
	BytesMax  int    // packet size bound; 0 means DatagramBytesMax
	Sequenced bool   // number messages (feed) or write seq 0 (control packets)
	FirstSeq  uint64 // first sequence number; 0 means 1
	Sink      Sink
}

// Builder packs messages into packets of at most BytesMax bytes.
type Builder struct {
	buf       []byte
	n         int // bytes used; 0 when no packet is open
	count     int
	seq       uint64 // first sequence of the open packet
	nextSeq   uint64
	timeNs    int64 // sending time of the open packet: its first message's time
	channel   uint16
	sequenced bool
	sink      Sink
	hdr       mdsbe.PacketHeader
	packets   uint64
}

// NewBuilder allocates the packet buffer.
func NewBuilder(cfg BuilderConfig) (*Builder, error) {
	if cfg.BytesMax == 0 {
		cfg.BytesMax = DatagramBytesMax
	}
	if cfg.BytesMax < HeaderSize+LengthPrefixSize+mdsbe.MessageHeaderSize || cfg.BytesMax > FrameBytesMax {
		return nil, fmt.Errorf("packet: BytesMax %d outside [%d, %d]", cfg.BytesMax,
			HeaderSize+LengthPrefixSize+mdsbe.MessageHeaderSize, FrameBytesMax)
	}
	if cfg.Sink == nil {
		return nil, errors.New("packet: a Builder needs a Sink")
	}
	if cfg.FirstSeq == 0 {
		cfg.FirstSeq = 1
	}
	return &Builder{buf: make([]byte, cfg.BytesMax), nextSeq: cfg.FirstSeq, channel: cfg.Channel,
		sequenced: cfg.Sequenced, sink: cfg.Sink}, nil
}

// Reserve makes room for a message of msgLen bytes stamped with timeNs and
// returns the buffer and the offset where the caller encodes it (with a
// generated flyweight's WrapEncode). The message belongs to the packet from
// now on: the caller must write it before the next Reserve or Flush.
func (b *Builder) Reserve(msgLen int, timeNs int64) ([]byte, int, error) {
	need := LengthPrefixSize + msgLen
	if msgLen < mdsbe.MessageHeaderSize || HeaderSize+need > len(b.buf) {
		return nil, 0, ErrMessageTooLarge
	}
	if b.n > 0 && (b.n+need > len(b.buf) || b.count == MessagesPerPacketMax) {
		if err := b.Flush(); err != nil {
			return nil, 0, err
		}
	}
	if b.n == 0 {
		b.n, b.count, b.seq, b.timeNs = HeaderSize, 0, b.nextSeq, timeNs
	}
	binary.LittleEndian.PutUint16(b.buf[b.n:], uint16(msgLen))
	off := b.n + LengthPrefixSize
	clear(b.buf[off : off+msgLen])
	b.n += need
	b.count++
	if b.sequenced {
		b.nextSeq++
	}
	return b.buf, off, nil
}

// Flush closes the open packet, if any, and hands it to the Sink.
func (b *Builder) Flush() error {
	if b.count == 0 {
		return nil
	}
	h := &b.hdr
	if err := h.Wrap(b.buf, 0); err != nil {
		return err
	}
	h.SetChannel(b.channel)
	h.SetMessageCount(uint16(b.count))
	h.SetReserved(0)
	if b.sequenced {
		h.SetSeq(b.seq)
	} else {
		h.SetSeq(0)
	}
	h.SetSendingTimeNs(b.timeNs)
	pkt, seq, count := b.buf[:b.n], h.Seq(), b.count
	b.n, b.count = 0, 0
	b.packets++
	return b.sink.WritePacket(pkt, seq, count)
}

// NextSeq is the sequence number the next reserved message will carry.
func (b *Builder) NextSeq() uint64 { return b.nextSeq }

// Restart numbers the next message seq, continuing a stream that an earlier
// Builder numbered up to seq-1 (a feed restored from its saved state). It
// is an error while a packet is open.
func (b *Builder) Restart(seq uint64) error {
	if b.n > 0 || seq == 0 || !b.sequenced {
		return errors.New("packet: Restart needs a sequenced Builder with no open packet and a seq above 0")
	}
	b.nextSeq = seq
	return nil
}

// Pending reports how many messages wait in the open packet.
func (b *Builder) Pending() int { return b.count }

// Packets is the number of packets handed to the Sink.
func (b *Builder) Packets() uint64 { return b.packets }

// Reader walks the messages of one packet.
type Reader struct {
	pkt           []byte
	p             int
	left          int
	Channel       uint16
	Seq           uint64 // first message's sequence number; 0: unsequenced
	Count         int
	SendingTimeNs int64
}

// Reset checks the whole packet and positions the reader on its first
// message. On error the reader holds no message.
func (r *Reader) Reset(pkt []byte) error {
	r.pkt, r.p, r.left = nil, 0, 0
	var h mdsbe.PacketHeader
	if err := h.Wrap(pkt, 0); err != nil {
		return ErrMalformed
	}
	count := int(h.MessageCount())
	p := HeaderSize
	for i := 0; i < count; i++ {
		if len(pkt)-p < LengthPrefixSize {
			return ErrMalformed
		}
		n := int(binary.LittleEndian.Uint16(pkt[p:]))
		p += LengthPrefixSize
		if n < mdsbe.MessageHeaderSize || len(pkt)-p < n {
			return ErrMalformed
		}
		p += n
	}
	if p != len(pkt) {
		return ErrMalformed
	}
	if h.Seq() != 0 && h.Seq()+uint64(count) < h.Seq() {
		return ErrMalformed // the sequence range would wrap around
	}
	r.pkt, r.p, r.left = pkt, HeaderSize, count
	r.Channel, r.Seq, r.Count, r.SendingTimeNs = h.Channel(), h.Seq(), count, h.SendingTimeNs()
	return nil
}

// Next returns the next message (its SBE header first), or ok false after
// the last one.
func (r *Reader) Next() (msg []byte, ok bool) {
	if r.left == 0 {
		return nil, false
	}
	n := int(binary.LittleEndian.Uint16(r.pkt[r.p:]))
	start := r.p + LengthPrefixSize
	r.p = start + n
	r.left--
	return r.pkt[start:r.p:r.p], true
}

// WriteFrame writes one TCP frame: the packet's length, then the packet.
func WriteFrame(w *bufio.Writer, pkt []byte) error {
	if len(pkt) > FrameBytesMax {
		return ErrFrameTooLarge
	}
	var n [LengthPrefixSize]byte
	binary.LittleEndian.PutUint16(n[:], uint16(len(pkt)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(pkt)
	return err
}

// ReadFrame reads one TCP frame into buf and returns the packet. A frame
// larger than buf is ErrFrameTooLarge (the stream is then unusable).
func ReadFrame(r *bufio.Reader, buf []byte) ([]byte, error) {
	var n [LengthPrefixSize]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := int(binary.LittleEndian.Uint16(n[:]))
	if size > len(buf) {
		return nil, ErrFrameTooLarge
	}
	if _, err := io.ReadFull(r, buf[:size]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf[:size], nil
}
