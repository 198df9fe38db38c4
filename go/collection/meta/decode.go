package meta

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/strata-db/strata/go/internal/jsonnum"
)

// decoder is a strict JSON reader: RFC 8259 syntax, UTF-8 input, duplicate
// keys rejected, nesting bounded. encoding/json would silently keep the last
// of two duplicate keys and cannot name the key path of a problem, which is
// why this package reads JSON itself.
//
// In document mode it also enforces the document rules (key spelling)
// while reading, so that an error can name the key path
// where it was found.
type decoder struct {
	data     []byte
	pos      int
	document bool
	maxDepth int
	// exact refuses integer literals beyond ±2^53, which a float64 would
	// round (see maxExactInteger). Input is read exactly; stored data,
	// which older versions wrote without the check, is not.
	exact bool
	path  []string // document mode: keys from the root to the value being read
	at    []int    // the positions of the lists' elements in path
}

// decodeRoot reads data as exactly one JSON value.
func (d *decoder) decodeRoot() (value, error) {
	d.skipSpace()
	v, err := d.value(1)
	if err != nil {
		return value{}, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return value{}, d.syntaxErrorf("unexpected %s after the top-level value", d.describe())
	}
	return v, nil
}

func (d *decoder) syntaxErrorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", d.pos, fmt.Sprintf(format, args...))
}

// keyPath names the value being read: "a.b", "a[2].b".
func (d *decoder) keyPath() string {
	var b strings.Builder
	at := 0
	for i, part := range d.path {
		if part == listPart {
			fmt.Fprintf(&b, "[%d]", d.at[at])
			at++
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

// listPart stands in path for the element of a list being read, whose
// position is in at.
const listPart = "." // no key holds a dot

// valueErrorf reports a document-rule problem with the value at the current
// key path.
func (d *decoder) valueErrorf(format string, args ...any) error {
	return fmt.Errorf("key %q: %s", d.keyPath(), fmt.Sprintf(format, args...))
}

// keyErrorf reports a problem with a key itself: the key, and the object it
// is in unless that is the root.
func (d *decoder) keyErrorf(key, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if len(d.path) == 0 {
		return fmt.Errorf("key %q: %s", key, msg)
	}
	return fmt.Errorf("key %q in %q: %s", key, d.keyPath(), msg)
}

// describe names the byte at the current position for a syntax error.
func (d *decoder) describe() string {
	if d.pos >= len(d.data) {
		return "end of input"
	}
	c := d.data[d.pos]
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("character %q", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value reads one value; depth is the nesting level a list or object read
// here would have (the root is level 1).
func (d *decoder) value(depth int) (value, error) {
	if d.pos >= len(d.data) {
		return value{}, d.syntaxErrorf("unexpected end of input, expected a value")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.list(depth)
	case c == '"':
		s, err := d.str()
		return value{kind: kindString, str: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := d.number()
		return value{kind: kindNumber, num: f}, err
	case c == 't':
		return value{kind: kindBool, b: true}, d.literal("true")
	case c == 'f':
		return value{kind: kindBool}, d.literal("false")
	case c == 'n':
		return value{}, d.literal("null")
	}
	return value{}, d.syntaxErrorf("unexpected %s, expected a value", d.describe())
}

func (d *decoder) literal(word string) error {
	if !strings.HasPrefix(string(d.data[d.pos:min(len(d.data), d.pos+len(word))]), word) {
		return d.syntaxErrorf("invalid literal, expected %s", word)
	}
	d.pos += len(word)
	return nil
}

func (d *decoder) tooDeep(depth int) error {
	if d.document {
		return d.valueErrorf("nesting deeper than %d levels", d.maxDepth)
	}
	return d.syntaxErrorf("nesting deeper than %d levels", d.maxDepth)
}

func (d *decoder) object(depth int) (value, error) {
	if depth > d.maxDepth {
		return value{}, d.tooDeep(depth)
	}
	var fields []field
	if d.open('}') {
		return value{kind: kindObject}, nil
	}
	for more := true; more; {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return value{}, d.syntaxErrorf("unexpected %s, expected a string key", d.describe())
		}
		key, err := d.str()
		if err != nil {
			return value{}, err
		}
		if d.document {
			if err := d.checkKey(key); err != nil {
				return value{}, err
			}
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return value{}, d.syntaxErrorf("unexpected %s, expected ':' after key %q", d.describe(), key)
		}
		d.pos++
		d.skipSpace()
		if d.document {
			d.path = append(d.path, key)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		if d.document {
			d.path = d.path[:len(d.path)-1]
		}
		fields = append(fields, field{key: key, val: v})
		if more, err = d.separator('}'); err != nil {
			return value{}, err
		}
	}
	if !slices.IsSortedFunc(fields, compareFields) {
		slices.SortStableFunc(fields, compareFields)
	}
	for i := 1; i < len(fields); i++ {
		if fields[i].key == fields[i-1].key {
			if d.document {
				return value{}, d.keyErrorf(fields[i].key, "duplicate key")
			}
			return value{}, d.syntaxErrorf("duplicate key %q in the object ending here", fields[i].key)
		}
	}
	return value{kind: kindObject, fields: fields}, nil
}

func compareFields(a, b field) int { return strings.Compare(a.key, b.key) }

// checkKey enforces the document key rules: a key must be usable as one
// part of a dotted filter path.
func (d *decoder) checkKey(key string) error {
	switch {
	case key == "":
		return d.keyErrorf(key, "keys may not be empty")
	case strings.IndexByte(key, '.') >= 0:
		return d.keyErrorf(key, "keys may not contain '.'")
	case key[0] == '$':
		return d.keyErrorf(key, "keys may not start with '$'")
	}
	return nil
}

func (d *decoder) list(depth int) (value, error) {
	if depth > d.maxDepth {
		return value{}, d.tooDeep(depth)
	}
	items := []value{}
	if d.open(']') {
		return value{kind: kindList, list: items}, nil
	}
	if d.document {
		d.path = append(d.path, listPart)
		d.at = append(d.at, 0)
	}
	for more := true; more; {
		d.skipSpace()
		if d.document {
			d.at[len(d.at)-1] = len(items)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		items = append(items, v)
		if more, err = d.separator(']'); err != nil {
			return value{}, err
		}
	}
	if d.document {
		d.path = d.path[:len(d.path)-1]
		d.at = d.at[:len(d.at)-1]
	}
	return value{kind: kindList, list: items}, nil
}

// open consumes the opening bracket of a list or object and reports
// whether closer follows at once (an empty container), consuming it too.
func (d *decoder) open(closer byte) bool {
	d.pos++
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == closer {
		d.pos++
		return true
	}
	return false
}

// separator reads what follows an element of a list or an object: a ','
// (more reports that an element follows) or the closing bracket.
func (d *decoder) separator(closer byte) (more bool, err error) {
	d.skipSpace()
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ',':
			d.pos++
			return true, nil
		case closer:
			d.pos++
			return false, nil
		}
	}
	return false, d.syntaxErrorf("unexpected %s, expected ',' or '%c'", d.describe(), closer)
}

// str reads a string starting at the opening quote. Raw control characters
// and invalid UTF-8 are errors, and so is an escaped lone surrogate
// ("\ud800", valid JSON but no character) in input; stored data, which
// older versions wrote after turning one into U+FFFD as encoding/json does,
// cannot hold one, and reading it keeps that replacement.
func (d *decoder) str() (string, error) {
	start := d.pos + 1
	ascii := true
	for i := start; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			raw := d.data[start:i]
			if !ascii && !utf8.Valid(raw) {
				d.pos = start
				return "", d.syntaxErrorf("invalid UTF-8 in string")
			}
			d.pos = i + 1
			return string(raw), nil
		}
		if c == '\\' || c < 0x20 {
			return d.strSlow(start)
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	d.pos = len(d.data)
	return "", d.syntaxErrorf("unterminated string")
}

func (d *decoder) strSlow(start int) (string, error) {
	buf := make([]byte, 0, 32)
	i := start
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				d.pos = start
				return "", d.syntaxErrorf("invalid UTF-8 in string")
			}
			d.pos = i + 1
			return string(buf), nil
		case c < 0x20:
			d.pos = i
			return "", d.syntaxErrorf("control character 0x%02x in string", c)
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(d.data) {
			break
		}
		esc := d.data[i+1]
		i += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.data, i)
			if !ok {
				d.pos = i - 2
				return "", d.syntaxErrorf("invalid \\u escape in string")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+6 <= len(d.data) && d.data[i] == '\\' && d.data[i+1] == 'u' {
					r2, ok = hex4(d.data, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else if d.exact {
					d.pos = i - 6
					return "", d.syntaxErrorf("\\u%04x is half of a UTF-16 surrogate pair, not a character", r)
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			d.pos = i - 2
			return "", d.syntaxErrorf("invalid escape '\\%c' in string", esc)
		}
	}
	d.pos = len(d.data)
	return "", d.syntaxErrorf("unterminated string")
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a JSON number as float64. Integers of up to 15 digits are
// converted directly (exactly); anything else goes through strconv, which
// rounds correctly. A number too large for float64 is an error rather than
// an infinity.
func (d *decoder) number() (float64, error) {
	data := d.data
	start := d.pos
	neg := data[start] == '-'
	intStart := start
	if neg {
		intStart++
	}
	i, simple, fault := jsonnum.Number(data, start)
	switch fault {
	case jsonnum.NotANumber:
		if i == intStart {
			d.pos = i
			return 0, d.syntaxErrorf("invalid number, expected a digit")
		}
		// A leading zero followed by digits: the number is that zero, and
		// the digit after it is the caller's syntax error.
		simple = true
	case jsonnum.NoFractionDigits:
		d.pos = i
		return 0, d.syntaxErrorf("invalid number, expected a digit after '.'")
	case jsonnum.NoExponentDigits:
		d.pos = i
		return 0, d.syntaxErrorf("invalid number, expected a digit in the exponent")
	}
	intEnd := i // where simple, the integer's digits end the number
	d.pos = i
	if simple && d.exact && intEnd-intStart > 15 && !exactInteger(data[intStart:intEnd]) {
		d.pos = start
		return 0, d.syntaxErrorf("integer %s is beyond ±2^53 (%d), where a float64 number cannot hold every integer: send it as a string, or as a float (%s.0)",
			data[start:i], maxExactInteger, data[start:i])
	}
	if simple && intEnd-intStart <= 15 {
		var n int64
		for _, c := range data[intStart:intEnd] {
			n = n*10 + int64(c-'0')
		}
		f := float64(n)
		if neg {
			f = -f
		}
		return f, nil
	}
	f, err := strconv.ParseFloat(string(data[start:i]), 64)
	if err != nil && !math.IsInf(f, 0) {
		d.pos = start
		return 0, d.syntaxErrorf("invalid number %q", data[start:i])
	}
	if math.IsInf(f, 0) {
		d.pos = start
		return 0, d.syntaxErrorf("number %s is out of the float64 range", data[start:i])
	}
	return f, nil
}

// maxExactInteger is 2^53: every integer of at most this magnitude is a
// float64, and 2^53 + 1 is the first that is not.
const maxExactInteger = 1 << 53

// exactInteger reports whether digits (an integer literal without its
// sign) is at most maxExactInteger.
func exactInteger(digits []byte) bool {
	n, err := strconv.ParseUint(string(digits), 10, 64)
	return err == nil && n <= maxExactInteger
}
