// Package guard is the middleware both of strata-server's doors share (the
// native REST API in package server, the Qdrant REST API in package
// qdrant): one Guard, built once, admits every request to either door,
// holds the server's limits and records the request metrics.
//
// # Admission
//
// Admit refuses, in this order, with a *Error that names the check and how
// to pass it:
//
//	403 forbidden               Config.Hosts set and the Host header names none of them
//	                            (DNS rebinding: a page of evil.example resolved to 127.0.0.1
//	                            is same-origin to the browser, but its Host is evil.example)
//	403 forbidden               an unsafe method (anything but GET, HEAD, OPTIONS) sent by a
//	                            browser from another origin: Sec-Fetch-Site "cross-site" or
//	                            "same-site", or an Origin that is neither the request's own
//	                            (scheme://Host) nor in Config.AllowOrigins
//	415 unsupported_media_type  a request body whose Content-Type is not JSON
//	                            (application/json or application/*+json)
//	401 unauthorized            Config.APIKey set and neither "Authorization: Bearer <key>"
//	                            nor "api-key: <key>" carries it (routes the door calls public
//	                            skip this check, never the others)
//
// A cross-origin page can send a text/plain, form or typeless POST without
// a CORS preflight (fetch with mode "no-cors"), and before these checks
// such a POST deleted every point. Browsers mark every cross-origin POST
// with Origin (and Sec-Fetch-Site), so refusing those stops it; clients
// that are not browsers (curl, qdrant-client, strata.client, the load
// generator) send neither and pass. A body without a Content-Type passes
// the media-type check: Go's and Python's plain clients send none, and the
// browser's typeless bodies carry an Origin. An Origin in AllowOrigins ("*"
// is any) is answered with Access-Control-Allow-Origin, and its preflight
// (OPTIONS with Access-Control-Request-Method) with 204.
//
// # Limits
//
// Limits are the server's request limits, one set for both doors: the body
// size, results per query, results per request, and the estimated size of
// an answer (Limits.Answer). A request past one is refused before any work
// with a *Error (413 for a body, 422 limit_exceeded otherwise) naming the
// limit and the strata-server flag that raises it.
//
// # Metrics
//
// strata_http_requests_total and strata_http_request_duration_seconds, by
// door ("native", "qdrant"), method, route pattern and status. Observe
// allocates nothing once a series exists, so the native query path stays
// allocation-free: see Observe for why not promhttp's instrumentation.
package guard
