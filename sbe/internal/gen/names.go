package gen

import "fmt"

// checkGoNames refuses a schema whose generated identifiers would collide:
// two package-level names, or two methods of one generated type. Go would
// refuse the generated code anyway; this names the schema elements instead.
func checkGoNames(s *Schema) error {
	global := map[string]string{}
	add := func(name, what string) error {
		if other, dup := global[name]; dup {
			return fmt.Errorf("%s: generated Go name %s collides with %s", what, name, other)
		}
		global[name] = what
		return nil
	}
	fixed := []string{"SchemaID", "SchemaVersion", "MessageHeaderSize", "TemplateIDOf", "MessageName", "AppendText"}
	if s.HasGroups {
		fixed = append(fixed, "GroupHeaderSize")
	}
	if s.Commands != nil {
		fixed = append(fixed, "IsCommand")
	}
	for _, n := range fixed {
		if err := add(n, "the generated package"); err != nil {
			return err
		}
	}
	for _, t := range s.Types {
		for _, n := range typeGlobals(t) {
			if err := add(n, fmt.Sprintf("type %q", t.Name)); err != nil {
				return err
			}
		}
		if t.Kind == KindComposite {
			if err := checkMethods(fmt.Sprintf("<composite name=%q>", t.Name), t.Members, []string{"Wrap", "AppendText"}); err != nil {
				return err
			}
		}
	}
	for _, m := range s.Messages {
		what := fmt.Sprintf("message %q", m.Name)
		names := []string{m.GoName, m.GoName + "TemplateID", m.GoName + "BlockLength", m.GoName + "EncodedLength"}
		if len(m.Groups) == 0 {
			names = append(names, "Decode"+m.GoName, "Overwrite"+m.GoName)
		}
		for _, g := range m.Groups {
			names = append(names, g.TypeName+"Group", g.TypeName+"Entry", g.TypeName+"BlockLength")
		}
		for _, n := range names {
			if err := add(n, what); err != nil {
				return err
			}
		}
		if err := addOffsets(add, fmt.Sprintf("<message name=%q>", m.Name), m.GoName, m.Fields); err != nil {
			return err
		}
		for _, g := range m.Groups {
			if err := addOffsets(add, fmt.Sprintf("<message name=%q> <group name=%q>", m.Name, g.Name), g.TypeName, g.Fields); err != nil {
				return err
			}
		}
		reserved := []string{"WrapEncode", "WrapDecode", "EncodedLength", "AppendText", "String"}
		for _, g := range m.Groups {
			reserved = append(reserved, g.GoName, g.GoName+"Count")
		}
		if err := checkMethods(fmt.Sprintf("<message name=%q>", m.Name), m.Fields, reserved); err != nil {
			return err
		}
		for _, g := range m.Groups {
			if err := checkMethods(fmt.Sprintf("<message name=%q> <group name=%q>", m.Name, g.Name), g.Fields, []string{"AppendText"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// addOffsets adds the offset constants of fields (see fieldOffsets) to the
// package-level names.
func addOffsets(add func(name, what string) error, where, prefix string, fields []*Field) error {
	for _, f := range fields {
		if f.Type.IsConstant() {
			continue
		}
		if err := add(offsetName(prefix, f), fmt.Sprintf("%s <field name=%q>", where, f.Name)); err != nil {
			return err
		}
	}
	return nil
}

// typeGlobals lists the package-level identifiers a named type generates.
func typeGlobals(t *Type) []string {
	switch t.Kind {
	case KindEnum:
		names := []string{t.GoName}
		for _, v := range t.Values {
			names = append(names, t.GoName+v.GoName)
		}
		return names
	case KindSet:
		names := []string{t.GoName}
		for _, c := range t.Choices {
			names = append(names, t.GoName+c.GoName)
		}
		return names
	case KindComposite:
		return []string{t.GoName, t.GoName + "EncodedLength"}
	case KindCharArray:
		return []string{t.GoName + "Length"}
	}
	return nil
}

// fieldMethods lists the methods a field generates on its container.
func fieldMethods(f *Field) []string {
	names := []string{f.GoName}
	switch {
	case f.Type.IsConstant(), f.Type.Kind == KindComposite:
	case f.Type.Kind == KindCharArray:
		names = append(names, f.GoName+"Array", "Set"+f.GoName, "Set"+f.GoName+"String")
	default:
		names = append(names, "Set"+f.GoName)
	}
	return names
}

func checkMethods(where string, fields []*Field, reserved []string) error {
	seen := map[string]string{}
	for _, r := range reserved {
		seen[r] = "a generated method"
	}
	for _, f := range fields {
		for _, n := range fieldMethods(f) {
			if other, dup := seen[n]; dup {
				return fmt.Errorf("%s <field name=%q>: generated method %s collides with %s", where, f.Name, n, other)
			}
			seen[n] = fmt.Sprintf("field %q", f.Name)
		}
	}
	return nil
}
