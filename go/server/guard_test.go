package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/server/guard"
)

// send sends body with the given headers (name, value pairs) and returns
// the status, the answer's headers and its decoded JSON.
func (ts *testServer) send(t *testing.T, method, path, body string, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: answer %d is not JSON: %.200q", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, resp.Header, out
}

func errorCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// TestCrossSiteNoCorsPostDeletesNothing is the repro of issue 20 item 2
// through the native door: a web page's fetch(url, {mode: "no-cors",
// method: "POST", body}) is a text/plain POST with the page's Origin, and
// it deleted every point.
func TestCrossSiteNoCorsPostDeletesNothing(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "c", 20)
	st, _, out := ts.send(t, "POST", "/collections/c/delete", `{"filter":{}}`,
		"Content-Type", "text/plain;charset=UTF-8", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site")
	if st != http.StatusForbidden || errorCode(out) != guard.CodeForbidden {
		t.Errorf("the cross-site POST: %d %v", st, out)
	}
	st, _, out = ts.send(t, "POST", "/collections/c/delete", `{"filter":{}}`, "Content-Type", "text/plain")
	if st != http.StatusUnsupportedMediaType || errorCode(out) != guard.CodeMediaType {
		t.Errorf("a text/plain POST without Origin: %d %v", st, out)
	}
	if got := ts.must(t, "POST", "/collections/c/count", map[string]any{})["count"]; got != float64(20) {
		t.Fatalf("count after the refused deletes: %v, want 20", got)
	}
	// The playground, from its own origin, still works.
	st, _, out = ts.send(t, "POST", "/collections/c/query", `{"vector":[1,1,1,1],"k":3}`,
		"Content-Type", "application/json", "Origin", ts.url, "Sec-Fetch-Site", "same-origin")
	if st != http.StatusOK || len(out["results"].([]any)) != 3 {
		t.Errorf("a same-origin query: %d %v", st, out)
	}
}

// TestHugeBatchQueryIsRefusedBeforeWork is issue 20 item 3 through the
// native door: only k was capped, and 100 queries × k=10,000 with vectors
// took 1.8 GB of server memory. Past Limits.MaxAnswerBytes the answer is
// refused with 422, naming the flag.
func TestHugeBatchQueryIsRefusedBeforeWork(t *testing.T) {
	ts := newTestServer(t, Config{Limits: guard.Limits{MaxAnswerBytes: 1 << 20}})
	ts.fill(t, "c", 50)
	vectors := strings.Repeat(`[1,2,3,4],`, 99) + `[1,2,3,4]`
	st, _, out := ts.send(t, "POST", "/collections/c/query",
		`{"vectors":[`+vectors+`],"k":10000,"include":["vectors"]}`)
	if st != http.StatusUnprocessableEntity || errorCode(out) != guard.CodeLimitExceeded ||
		!strings.Contains(out["error"].(map[string]any)["message"].(string), "--max-answer-bytes") {
		t.Errorf("100 queries × k=10,000 with vectors: %d %v", st, out)
	}
	st, _, out = ts.send(t, "POST", "/collections/c/scan", `{"limit":100000,"include":["vectors"]}`)
	if st != http.StatusUnprocessableEntity || errorCode(out) != guard.CodeLimitExceeded {
		t.Errorf("a scan of 100,000 with vectors: %d %v", st, out)
	}
	// A batch within the limit is answered.
	if st, _, out = ts.send(t, "POST", "/collections/c/query", `{"vectors":[`+vectors+`],"k":100}`); st != http.StatusOK {
		t.Errorf("100 queries × k=100 without vectors: %d %v", st, out)
	}
}

// TestLargeAnswerIsStreamedNotHeld: an answer past streamAt is sent as it
// is written (chunked, no Content-Length) and still parses whole; a small
// one keeps its Content-Length (the load generator's client needs it).
func TestLargeAnswerIsStreamedNotHeld(t *testing.T) {
	ts := newTestServer(t, Config{})
	const n, dim = 300, 256 // a vector prints as ~2.5 KB: 300 of them are past streamAt
	ts.must(t, "POST", "/collections", map[string]any{"name": "c", "dim": dim, "metric": "l2", "fsync": "never"})
	ids, vecs, docs := make([]int, n), make([][]float32, n), make([]map[string]any, n)
	for i := range n {
		ids[i], vecs[i], docs[i] = i, make([]float32, dim), map[string]any{"i": i}
		for j := range dim {
			vecs[i][j] = float32(i*dim+j) / 7
		}
	}
	ts.must(t, "POST", "/collections/c/upsert", map[string]any{"ids": ids, "vectors": vecs, "metadata": docs})
	query := func(nq, k int, include string) string {
		qs := make([][]float32, nq)
		for i := range qs {
			qs[i] = vecs[i]
		}
		raw, _ := json.Marshal(qs)
		return fmt.Sprintf(`{"vectors":%s,"k":%d,"include":%s}`, raw, k, include)
	}
	for _, tc := range []struct {
		path, body string
		streamed   bool
		want       int
	}{
		{"/collections/c/query", query(3, n, `["vectors","metadata","distances"]`), true, 3 * n},
		{"/collections/c/scan", fmt.Sprintf(`{"limit":%d,"include":["vectors","metadata"]}`, n), true, n},
		{"/collections/c/get", fmt.Sprintf(`{"ids":%s,"include":["vectors"]}`, must(json.Marshal(ids))), true, n},
		{"/collections/c/query", query(1, 10, `["distances"]`), false, 10},
	} {
		resp, err := ts.client.Post(ts.url+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", tc.path, resp.StatusCode, err)
		}
		if streamed := resp.ContentLength < 0; streamed != tc.streamed {
			t.Errorf("%s: Content-Length %d, want streamed %v", tc.path, resp.ContentLength, tc.streamed)
		}
		got := 0
		if points, ok := out["points"].([]any); ok {
			got = len(points)
		} else if results := out["results"].([]any); tc.want > 10 {
			for _, r := range results {
				got += len(r.([]any))
			}
		} else {
			got = len(results[0].([]any))
		}
		if got != tc.want {
			t.Errorf("%s: %d hits, want %d", tc.path, got, tc.want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestStreamedAnswerThatFailsCutsTheConnection: once a streamed answer's
// 200 is sent, an error must not end the body cleanly (a truncated answer
// that a client could take for the whole) nor append an error body to it.
func TestStreamedAnswerThatFailsCutsTheConnection(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "c", 1)
	failing := func(w http.ResponseWriter, r *http.Request) error {
		a := answer{w: w}
		b := append([]byte(`{"results":[`), strings.Repeat(`{"id":1},`, streamAt/8)...)
		a.spill(b)
		return invalidf("failed half-way")
	}
	ts.routes["POST /collections/{name}/query"].h = failing
	resp, err := ts.client.Post(ts.url+"/collections/c/query", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the failed stream ended cleanly: %d, %d bytes ending %q", resp.StatusCode, len(body), body[max(0, len(body)-80):])
	}
	if strings.Contains(string(body), "failed half-way") {
		t.Errorf("an error body was appended to the streamed answer")
	}
}
