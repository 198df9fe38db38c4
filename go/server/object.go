package server

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unsafe"
)

// eachField walks the top-level JSON object in body and calls fn with each
// key and the raw bytes of its value, without decoding values: the hot
// routes (query, upsert) hand vectors and ids to numberReader and only the
// small fields to encoding/json. Running encoding/json over the whole body
// instead, even with the vectors as json.RawMessage, costs as much as
// decoding the floats themselves, because its scanner still visits every
// byte of them. Structure errors (truncation, a non-object, a duplicate
// key) are ErrBadRequest; each value is validated by whoever decodes it.
func eachField(body []byte, fn func(key string, value []byte) error) error {
	r := numberReader{data: body, row: -1, col: -1}
	r.skipSpace()
	if r.pos == len(body) {
		return nil // an empty body is the empty object
	}
	if body[r.pos] != '{' {
		return badRequestf("the body must be a JSON object, found %s", r.describe())
	}
	r.pos++
	seen := make([]string, 0, 8)
	for first := true; ; first = false {
		r.skipSpace()
		if r.pos < len(body) && body[r.pos] == '}' && first {
			r.pos++
			break
		}
		keyEnd, err := skipValue(body, r.pos)
		if err != nil {
			return err
		}
		if body[r.pos] != '"' {
			return badRequestf("expected a field name at byte %d, found %s", r.pos, r.describe())
		}
		var key string
		if raw := body[r.pos+1 : keyEnd-1]; bytes.IndexByte(raw, '\\') < 0 {
			// The usual case, no escapes to undo: the key aliases the body,
			// which outlives this call; fn gets it only for the call
			// (messages that name it copy it).
			key = unsafe.String(unsafe.SliceData(raw), len(raw))
		} else {
			// Its own variable: json.Unmarshal takes its address, which
			// would put key on the heap for every field of every request.
			var unescaped string
			if err := json.Unmarshal(body[r.pos:keyEnd], &unescaped); err != nil {
				return badRequestf("bad field name at byte %d: %v", r.pos, err)
			}
			key = unescaped
		}
		for _, k := range seen {
			if k == key {
				return badRequestf("field %q appears twice", key)
			}
		}
		seen = append(seen, key)
		r.pos = keyEnd
		r.skipSpace()
		if r.pos >= len(body) || body[r.pos] != ':' {
			return truncatedOr(body, r.pos, "expected ':' after %q", key)
		}
		r.pos++
		r.skipSpace()
		end, err := skipValue(body, r.pos)
		if err != nil {
			return err
		}
		if err := fn(key, body[r.pos:end]); err != nil {
			return err
		}
		r.pos = end
		r.skipSpace()
		if r.pos >= len(body) {
			return badRequestf("the JSON body is truncated")
		}
		if body[r.pos] == '}' {
			r.pos++
			break
		}
		if body[r.pos] != ',' {
			return badRequestf("expected ',' or '}' at byte %d, found %s", r.pos, r.describe())
		}
		r.pos++
	}
	r.skipSpace()
	if r.pos != len(body) {
		return badRequestf("the body holds more than one JSON value")
	}
	return nil
}

func truncatedOr(body []byte, pos int, format string, args ...any) error {
	if pos >= len(body) {
		return badRequestf("the JSON body is truncated")
	}
	return badRequestf(format, args...)
}

// skipValue returns the end of the JSON value starting at pos. It matches
// brackets and skips strings (with escapes) but does not validate scalars:
// the value's decoder does.
func skipValue(data []byte, pos int) (int, error) {
	if pos >= len(data) {
		return 0, badRequestf("the JSON body is truncated")
	}
	switch data[pos] {
	case '"':
		for i := pos + 1; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
		return 0, badRequestf("the JSON body is truncated")
	case '{', '[':
		depth := 0
		for i := pos; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, err := skipValue(data, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, badRequestf("the JSON body is truncated")
	}
	end := pos
	for end < len(data) && bytes.IndexByte([]byte(",}] \t\r\n"), data[end]) < 0 {
		end++
	}
	if end == pos {
		return 0, badRequestf("expected a value at byte %d", pos)
	}
	return end, nil
}

// decodeStrings reads a list of strings (an "include") without
// reflection when, as always in practice, its strings are short plain
// ASCII with no escapes; the words the server knows are returned as
// constants and appended to dst, so that the usual list allocates nothing
// when dst has room. Anything else goes to encoding/json, which also words
// the errors.
func decodeStrings(dst []string, key string, value []byte) ([]string, error) {
	if list, ok := plainStrings(dst, value); ok {
		return list, nil
	}
	var list []string
	if err := decodeField(key, value, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// includeWords are the strings an "include" may hold.
var includeWords = [...]string{"metadata", "distances", "distance", "vectors", "vector"}

func plainStrings(dst []string, value []byte) (list []string, ok bool) {
	r := numberReader{data: value, row: -1, col: -1}
	empty, err := r.open()
	if err != nil {
		return nil, false
	}
	list = dst[:0:cap(dst)]
	if list == nil {
		list = []string{} // an empty list is not an absent one (nil)
	}
	for !empty {
		r.skipSpace()
		if r.pos >= len(value) || value[r.pos] != '"' {
			return nil, false
		}
		start := r.pos + 1
		end := start
		for end < len(value) && value[end] != '"' {
			if c := value[end]; c == '\\' || c < 0x20 || c >= 0x80 {
				return nil, false // escapes, control bytes, UTF-8: encoding/json's rules
			}
			end++
		}
		if end == len(value) {
			return nil, false
		}
		word := value[start:end]
		s := ""
		for _, known := range includeWords {
			if string(word) == known {
				s = known
				break
			}
		}
		if s == "" {
			s = string(word)
		}
		list = append(list, s)
		r.pos = end + 1
		more, err := r.next()
		if err != nil {
			return nil, false
		}
		empty = !more
	}
	if r.end() != nil {
		return nil, false
	}
	return list, true
}

// decodeField decodes one small field's value with encoding/json.
func decodeField(key string, value []byte, v any) error {
	if err := json.Unmarshal(value, v); err != nil {
		return badRequestf("field %q: %v", key, err)
	}
	return nil
}

// decodeCopy is decodeField into a variable of its own, then copied to
// dst: handing dst itself to encoding/json would put the struct holding
// it (a query request) on the heap for every request, the field or not.
func decodeCopy[T any](key string, value []byte, dst *T) error {
	var v T
	err := decodeField(key, value, &v)
	*dst = v
	return err
}

// smallInt reads an integer field without reflection (k and ef are in
// every query). Values beyond ±2^31 are out of every range the server
// accepts, so they are clamped rather than refused here: the range check
// names them.
func smallInt(key string, value []byte) (int, error) {
	r := numberReader{data: value, what: key, row: -1, col: -1}
	text, integer, err := r.number()
	if err == nil {
		err = r.end()
	}
	if err != nil {
		return 0, err
	}
	if !integer {
		return 0, invalidf("%s must be an integer, got %s", key, text)
	}
	n, perr := strconv.ParseInt(string(text), 10, 64)
	if perr != nil || n > math.MaxInt32 || n < math.MinInt32 {
		if text[0] == '-' {
			return math.MinInt32, nil
		}
		return math.MaxInt32, nil
	}
	return int(n), nil
}
