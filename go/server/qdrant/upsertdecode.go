package qdrant

import (
	"encoding/json"
)

// decodeUpsertRequest reads the usual upsert bodies into req without
// reflection, as decodeQueryRequest reads queries: {"points": [{"id",
// "vector", "payload"}, ...]} and {"batch": {"ids", "vectors",
// "payloads"}}, each key once and spelled as its tag, the values
// sub-slices of body. Anything else (another key or spelling, a repeated
// key, null where a list is, strata's expiry lists of a batch) returns
// false, and decode reads the body with encoding/json, whose answer and
// error are the reference.
//
// encoding/json's decode of an upsert of 100 points of 128 numbers, the
// vectors kept as json.RawMessage, was most of the door's own CPU for it:
// it scanned the whole body twice and copied every vector.
func decodeUpsertRequest(body []byte, req *upsertRequest) bool {
	var seen uint8
	return eachField(body, func(key, value []byte) bool {
		var bit uint8
		switch string(key) {
		case "points":
			bit = 1
			if value[0] != '[' {
				return false
			}
			req.Points = make([]pointStruct, 0, 16)
			if !eachElement(value, func(point []byte) bool {
				req.Points = append(req.Points, pointStruct{})
				return decodePoint(point, &req.Points[len(req.Points)-1])
			}) {
				return false
			}
		case "batch":
			bit = 2
			if value[0] != '{' {
				return false
			}
			req.Batch = new(upsertBatch)
			if !decodeBatch(value, req.Batch) {
				return false
			}
		case "shard_key":
			bit, req.ShardKey = 4, value
		case "update_filter":
			bit, req.UpdateFilter = 8, value
		case "update_mode":
			bit = 16
			if !nullableString(value, &req.UpdateMode) {
				return false
			}
		default:
			return false
		}
		return newKey(&seen, bit)
	})
}

// decodePoint reads one PointStruct object.
func decodePoint(raw []byte, p *pointStruct) bool {
	if raw[0] != '{' {
		return false
	}
	var seen uint8
	return eachField(raw, func(key, value []byte) bool {
		var bit uint8
		switch string(key) {
		case "id":
			bit, p.ID = 1, value
		case "vector":
			bit, p.Vector = 2, value
		case "payload":
			bit, p.Payload = 4, value
		case "strata_ttl":
			bit = 8
			if !nullableFloat(value, &p.StrataTTL) {
				return false
			}
		case "strata_expires_at":
			bit = 16
			if !nullableFloat(value, &p.StrataExpiresAt) {
				return false
			}
		default:
			return false
		}
		return newKey(&seen, bit)
	})
}

// decodeBatch reads a Batch object's ids, vectors and payloads.
func decodeBatch(raw []byte, b *upsertBatch) bool {
	var seen uint8
	return eachField(raw, func(key, value []byte) bool {
		var bit uint8
		switch string(key) {
		case "ids":
			bit = 1
			if b.IDs = rawElements(value); b.IDs == nil {
				return false
			}
		case "vectors":
			bit, b.Vectors = 2, value
		case "payloads":
			bit = 4
			if b.Payloads = rawElements(value); b.Payloads == nil {
				return false
			}
		default:
			return false
		}
		return newKey(&seen, bit)
	})
}

// rawElements splits a list into its elements (non-nil, empty for []);
// nil for anything but a list.
func rawElements(value []byte) []json.RawMessage {
	if value[0] != '[' {
		return nil
	}
	out := make([]json.RawMessage, 0, 16)
	if !eachElement(value, func(v []byte) bool {
		out = append(out, v)
		return true
	}) {
		return nil
	}
	return out
}

// nullableString and nullableFloat store a value as queryFields does its
// pointer fields: nil for null.
func nullableString(value []byte, dst **string) bool {
	if string(value) == "null" {
		*dst = nil
		return true
	}
	s := new(string)
	*dst = s
	return plainString(value, s)
}

func nullableFloat(value []byte, dst **float64) bool {
	if string(value) == "null" {
		*dst = nil
		return true
	}
	f := new(float64)
	*dst = f
	return jsonFloat(value, f)
}
