package qdrant

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// Point ids.
//
// A Qdrant point id is an unsigned integer or a UUID. Integers below 2^63
// are strata's integer ids (larger ones are refused: strata keeps that
// range for its own use). A UUID is stored as a strata string id, the
// UUID's canonical form (lowercase, hyphenated), so that every spelling
// Qdrant accepts for one UUID names one point, and answers carry the
// canonical form, as Qdrant's do. The spellings are those of Rust's uuid
// crate, which Qdrant parses with: 32 hex digits, the hyphenated 8-4-4-4-12
// form, that form in braces, or after "urn:uuid:"; hex digits in either
// case. Any other string is refused as Qdrant refuses it (400).

// parseID reads a Qdrant point id.
func parseID(raw json.RawMessage) (collection.ID, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return collection.ID{}, badRequestf("point id %s: %v", truncate(string(raw)), err)
		}
		canonical, ok := canonicalUUID(s)
		if !ok {
			return collection.ID{}, badRequestf("Unable to parse UUID: %s", truncate(s))
		}
		return collection.StringID(canonical), nil
	}
	id, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return collection.ID{}, badRequestf("point id %s is neither an unsigned integer nor a UUID", truncate(string(raw)))
	}
	if id > math.MaxInt64 {
		return collection.ID{}, unsupportedf("point id %d: strata's integer ids are below 2^63", id)
	}
	return collection.IntID(id), nil
}

// parsePathID reads the {id} of a point's URL: digits are an integer, any
// other text a UUID.
func parsePathID(segment string) (collection.ID, error) {
	if segment != "" && strings.Trim(segment, "0123456789") == "" {
		return parseID(json.RawMessage(segment))
	}
	quoted, _ := json.Marshal(segment)
	return parseID(quoted)
}

func parseIDs(raws []json.RawMessage) ([]collection.ID, error) {
	ids := make([]collection.ID, len(raws))
	for i, raw := range raws {
		var err error
		if ids[i], err = parseID(raw); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// canonicalUUID returns the lowercase hyphenated form of a UUID in any
// spelling the uuid crate parses.
func canonicalUUID(s string) (string, bool) {
	var digits string
	switch {
	case len(s) == 32:
		digits = s
	case len(s) == 38 && s[0] == '{' && s[37] == '}':
		s = s[1:37]
		fallthrough
	case len(s) == 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return "", false
		}
		digits = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	case len(s) == 45 && s[:9] == "urn:uuid:":
		return canonicalUUID(s[9:])
	default:
		return "", false
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], []byte(digits)); err != nil {
		return "", false
	}
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}

// pointID writes an id as Qdrant does: a number or the UUID's string.
type pointID struct{ collection.ID }

func (p pointID) MarshalJSON() ([]byte, error) {
	if p.IsString() {
		return json.Marshal(p.Str())
	}
	return strconv.AppendUint(nil, p.Int(), 10), nil
}

func (p pointID) String() string {
	if p.IsString() {
		return p.Str()
	}
	return strconv.FormatUint(p.Int(), 10)
}

// idFilter is the meta condition matching exactly ids (has_id).
func idFilter(ids []collection.ID) *meta.Filter {
	var ints []uint64
	var strs []string
	for _, id := range ids {
		if id.IsString() {
			strs = append(strs, id.Str())
		} else {
			ints = append(ints, id.Int())
		}
	}
	return meta.IDs(ints, strs)
}
