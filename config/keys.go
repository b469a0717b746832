package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// inexactKeys lists the keys of a decoded file that name a field only
// without regard to case (Tick_Size for tick_size, [[Instrument]] for
// [[instrument]]), each with the name it should have. The TOML decoder
// fills the field from such a key, but everything else goes by the exact
// name: TOML takes tick_size and Tick_Size for two keys, so one given
// under both names silently kept the last, and Parse's IsDefined("instrument")
// did not see an [[Instrument]], so the demo's instruments (and, for
// [[Session]], the demo's sessions without passwords) replaced the file's
// without a word.
func inexactKeys(md toml.MetaData) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if written, want, ok := exactPath(reflect.TypeOf(Config{}), k); !ok && !seen[written] {
			seen[written] = true
			out = append(out, fmt.Sprintf("%s (names are exact: %s)", written, want))
		}
	}
	return out
}

var (
	tomlUnmarshaler = reflect.TypeOf((*toml.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// exactPath follows key through the struct type t. It reports false, with
// the key as written up to that part and as it should be, when a part of it matches a
// field only without regard to case. Parts below a map, or below a type
// that decodes itself, are the type's own to judge; a part that matches
// no field at all is md.Undecoded's.
func exactPath(t reflect.Type, key toml.Key) (written, want string, ok bool) {
	for i, part := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(tomlUnmarshaler) ||
			reflect.PointerTo(t).Implements(textUnmarshaler) {
			return "", "", true
		}
		f, exact, found := fieldByKey(t, part)
		if !found {
			return "", "", true
		}
		if !exact {
			fixed := append(append([]string{}, key[:i]...), tomlName(f))
			return key[:i+1].String(), strings.Join(fixed, "."), false
		}
		t = f.Type
	}
	return "", "", true
}

// fieldByKey finds the field of struct t that the TOML decoder fills from
// key, as it does: an exact name first, else one equal without regard to
// case; the fields of an embedded struct without a name are t's own.
func fieldByKey(t reflect.Type, key string) (f reflect.StructField, exact, found bool) {
	var folded reflect.StructField
	foldFound := false
	for _, sf := range reflect.VisibleFields(t) {
		if !sf.IsExported() || sf.Anonymous && sf.Tag.Get("toml") == "" {
			continue
		}
		name := tomlName(sf)
		if name == "-" {
			continue
		}
		if name == key {
			return sf, true, true
		}
		if !foldFound && strings.EqualFold(name, key) {
			folded, foldFound = sf, true
		}
	}
	return folded, false, foldFound
}

// tomlName is the key a field is named by: its toml tag's, else its own.
func tomlName(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name != "" {
		return name
	}
	return f.Name
}
