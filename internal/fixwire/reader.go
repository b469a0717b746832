package fixwire

import "io"

const (
	// readerInitialBytes is a Reader's first buffer; it doubles, up to the
	// message bound, only when a message needs it.
	readerInitialBytes = 4096
	// emptyReadsMax bounds reads in a row that return no bytes and no
	// error, which io.Reader allows but a socket never does for long.
	emptyReadsMax = 100
)

// Reader splits a byte stream into messages of at most messageBytesMax
// bytes. Deadlines belong to the caller (set them on the connection).
type Reader struct {
	r               io.Reader
	buf             []byte
	start, end      int // buf[start:end] is read and not yet returned
	messageBytesMax int
	bufferBytesMax  int // the buffer never grows past this
}

// NewReader returns a Reader over r whose buffer grows, when a message
// needs it, up to messageBytesMax.
func NewReader(r io.Reader, messageBytesMax int) *Reader {
	if messageBytesMax <= 0 {
		panic("fixwire: NewReader needs a positive messageBytesMax")
	}
	return &Reader{r: r, buf: make([]byte, min(readerInitialBytes, messageBytesMax)),
		messageBytesMax: messageBytesMax, bufferBytesMax: messageBytesMax}
}

// NewReaderSize returns a Reader over r with a buffer of bufferBytes
// (at least messageBytesMax) allocated at once, for readers that take many
// messages per read and must not allocate later.
func NewReaderSize(r io.Reader, messageBytesMax, bufferBytes int) *Reader {
	if messageBytesMax <= 0 || bufferBytes < messageBytesMax {
		panic("fixwire: NewReaderSize needs 0 < messageBytesMax <= bufferBytes")
	}
	return &Reader{r: r, buf: make([]byte, bufferBytes), messageBytesMax: messageBytesMax, bufferBytesMax: bufferBytes}
}

// Next returns the next whole message. It aliases the Reader's buffer and
// stays valid until the next call to Next or Fill. It fails with a framing
// error (see Frame), or with the read error when a read returns no bytes;
// what was received stays available through Buffered.
func (r *Reader) Next() ([]byte, error) {
	for {
		n, err := Frame(r.buf[r.start:r.end], r.messageBytesMax)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			msg := r.buf[r.start : r.start+n]
			r.start += n
			return msg, nil
		}
		if err := r.Fill(); err != nil {
			return nil, err
		}
	}
}

// Buffered returns the bytes received but not yet returned as a message.
func (r *Reader) Buffered() []byte { return r.buf[r.start:r.end] }

// Fill reads once from the stream, adding at least one byte to Buffered,
// or returns the read's error (io.EOF, a timeout, …). It fails with
// ErrTooLarge when the buffer is full without a whole message (a bound
// shorter than a header).
func (r *Reader) Fill() error {
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		if len(r.buf) == r.bufferBytesMax {
			return ErrTooLarge
		}
		grown := make([]byte, min(2*len(r.buf), r.bufferBytesMax))
		copy(grown, r.buf[:r.end])
		r.buf = grown
	}
	for range emptyReadsMax {
		k, err := r.r.Read(r.buf[r.end:])
		r.end += k
		if k > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}
