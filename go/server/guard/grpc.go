package guard

import "net/http"

// AdmitKey is Admit's API-key check for a door that is not HTTP (the
// Qdrant gRPC door): keys are the values the client sent as "api-key"
// and as "authorization" ("Bearer <key>"), as gRPC metadata carries
// them. Host, origin and media type do not apply: no browser speaks
// gRPC. The refusal is the same 401 *Error as Admit's.
func (g *Guard) AdmitKey(apiKey, authorization []string) error {
	if !g.auth {
		return nil
	}
	h := http.Header{}
	if len(apiKey) > 0 {
		h["Api-Key"] = apiKey[:1]
	}
	if len(authorization) > 0 {
		h["Authorization"] = authorization[:1]
	}
	if g.authorized(&http.Request{Header: h}) {
		return nil
	}
	return refuse(http.StatusUnauthorized, CodeUnauthorized,
		"missing or wrong API key: send the metadata \"api-key: <key>\" or \"authorization: Bearer <key>\"")
}
