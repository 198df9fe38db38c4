package qdrant

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// TestPayloadJSONIsWhatMarshalWrites keeps payloadJSON's direct writer to
// the text json.Marshal writes for structJSON's form of the same payload
// (the door's translation before the writer, kept here as the reference):
// the shared calls parse either, and a difference in escaping, key order
// or number spelling would store a different document over gRPC than the
// same payload stored before the writer.
func TestPayloadJSONIsWhatMarshalWrites(t *testing.T) {
	str := func(s string) *pb.Value { return &pb.Value{Kind: &pb.Value_StringValue{StringValue: s}} }
	dbl := func(x float64) *pb.Value { return &pb.Value{Kind: &pb.Value_DoubleValue{DoubleValue: x}} }
	list := func(vs ...*pb.Value) *pb.Value {
		return &pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ListValue{Values: vs}}}
	}
	obj := func(f map[string]*pb.Value) *pb.Value {
		return &pb.Value{Kind: &pb.Value_StructValue{StructValue: &pb.Struct{Fields: f}}}
	}
	payloads := []map[string]*pb.Value{
		nil,
		{},
		{"bucket": {Kind: &pb.Value_IntegerValue{IntegerValue: 1}}},
		{"z": str("last"), "a": str("first"), "m": {Kind: &pb.Value_BoolValue{BoolValue: true}}, "n": nil,
			"null": {Kind: &pb.Value_NullValue{}}, "neg": {Kind: &pb.Value_IntegerValue{IntegerValue: math.MinInt64}}},
		{"escapes": str("quote \" backslash \\ nl \n cr \r tab \t bs \b ff \f nul \x00 esc \x1b del \x7f"),
			"html": str("<a href=\"x\">&amp;</a>"), "seps": str("line\u2028para\u2029"),
			"utf8": str("naïve 日本 🦀"), "invalid": str("bad \xff\xfe byte"), "ключ \"q\" <&>": str("")},
		{"doubles": list(dbl(0), dbl(3), dbl(-2), dbl(1.5), dbl(0.1), dbl(1e21), dbl(1.5e18), dbl(1e-7),
			dbl(math.MaxFloat64), dbl(math.SmallestNonzeroFloat64), dbl(math.Copysign(0, -1)), dbl(123456789))},
		{"nested": obj(map[string]*pb.Value{"b": list(obj(map[string]*pb.Value{"y": str("2"), "x": str("1")}), list()),
			"a": obj(nil)}), "empty": list()},
	}
	many := map[string]*pb.Value{} // more keys than the sort's stack array
	for i := range 20 {
		many[string(rune('a'+19-i))] = &pb.Value{Kind: &pb.Value_IntegerValue{IntegerValue: int64(i)}}
	}
	payloads = append(payloads, many)
	for _, p := range payloads {
		m, err := structJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := payloadJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("payloadJSON:\n got %s\nwant %s", got, want)
		}
	}
	for _, bad := range []*pb.Value{dbl(math.NaN()), dbl(math.Inf(1)), list(dbl(math.Inf(-1)))} {
		p := map[string]*pb.Value{"k": bad}
		_, wantErr := structJSON(p)
		_, err := payloadJSON(p)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("payloadJSON(%v): error %v, want %v", bad, err, wantErr)
		}
	}
}

// valueJSON is a payload value in the form the door built before
// payloadJSON: the values encoding/json marshals, a double as a JSON
// number with a fraction or an exponent, NaN and infinities refused.
func valueJSON(v *pb.Value) (any, error) {
	switch k := v.GetKind().(type) {
	case nil, *pb.Value_NullValue:
		return nil, nil
	case *pb.Value_DoubleValue:
		x := k.DoubleValue
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, badRequestf("payload value %g is not a JSON number", x)
		}
		num := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(num, ".e") {
			num += ".0"
		}
		return json.Number(num), nil
	case *pb.Value_IntegerValue:
		return k.IntegerValue, nil
	case *pb.Value_StringValue:
		return k.StringValue, nil
	case *pb.Value_BoolValue:
		return k.BoolValue, nil
	case *pb.Value_StructValue:
		return structJSON(k.StructValue.GetFields())
	case *pb.Value_ListValue:
		out := make([]any, len(k.ListValue.GetValues()))
		for i, e := range k.ListValue.GetValues() {
			var err error
			if out[i], err = valueJSON(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, badRequestf("unknown payload value kind %T", v.GetKind())
}

func structJSON(fields map[string]*pb.Value) (map[string]any, error) {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		var err error
		if out[k], err = valueJSON(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
