package server

import (
	"bytes"
	"fmt"
	"github.com/strata-db/strata/go/server/guard"
	"io"
	"net/http"
	"strings"
	"testing"
)

// badRequests each must be answered with its status and code, a JSON error
// body, and no change to the data.
var badRequests = []struct {
	name, method, path, body string
	status                   int
	code                     string
}{
	// Malformed and truncated JSON.
	{"truncated object", "POST", "/collections/c/query", `{"vector":[1,2,3,`, 400, CodeBadRequest},
	{"truncated upsert", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[1,2,3,4]`, 400, CodeBadRequest},
	{"not JSON", "POST", "/collections/c/query", `vector=1,2,3,4`, 400, CodeBadRequest},
	{"JSON list body", "POST", "/collections/c/query", `[1,2,3,4]`, 400, CodeBadRequest},
	{"trailing garbage", "POST", "/collections/c/query", `{"vector":[1,2,3,4]} {}`, 400, CodeBadRequest},
	{"unknown field", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"top_k":3}`, 400, CodeBadRequest},
	{"k as string", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"k":"3"}`, 400, CodeBadRequest},
	{"NaN as string", "POST", "/collections/c/query", `{"vector":["NaN",2,3,4]}`, 400, CodeBadRequest},
	{"NaN bare", "POST", "/collections/c/query", `{"vector":[NaN,2,3,4]}`, 400, CodeBadRequest},
	{"Infinity bare", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[Infinity,2,3,4]]}`, 400, CodeBadRequest},
	{"null in vector", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[null,2,3,4]]}`, 400, CodeBadRequest},
	{"leading zero number", "POST", "/collections/c/query", `{"vector":[01,2,3,4]}`, 400, CodeBadRequest},
	{"hex number", "POST", "/collections/c/query", `{"vector":[0x1,2,3,4]}`, 400, CodeBadRequest},
	{"vector and vectors", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"vectors":[[1,2,3,4]]}`, 400, CodeBadRequest},
	{"no vector", "POST", "/collections/c/query", `{"k":3}`, 400, CodeBadRequest},
	{"vectors flat", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[1,2,3,4]}`, 400, CodeBadRequest},
	{"upsert without ids", "POST", "/collections/c/upsert", `{"vectors":[[1,2,3,4]]}`, 400, CodeBadRequest},
	{"delete with both", "POST", "/collections/c/delete", `{"ids":[1],"filter":{"odd":true}}`, 400, CodeBadRequest},
	{"delete with neither", "POST", "/collections/c/delete", `{}`, 400, CodeBadRequest},
	{"ids as objects", "POST", "/collections/c/delete", `{"ids":[{"id":1}]}`, 400, CodeBadRequest},
	{"empty string id", "POST", "/collections/c/delete", `{"ids":[""]}`, 422, CodeInvalid},
	{"string id of invalid UTF-8", "POST", "/collections/c/delete", "{\"ids\":[\"a\xffb\"]}", 400, CodeBadRequest},
	{"string id with a lone surrogate", "POST", "/collections/c/delete", `{"ids":["a\ud800b"]}`, 400, CodeBadRequest},
	{"upserted string id with a lone surrogate", "POST", "/collections/c/upsert", `{"ids":["a\ud800b"],"vectors":[[1,2,3,4]]}`, 400, CodeBadRequest},
	{"upserted string id of invalid UTF-8", "POST", "/collections/c/upsert", "{\"ids\":[\"\xc3\"],\"vectors\":[[1,2,3,4]]}", 400, CodeBadRequest},
	{"string id too long", "POST", "/collections/c/delete", `{"ids":["` + strings.Repeat("x", 513) + `"]}`, 422, CodeInvalid},
	{"filter not object", "POST", "/collections/c/count", `{"filter":"odd"}`, 422, CodeInvalid},
	// Values of the right shape that the engine refuses.
	{"wrong dim query", "POST", "/collections/c/query", `{"vector":[1,2,3]}`, 422, CodeInvalid},
	{"wrong dim batch row", "POST", "/collections/c/query", `{"vectors":[[1,2,3,4],[1,2,3,4,5]]}`, 422, CodeInvalid},
	{"wrong dim upsert", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[1,2,3]]}`, 422, CodeInvalid},
	{"float32 overflow", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[1e39,2,3,4]]}`, 422, CodeInvalid},
	{"huge k", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"k":1000000000}`, 422, CodeInvalid},
	{"zero k", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"k":0}`, 422, CodeInvalid},
	{"negative k", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"k":-5}`, 422, CodeInvalid},
	{"negative ef", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"ef":-1}`, 422, CodeInvalid},
	{"huge ef", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"ef":100000000}`, 422, CodeInvalid},
	{"bad filter operator", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"filter":{"i":{"$gtx":"x"}}}`, 422, CodeInvalid},
	{"unknown include", "POST", "/collections/c/query", `{"vector":[1,2,3,4],"include":["everything"]}`, 422, CodeInvalid},
	{"negative id", "POST", "/collections/c/upsert", `{"ids":[-1],"vectors":[[1,2,3,4]]}`, 422, CodeInvalid},
	{"fractional id", "POST", "/collections/c/upsert", `{"ids":[1.5],"vectors":[[1,2,3,4]]}`, 422, CodeInvalid},
	{"id beyond 2^63", "POST", "/collections/c/upsert", `{"ids":[9223372036854775808],"vectors":[[1,2,3,4]]}`, 422, CodeInvalid},
	{"duplicate ids", "POST", "/collections/c/upsert", `{"ids":[100,100],"vectors":[[1,2,3,4],[1,2,3,4]]}`, 422, CodeInvalid},
	{"ids and vectors differ", "POST", "/collections/c/upsert", `{"ids":[100,101],"vectors":[[1,2,3,4]]}`, 422, CodeInvalid},
	{"bad metadata doc", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[1,2,3,4]],"metadata":[{"$x":1}]}`, 422, CodeInvalid},
	{"metadata count", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[1,2,3,4]],"metadata":[{},{}]}`, 422, CodeInvalid},
	{"negative delete id", "POST", "/collections/c/delete", `{"ids":[-3]}`, 422, CodeInvalid},
	{"metadata for missing id", "POST", "/collections/c/metadata", `{"ids":[5000],"metadata":[{"a":1}]}`, 404, CodePointNotFound},
	{"create dim 0", "POST", "/collections", `{"name":"x","dim":0}`, 422, CodeInvalid},
	{"create bad metric", "POST", "/collections", `{"name":"x","dim":4,"metric":"hamming"}`, 422, CodeInvalid},
	{"create bad fsync", "POST", "/collections", `{"name":"x","dim":4,"fsync":"sometimes"}`, 422, CodeInvalid},
	{"create huge M", "POST", "/collections", `{"name":"x","dim":4,"M":100000}`, 422, CodeInvalid},
	{"scan limit negative", "POST", "/collections/c/scan", `{"limit":-1}`, 422, CodeInvalid},
	{"point id too large", "GET", "/collections/c/points/9223372036854775808", ``, 422, CodeInvalid},
	{"point id with a leading zero", "GET", "/collections/c/points/01", ``, 400, CodeBadRequest},
	{"point id a string not present", "GET", "/collections/c/points/abc", ``, 404, CodePointNotFound},
	{"point missing", "GET", "/collections/c/points/4000", ``, 404, CodePointNotFound},
	// Text that is not UTF-8, on every route that takes a body: refused,
	// never stored or searched as U+FFFD.
	{"invalid UTF-8 in metadata", "POST", "/collections/c/upsert", "{\"ids\":[100],\"vectors\":[[1,2,3,4]],\"metadata\":[{\"s\":\"a\xffb\"}]}", 400, CodeBadRequest},
	{"invalid UTF-8 in a metadata key", "POST", "/collections/c/upsert", "{\"ids\":[100],\"vectors\":[[1,2,3,4]],\"metadata\":[{\"\xc3\":1}]}", 400, CodeBadRequest},
	{"invalid UTF-8 in metadata update", "POST", "/collections/c/metadata", "{\"ids\":[1],\"metadata\":[{\"s\":\"\xed\xa0\x80\"}]}", 400, CodeBadRequest},
	{"invalid UTF-8 in a query filter", "POST", "/collections/c/query", "{\"vector\":[1,2,3,4],\"filter\":{\"s\":\"\xff\"}}", 400, CodeBadRequest},
	{"invalid UTF-8 in a text query", "POST", "/collections/c/query", "{\"text\":\"caf\xe9\",\"text_field\":\"s\"}", 400, CodeBadRequest},
	{"invalid UTF-8 in a count filter", "POST", "/collections/c/count", "{\"filter\":{\"s\":\"\xff\"}}", 400, CodeBadRequest},
	{"invalid UTF-8 in a scan filter", "POST", "/collections/c/scan", "{\"filter\":{\"s\":\"\xff\"}}", 400, CodeBadRequest},
	{"invalid UTF-8 in a delete filter", "POST", "/collections/c/delete", "{\"filter\":{\"s\":\"\xff\"}}", 400, CodeBadRequest},
	{"invalid UTF-8 in get", "POST", "/collections/c/get", "{\"ids\":[1],\"x\":\"\xff\"}", 400, CodeBadRequest},
	{"invalid UTF-8 in a collection's text field", "POST", "/collections", "{\"name\":\"x\",\"dim\":4,\"text_fields\":[\"\xff\"]}", 400, CodeBadRequest},
	{"invalid UTF-8 in a text index field", "POST", "/collections/c/text_index", "{\"field\":\"\xff\"}", 400, CodeBadRequest},
	{"lone surrogate in a text query", "POST", "/collections/c/query", `{"text":"caf\ud800","text_field":"s"}`, 400, CodeBadRequest},
	{"lone surrogate in a metadata key", "POST", "/collections/c/metadata", `{"ids":[1],"metadata":[{"\udc00":1}]}`, 400, CodeBadRequest},
	// Integers a float64 cannot hold exactly: refused, never rounded.
	{"integer beyond 2^53 in metadata", "POST", "/collections/c/upsert", `{"ids":[100],"vectors":[[1,2,3,4]],"metadata":[{"n":9007199254740993}]}`, 422, CodeInvalid},
	{"integer beyond 2^53 in metadata update", "POST", "/collections/c/metadata", `{"ids":[1],"metadata":[{"n":1180591620717411303424}]}`, 422, CodeInvalid},
	{"integer beyond 2^53 in a filter", "POST", "/collections/c/count", `{"filter":{"n":9007199254740993}}`, 422, CodeInvalid},
	// Names, collections, routes and methods.
	{"unknown collection", "POST", "/collections/nope/query", `{"vector":[1,2,3,4]}`, 404, CodeCollectionNotFound},
	{"unknown collection info", "GET", "/collections/nope", ``, 404, CodeCollectionNotFound},
	{"drop unknown", "DELETE", "/collections/nope", ``, 404, CodeCollectionNotFound},
	{"name with dots", "POST", "/collections", `{"name":"../etc","dim":4}`, 400, CodeBadRequest},
	{"name with slash", "POST", "/collections", `{"name":"a/b","dim":4}`, 400, CodeBadRequest},
	{"name too long", "POST", "/collections", `{"name":"` + strings.Repeat("a", 65) + `","dim":4}`, 400, CodeBadRequest},
	{"empty name", "POST", "/collections", `{"dim":4}`, 400, CodeBadRequest},
	{"dot-dot path", "GET", "/collections/..", ``, 400, CodeBadRequest},
	{"hidden name path", "POST", "/collections/.c/query", `{"vector":[1,2,3,4]}`, 400, CodeBadRequest},
	{"existing collection", "POST", "/collections", `{"name":"c","dim":4}`, 409, CodeExists},
	{"unknown route", "GET", "/nothing/here", ``, 404, CodeNoRoute},
	{"unknown operation", "POST", "/collections/c/explode", `{}`, 404, CodeNoRoute},
	{"GET on query", "GET", "/collections/c/query", ``, 405, CodeMethod},
	{"PUT on collection", "PUT", "/collections/c", `{}`, 405, CodeMethod},
	{"DELETE on list", "DELETE", "/collections", ``, 405, CodeMethod},
	{"POST on point", "POST", "/collections/c/points/1", `{}`, 405, CodeMethod},
	{"POST on health", "POST", "/health", ``, 405, CodeMethod},
}

func TestBadRequestsAreRefusedAndChangeNothing(t *testing.T) {
	ts := newTestServer(t, Config{Limits: guard.Limits{MaxBodyBytes: 1 << 20}})
	ts.fill(t, "c", 200)
	before := snapshotState(t, ts)
	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			status, out := ts.do(t, tc.method, tc.path, body)
			errBody, _ := out["error"].(map[string]any)
			if status != tc.status || errBody["code"] != tc.code || errBody["message"] == "" {
				t.Fatalf("%s %s %.100s: got %d %.300v, want %d %s", tc.method, tc.path, tc.body, status, out, tc.status, tc.code)
			}
		})
	}
	t.Run("oversized body", func(t *testing.T) {
		huge := `{"ids":[100],"vectors":[[1,2,3,4]],"metadata":[{"pad":"` + strings.Repeat("x", 2<<20) + `"}]}`
		status, out := ts.do(t, "POST", "/collections/c/upsert", huge)
		if status != http.StatusRequestEntityTooLarge || out["error"].(map[string]any)["code"] != CodeTooLarge {
			t.Fatalf("got %d %v", status, out)
		}
		// Without Content-Length: the limit is enforced while reading.
		req, _ := http.NewRequest("POST", ts.url+"/collections/c/upsert", io.MultiReader(strings.NewReader(huge)))
		req.ContentLength = -1
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("chunked oversized body: %d", resp.StatusCode)
		}
	})
	if len(badRequests) < 40 {
		t.Fatalf("only %d bad requests", len(badRequests))
	}
	if after := snapshotState(t, ts); after != before {
		t.Fatalf("bad requests changed the data:\nbefore %s\nafter  %s", before, after)
	}
	if out := ts.must(t, "GET", "/health", nil); out["status"] != "ok" {
		t.Fatalf("server unhealthy after bad requests: %v", out)
	}
}

// snapshotState describes everything a bad request could have changed.
func snapshotState(t *testing.T, ts *testServer) string {
	t.Helper()
	var b bytes.Buffer
	list := ts.must(t, "GET", "/collections", nil)
	// The builder moves rows from the tails into the graphs, the
	// checkpoints seal them into segments and the verifier checks what
	// an open mapped, in the background: their progress is no request's
	// doing.
	if cols, ok := list["collections"].([]any); ok {
		for _, col := range cols {
			m, _ := col.(map[string]any)
			delete(m, "tail_rows")
			delete(m, "built_rows")
			delete(m, "segments")
			delete(m, "merging")
			delete(m, "verification") // the background CRC check after an open
			vectors, _ := m["vectors"].([]any)
			for _, v := range vectors {
				if f, ok := v.(map[string]any); ok {
					delete(f, "tail_rows")
					delete(f, "built_rows")
					delete(f, "segments")
					delete(f, "mapped_segments")
				}
			}
		}
	}
	fmt.Fprintln(&b, list)
	scan := ts.must(t, "POST", "/collections/c/scan", map[string]any{"limit": 10000, "include": []string{"metadata", "vectors"}})
	fmt.Fprintln(&b, scan)
	return b.String()
}
