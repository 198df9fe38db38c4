package meta

import (
	"fmt"
	"regexp"
	"strings"
)

// maxRegexBytes bounds a $regex pattern. RE2 matches in time linear in the
// text whatever the pattern, but compiling a long one costs memory, and no
// filter a person writes needs more.
const maxRegexBytes = 4096

// parseRegex reads {"$regex": pattern} and its optional "$options" (found
// among the same operator object's fields): a leaf matching a string, or
// a list holding one, in which the pattern finds a match anywhere (Mongo's
// unanchored $regex, in Go's RE2 syntax).
func parseRegex(p Path, pattern value, fields []field, here string) (*node, error) {
	if pattern.kind != kindString {
		return nil, errorAt(here, "%q needs a string (a regular expression), not %s", "$regex", describeValue(pattern))
	}
	if len(pattern.str) > maxRegexBytes {
		return nil, errorAt(here, "%q pattern is %d bytes, more than %d", "$regex", len(pattern.str), maxRegexBytes)
	}
	flags := ""
	for _, f := range fields {
		if f.key != "$options" {
			continue
		}
		if f.val.kind != kindString {
			return nil, errorAt(here, "%q needs a string of flags (\"i\", \"m\", \"s\"), not %s", "$options", describeValue(f.val))
		}
		for _, c := range f.val.str {
			if !strings.ContainsRune("ims", c) {
				return nil, errorAt(here, "%q: unknown flag %q (the flags are \"i\", \"m\", \"s\")", "$options", c)
			}
			if !strings.ContainsRune(flags, c) {
				flags += string(c)
			}
		}
	}
	expr := pattern.str
	if flags != "" {
		expr = fmt.Sprintf("(?%s)%s", flags, expr)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, errorAt(here, "%q: %v", "$regex", err)
	}
	n := newLeaf(nodeRegex, p)
	n.regex = re
	return n, nil
}

// hasKey reports whether one of fields is key.
func hasKey(fields []field, key string) bool {
	for _, f := range fields {
		if f.key == key {
			return true
		}
	}
	return false
}
