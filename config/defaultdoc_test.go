package config

import (
	"encoding"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// default.toml is the commented starting point of every configuration: a
// key Load reads that it does not show (set, or commented out with its
// meaning) is one an operator finds only in the code, and a key it shows
// that Load does not read is refused as unknown once uncommented. So every
// key of Config appears in it, under its table, set or as a comment, and
// every key it shows is one Config has.
func TestDefaultTOMLDocumentsEveryKey(t *testing.T) {
	tables := map[string]map[string]string{} // table path → key → "Type.key" (nil: free-form map)
	var walk func(path string, typ reflect.Type, into map[string]string)
	walk = func(path string, typ reflect.Type, into map[string]string) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Anonymous {
				walk(path, f.Type, into) // its keys are the table's own, owned by the embedded type
				continue
			}
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			if key == "-" || !f.IsExported() {
				continue
			}
			if key == "" {
				t.Errorf("%s.%s has no toml tag", typ.Name(), f.Name)
				continue
			}
			into[key] = typ.Name() + "." + key
			sub := path + "." + key
			if path == "" {
				sub = key
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Map:
				tables[sub] = nil
			case ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()):
				tables[sub] = map[string]string{}
				walk(sub, ft, tables[sub])
			}
		}
	}
	tables[""] = map[string]string{}
	walk("", reflect.TypeOf(Config{}), tables[""])

	// A session's own limits and QuickFIX settings are session_defaults'
	// keys, which default.toml shows once, saying a session may set them.
	documented := map[string]bool{}
	for _, k := range []string{"cancel_on_disconnect", "orders_per_second_reject", "cancels_per_second_reject",
		"messages_per_second_logout", "open_orders_max", "allowed_source_addresses", "quickfix"} {
		documented["Session."+k] = true
	}
	// Not read: a configuration that sets it is warned that risk calls are
	// on the admin API.
	documented["Risk.control_token"] = true

	header := regexp.MustCompile(`^#?\s*\[\[?([a-z_.]+)\]\]?\s*(#.*)?$`)
	keyLine := regexp.MustCompile(`^#?\s*([A-Za-z0-9_]+)\s*=`)
	path := ""
	for n, line := range strings.Split(string(Default()), "\n") {
		line = strings.TrimSpace(line)
		if m := header.FindStringSubmatch(line); m != nil {
			if _, ok := tables[m[1]]; !ok {
				t.Errorf("default.toml:%d: table [%s] is none the configuration has", n+1, m[1])
			}
			path = m[1]
			parent, key := "", path
			if i := strings.LastIndex(path, "."); i >= 0 {
				parent, key = path[:i], path[i+1:]
			}
			if keys := tables[parent]; keys != nil {
				documented[keys[key]] = true
			}
			continue
		}
		m := keyLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		keys, ok := tables[path]
		if !ok || keys == nil {
			continue // an unknown table, said above, or a free-form one ([session_defaults.quickfix])
		}
		owner, ok := keys[m[1]]
		if !ok {
			t.Errorf("default.toml:%d: %s is not a key of [%s]", n+1, m[1], path)
			continue
		}
		documented[owner] = true
	}
	var missing []string
	for path, keys := range tables {
		for key, owner := range keys {
			if !documented[owner] {
				missing = append(missing, strings.TrimPrefix(path+"."+key, "."))
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("default.toml shows none of these keys, set or commented out: %s", strings.Join(missing, ", "))
	}
}
