package server

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/internal/jsonnum"
)

// numberReader reads the arrays of numbers that make up most of a request
// body (vectors and ids) straight from the JSON text, with package
// jsonnum's grammar (shared with the Qdrant door), and names what is wrong
// in the native door's words. encoding/json decoding into []float32 costs
// several times more (see BenchmarkDecodeVectors), and for a query it was
// most of the time spent outside the index.
//
// "NaN", "Infinity", strings, hex and leading '+' or zeros are syntax
// errors (400), never numbers.
type numberReader struct {
	data []byte
	pos  int
	// For messages only, formatted on error so that the happy path
	// allocates nothing: the field, and the row and column being read
	// (-1: not in a row / list of rows).
	what     string
	row, col int
}

// where names the element being read: "vectors[3][17]".
func (r *numberReader) where() string {
	s := r.what
	if r.row >= 0 {
		s += "[" + strconv.Itoa(r.row) + "]"
	}
	if r.col >= 0 {
		s += "[" + strconv.Itoa(r.col) + "]"
	}
	return s
}

func (r *numberReader) skipSpace() { r.pos = jsonnum.SkipSpace(r.data, r.pos) }

func (r *numberReader) describe() string {
	if r.pos >= len(r.data) {
		return "end of input"
	}
	switch c := r.data[r.pos]; {
	case c == '"':
		return "a string"
	case c == '[':
		return "a list"
	case c == '{':
		return "an object"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	default:
		return strconv.QuoteRune(rune(c))
	}
}

// open consumes '[' and reports whether the list is empty (then also
// consuming ']').
func (r *numberReader) open() (empty bool, err error) {
	r.skipSpace()
	if r.pos >= len(r.data) || r.data[r.pos] != '[' {
		return false, badRequestf("%s: expected a list, found %s", r.where(), r.describe())
	}
	r.pos++
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == ']' {
		r.pos++
		return true, nil
	}
	return false, nil
}

// next consumes ',' (more follows) or ']' (the list ended).
func (r *numberReader) next() (more bool, err error) {
	r.skipSpace()
	if r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ',':
			r.pos++
			return true, nil
		case ']':
			r.pos++
			return false, nil
		}
	}
	return false, badRequestf("%s: expected ',' or ']', found %s", r.where(), r.describe())
}

func (r *numberReader) end() error {
	r.skipSpace()
	if r.pos != len(r.data) {
		return badRequestf("%s: unexpected %s after the list", r.what, r.describe())
	}
	return nil
}

// number returns the text of the JSON number at pos and whether it has a
// fraction or exponent.
func (r *numberReader) number() (text []byte, integer bool, err error) {
	r.skipSpace()
	end, integer, fault := jsonnum.Number(r.data, r.pos)
	switch fault {
	case jsonnum.NotANumber:
		return nil, false, badRequestf("%s: expected a number, found %s", r.where(), r.describe())
	case jsonnum.NoFractionDigits, jsonnum.NoExponentDigits:
		return nil, false, badRequestf("%s: malformed number", r.where())
	}
	text, r.pos = r.data[r.pos:end], end
	return text, integer, nil
}

func (r *numberReader) float32() (float32, error) {
	r.skipSpace()
	if f, end, ok := jsonnum.ShortFloat(r.data, r.pos); ok {
		r.pos = end
		return f, nil
	}
	if f, end, ok := jsonnum.LongFloat(r.data, r.pos); ok {
		r.pos = end
		return f, nil
	}
	text, _, err := r.number()
	if err != nil {
		return 0, err
	}
	// The string aliases the body only for the duration of the call.
	f, perr := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 32)
	if perr != nil || math.IsInf(f, 0) {
		return 0, invalidf("%s: %s is outside the float32 range", r.where(), text)
	}
	return float32(f), nil
}

// id reads an id: a JSON string (a string id, checked by the engine) or
// an integer.
func (r *numberReader) id() (collection.ID, error) {
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == '"' {
		s, err := r.str()
		if err != nil {
			return collection.ID{}, err
		}
		return collection.StringID(s), nil
	}
	n, err := r.intID()
	return collection.IntID(n), err
}

// str reads a JSON string.
func (r *numberReader) str() (string, error) {
	start, i := r.pos, r.pos+1
	plain := true
	for ; i < len(r.data) && r.data[i] != '"'; i++ {
		if c := r.data[i]; c == '\\' {
			plain = false
			i++
		} else if c < 0x20 {
			plain = false
		}
	}
	if i >= len(r.data) {
		return "", badRequestf("%s: unterminated string", r.where())
	}
	r.pos = i + 1
	raw := r.data[start:r.pos]
	// encoding/json would replace invalid UTF-8 and lone surrogate escapes
	// with U+FFFD: an id must not change on its way in, so both are refused.
	if !utf8.Valid(raw) {
		return "", badRequestf("%s: string is not valid UTF-8", r.where())
	}
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badRequestf("%s: malformed string: %v", r.where(), err)
	}
	lower := bytes.ToLower(raw)
	if strings.Count(s, "\uFFFD") != bytes.Count(raw, []byte("\uFFFD"))+bytes.Count(lower, []byte(`\ufffd`)) {
		return "", badRequestf("%s: string holds an escape that is not a character (a lone surrogate)", r.where())
	}
	return s, nil
}

func (r *numberReader) intID() (uint64, error) {
	text, integer, err := r.number()
	if err != nil {
		return 0, err
	}
	if !integer {
		return 0, invalidf("%s: ids are integers, got %s", r.where(), text)
	}
	if text[0] == '-' {
		return 0, invalidf("%s: ids are non-negative, got %s", r.where(), text)
	}
	id, perr := strconv.ParseUint(unsafe.String(unsafe.SliceData(text), len(text)), 10, 64)
	if perr != nil || id > batch.MaxID {
		return 0, invalidf("%s: %s exceeds the largest id %d", r.where(), text, uint64(batch.MaxID))
	}
	return id, nil
}

// parseVector appends the numbers of a JSON list of numbers to dst.
func parseVector(dst []float32, data []byte, what string) ([]float32, error) {
	r := numberReader{data: data, what: what, row: -1, col: -1}
	dst, err := r.readRow(dst)
	if err != nil {
		return nil, err
	}
	return dst, r.end()
}

func (r *numberReader) readRow(dst []float32) ([]float32, error) {
	r.col = -1
	empty, err := r.open()
	if err != nil || empty {
		return dst, err
	}
	for r.col = 0; ; r.col++ {
		f, err := r.float32()
		if err != nil {
			return nil, err
		}
		dst = append(dst, f)
		more, err := r.next()
		if err != nil {
			return nil, err
		}
		if !more {
			r.col = -1
			return dst, nil
		}
	}
}

// parseVectors appends the rows of a JSON list of lists of numbers to dst;
// every row must hold dim numbers. It returns the number of rows.
func parseVectors(dst []float32, data []byte, dim int, what string) ([]float32, int, error) {
	r := numberReader{data: data, what: what, row: -1, col: -1}
	empty, err := r.open()
	if err != nil {
		return nil, 0, err
	}
	rows := 0
	for !empty {
		r.row = rows
		before := len(dst)
		if dst, err = r.readRow(dst); err != nil {
			return nil, 0, err
		}
		if got := len(dst) - before; got != dim {
			return nil, 0, invalidf("%s holds %d numbers, the collection's dimension is %d", r.where(), got, dim)
		}
		rows++
		r.row = -1
		more, err := r.next()
		if err != nil {
			return nil, 0, err
		}
		empty = !more
	}
	return dst, rows, r.end()
}

// parseIDs appends the ids of a JSON list of non-negative integers to dst.
func parseIDs(dst []collection.ID, data []byte, what string) ([]collection.ID, error) {
	r := numberReader{data: data, what: what, row: -1, col: -1}
	empty, err := r.open()
	if err != nil {
		return nil, err
	}
	for r.row = 0; !empty; r.row++ {
		id, err := r.id()
		if err != nil {
			return nil, err
		}
		dst = append(dst, id)
		more, err := r.next()
		if err != nil {
			return nil, err
		}
		empty = !more
	}
	r.row = -1
	return dst, r.end()
}

// appendID writes an id as JSON: a number, or a string as written.
func appendID(b []byte, id collection.ID) []byte {
	if !id.IsString() {
		return strconv.AppendUint(b, id.Int(), 10)
	}
	q, _ := json.Marshal(id.Str()) // a string always marshals
	return append(b, q...)
}
