package guard

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Admit runs the checks of the package doc on r, in order, and returns the
// first refusal; public routes skip the API key. It may set response
// headers on w (CORS for an allowed origin, WWW-Authenticate on a 401).
// On the path of a plain JSON request from a client that is not a
// browser, it allocates nothing.
func (g *Guard) Admit(w http.ResponseWriter, r *http.Request, public bool) error {
	if len(g.hosts) > 0 && !g.hostAllowed(r.Host) {
		return forbidden("the Host %q is not one this server answers to: it listens on loopback, where a "+
			"foreign Host means a DNS-rebinding page; allow it with strata-server --allow-host", truncate(r.Host))
	}
	if err := g.checkOrigin(w, r); err != nil {
		return err
	}
	if hasBody(r) {
		if ct := r.Header["Content-Type"]; len(ct) > 0 && !isJSON(ct[0]) && !isUpload(r, ct[0]) {
			return refuse(http.StatusUnsupportedMediaType, CodeMediaType,
				"the body's Content-Type is %q: send JSON with \"Content-Type: application/json\" "+
					"(curl -d sends application/x-www-form-urlencoded unless given -H)", truncate(ct[0]))
		}
	}
	if g.auth && !public && !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		return refuse(http.StatusUnauthorized, CodeUnauthorized,
			"missing or wrong API key: send the header \"Authorization: Bearer <key>\" or \"api-key: <key>\"")
	}
	return nil
}

// Preflight reports whether r is a CORS preflight Admit has answered the
// headers of (an OPTIONS with Access-Control-Request-Method from an
// allowed origin): the door then answers 204 with no body.
func Preflight(w http.ResponseWriter, r *http.Request) bool {
	return r.Method == http.MethodOptions && len(r.Header["Access-Control-Request-Method"]) > 0 &&
		w.Header().Get("Access-Control-Allow-Origin") != ""
}

func (g *Guard) authorized(r *http.Request) bool {
	if token := r.Header["Api-Key"]; len(token) > 0 {
		return g.key.Matches(token[0])
	}
	if v := r.Header["Authorization"]; len(v) > 0 {
		token, ok := strings.CutPrefix(v[0], "Bearer ")
		return ok && g.key.Matches(token)
	}
	return false
}

// safeMethod: a browser may send these cross-origin freely (links, images),
// and they change nothing; the same-origin policy keeps their answers from
// the page that sent them.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func (g *Guard) checkOrigin(w http.ResponseWriter, r *http.Request) error {
	origin := ""
	if o := r.Header["Origin"]; len(o) > 0 {
		origin = o[0]
	}
	site := ""
	if s := r.Header["Sec-Fetch-Site"]; len(s) > 0 {
		site = s[0]
	}
	if origin == "" && site == "" {
		return nil // not a browser
	}
	sameOrigin := site == "same-origin" || site == "none" ||
		(site == "" && origin != "" && isOwnOrigin(origin, r))
	if sameOrigin {
		return nil
	}
	if origin != "" && g.originAllowed(origin) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, api-key")
			h.Set("Access-Control-Max-Age", "600")
		}
		return nil
	}
	if safeMethod(r.Method) {
		return nil
	}
	if origin == "" {
		origin = "(none sent)"
	}
	return forbidden("a cross-origin request from a browser (Origin %s, Sec-Fetch-Site %q) may not %s here: "+
		"any web page could send it; allow the origin with strata-server --allow-origin", truncate(origin), truncate(site), r.Method)
}

// isOwnOrigin: Origin is scheme://host[:port] and names the Host asked for.
func isOwnOrigin(origin string, r *http.Request) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(origin, "https://")
	}
	return ok && rest != "" && strings.EqualFold(rest, r.Host)
}

func (g *Guard) originAllowed(origin string) bool {
	for _, o := range g.origins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

func (g *Guard) hostAllowed(host string) bool {
	name := hostname(host)
	for _, h := range g.hosts {
		if h == "*" || strings.EqualFold(h, name) {
			return true
		}
	}
	// A loopback address names no DNS name an attacker could rebind.
	a, err := netip.ParseAddr(name)
	return err == nil && a.IsLoopback()
}

// hostname is host without its port and IPv6 brackets.
func hostname(host string) string {
	if strings.HasPrefix(host, "[") {
		if end := strings.IndexByte(host, ']'); end > 0 {
			return host[1:end]
		}
		return host
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.IndexByte(host, ':') == i {
		return host[:i]
	}
	return host
}

// LoopbackHosts are the Host names of a server bound to loopback.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// IsLoopback reports whether a listen address (host:port) binds loopback
// only: "localhost" or a loopback IP. An empty host or 0.0.0.0 binds every
// interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// hasBody: the request carries a body (of announced or unknown length).
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

// isJSON: the media type (parameters ignored) is application/json or
// application/<anything>+json.
func isJSON(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	sub, ok := cutPrefixFold(ct, "application/")
	if !ok {
		return false
	}
	return strings.EqualFold(sub, "json") || (len(sub) > 5 && strings.EqualFold(sub[len(sub)-5:], "+json"))
}

// isUpload: a multipart/form-data body to the one route that takes a
// file, Qdrant's POST /collections/{name}/snapshots/upload, as
// qdrant-client sends it. A browser page of another origin cannot send
// it: it is a write, refused by the origin check.
func isUpload(r *http.Request, ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return r.Method == http.MethodPost && strings.EqualFold(strings.TrimSpace(ct), "multipart/form-data") &&
		strings.HasSuffix(r.URL.Path, "/snapshots/upload")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// truncate keeps a client's header short in a message.
func truncate(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
