package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/datadictionary"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// enumFieldOf names the FIX field of each enum type in fixenums.go.
var enumFieldOf = map[string][]quickfix.Tag{
	"ordRejReason":           {tag.OrdRejReason},
	"cxlRejReason":           {tag.CxlRejReason},
	"massCancelRejectReason": {tag.MassCancelRejectReason},
	"massCancelResponse":     {tag.MassCancelResponse},
	"massCancelRequestType":  {tag.MassCancelRequestType},
	"execType":               {tag.ExecType},
	"ordStatus":              {tag.OrdStatus},
	"side":                   {tag.Side},
	"ordType":                {tag.OrdType},
	"timeInForce":            {tag.TimeInForce},
	"execInst":               {tag.ExecInst},
	"cxlRejResponseTo":       {tag.CxlRejResponseTo},
	"securityRequestResult":  {tag.SecurityRequestResult},
	"stipulationType":        {tag.StipulationType},
	"tradSesStatus":          {tag.TradSesStatus},
	"tradSesStatusRejReason": {tag.TradSesStatusRejReason},
	"businessRejectReason":   {tag.BusinessRejectReason},
	"execRestatementReason":  {tag.ExecRestatementReason},
	"fixBoolean":             {tag.LastFragment, tag.LastRptRequested, tag.UnsolicitedIndicator, tag.CopyMsgIndicator},
	// fixmd/fixenums.go: FIX market data.
	"mdEntryType":    {tag.MDEntryType},
	"mdUpdateAction": {tag.MDUpdateAction},
	"mdReqRejReason": {tag.MDReqRejReason},
	"tradeCondition": {tag.TradeCondition},
}

// enumFiles are the files that hold the enum types: the gateway's and its
// market data package's.
var enumFiles = []string{"fixenums.go", filepath.Join("fixmd", "fixenums.go")}

func loadDictionary(t *testing.T) *datadictionary.DataDictionary {
	t.Helper()
	dd, err := datadictionary.Parse(filepath.Join("spec", "FIX44.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return dd
}

// inDictionary reports whether value is a valid value of the field.
func inDictionary(dd *datadictionary.DataDictionary, field quickfix.Tag, value string) bool {
	ft, ok := dd.FieldTypeByTag[int(field)]
	if !ok {
		return false
	}
	if ft.Type == "BOOLEAN" && len(ft.Enums) == 0 {
		return value == "Y" || value == "N"
	}
	_, ok = ft.Enums[value]
	return ok
}

// TestWrittenEnumsInDictionary reads every constant of an enum type in
// enumFiles (the only values the gateway writes into enumerated fields)
// and checks it against the FIX 4.4 dictionary the venue ships.
func TestWrittenEnumsInDictionary(t *testing.T) {
	dd := loadDictionary(t)
	var decls []ast.Decl
	for _, name := range enumFiles {
		file, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		decls = append(decls, file.Decls...)
	}
	checked := map[string]int{}
	for _, decl := range decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			switch sp := spec.(type) {
			case *ast.TypeSpec:
				if _, ok := enumFieldOf[sp.Name.Name]; !ok {
					t.Errorf("type %s in fixenums.go has no FIX field in enumFieldOf", sp.Name.Name)
				}
			case *ast.ValueSpec:
				typ, ok := sp.Type.(*ast.Ident)
				if !ok {
					t.Errorf("constant %s has no explicit enum type", sp.Names[0].Name)
					continue
				}
				fields, ok := enumFieldOf[typ.Name]
				if !ok {
					t.Errorf("constant %s: type %s has no FIX field", sp.Names[0].Name, typ.Name)
					continue
				}
				for i, v := range sp.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok {
						t.Errorf("constant %s is not a literal", sp.Names[i].Name)
						continue
					}
					value := lit.Value
					if lit.Kind == token.STRING {
						value, _ = strconv.Unquote(value)
					}
					for _, f := range fields {
						if !inDictionary(dd, f, value) {
							t.Errorf("%s = %q is not a FIX 4.4 value of tag %d", sp.Names[i].Name, value, f)
						}
					}
					checked[typ.Name]++
				}
			}
		}
	}
	for name := range enumFieldOf {
		if checked[name] == 0 {
			t.Errorf("no constant of %s was checked", name)
		}
	}
}

// TestEngineValuesMapIntoDictionary maps every value the engine's schema
// defines (reasons, statuses) and checks the FIX value it becomes.
func TestEngineValuesMapIntoDictionary(t *testing.T) {
	dd := loadDictionary(t)
	check := func(field quickfix.Tag, what string, value string) {
		t.Helper()
		if !inDictionary(dd, field, value) {
			t.Errorf("%s gives %d=%s, not a FIX 4.4 value", what, field, value)
		}
	}
	for v := range 256 {
		if r := venue.RejectReason(v); r.Valid() {
			check(tag.OrdRejReason, r.String(), strconv.Itoa(int(ordRejReasonOf(r))))
			check(tag.CxlRejReason, r.String(), strconv.Itoa(int(cxlRejReasonOf(r))))
			if RejectText(r) == "" {
				t.Errorf("%s has no text", r)
			}
		}
		if s := venue.OrdStatus(v); s.Valid() {
			check(tag.OrdStatus, s.String(), string(ordStatusOf(s)))
		}
		if s := venue.Side(v); s.Valid() {
			check(tag.Side, s.String(), string(sideOf(s)))
		}
		if o := venue.OrdType(v); o.Valid() {
			check(tag.OrdType, o.String(), string(ordTypeOf(o)))
		}
		if tif := venue.TimeInForce(v); tif.Valid() {
			check(tag.TimeInForce, tif.String(), string(timeInForceOf(tif)))
		}
		if st := venue.TradingStatus(v); st.Valid() {
			check(tag.TradSesStatus, st.String(), string(tradSesStatusOf(st)))
		}
		if r := venue.CxlRejResponseTo(v); r.Valid() {
			check(tag.CxlRejResponseTo, r.String(), string(cxlRejResponseToOf(r)))
		}
	}
	for _, r := range []ordRejReason{ordRejUnknownSymbol, ordRejUnknownOrder, ordRejDuplicateOrder, ordRejOther, ordRejIncorrectQuantity} {
		check(tag.CxlRejReason, "gateway refusal "+strconv.Itoa(int(r)), strconv.Itoa(int(cxlRejReasonOfOrd(r))))
	}
}

// TestBusinessRejectRefIDTagsInDictionary: every message type a
// BusinessMessageReject names the ID field of is one FIX 4.4 defines, with
// that field at its top level, so 379 echoes a value the message can carry.
func TestBusinessRejectRefIDTagsInDictionary(t *testing.T) {
	dd := loadDictionary(t)
	for msgType, id := range businessRejectRefIDTags {
		md, ok := dd.Messages[msgType]
		if !ok {
			t.Errorf("35=%s is not a FIX 4.4 message", msgType)
			continue
		}
		if _, ok := md.Fields[int(id)]; !ok {
			t.Errorf("35=%s (%s) has no field %d at its top level", msgType, md.Name, id)
		}
	}
}
