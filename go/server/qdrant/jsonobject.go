package qdrant

import (
	"encoding/json"

	"github.com/strata-db/strata/go/internal/jsonnum"
)

// objectFields is json.Unmarshal of raw into a map[string]json.RawMessage,
// the first step of reading every query shape (nearest, order_by, fusion,
// formula, ...), without reflection and without copying the values: they
// are sub-slices of raw, so raw must not change while they are used. A
// query is split this way up to four times per request (each reader
// checks for its own key), and encoding/json scanned a query's vector
// twice each time: that was a tenth of a served query.
//
// Valid JSON is split here in one pass (numbers by package jsonnum);
// everything else (invalid text, keys with escapes or non-ASCII bytes,
// deep nesting) goes to encoding/json, so that the map and the error are
// always encoding/json's.
func objectFields(raw []byte) (map[string]json.RawMessage, error) {
	if m, ok := splitObject(raw); ok {
		return m, nil
	}
	var m map[string]json.RawMessage
	err := json.Unmarshal(raw, &m)
	return m, err
}

// maxSplitDepth bounds the nesting splitObject follows; deeper text goes
// to encoding/json (which has its own bound).
const maxSplitDepth = 64

// splitObject splits raw, one JSON object and nothing else but
// whitespace, into its keys and values (a repeated key: the last, as
// encoding/json); ok is false for anything it leaves to encoding/json.
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	m := make(map[string]json.RawMessage, 4)
	ok := eachField(raw, func(key, value []byte) bool {
		m[string(key)] = value
		return true
	})
	return m, ok
}

// eachField calls fn with each key and value of raw, one JSON object and
// nothing else but whitespace, in order (keys plain ASCII without
// escapes, values checked and without the whitespace around them, both
// sub-slices of raw), until fn returns false; ok is false when fn did or
// when raw is anything else (it may have called fn for the fields before
// the fault).
func eachField(raw []byte, fn func(key, value []byte) bool) bool {
	return eachFieldRead(raw, nil, fn)
}

// eachFieldRead is eachField with a reader that may read a value in the
// same pass that checks it: read(key, raw, pos) answers the end of the
// value at raw[pos] when it read it (and checked it as JSON), or pos when
// it leaves the value to eachField's own check. fn is called after it as
// for any other value.
func eachFieldRead(raw []byte, read func(key, raw []byte, pos int) int, fn func(key, value []byte) bool) bool {
	end, ok := fieldsAt(raw, jsonnum.SkipSpace(raw, 0), read, fn)
	return ok && jsonnum.SkipSpace(raw, end) == len(raw)
}

// fieldsAt is eachFieldRead of the object that starts at data[pos] and
// is followed by anything: end is past its closing brace. A reader that
// reads nested objects with fieldsAt (and lists with elementsAt) checks
// every byte of a body once, where eachField over the sub-slices it
// answers checks an object's values once for the object and again for
// each value read.
func fieldsAt(data []byte, pos int, read func(key, data []byte, pos int) int, fn func(key, value []byte) bool) (end int, ok bool) {
	s := jsonScanner{data: data, pos: pos}
	if s.pos >= len(data) || data[s.pos] != '{' {
		return pos, false
	}
	s.pos = jsonnum.SkipSpace(data, s.pos+1)
	if s.pos < len(data) && data[s.pos] == '}' {
		return s.pos + 1, true
	}
	for {
		s.pos = jsonnum.SkipSpace(data, s.pos)
		keyStart := s.pos
		if !s.plainKey() {
			return pos, false
		}
		key := data[keyStart+1 : s.pos-1]
		s.pos = jsonnum.SkipSpace(data, s.pos)
		if s.pos >= len(data) || data[s.pos] != ':' {
			return pos, false
		}
		s.pos = jsonnum.SkipSpace(data, s.pos+1)
		valueStart := s.pos
		if read != nil {
			s.pos = read(key, data, s.pos)
		}
		if (s.pos == valueStart && !s.value(1)) || !fn(key, data[valueStart:s.pos:s.pos]) {
			return pos, false
		}
		s.pos = jsonnum.SkipSpace(data, s.pos)
		switch {
		case s.pos >= len(data):
			return pos, false
		case data[s.pos] == ',':
			s.pos++
		case data[s.pos] == '}':
			return s.pos + 1, true
		default:
			return pos, false
		}
	}
}

// elementsAt calls read with the position of each element of the list
// that starts at data[pos] (no whitespace before it); read reads and
// checks the element there and answers its end, or ok false. end is past
// the closing bracket.
func elementsAt(data []byte, pos int, read func(at int) (end int, ok bool)) (end int, ok bool) {
	if pos >= len(data) || data[pos] != '[' {
		return pos, false
	}
	i := jsonnum.SkipSpace(data, pos+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		next, ok := read(i)
		if !ok {
			return pos, false
		}
		i = jsonnum.SkipSpace(data, next)
		switch {
		case i >= len(data):
			return pos, false
		case data[i] == ',':
			i = jsonnum.SkipSpace(data, i+1)
		case data[i] == ']':
			return i + 1, true
		default:
			return pos, false
		}
	}
}

// eachElement calls fn with each element of raw, one JSON list (values
// checked and without the whitespace around them, sub-slices of raw), in
// order, until fn returns false; ok is false when fn did or when raw is
// anything else.
func eachElement(raw []byte, fn func(value []byte) bool) bool {
	s := jsonScanner{data: raw}
	s.pos = jsonnum.SkipSpace(raw, 0)
	if s.pos >= len(raw) || raw[s.pos] != '[' {
		return false
	}
	s.pos = jsonnum.SkipSpace(raw, s.pos+1)
	if s.pos < len(raw) && raw[s.pos] == ']' {
		return jsonnum.SkipSpace(raw, s.pos+1) == len(raw)
	}
	for {
		s.pos = jsonnum.SkipSpace(raw, s.pos)
		start := s.pos
		if !s.value(1) || !fn(raw[start:s.pos:s.pos]) {
			return false
		}
		if more, ok := s.next(']'); !more {
			return ok
		}
	}
}

// jsonScanner checks JSON values as encoding/json's scanner does,
// moving pos past each.
type jsonScanner struct {
	data []byte
	pos  int
}

// next reads what follows a member of an object or list that end closes:
// a comma (more: another member follows), or end as the last thing in
// data but whitespace (ok: the object or list is whole); ok is false for
// anything else.
func (s *jsonScanner) next(end byte) (more, ok bool) {
	s.pos = jsonnum.SkipSpace(s.data, s.pos)
	switch {
	case s.pos >= len(s.data):
		return false, false
	case s.data[s.pos] == ',':
		s.pos++
		return true, true
	case s.data[s.pos] == end:
		return false, jsonnum.SkipSpace(s.data, s.pos+1) == len(s.data)
	}
	return false, false
}

// newKey records bit in *seen and reports whether it was not there yet.
// The decoders without reflection refuse a body that repeats a key
// (encoding/json merges a repeated object or keeps the last value) and
// leave that body to encoding/json.
func newKey[T ~uint8 | ~uint32](seen *T, bit T) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// value checks the value at pos (no whitespace before it).
func (s *jsonScanner) value(depth int) bool {
	if s.pos >= len(s.data) || depth > maxSplitDepth {
		return false
	}
	switch s.data[s.pos] {
	case '{':
		return s.composite(depth, '}', true)
	case '[':
		return s.composite(depth, ']', false)
	case '"':
		return s.str(false)
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	end, _, fault := jsonnum.Number(s.data, s.pos)
	if fault != jsonnum.OK {
		return false
	}
	s.pos = end
	return true
}

// composite checks an object (keyed) or a list, closed by end.
func (s *jsonScanner) composite(depth int, end byte, keyed bool) bool {
	s.pos = jsonnum.SkipSpace(s.data, s.pos+1)
	if s.pos < len(s.data) && s.data[s.pos] == end {
		s.pos++
		return true
	}
	for {
		s.pos = jsonnum.SkipSpace(s.data, s.pos)
		if keyed {
			if !s.str(false) {
				return false
			}
			s.pos = jsonnum.SkipSpace(s.data, s.pos)
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return false
			}
			s.pos = jsonnum.SkipSpace(s.data, s.pos+1)
		}
		if !s.value(depth + 1) {
			return false
		}
		s.pos = jsonnum.SkipSpace(s.data, s.pos)
		if s.pos >= len(s.data) {
			return false
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case end:
			s.pos++
			return true
		default:
			return false
		}
	}
}

// plainKey checks a string at pos that encoding/json would turn into a
// map key byte for byte: printable ASCII without escapes.
func (s *jsonScanner) plainKey() bool { return s.str(true) }

// str checks the string at pos; plain refuses escapes and non-ASCII
// bytes (encoding/json would rewrite them in a key).
func (s *jsonScanner) str(plain bool) bool {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return false
	}
	for i := s.pos + 1; i < len(s.data); i++ {
		switch c := s.data[i]; {
		case c == '"':
			s.pos = i + 1
			return true
		case c < 0x20:
			return false
		case c >= 0x80 && plain:
			return false
		case c == '\\':
			if plain || i+1 >= len(s.data) {
				return false
			}
			i++
			switch s.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s.data) {
					return false
				}
				for _, h := range s.data[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

func (s *jsonScanner) literal(word string) bool {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return false
	}
	s.pos += len(word)
	return true
}
