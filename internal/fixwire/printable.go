package fixwire

// NotPrintable returns the index of the first byte of v outside printable
// ASCII (0x20-0x7E), or -1 when there is none. FIX 4.4's strings are
// printable ASCII; other characters go in its Encoded fields, data fields a
// length field gives (DataTag).
func NotPrintable(v []byte) int {
	for i, c := range v {
		if c < ' ' || c > '~' {
			return i
		}
	}
	return -1
}
