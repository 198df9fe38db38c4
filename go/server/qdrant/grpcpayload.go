package qdrant

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// payloadJSON is a gRPC payload (or a formula's defaults) as the JSON text
// the shared calls parse, appended directly: keys sorted, strings through
// encode.go's appendString, doubles as appendPayloadDouble spells them,
// byte for byte what json.Marshal wrote for the map of interfaces the door
// built before, whose reflection per value was the largest part of
// translating a gRPC upsert (TestPayloadJSONIsWhatMarshalWrites).
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
		dst = append(appendString(dst, k), ':')
		var err error
		if dst, err = appendValueJSON(dst, fields[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendValueJSON appends one payload value; NaN and infinities are
// refused (appendPayloadDouble).
func appendValueJSON(dst []byte, v *pb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case nil, *pb.Value_NullValue:
		return append(dst, "null"...), nil
	case *pb.Value_DoubleValue:
		return appendPayloadDouble(dst, k.DoubleValue)
	case *pb.Value_IntegerValue:
		return strconv.AppendInt(dst, k.IntegerValue, 10), nil
	case *pb.Value_StringValue:
		return appendString(dst, k.StringValue), nil
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

// appendPayloadDouble appends a payload double as a JSON number with a
// fraction or an exponent (1.5e+18, 3.0), never as an integer literal:
// 1.5e18 spelled 1500000000000000000 would be an integer beyond 2^53,
// which payloads refuse. NaN and infinities, which JSON cannot hold, are
// refused.
func appendPayloadDouble(dst []byte, x float64) ([]byte, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, badRequestf("payload value %g is not a JSON number", x)
	}
	at := len(dst)
	dst = strconv.AppendFloat(dst, x, 'g', -1, 64)
	if !bytes.ContainsAny(dst[at:], ".e") {
		dst = append(dst, ".0"...)
	}
	return dst, nil
}
