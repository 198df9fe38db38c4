package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUnknownMethodOnAKnownPathAnswers405NamingTheMethods pins what a
// method a path does not serve (an invented one included) answers, as the
// hand-written router answered it before ServeMux patterns replaced it:
// 405, an Allow header listing the path's methods, the JSON error body
// naming them, and no redirect or text/plain answer from ServeMux. A
// public path (health, the playground) answers it without the API key;
// any other answers 401 first.
func TestUnknownMethodOnAKnownPathAnswers405NamingTheMethods(t *testing.T) {
	ts := newTestServer(t, Config{APIKey: "k"})
	ts.fill(t, "c", 3)
	for _, tc := range []struct {
		method, path, token string
		status              int
		allow, message      string
	}{
		{"BREW", "/collections/c/query", "k", 405, "POST", "server: method not allowed: BREW /collections/c/query (allowed: POST)"},
		{"GET", "/collections/c/upsert", "k", 405, "POST", "server: method not allowed: GET /collections/c/upsert (allowed: POST)"},
		{"HEAD", "/collections/c/count", "k", 405, "POST", ""},
		{"PATCH", "/collections/c", "k", 405, "DELETE, GET", "server: method not allowed: PATCH /collections/c (allowed: DELETE, GET)"},
		{"POST", "/collections/..", "k", 405, "DELETE, GET", "server: method not allowed: POST /collections/.. (allowed: DELETE, GET)"},
		{"PUT", "/collections", "k", 405, "GET, POST", "server: method not allowed: PUT /collections (allowed: GET, POST)"},
		{"DELETE", "/collections/c/points/1", "k", 405, "GET", "server: method not allowed: DELETE /collections/c/points/1 (allowed: GET)"},
		{"WHEN", "/metrics", "k", 405, "GET", "server: method not allowed: WHEN /metrics (allowed: GET)"},
		{"BREW", "/health", "", 405, "GET", "server: method not allowed: BREW /health (allowed: GET)"},
		{"POST", "/", "", 405, "GET", "server: method not allowed: POST / (allowed: GET)"},
		{"DELETE", "/app.js", "", 405, "GET", "server: method not allowed: DELETE /app.js (allowed: GET)"},
		{"BREW", "/collections/c/query", "", 401, "", ""},
		{"BREW", "/collections/c/explode", "k", 404, "", "server: no such route: BREW /collections/c/explode"},
	} {
		req, err := http.NewRequest(tc.method, ts.url+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		wantBody := ""
		if tc.message != "" {
			code := CodeMethod
			if tc.status == 404 {
				code = CodeNoRoute
			}
			wantBody = `{"error":{"code":"` + code + `","message":"` + tc.message + `"}}`
		}
		if resp.StatusCode != tc.status || resp.Header.Get("Allow") != tc.allow ||
			resp.Header.Get("Content-Type") != "application/json" ||
			(wantBody != "" || tc.method == "HEAD") && strings.TrimSpace(string(body)) != wantBody {
			t.Errorf("%s %s: %d, Allow %q, %s %q; want %d, Allow %q, %s",
				tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), resp.Header.Get("Content-Type"), body,
				tc.status, tc.allow, wantBody)
		}
	}
	// Labelled by the path's pattern, the method folded into "other".
	metrics := ts.get(t, "/metrics")
	for _, want := range []string{
		`strata_http_requests_total{door="native",method="other",route="/collections/{name}/query",status="405"} 1`,
		`strata_http_requests_total{door="native",method="other",route="/collections/{name}/query",status="401"} 1`,
		`strata_http_requests_total{door="native",method="PATCH",route="/collections/{name}",status="405"} 1`,
		`strata_http_requests_total{door="native",method="POST",route="/collections/{name}",status="405"} 1`,
		`strata_http_requests_total{door="native",method="other",route="/health",status="405"} 1`,
		`strata_http_requests_total{door="native",method="DELETE",route="/playground",status="405"} 1`,
		`strata_http_requests_total{door="native",method="other",route="other",status="404"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
