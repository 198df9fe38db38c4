package qdrant

import (
	"encoding/json"
	"math"
	"strconv"
	"sync"
)

// The answer encoder: the hot answers (query and search results, records,
// scroll pages, update results, counts) are appended to a pooled buffer
// field by field, without reflection; every other answer goes through
// encoding/json. encoding/json spent more CPU on a served query's answer
// than the search did (reflection over record, and compacting each
// payload again although a stored document is compact already).
//
// The output is encoding/json's for the same value, byte for byte, but
// for one thing: payloads are copied as stored (meta's canonical compact
// JSON, or a projection of it by encoding/json), where encoding/json
// would also escape '<', '>' and '&' inside their strings as \u003c...:
// the same JSON value either way. TestAppendResultIsEncodingJSON holds
// the encoder to that.

// answerBuffers recycles the encoding buffers of answers; a buffer grown
// past maxPooledAnswer is dropped instead, so that one large answer does
// not stay resident.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooledAnswer = 1 << 20

func getAnswerBuffer() *[]byte { return answerBuffers.Get().(*[]byte) }

func putAnswerBuffer(b *[]byte) {
	if cap(*b) > maxPooledAnswer {
		return
	}
	*b = (*b)[:0]
	answerBuffers.Put(b)
}

// appendResult appends the JSON of a hot answer's result; ok is false for
// a type it does not know (the caller encodes those with encoding/json).
func appendResult(b []byte, result any) (out []byte, ok bool, err error) {
	switch r := result.(type) {
	case queryResponse:
		b = append(b, `{"points":`...)
		if b, err = appendRecords(b, r.Points); err != nil {
			return nil, true, err
		}
		return append(b, '}'), true, nil
	case []record:
		b, err = appendRecords(b, r)
		return b, true, err
	case scrollResponse:
		b = append(b, `{"points":`...)
		if b, err = appendRecords(b, r.Points); err != nil {
			return nil, true, err
		}
		b = append(b, `,"next_page_offset":`...)
		if r.NextPageOffset == nil {
			b = append(b, "null"...)
		} else if b, err = appendPointID(b, *r.NextPageOffset); err != nil {
			return nil, true, err
		}
		return append(b, '}'), true, nil
	case updateResult:
		b = append(b, `{"operation_id":`...)
		b = strconv.AppendUint(b, r.OperationID, 10)
		b = append(b, `,"status":`...)
		b = appendString(b, r.Status)
		return append(b, '}'), true, nil
	case countResponse:
		b = append(b, `{"count":`...)
		b = strconv.AppendInt(b, int64(r.Count), 10)
		return append(b, '}'), true, nil
	}
	return b, false, nil
}

// appendRecords appends a list of records (null for a nil list, as
// encoding/json writes it).
func appendRecords(b []byte, recs []record) ([]byte, error) {
	if recs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendRecord(b, &recs[i]); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendRecord appends one record in the field order and with the
// omitempty rules of its struct tags.
func appendRecord(b []byte, r *record) ([]byte, error) {
	b = append(b, `{"id":`...)
	b, err := appendPointID(b, r.ID)
	if err != nil {
		return nil, err
	}
	if r.Version != nil {
		b = append(b, `,"version":`...)
		b = strconv.AppendUint(b, *r.Version, 10)
	}
	if r.Score != nil {
		b = append(b, `,"score":`...)
		if b, err = appendFloat(b, *r.Score, 64); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"payload":`...)
	if r.Payload == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, r.Payload...)
	}
	b = append(b, `,"vector":`...)
	switch v := r.Vector.(type) {
	case nil:
		b = append(b, "null"...)
	case []float32:
		if b, err = appendFloat32s(b, v); err != nil {
			return nil, err
		}
	default:
		if b, err = appendMarshaled(b, v); err != nil {
			return nil, err
		}
	}
	if r.OrderValue != nil {
		b = append(b, `,"order_value":`...)
		switch v := r.OrderValue.(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case float64:
			if b, err = appendFloat(b, v, 64); err != nil {
				return nil, err
			}
		default:
			if b, err = appendMarshaled(b, v); err != nil {
				return nil, err
			}
		}
	}
	return append(b, '}'), nil
}

func appendMarshaled(b []byte, v any) ([]byte, error) {
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

func appendPointID(b []byte, p pointID) ([]byte, error) {
	if p.IsString() {
		return appendString(b, p.Str()), nil
	}
	return strconv.AppendUint(b, p.Int(), 10), nil
}

// appendString appends s as a JSON string: as is between quotes when it
// holds nothing encoding/json would escape (ids and statuses do not),
// else through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendFloat32s(b []byte, fs []float32) ([]byte, error) {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendFloat(b, float64(f), 32); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendFloat appends f as encoding/json writes a float of the given bit
// size: the shortest text that reads back as f, in 'f' notation but for
// magnitudes below 1e-6 or from 1e21 on ('e', with a one-digit exponent
// kept short). NaN and ±Inf are no JSON: an error, as from
// encoding/json.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
