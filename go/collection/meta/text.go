package meta

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// CheckPath returns an error (wrapping ErrInvalidDocument) if path is not
// a dotted field path a document can hold.
func CheckPath(path string) error {
	if path == "" {
		return fmt.Errorf("%w: empty field path", ErrInvalidDocument)
	}
	if _, err := splitPath(path); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	return nil
}

// Text returns the string at the dotted path, for full-text indexing. A
// missing path or null gives "" (no text); any other value that is not a
// string is an error wrapping ErrInvalidDocument that names the path and
// what it holds.
func (d Document) Text(path string) (string, error) {
	v, ok := lookup(d.fields, strings.Split(path, "."))
	if !ok || v.kind == kindNull {
		return "", nil
	}
	if v.kind != kindString {
		return "", fmt.Errorf("%w: text field %q holds %s, not a string", ErrInvalidDocument, path, v.kind)
	}
	return v.str, nil
}

// NumberAt returns the number at path p. ok is false when the path is
// missing or holds anything else; list reports that it holds a list, or
// more than one value (a path through a list of objects).
func (d Document) NumberAt(p Path) (f float64, ok, list bool) {
	vals := p.reach(d.root())
	switch {
	case len(vals) == 0:
		return 0, false, false
	case len(vals) > 1 || vals[0].kind == kindList:
		return 0, false, true
	}
	return vals[0].num, vals[0].kind == kindNumber, false
}

// ValuesAt returns the canonical JSON of each value p reaches in d, the
// elements of a list there in its stead (one level, as the conditions
// test them), in document order.
func (d Document) ValuesAt(p Path) [][]byte {
	var out [][]byte
	for _, v := range p.reach(d.root()) {
		if v.kind == kindList {
			for _, e := range v.list {
				out = append(out, appendValue(nil, e))
			}
			continue
		}
		out = append(out, appendValue(nil, v))
	}
	return out
}

// CheckJSONText checks that every string of a JSON text will decode to the
// characters sent: the bytes are UTF-8 and no \u escape is half of a UTF-16
// surrogate pair. encoding/json, which the doors use for request bodies,
// would turn either into U+FFFD without a word; ParseDocument and
// ParseFilter refuse both. The error (wrapping ErrInvalidDocument) names
// the offset. The rest of the syntax is not checked.
func CheckJSONText(data []byte) error {
	if !utf8.Valid(data) {
		at := 0
		for at < len(data) {
			r, size := utf8.DecodeRune(data[at:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			at += size
		}
		return fmt.Errorf("%w: offset %d: invalid UTF-8 (byte 0x%02x)", ErrInvalidDocument, at, data[at])
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		if i+1 < len(data) && data[i+1] == 'u' {
			r, ok := hex4(data, i+2)
			if ok && utf16.IsSurrogate(r) {
				r2, paired := rune(0), false
				if i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					r2, paired = hex4(data, i+8)
				}
				if !paired || utf16.DecodeRune(r, r2) == utf8.RuneError {
					return fmt.Errorf("%w: offset %d: \\u%04x is half of a UTF-16 surrogate pair, not a character", ErrInvalidDocument, i, r)
				}
				i += 6
			}
		}
		i++ // skip the escaped character
	}
	return nil
}
