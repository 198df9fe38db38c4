package meta

import (
	"fmt"
	"strings"
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
// missing or holds anything else; list reports that it holds a list.
func (d Document) NumberAt(p Path) (f float64, ok, list bool) {
	v, found := lookup(d.fields, p.parts)
	switch {
	case !found:
		return 0, false, false
	case v.kind == kindList:
		return 0, false, true
	}
	return v.num, v.kind == kindNumber, false
}
