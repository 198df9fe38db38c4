package qdrant

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// payloadJSON is a gRPC payload as the JSON text the shared upsert and
// set_payload calls parse: byte for byte what json.Marshal writes for its
// valueJSON form (keys sorted, strings escaped as encoding/json escapes
// them, doubles as valueJSON spells them), appended directly. The map of
// interfaces and encoding/json's reflection per value were the largest
// part of translating a gRPC upsert (TestPayloadJSONIsWhatMarshalWrites).
func payloadJSON(fields map[string]*pb.Value) (json.RawMessage, error) {
	return appendStructJSON(make([]byte, 0, 16*len(fields)+2), fields)
}

func appendStructJSON(dst []byte, fields map[string]*pb.Value) ([]byte, error) {
	var onStack [8]string
	keys := onStack[:0]
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, k), ':')
		var err error
		if dst, err = appendValueJSON(dst, fields[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendValueJSON appends v as valueJSON reads it; the same values are
// refused with the same messages.
func appendValueJSON(dst []byte, v *pb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case nil, *pb.Value_NullValue:
		return append(dst, "null"...), nil
	case *pb.Value_DoubleValue:
		x := k.DoubleValue
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, badRequestf("payload value %g is not a JSON number", x)
		}
		at := len(dst)
		dst = strconv.AppendFloat(dst, x, 'g', -1, 64)
		if !bytes.ContainsAny(dst[at:], ".e") {
			dst = append(dst, ".0"...)
		}
		return dst, nil
	case *pb.Value_IntegerValue:
		return strconv.AppendInt(dst, k.IntegerValue, 10), nil
	case *pb.Value_StringValue:
		return appendJSONString(dst, k.StringValue), nil
	case *pb.Value_BoolValue:
		return strconv.AppendBool(dst, k.BoolValue), nil
	case *pb.Value_StructValue:
		return appendStructJSON(dst, k.StructValue.GetFields())
	case *pb.Value_ListValue:
		dst = append(dst, '[')
		for i, e := range k.ListValue.GetValues() {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValueJSON(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	return nil, badRequestf("unknown payload value kind %T", v.GetKind())
}

// appendJSONString appends s quoted as encoding/json quotes a string (its
// HTML escaping included): protobuf has checked that s is UTF-8, but the
// invalid bytes a Go caller could still put there become U+FFFD, as
// encoding/json makes them.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // the other control characters, and <, >, &
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}
