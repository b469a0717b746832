package gen

import (
	"fmt"
	"unicode"
)

// GoName turns a schema name into an exported Go name: the first letter is
// upper-cased and "Id" at the end of a word (followed by the end of the name,
// an upper-case letter, a digit or '_') is written "ID", as Go style asks.
// So clOrdId → ClOrdID, OrderIdMismatch → OrderIDMismatch, sessionIdx →
// SessionIdx. Nothing else changes, so names stay greppable against the schema.
func GoName(schemaName string) string {
	r := []rune(schemaName)
	if len(r) == 0 {
		return ""
	}
	r[0] = unicode.ToUpper(r[0])
	for i := 0; i+1 < len(r); i++ {
		if r[i] != 'I' || r[i+1] != 'd' {
			continue
		}
		end := i+2 == len(r)
		if !end {
			next := r[i+2]
			end = unicode.IsUpper(next) || unicode.IsDigit(next) || next == '_'
		}
		if end {
			r[i+1] = 'D'
		}
	}
	return string(r)
}

// checkName refuses schema names that cannot become Go identifiers.
func checkName(where, name string) error {
	if name == "" {
		return fmt.Errorf("%s: missing name", where)
	}
	for i, c := range name {
		letter := c == '_' || (c < 0x80 && unicode.IsLetter(c))
		digit := c < 0x80 && unicode.IsDigit(c)
		if !letter && !(digit && i > 0) {
			return fmt.Errorf("%s: name %q is not an ASCII identifier", where, name)
		}
	}
	return nil
}
