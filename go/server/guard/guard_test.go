package guard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// request builds a request to a server reached as host; headers are
// name, value pairs.
func request(method, host, body string, headers ...string) *http.Request {
	r := httptest.NewRequest(method, "http://"+host+"/collections/c/delete", strings.NewReader(body))
	if body == "" {
		r = httptest.NewRequest(method, "http://"+host+"/collections/c/delete", nil)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

func status(err error) int {
	if err == nil {
		return 200
	}
	var refused *Error
	if !errors.As(err, &refused) {
		return -1
	}
	return refused.Status
}

// TestCrossSitePostIsRefused guards against the cross-site request
// forgery found on main: any web page's fetch(url, {mode: "no-cors",
// method: "POST", body: ...}) deleted every point. Browsers mark such a
// request with Origin and Sec-Fetch-Site; clients that are not browsers
// send neither and pass.
func TestCrossSitePostIsRefused(t *testing.T) {
	g, err := New(Config{AllowOrigins: []string{"http://app.example:3000"}})
	if err != nil {
		t.Fatal(err)
	}
	const filter = `{"filter":{}}`
	for _, tc := range []struct {
		name string
		r    *http.Request
		want int
	}{
		{"no-cors text/plain from another site", request("POST", "127.0.0.1:8080", filter,
			"Content-Type", "text/plain;charset=UTF-8", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"), 403},
		{"typeless body from another site", request("POST", "127.0.0.1:8080", filter, "Origin", "http://evil.example"), 403},
		{"JSON from another site (a CORS preflight would fail, but refuse anyway)", request("POST", "127.0.0.1:8080", filter,
			"Content-Type", "application/json", "Origin", "http://evil.example"), 403},
		{"Sec-Fetch-Site cross-site without Origin", request("DELETE", "127.0.0.1:8080", "", "Sec-Fetch-Site", "cross-site"), 403},
		{"a sandboxed page (Origin null)", request("POST", "127.0.0.1:8080", filter, "Origin", "null"), 403},
		{"same-site is another origin", request("POST", "127.0.0.1:8080", filter, "Origin", "http://127.0.0.1:9999",
			"Sec-Fetch-Site", "same-site"), 403},
		{"the playground, from its own origin", request("POST", "127.0.0.1:8080", filter,
			"Content-Type", "application/json", "Origin", "http://127.0.0.1:8080", "Sec-Fetch-Site", "same-origin"), 200},
		{"its own origin, older browser without Sec-Fetch-Site", request("POST", "localhost:8080", filter,
			"Content-Type", "application/json", "Origin", "http://localhost:8080"), 200},
		{"an allowed origin", request("POST", "127.0.0.1:8080", filter,
			"Content-Type", "application/json", "Origin", "http://app.example:3000", "Sec-Fetch-Site", "cross-site"), 200},
		{"curl, qdrant-client, strata.client", request("POST", "127.0.0.1:8080", filter, "Content-Type", "application/json"), 200},
		{"a cross-site link to the playground", request("GET", "127.0.0.1:8080", "", "Sec-Fetch-Site", "cross-site"), 200},
	} {
		w := httptest.NewRecorder()
		if got := status(g.Admit(w, tc.r, false)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestAllowedOriginGetsCORSHeaders: --allow-origin is useless to a page
// unless its JSON request's preflight is answered.
func TestAllowedOriginGetsCORSHeaders(t *testing.T) {
	g, _ := New(Config{AllowOrigins: []string{"http://app.example:3000"}})
	w := httptest.NewRecorder()
	r := request("OPTIONS", "127.0.0.1:8080", "", "Origin", "http://app.example:3000",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	if err := g.Admit(w, r, false); err != nil || !Preflight(w, r) {
		t.Fatalf("preflight of an allowed origin: %v, preflight %v", err, Preflight(w, r))
	}
	if got := w.Header().Get("Access-Control-Allow-Origin"); got != "http://app.example:3000" {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	if !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("Access-Control-Allow-Headers %q", w.Header().Get("Access-Control-Allow-Headers"))
	}
	w = httptest.NewRecorder()
	r = request("OPTIONS", "127.0.0.1:8080", "", "Origin", "http://evil.example", "Access-Control-Request-Method", "POST")
	if err := g.Admit(w, r, false); err != nil || Preflight(w, r) || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of another origin was answered: %v %v", err, w.Header())
	}
	if _, err := New(Config{AllowOrigins: []string{"evil.example"}}); err == nil {
		t.Error("an origin without a scheme was accepted")
	}
}

// TestNonJSONBodyIsRefused: a form or text body is not this API's, from
// whatever client; a body without a type (Go's and Python's plain
// clients) is read as JSON.
func TestNonJSONBodyIsRefused(t *testing.T) {
	g, _ := New(Config{})
	for _, tc := range []struct {
		ctype, body string
		want        int
	}{
		{"text/plain", `{}`, 415},
		{"application/x-www-form-urlencoded", `{}`, 415},
		{"multipart/form-data; boundary=x", `{}`, 415},
		{"application/jsonp", `{}`, 415},
		{"application/json", `{}`, 200},
		{"Application/JSON; charset=utf-8", `{}`, 200},
		{"application/vnd.api+json", `{}`, 200},
		{"", `{}`, 200},
		{"text/plain", ``, 200}, // no body, nothing to read: DELETE /collections/c from a client that types everything
	} {
		r := request("POST", "127.0.0.1:8080", tc.body)
		if tc.ctype != "" {
			r.Header.Set("Content-Type", tc.ctype)
		}
		err := g.Admit(httptest.NewRecorder(), r, false)
		if got := status(err); got != tc.want {
			t.Errorf("Content-Type %q, body %q: %d (%v), want %d", tc.ctype, tc.body, got, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "application/json") {
			t.Errorf("the 415 does not say what to send: %v", err)
		}
	}
}

// TestOnlyTheUploadRouteTakesAForm: a multipart body is admitted on
// Qdrant's snapshot upload route alone, and a browser page of another
// origin still cannot send it.
func TestOnlyTheUploadRouteTakesAForm(t *testing.T) {
	g, _ := New(Config{})
	for _, tc := range []struct {
		method, path, origin string
		want                 int
	}{
		{"POST", "/collections/c/snapshots/upload", "", 200},
		{"PUT", "/collections/c/snapshots/upload", "", 415},
		{"POST", "/collections/c/points", "", 415},
		{"POST", "/collections/c/snapshots/upload", "http://evil.example", 403},
	} {
		r := request(tc.method, "127.0.0.1:8080", "--x--")
		r.URL.Path = tc.path
		r.Header.Set("Content-Type", "multipart/form-data; boundary=x")
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := status(g.Admit(httptest.NewRecorder(), r, false)); got != tc.want {
			t.Errorf("%s %s from %q: %d, want %d", tc.method, tc.path, tc.origin, got, tc.want)
		}
	}
}

// TestRebindingHostIsRefusedOnLoopback guards against DNS rebinding: a
// page of evil.example whose name now resolves to 127.0.0.1 is
// same-origin to the browser, so only its Host gives it away.
func TestRebindingHostIsRefusedOnLoopback(t *testing.T) {
	if got := HostsFor([]string{"0.0.0.0:8080"}, nil); got != nil {
		t.Errorf("listening on every interface checks hosts %v", got)
	}
	if got := HostsFor([]string{"127.0.0.1:8080", ":6333"}, nil); got != nil {
		t.Errorf("a door on every interface checks hosts %v", got)
	}
	g, _ := New(Config{Hosts: HostsFor([]string{"127.0.0.1:8080", "localhost:6333"}, []string{"vectors.internal"})})
	for host, want := range map[string]int{
		"evil.example:8080": 403, "evil.example": 403, "127.0.0.1.evil.example": 403,
		"127.0.0.1:8080": 200, "localhost:8080": 200, "LOCALHOST": 200, "[::1]:8080": 200, "127.0.0.2:8080": 200,
		"vectors.internal:8080": 200,
	} {
		r := request("GET", "127.0.0.1:8080", "")
		r.Host = host
		err := g.Admit(httptest.NewRecorder(), r, true)
		if got := status(err); got != want {
			t.Errorf("Host %q: %d (%v), want %d", host, got, err, want)
		}
		if err != nil && !strings.Contains(err.Error(), "--allow-host") {
			t.Errorf("the refusal does not name --allow-host: %v", err)
		}
	}
}

// TestAPIKeyIsCheckedOnEveryDoorsHeader: the native bearer token and the
// Qdrant api-key header both carry the key; public routes need neither.
func TestAPIKeyIsCheckedOnEveryDoorsHeader(t *testing.T) {
	g, _ := New(Config{APIKey: "s3cret"})
	for _, tc := range []struct {
		headers []string
		public  bool
		want    int
	}{
		{nil, false, 401},
		{nil, true, 200},
		{[]string{"Authorization", "Bearer s3cret"}, false, 200},
		{[]string{"api-key", "s3cret"}, false, 200},
		{[]string{"Authorization", "Bearer wrong"}, false, 401},
		{[]string{"api-key", "wrong", "Authorization", "Bearer s3cret"}, false, 401},
		{[]string{"Authorization", "s3cret"}, false, 401},
	} {
		w := httptest.NewRecorder()
		if got := status(g.Admit(w, request("GET", "127.0.0.1:8080", "", tc.headers...), tc.public)); got != tc.want {
			t.Errorf("%v public=%v: %d, want %d", tc.headers, tc.public, got, tc.want)
		}
	}
}

// TestAnswerPastTheLimitIsRefusedNamingTheFlag guards against the memory
// exhaustion found on main: 100 queries × k=10,000 with vectors of
// dimension 64 (131 KB of request) became 452 MB of answer.
func TestAnswerPastTheLimitIsRefusedNamingTheFlag(t *testing.T) {
	l := Limits{}.WithDefaults()
	err := l.Answer(100*10_000, 64, true)
	if status(err) != 422 || !strings.Contains(err.Error(), "--max-answer-bytes") {
		t.Errorf("the repro: %v", err)
	}
	if err := l.Answer(100*10_000, 64, false); err != nil {
		t.Errorf("a million ids and distances: %v", err)
	}
	if err := l.Answer(l.MaxResults+1, 0, false); status(err) != 422 || !strings.Contains(err.Error(), "--max-results") {
		t.Errorf("past MaxResults: %v", err)
	}
	if err := l.Answer(10_000, 768, true); err != nil {
		t.Errorf("a scroll page of 10,000 768-d vectors: %v", err)
	}
}

// TestAdmitAllocatesNothingForAPlainClient keeps the native query path
// allocation-free (see the server's TestQueryHandlerAllocatesNothingOfItsOwn).
func TestAdmitAllocatesNothingForAPlainClient(t *testing.T) {
	g, _ := New(Config{APIKey: "k", Hosts: HostsFor([]string{"127.0.0.1:8080"}, nil)})
	r := request("POST", "127.0.0.1:8080", `{}`, "Content-Type", "application/json", "Authorization", "Bearer k")
	w := httptest.NewRecorder()
	if allocs := testing.AllocsPerRun(100, func() {
		if err := g.Admit(w, r, false); err != nil {
			t.Fatal(err)
		}
	}); allocs > 0 {
		t.Errorf("Admit allocates %.1f times", allocs)
	}
}
